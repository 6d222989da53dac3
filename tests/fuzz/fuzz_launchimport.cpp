// SPDX-License-Identifier: MIT
// libFuzzer target: the launch importers (Megatron-LM arguments, torchtitan
// TOML, DeepSpeed JSON) and the export back to the same framework.
#include "tests/fuzz/entrypoints.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string bad = memledger::fuzz::runLaunchImport({reinterpret_cast<const char *>(data), size});
    if (!bad.empty()) {
        // A broken invariant is a finding like a crash: abort so libFuzzer keeps the input.
        std::fprintf(stderr, "invariant broken: %s\n", bad.c_str());
        std::abort();
    }
    return 0;
}
