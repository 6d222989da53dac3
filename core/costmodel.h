// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"

namespace memledger {

// A roofline estimate: an op takes max(FLOPs / peak FLOPs, bytes / HBM
// bandwidth). No efficiency factor is applied, so step times are lower bounds
// of what a real kernel mix achieves; ratios between plans are what matter.
struct OpCost
{
    double flops = 0;
    double bytes = 0;
    double seconds = 0;
    OpCost &operator+=(const OpCost &o);
};
OpCost roofline(const HardwareConfig &hardware, double flops, double bytes);

// Costs of one transformer layer on one rank for one micro-batch.
struct LayerCost
{
    OpCost forward;
    OpCost backward; // input gradient + weight gradient: twice the forward's matmul work
    OpCost recompute; // what the recompute policy adds to the backward (full: one more forward)
};

struct CostModel
{
    LayerCost dense;
    LayerCost moe;
    OpCost outputForward; // last stage: logits and loss
    OpCost outputBackward;
    double p2pSeconds = 0; // one activation tensor between neighbouring stages
};

// Per-op costs from the configuration: FLOPs from the parameter matrices
// (2 per multiply-add) and the attention products 4 b s^2 a d / t; bytes from
// the weights read and the activations written and read again.
CostModel costModel(const Config &config);

// The optimizer step of one rank, whose parameters (before ZeRO) are
// `params`, of which `expertParams` are sharded over the expert-data group.
// On the device it streams states, gradients and weights through HBM; with
// optimizer offload the CPU updates at ZeRO-Offload's measured 0.25 s per
// billion parameters (CPU-Adam, Table 4) after the gradients cross the host
// link, and the updated weights come back over it.
struct OptimizerCost
{
    double deviceSeconds = 0;
    double copyOutSeconds = 0;
    double cpuSeconds = 0;
    double copyInSeconds = 0;
    double total() const { return deviceSeconds + copyOutSeconds + cpuSeconds + copyInSeconds; }
};
OptimizerCost optimizerCost(const Config &config, std::int64_t params, std::int64_t expertParams);

// The parameters one rank's optimizer updates: all it holds without ZeRO,
// its 1/(d·c) share (experts: 1/expert-data group) with ZeRO-1 and above.
double optimizerShard(const Config &config, std::int64_t params, std::int64_t expertParams);

constexpr double kCpuAdamSecondsPerParam = 0.25e-9;

} // namespace memledger
