// SPDX-License-Identifier: MIT
// Catch2's runner for the benchmarks: its prebuilt main lacks benchmarking
// support, so this file builds our own (CATCH_CONFIG_ENABLE_BENCHMARKING comes
// from tests/CMakeLists.txt). It times nothing itself: the measured loops are
// the BENCHMARK blocks of the other files, compiled as the build type says.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
