// SPDX-License-Identifier: MIT
// Timeline benchmarks (the timeline issue's target: all ranks of a 128-layer
// model with p = 16, v = 4 and 256 micro-batches under 5 ms).
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

TEST_CASE("Timeline simulation", "[bench]")
{
    nlohmann::json doc = nlohmann::json::parse(findBuiltin("scenarios", "gpt-3-175b-64gpus-tp-sp-selective")->text);
    for (const char *s : {"model.num_layers=128", "parallelism.pipeline_model_parallel_size=16",
                          "parallelism.virtual_pipeline_model_parallel_size=4",
                          "parallelism.pipeline_schedule=interleaved", "training.global_batch_size=256"})
        applyOverride(doc, s);
    const Config big = *presetFromJson(doc).config;
    BENCHMARK("128 layers, p = 16, v = 4, 256 micro-batches, all ranks")
    {
        return simulateIteration(big).step_time;
    };
    applyOverride(doc, "strategy.recompute_granularity=full");
    const Config full = *presetFromJson(doc).config;
    BENCHMARK("the same with full recompute")
    {
        return simulateIteration(full).step_time;
    };
    // The same plan under each schedule that splits backwards (issue: within the same 5 ms).
    for (const char *schedule : {"zb-h1", "zb-h2", "zb-v", "dualpipe", "dualpipev"}) {
        nlohmann::json d = doc;
        applyOverride(d, "strategy.recompute_granularity=selective");
        applyOverride(d, std::string("parallelism.pipeline_schedule=") + schedule);
        const bool two = std::string(schedule) != "zb-h1" && std::string(schedule) != "zb-h2";
        applyOverride(d, two ? "parallelism.virtual_pipeline_model_parallel_size=2"
                             : "parallelism.virtual_pipeline_model_parallel_size=1");
        const Config split = *presetFromJson(d).config;
        BENCHMARK(std::string("128 layers, p = 16, 256 micro-batches, ") + schedule)
        {
            return simulateIteration(split).step_time;
        };
    }
    const Config llama = *presetFromText(findBuiltin("scenarios", "llama-3-70b-128xh100")->text).config;
    BENCHMARK("Llama-3-70B on 128 H100s, p = 4, 128 micro-batches")
    {
        return simulateIteration(llama).step_time;
    };
}

// Reserved memory (core/timeline/reserved.h): the CLI pays it in eval, check
// and timeline; the GUI computes it off its thread, so no frame waits for it.
TEST_CASE("Reserved memory through the caching allocator", "[bench]")
{
    for (const char *name : {"llama-3-70b-128xh100", "deepseek-v3-2048xh100-p16-v4", "seed-000-7b-c-offload"}) {
        const Config config = *presetFromText(findBuiltin("scenarios", name)->text).config;
        const Timeline tl = simulateIteration(config);
        BENCHMARK(std::string(name) + ": every rank's iterations through the allocator")
        {
            return simulateReserved(config, tl).peak_bytes;
        };
    }
}
