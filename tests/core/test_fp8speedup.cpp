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
#include "core/steptime.h"
#include "testutil.h"

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
