// SPDX-License-Identifier: MIT
// How much faster FP8 makes a step, against published BF16 → FP8 pairs run
// on the same layout. torchtitan's benchmark of December 2024
// (benchmarks/llama3_h100_202412_torchtitan.md): Llama 3.1 8B, FSDP over 8
// and over 128 H100s, local batch 2 of 8192-token sequences (llama3_8b.toml),
// selective activation checkpointing, torch.compile; Float8 (torchao's
// Float8Linear, dynamic tensorwise scaling, the FSDP all-gather in float8 as
// its docs/float8.md recommends): 6,667 → 8,532 tokens/s/GPU on 8 GPUs
// (1.280×), 6,514 → 8,380 on 128 (1.286×). The model's ratio must be within
// 10 % of each.
#include "core/time/costmodel.h"
#include "core/time/steptime.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

Config torchtitan8b(int gpus, bool fp8)
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "llama-3.1-8b";
    doc["training"] = {{"seq_length", 8192}, {"micro_batch_size", 2}, {"global_batch_size", 2 * gpus}};
    if (fp8)
        doc["training"]["fp8_recipe"] = "tensorwise";
    doc["parallelism"] = {{"data_parallel_size", gpus}, {"zero_stage", 3}};
    doc["strategy"] = {{"recompute_granularity", "selective"},
                       {"flash_attention", true},
                       {"fp8_implementation", "torchao"},
                       {"fp8_param_gather", fp8}};
    doc["hardware"] = "H100-SXM-80GB";
    return configFrom(doc);
}

} // namespace

TEST_CASE("FP8's speed-up on Llama 3.1 8B is torchtitan's measured one within 10 %", "[time][fp8]")
{
    const std::vector<std::tuple<int, double, double>> runs = {{8, 6667, 8532}, {128, 6514, 8380}};
    for (const auto &[gpus, bf16Tps, fp8Tps] : runs) {
        const StepTime bf16 = estimateStepTime(torchtitan8b(gpus, false));
        const StepTime fp8 = estimateStepTime(torchtitan8b(gpus, true));
        const double modelled = bf16.total / fp8.total, measured = fp8Tps / bf16Tps;
        INFO(gpus << " GPUs: modelled " << modelled << "x (" << bf16.total << " s -> " << fp8.total << " s), measured "
                  << measured << "x");
        CHECK(std::fabs(modelled / measured - 1.0) <= 0.10);
    }
}

TEST_CASE("Current scaling reads each tensor it casts once more, for its amax", "[time][fp8]")
{
    // One layer of a GPT (h 1024, 16 heads, FFN 4096, no GQA), one micro-batch
    // of 2048 tokens per iteration, Transformer Engine. On HBM of 1e12 B/s at
    // efficiency 1 with a 4 µs launch, the forward's amax passes read in bf16
    // (2 B) the four GEMM inputs, QKV, projection and fc1 2048 × 1024 each
    // and fc2 2048 × 4096, and the four weights (cast once per iteration):
    // 3·2048·1024 + 2048·4096 = 14,680,064 input elements, 3·1024² (QKV) +
    // 1024² + 2·1024·4096 = 12,582,912 weight elements; 8 kernels.
    // The backward's read the output gradients: 2048 · (3·1024 + 1024 + 4096
    // + 1024) = 18,874,368 elements, 4 kernels.
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 2},           {"hidden_size", 1024},
                    {"num_attention_heads", 16}, {"ffn_hidden_size", 4096},
                    {"vocab_size", 32000},       {"normalization", "LayerNorm"},
                    {"add_bias_linear", false},  {"position_embedding_type", "rope"}};
    doc["training"] = {{"seq_length", 2048}, {"micro_batch_size", 1}, {"global_batch_size", 1}};
    doc["hardware"] = "H100-SXM-80GB";
    const auto layer = [&](const char *recipe) {
        nlohmann::json d = doc;
        d["training"]["fp8_recipe"] = recipe;
        Config c = configFrom(d);
        c.hardware.hbm_bytes_per_s = 1e12;
        c.hardware.hbm_efficiency = {{1.0, 1.0}};
        c.hardware.kernel_launch_s = 4e-6;
        return costModel(c).dense;
    };
    const LayerCost delayed = layer("delayed"), current = layer("tensorwise");
    const double forward = (14680064.0 + 12582912.0) * 2 / 1e12 + 8 * 4e-6;
    const double backward = 18874368.0 * 2 / 1e12 + 4 * 4e-6;
    CHECK(current.forward.seconds - delayed.forward.seconds == Approx(forward));
    CHECK(current.backward.seconds - delayed.backward.seconds == Approx(backward));
}
