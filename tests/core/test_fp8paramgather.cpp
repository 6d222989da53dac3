// SPDX-License-Identifier: MIT
// Megatron's --fp8-param-gather (the model built under Transformer Engine's
// fp8_model_init, FP8 primary weights) and torchtitan's
// enable_fsdp_float8_all_gather: ZeRO's all-gathers of the weights move the
// linear layers' weights in FP8, "reducing the all-gather overhead by half"
// (NeMo's communication-overlap guide). Counted by hand below.
#include "core/check/validate.h"
#include "core/ledger/ledger.h"
#include "core/model/fp8.h"
#include "core/model/parameters.h"
#include "core/reports/steptimereport.h"
#include "core/time/steptime.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

// A GPT of 4 layers, h 1024, 16 heads, FFN 4096, LayerNorm with biases,
// distributed optimizer over 8 ranks, FP8 with current scaling.
Config smallGpt(bool fp8ParamGather, const char *recipe = "tensorwise")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 4},
                    {"hidden_size", 1024},
                    {"num_attention_heads", 16},
                    {"ffn_hidden_size", 4096},
                    {"vocab_size", 32000},
                    {"normalization", "LayerNorm"},
                    {"position_embedding_type", "rope"}};
    doc["training"] = {{"seq_length", 2048}, {"micro_batch_size", 1}, {"global_batch_size", 8}};
    if (recipe != nullptr)
        doc["training"]["fp8_recipe"] = recipe;
    doc["parallelism"] = {{"data_parallel_size", 8}, {"zero_stage", 1}};
    doc["strategy"] = {{"fp8_param_gather", fp8ParamGather}};
    if (recipe != nullptr && std::string(recipe) == "mxfp8")
        doc["hardware"] = "B200-192GB"; // MXFP8 needs Blackwell tensor cores
    return configFrom(doc);
}

} // namespace

TEST_CASE("fp8_param_gather: the linear weights cross in 1 byte, the rest in 2", "[time][fp8][zero]")
{
    const Config c = smallGpt(true);
    REQUIRE(fp8ParamGatherInForce(c));
    // FP8 weights per layer: QKV 1024 × 3072 + projection 1024 × 1024 + fc1
    // 1024 × 4096 + fc2 4096 × 1024 = 12 · 1024² = 12,582,912; 4 layers:
    // 50,331,648. Everything else (embedding, output layer, norms, biases)
    // stays bf16.
    const double fp8 = 4.0 * 12.0 * 1024.0 * 1024.0;
    const double total = double(totalParameters(c));
    REQUIRE(total > fp8);
    CHECK(fp8GatherBytesPerParam(c) == Approx((fp8 * 1.0 + (total - fp8) * 2.0) / total));
    // Off, or without ZeRO, the weights' own 2 bytes.
    CHECK(fp8GatherBytesPerParam(smallGpt(false)) == 2.0);
}

TEST_CASE("fp8_param_gather: the linear weights are FP8 primary weights, without a 16-bit copy", "[ledger][fp8][zero]")
{
    // fp8_model_init: the 50,331,648 linear weights of the 4 layers exist
    // only as FP8 tensors (the "FP8 weight copies" row: rowwise and its
    // transpose on Hopper, 1 B each and a 4-byte scale per tensor); what stays
    // in bf16 is the layers' norms and biases: per layer 2 LayerNorms of
    // 2 · 1024, the QKV bias 3072, the projection's 1024, fc1's 4096 and
    // fc2's 1024 = 13,312, 53,248 for the 4 layers.
    auto row = [](const Ledger &l, Category c, const std::string &label) {
        for (const LedgerEntry &e : l.ranks[0].entries)
            if (e.category == c && e.label == label)
                return e.bytes;
        return Bytes(-1);
    };
    const Ledger primary = computeLedger(smallGpt(true));
    CHECK(row(primary, Category::Weights, "Transformer layers") == 53248 * 2);
    const Ledger copies = computeLedger(smallGpt(false));
    CHECK(row(copies, Category::Weights, "Transformer layers") == (50331648 + 53248) * 2);
    // The FP8 copies are the same either way; gradients and optimizer states too.
    CHECK(row(primary, Category::Weights, "FP8 weight copies") == row(copies, Category::Weights, "FP8 weight copies"));
    CHECK(row(primary, Category::Gradients, "Transformer layers")
          == row(copies, Category::Gradients, "Transformer layers"));
    CHECK(primary.ranks[0].device_total_bytes == copies.ranks[0].device_total_bytes - 50331648 * 2);
}

TEST_CASE("fp8_param_gather: MXFP8 weights carry an E8M0 scale byte per 32", "[time][fp8][zero]")
{
    const Config c = smallGpt(true, "mxfp8");
    const double fp8 = 4.0 * 12.0 * 1024.0 * 1024.0;
    const double total = double(totalParameters(c));
    CHECK(fp8GatherBytesPerParam(c) == Approx((fp8 * (1.0 + 1.0 / 32.0) + (total - fp8) * 2.0) / total));
}

TEST_CASE("fp8_param_gather halves ZeRO's weight all-gather in the step time", "[time][fp8][zero]")
{
    // 1e9 parameters, 8 ranks on a 50 GB/s link of efficiency 1 and no
    // latency: the all-gather after the step moves 2e9 · 7/8 bytes in
    // 0.035 s; at 1 byte per parameter 0.0175 s. ZeRO-3's two gathers per
    // micro-batch shrink alike (4 micro-batches: 8 · 0.0175 = 0.14 s, 0.06 s
    // beyond the 0.08 s of compute they prefetch under; bf16: 0.28 − 0.08).
    HardwareConfig hw;
    hw.network_bytes_per_s = 50e9;
    hw.network_efficiency = {{1.0, 1.0}};
    hw.collective_latency_s = 0;
    StepInputs in;
    in.layersOnRank = 10;
    in.microBatches = 4;
    in.layer.forward.seconds = 0.0005;
    in.layer.backward.seconds = 0.0015;
    in.dataParallel = 8;
    in.paramsOnRank = 1e9;
    in.gradBytes = 4;
    in.weightBytes = 2;
    in.zeroStage = 1;
    CHECK(stepTime(in, hw).paramGather == Approx(0.035));
    in.gatherBytes = 1;
    CHECK(stepTime(in, hw).paramGather == Approx(0.0175));
    in.zeroStage = 3;
    CHECK(stepTime(in, hw).paramGather == Approx(0.0175 + 0.06));
    in.gatherBytes = -1;
    CHECK(stepTime(in, hw).paramGather == Approx(0.035 + 0.20));
}

TEST_CASE("fp8_param_gather needs an FP8 recipe — the explanation says which gather is in force",
          "[time][fp8][validate][report]")
{
    Config c = smallGpt(true);
    const StepTime on = estimateStepTime(c);
    CHECK(stepTimeToJson(c, on).dump().find("fp8_param_gather: ZeRO") != std::string::npos);
    CHECK(stepTimeToJson(c, on).dump().find("after an amax pass") != std::string::npos); // tensorwise
    Config off = smallGpt(false);
    CHECK(estimateStepTime(off).paramGather > on.paramGather);
    CHECK(stepTimeToJson(off, estimateStepTime(off)).dump().find("fp8_param_gather off") != std::string::npos);

    c.training.fp8_recipe = Fp8Recipe::None;
    bool refused = false;
    for (const Problem &p : validate(c))
        refused |= p.path == "strategy.fp8_param_gather" && p.isError();
    CHECK(refused);
    CHECK_FALSE(fp8ParamGatherInForce(c));
}
