// SPDX-License-Identifier: MIT
// Benchmarks (run with `cmake --build <dir> --target bench`); never asserted on time.
// Catch2's prebuilt main lacks benchmarking support: this file builds our own
// (CATCH_CONFIG_ENABLE_BENCHMARKING comes from tests/CMakeLists.txt).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/builtins.h"
#include "core/ledger.h"
#include "core/preset.h"

using namespace memledger;

namespace {

Config load(const char *name, std::initializer_list<const char *> sets)
{
    nlohmann::json doc = nlohmann::json::parse(findBuiltin("scenarios", name)->text);
    for (const char *s : sets)
        applyOverride(doc, s);
    return *presetFromJson(doc).config;
}

} // namespace

TEST_CASE("Ledger evaluation", "[bench]")
{
    // A 96-layer model with p = 8 (the foundation issue's target: under 20 µs).
    const Config gpt3 = load("gpt-3-175b-64gpus-tp-sp-selective", {});
    BENCHMARK("GPT-3 175B, 96 layers, p = 8, 1F1B")
    {
        return computeLedger(gpt3).peak_bytes;
    };
    const Config interleaved = load("gpt-3-175b-64gpus-tp-sp-selective",
                                    {"parallelism.virtual_pipeline_model_parallel_size=3", "parallelism.pipeline_schedule=interleaved"});
    BENCHMARK("GPT-3 175B, 96 layers, p = 8, v = 3 interleaved")
    {
        return computeLedger(interleaved).peak_bytes;
    };
    const Config llama = load("llama-3-70b-128xh100", {});
    BENCHMARK("Llama-3-70B on 128 H100s, p = 4")
    {
        return computeLedger(llama).peak_bytes;
    };
}
