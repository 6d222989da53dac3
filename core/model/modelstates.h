// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>
#include <string>

namespace memledger {

// Bytes per parameter of each model-state category, derived from the
// precision and optimizer choices (never typed in), with the words that say why.
struct StateBytes
{
    int weight = 2; // as stored: params_dtype, or 4 with training.fp32_params
    int compute = 2; // as the layers use them (gathered, cast): params_dtype
    int grad = 4;
    int master = 4; // fp32 master copy, 0 without one
    double states = 8; // optimizer moments per parameter (Adafactor: per factored element)
    bool factored = false; // Adafactor: states scale with rows + cols, not rows * cols
    // Muon: `states` is the momentum of each 2-D matrix element; every other
    // element (embeddings, output layer, norms, biases) takes AdamW's two moments.
    bool muon = false;
    double fallbackStates = 0;
    std::string weightWhy, gradWhy, optWhy;

    // K of the ZeRO paper: optimizer bytes per parameter (master + moments).
    double optimizerPerParam() const { return master + (factored ? 0.0 : states); }
};
StateBytes stateBytes(const TrainingConfig &training);

// One parameter group's model states on one GPU, sharded by ZeRO over a
// data-parallel group of `group` ranks: stage 1 shards optimizer states,
// stage 2 also gradients, stage 3 also weights (Rajbhandari et al. 2020).
struct ModelStates
{
    Bytes weights = 0;
    Bytes gradients = 0;
    Bytes optimizer = 0;
    Bytes total() const { return weights + gradients + optimizer; }
};
// `matrixElements`: of `params`, those Muon updates (the rest AdamW); ignored by other optimizers.
ModelStates modelStates(const StateBytes &sb, std::int64_t params, std::int64_t factoredElements, int zero,
                        std::int64_t group, std::int64_t matrixElements = 0);

// What the optimizer step allocates on the device for a moment, as Adam's
// update divides by sqrt(exp_avg_sq) (strategy.optimizer_kernel):
// - fused (Apex / Transformer Engine FusedAdam as Megatron uses, torch fused=True): nothing;
// - foreach (torch.optim's default for GPU tensors, PyTorch >= 2.0
//   _multi_tensor_adamw): torch._foreach_sqrt(exp_avg_sqs) over the whole
//   shard, one temporary per parameter, all alive together;
// - single_tensor (torch.optim's for-loop, its default on the CPU):
//   (exp_avg_sq.sqrt() / bias_correction) holds two temporaries of one tensor,
//   the largest tensor's at worst.
// `shardElements` is what this rank updates (after ZeRO), `largestTensor` its
// largest parameter tensor. Other optimizers, or the update on the host
// (optimizer offload), allocate nothing on the device here.
Bytes optimizerStepTemporaries(const Config &config, double shardElements, std::int64_t largestTensor);

} // namespace memledger
