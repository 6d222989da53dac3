// SPDX-License-Identifier: MIT
// libFuzzer target: the memory snapshot importer (the safe unpickler, plain or
// gzipped) and the replay of what it loads.
#include "tests/fuzz/entrypoints.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string bad = memledger::fuzz::runSnapshot({reinterpret_cast<const char *>(data), size});
    if (!bad.empty()) {
        // A broken invariant is a finding like a crash: abort so libFuzzer keeps the input.
        std::fprintf(stderr, "invariant broken: %s\n", bad.c_str());
        std::abort();
    }
    return 0;
}
