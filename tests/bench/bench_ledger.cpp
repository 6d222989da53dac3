// SPDX-License-Identifier: MIT
// Benchmarks (run with `cmake --build <dir> --target bench`); never asserted on time.
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "core/planner/tensorplan.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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
    const Config interleaved
        = load("gpt-3-175b-64gpus-tp-sp-selective",
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
    // torchtitan's FSDP2 (issue 30's budget): per-op checkpointing, the FSDP rows and their streams.
    const Config fsdp = load("llama-3.1-8b-8xh100-torchtitan-fsdp", {});
    BENCHMARK("Llama-3.1-8B, torchtitan FSDP2 over 8 GPUs, per-op checkpointing")
    {
        return computeLedger(fsdp).peak_bytes;
    };
    // The same on a 405B pipeline under FSDP (every block kept gathered through the micro-batches).
    const Config fsdpPp
        = load("llama-3.1-405b-8192xh100", {"strategy.framework=\"torchtitan\"", "parallelism.zero_stage=3",
                                            "strategy.recompute_granularity=\"full\""});
    BENCHMARK("Llama-3.1-405B, torchtitan FSDP2 with p = 16")
    {
        return computeLedger(fsdpPp).peak_bytes;
    };
}

TEST_CASE("Ledger with tensor policies", "[bench]")
{
    // Issue 12's target: per-tensor policies keep the 96-layer ledger within its 20 µs.
    const Config gpt3 = load("gpt-3-175b-64gpus-tp-sp-selective",
                             {R"(strategy.tensor_policies={"attention.*":"recompute","mlp.fc1.output":"quantize_fp8",)"
                              R"("mlp.fc2.input":"offload","*dropout_mask":"store"})"});
    BENCHMARK("GPT-3 175B, 96 layers, p = 8, four rules")
    {
        return computeLedger(gpt3).peak_bytes;
    };
    // The same rules with cross-rank activation balancing on: both refinements at once.
    const Config balanced
        = load("gpt-3-175b-64gpus-tp-sp-selective",
               {R"(strategy.tensor_policies={"attention.*":"recompute","mlp.fc1.output":"quantize_fp8",)"
                R"("mlp.fc2.input":"offload","*dropout_mask":"store"})",
                "strategy.pipeline_activation_balance=auto"});
    BENCHMARK("GPT-3 175B, 96 layers, p = 8, four rules, activation balance")
    {
        return computeLedger(balanced).peak_bytes;
    };
}

TEST_CASE("Tensor frontier", "[bench]")
{
    // Issue 12's target: the per-tensor frontier with quantise as a fourth
    // (and fifth) fate stays under a frame (16 ms) on the largest preset.
    for (const char *name : {"llama-3.1-405b-16k-h100", "gpt-3-175b-64gpus-tp-only"}) {
        Config c = load(name, {"strategy.flash_attention=false"});
        const LayerGraph g = layerGraph(c);
        BENCHMARK(std::string(name) + ", no FlashAttention: store / recompute / offload")
        {
            return tensorFrontier(g, TensorCost::Roofline, true).size();
        };
        BENCHMARK(std::string(name) + ", no FlashAttention: all five fates")
        {
            return tensorFrontier(g, TensorCost::Roofline, true, true).size();
        };
    }
}
