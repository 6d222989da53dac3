// SPDX-License-Identifier: MIT
#include "core/costmodel.h"

#include "core/activations.h"
#include "core/modelstates.h"
#include "core/parameters.h"

#include <algorithm>

namespace memledger {

OpCost &OpCost::operator+=(const OpCost &o)
{
    flops += o.flops;
    bytes += o.bytes;
    seconds += o.seconds;
    return *this;
}

OpCost roofline(const HardwareConfig &hw, double flops, double bytes)
{
    return {flops, bytes, std::max(flops / hw.peak_bf16_flops, bytes / hw.hbm_bytes_per_s)};
}

namespace {

struct Shape
{
    double tokens; // s/c * b: tokens of one micro-batch on one context-parallel rank
    double moeTokens; // tokens entering the experts of one rank (balanced, top-k, ETP-gathered)
    double attention; // forward FLOPs of QK^T and xV: 4 b (s/c) s a d / t
};

Shape shapeOf(const Config &c)
{
    const ModelConfig &m = c.model;
    const ParallelismConfig &par = c.parallelism;
    const double t = double(par.tensor_model_parallel_size);
    const double cp = double(par.context_parallel_size);
    const double s = double(c.training.seq_length);
    const double b = double(c.training.micro_batch_size);
    Shape sh;
    sh.tokens = s / cp * b;
    const bool sp = par.sequence_parallel && par.tensor_model_parallel_size > 1;
    sh.moeTokens = sh.tokens / (sp ? t : 1.0) * double(m.moe_router_topk) * double(par.expertTensorParallel());
    const double qk = m.multi_latent_attention ? double(m.qk_head_dim + m.qk_pos_emb_head_dim) : double(m.headDim());
    const double vd = m.multi_latent_attention ? double(m.v_head_dim) : double(m.headDim());
    sh.attention = 2.0 * b * (s / cp) * s * double(m.num_attention_heads) * (qk + vd) / t;
    return sh;
}

LayerCost layerCost(const Config &c, const Shape &sh, bool moe)
{
    const HardwareConfig &hw = c.hardware;
    const ParallelismConfig &par = c.parallelism;
    const LayerParams lp = layerParams(c.model, moe, par.tensor_model_parallel_size, par.expert_model_parallel_size,
                                       par.expertTensorParallel());
    const LayerActivations la = layerActivations(c, moe, false);
    const double wBytes = double(dtypeBytes(c.training.params_dtype));
    // Experts on this rank see moeTokens tokens spread over its E/e experts.
    const double localExperts = moe ? double(c.model.num_experts / par.expert_model_parallel_size) : 1.0;
    const double expertFlops = moe ? 2.0 * sh.moeTokens * double(lp.expert.params) / localExperts : 0.0;
    const double flops = 2.0 * sh.tokens * double(lp.dense.params) + expertFlops + sh.attention;
    const double weights = double(lp.dense.params + lp.expert.params) * wBytes;
    const double acts = double(la.total);

    LayerCost cost;
    cost.forward = roofline(hw, flops, weights + 2.0 * acts);
    cost.backward = roofline(hw, 2.0 * flops, 2.0 * weights + 3.0 * acts);
    switch (c.strategy.recompute_granularity) {
    case RecomputeGranularity::None:
        break;
    case RecomputeGranularity::Selective:
        // The attention core again: its matmuls and the memory-bound softmax/dropout
        // over the score tensors; FlashAttention recomputes inside its own kernel.
        if (!c.strategy.flash_attention)
            cost.recompute = roofline(hw, sh.attention, 2.0 * double(la.attentionCore));
        break;
    case RecomputeGranularity::Full:
        cost.recompute = cost.forward;
        break;
    }
    return cost;
}

} // namespace

CostModel costModel(const Config &c)
{
    const Shape sh = shapeOf(c);
    const ParallelismConfig &par = c.parallelism;
    CostModel cm;
    cm.dense = layerCost(c, sh, false);
    cm.moe = c.model.isMoe() ? layerCost(c, sh, true) : cm.dense;

    const double t = double(par.tensor_model_parallel_size);
    const double vocab = double(paddedVocab(c.model, par.tensor_model_parallel_size));
    const double h = double(c.model.hidden_size);
    const double logits = sh.tokens * vocab / t;
    // Logits matmul, then the fp32 softmax written and read for the loss.
    cm.outputForward
        = roofline(c.hardware, 2.0 * sh.tokens * h * vocab / t, vocab * h / t * 2.0 + logits * (2.0 + 4.0 + 4.0));
    cm.outputBackward
        = roofline(c.hardware, 4.0 * sh.tokens * h * vocab / t, 2.0 * vocab * h / t * 2.0 + logits * (4.0 + 2.0));

    // Neighbouring stages sit t*c*d ranks apart (Megatron's rank order); on
    // 8-GPU nodes they share NVLink only when that distance is under 8.
    const bool sp = par.sequence_parallel && par.tensor_model_parallel_size > 1;
    const double act = double(activationBytes(c)) * sh.tokens * h / (sp ? t : 1.0);
    const std::int64_t distance = par.tensor_model_parallel_size * par.context_parallel_size * par.data_parallel_size;
    cm.p2pSeconds = par.pipeline_model_parallel_size > 1
                        ? act / (distance < 8 ? c.hardware.nvlink_bytes_per_s : c.hardware.network_bytes_per_s)
                        : 0.0;
    return cm;
}

double optimizerShard(const Config &c, std::int64_t params, std::int64_t expertParams)
{
    const ParallelismConfig &par = c.parallelism;
    const std::int64_t dp = par.data_parallel_size * par.context_parallel_size;
    const std::int64_t edp = c.model.isMoe() ? std::max<std::int64_t>(
                                 1, par.tensor_model_parallel_size * par.context_parallel_size * par.data_parallel_size
                                        / (par.expertTensorParallel() * par.expert_model_parallel_size))
                                             : 1;
    const bool sharded = par.zero_stage >= 1;
    return double(params - expertParams) / double(sharded ? dp : 1) + double(expertParams) / double(sharded ? edp : 1);
}

OptimizerCost optimizerCost(const Config &c, std::int64_t params, std::int64_t expertParams)
{
    const StateBytes sb = stateBytes(c.training);
    const double shard = optimizerShard(c, params, expertParams);
    OptimizerCost oc;
    if (c.strategy.optimizer_offload == OffloadTarget::None) {
        // Read and write every state, read the gradient, write the weight.
        const double perParam = 2.0 * sb.optimizerPerParam() + sb.grad + sb.weight;
        oc.deviceSeconds = shard * perParam / c.hardware.hbm_bytes_per_s;
        return oc;
    }
    const double link = c.strategy.optimizer_offload == OffloadTarget::NVMe
                            ? std::min(c.hardware.host_link_bytes_per_s, c.hardware.nvme_bytes_per_s)
                            : c.hardware.host_link_bytes_per_s;
    oc.copyOutSeconds = shard * sb.grad / link;
    oc.cpuSeconds = shard * kCpuAdamSecondsPerParam;
    oc.copyInSeconds = shard * sb.weight / link;
    return oc;
}

} // namespace memledger
