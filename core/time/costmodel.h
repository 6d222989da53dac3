// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/time/kernelcost.h"

namespace memledger {

// Exposed communication of one pass of one layer (what the compute stream
// waits for; overlapped parts are left out), seconds.
struct PassComm
{
    double tensor = 0; // TP all-reduces, or SP all-gathers and reduce-scatters
    double context = 0; // CP ring exchange of K and V (and their gradients)
    double expert = 0; // EP all-to-all dispatch and combine
    double total() const { return tensor + context + expert; }
};

// Costs of one transformer layer on one rank for one micro-batch. Each
// OpCost's seconds include the pass's exposed communication, so the timeline
// can lay passes end to end; the *Comm fields say how much of it that is.
struct LayerCost
{
    OpCost forward;
    OpCost backward; // input and weight gradients: twice the forward's GEMM work
    OpCost recompute; // what the recompute policy adds to the backward (full: one more forward)
    OpCost weightGrad; // the part of `backward` that computes weight gradients (a deferred W pass)
    PassComm forwardComm, backwardComm, recomputeComm;
};

struct CostModel
{
    LayerCost dense;
    LayerCost moe;
    OpCost outputForward; // last stage: final norm, logits and loss
    OpCost outputBackward;
    OpCost outputWeightGrad; // the output layer's weight-gradient GEMM, part of outputBackward
    double p2pSeconds = 0; // one activation (or its gradient) between neighbouring stages
    double policyOffloadBytes = 0; // what strategy.tensor_policies send to the host per layer and micro-batch
    double policyOffloadBytesMoe = 0; // the same for an MoE layer (its own tensors)
};

// Per-kernel costs from the configuration (core/time/kernelcost.h): each linear
// layer a GEMM of its real shape, the attention core as two batched GEMMs
// with a softmax and dropout between (or one FlashAttention kernel), the
// norms, activations and residual adds as memory-bound kernels, and the
// tensor-, context- and expert-parallel collectives each pass issues. Ranks
// of one tensor- or context-parallel group share a node of `gpusPerNode`
// GPUs (NVLink); pipeline neighbours sit t·c·d ranks apart (Megatron's rank
// order). gpusPerNode 0: the hardware's gpus_per_node.
CostModel costModel(const Config &config, std::int64_t gpusPerNode = 0);

// Whether a backward re-runs the recompute work (LayerCost::recompute) of
// layer `indexInChunk`, 0-based within its virtual chunk: every layer, but
// with full recompute by the block method only each chunk's first
// recompute_num_layers, the rest running without recompute (Megatron-LM's
// TransformerBlock._checkpointed_forward, recompute_method "block").
bool recomputesLayer(const StrategyConfig &strategy, std::int64_t indexInChunk);

// One send per micro-batch and direction between pipeline neighbours, over
// NVLink or the network (whatever the configured p). Without SP a TP stage sends 1/t per rank and the
// receiver all-gathers it (scatter/gather, Narayanan et al. 2021 §4.1) unless
// strategy.scatter_gather_tensors_in_pipeline is off.
double pipelineSendSeconds(const Config &config, bool nvlink);

// The optimizer step of one rank, whose parameters (before ZeRO) are
// `params`, of which `expertParams` are sharded over the expert-data group.
// On the device it streams states, gradients and weights through HBM; with
// optimizer offload the CPU updates at hardware.cpu_adam_params_per_s
// (ZeRO-Offload's CPU-Adam: 0.25 s per billion parameters, Table 4) after
// the gradients cross the host link, and the updated weights come back over it.
struct OptimizerCost
{
    double deviceSeconds = 0;
    double copyOutSeconds = 0;
    double cpuSeconds = 0;
    double copyInSeconds = 0;
    double total() const { return deviceSeconds + copyOutSeconds + cpuSeconds + copyInSeconds; }
};
OptimizerCost optimizerCost(const Config &config, std::int64_t params, std::int64_t expertParams);
// The same for a shard of `shard` parameters with the given bytes per
// parameter; `offloadLinkBytesPerS` 0 keeps the step on the device.
// `gradsOnHost`: grad_offload already sent the gradients during backward.
OptimizerCost optimizerStepCost(const HardwareConfig &hardware, double shard, double optimizerBytesPerParam,
                                double gradBytes, double weightBytes, double offloadLinkBytesPerS,
                                bool gradsOnHost = false);

// The link an offloaded optimizer step crosses (host link, or the slower of
// it and NVMe); 0 when the step stays on the device.
double optimizerOffloadLink(const Config &config);

// The parameters one rank's optimizer updates: all it holds without ZeRO,
// its 1/(d·c) share (experts: 1/expert-data group) with ZeRO-1 and above.
double optimizerShard(const Config &config, std::int64_t params, std::int64_t expertParams);

} // namespace memledger
