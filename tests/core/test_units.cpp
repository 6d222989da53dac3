// SPDX-License-Identifier: MIT
// The one short parameter-count formatter (core/units.h), which the GUI's
// header and any report share: model cards' B and T, decimal.
#include "core/units.h"

#include <catch2/catch.hpp>

using namespace memledger;

TEST_CASE("Parameter counts in short: B for billions, T for trillions, decimal", "[units]")
{
    // Llama 3 70B counted in full is 70,553,706,496 (its config's shapes): 70.55 B.
    CHECK(formatParameterCount(70553706496LL) == "70.55 B");
    // Llama-2-7B: 6,738,415,616.
    CHECK(formatParameterCount(6738415616LL) == "6.74 B");
    // DeepSeek-V3's 671 B and a trillion-parameter model.
    CHECK(formatParameterCount(671000000000LL) == "671.00 B");
    CHECK(formatParameterCount(1040000000000LL) == "1.04 T");
    // GPT-2 small's 124,439,808: millions with one decimal.
    CHECK(formatParameterCount(124439808) == "124.4 M");
    CHECK(formatParameterCount(1000000) == "1.0 M");
    // Below a million, the exact count.
    CHECK(formatParameterCount(999999) == "999,999");
    CHECK(formatParameterCount(0) == "0");
}
