// SPDX-License-Identifier: MIT
#include "core/time/costmodel.h"

#include "core/config/efficiency.h"
#include "core/model/activations.h"
#include "core/model/fp8.h"
#include "core/model/modelstates.h"
#include "core/model/parameters.h"
#include "core/time/layergraph.h"

#include <algorithm>

namespace memledger {

namespace {

// FlashAttention-2 reaches up to 73 % of A100 peak forward and 63 % backward
// (Dao 2023, §4.1), where cuBLAS GEMMs of the same size reach about 83 %: the
// fused kernel runs at these shares of the GEMM efficiency. Its backward
// recomputes the scores: five GEMMs' work where the forward has two.
constexpr double kFlashForwardShare = 0.88;
constexpr double kFlashBackwardShare = 0.76;
constexpr double kFlashBackwardWork = 2.5;

// The linear layers' GEMMs in FP8 (training.fp8_recipe) and their casts,
// memory-bound kernels read in 16-bit and written in FP8: Transformer Engine
// casts each input to its two usages in the forward (one is saved), the
// output gradient to both in the backward, and each weight once per
// iteration (cached from the first micro-batch: 1/m of it per micro-batch);
// torchao casts input and weight at every GEMM, forward and backward, and the
// output gradient to both usages. TE fuses some casts into the norm before;
// they are priced unfused here. Current (per-tensor, dynamic) scaling
// needs a tensor's amax before it can cast it, a reduction pass over the
// 16-bit tensor of its own (Transformer Engine's Float8CurrentScaling
// quantizer computes the amax, then the scale, then casts; torchao's
// tensorwise Float8Linear takes amax(abs(x)) first); delayed scaling casts
// with the scale from its amax history and MXFP8 and blockwise scaling take
// each block's amax inside the cast kernel, so they read the tensor once.
struct Fp8Gemms
{
    bool on = false;
    bool transformerEngine = true;
    bool amaxPass = false; // current scaling: one more read of each tensor cast
    double operand = 1; // bytes per FP8 element with its scales
    double copies = 2; // usages stored apart
    double microBatches = 1;
};

struct Dims
{
    double b, s, sLocal, t, c, e, etp, h, a, g, dqk, dv;
    double tokens; // b·s/c: one micro-batch on one context-parallel rank
    double spTokens; // tokens / t with sequence parallelism: what norms and dropouts see
    double moeTokens; // tokens entering this rank's experts (balanced, top-k, ETP-gathered)
    double act; // bytes of one activation element
    bool sp, nvlinkTp, nvlinkCp, nvlinkEp;
    Fp8Gemms fp8;
};

Dims dimsOf(const Config &config, std::int64_t gpusPerNode)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    Dims d{};
    d.b = double(config.training.micro_batch_size);
    d.s = double(config.training.seq_length);
    d.t = double(par.tensor_model_parallel_size);
    d.c = double(par.context_parallel_size);
    d.e = double(par.expert_model_parallel_size);
    d.etp = double(par.expertTensorParallel());
    d.sLocal = d.s / d.c;
    d.h = double(m.hidden_size);
    d.a = double(m.num_attention_heads);
    d.g = double(m.queryGroups());
    d.dqk = m.multi_latent_attention ? double(m.qk_head_dim + m.qk_pos_emb_head_dim) : double(m.headDim());
    d.dv = m.multi_latent_attention ? double(m.v_head_dim) : double(m.headDim());
    d.tokens = d.b * d.sLocal;
    d.sp = par.sequence_parallel && par.tensor_model_parallel_size > 1;
    d.spTokens = d.tokens / (d.sp ? d.t : 1.0);
    d.moeTokens = d.spTokens * double(m.moe_router_topk) * d.etp;
    d.act = double(activationBytes(config));
    const double node = double(gpusPerNode);
    d.nvlinkTp = d.t <= node;
    d.nvlinkCp = d.t * d.c <= node;
    d.nvlinkEp = d.t * d.c * d.e <= node;
    const Fp8Format f8 = fp8Format(config);
    d.fp8 = {f8.on,
             f8.transformerEngine,
             config.training.fp8_recipe == Fp8Recipe::Tensorwise,
             f8.inputBytes,
             f8.copies,
             double(std::max<std::int64_t>(1, config.microBatches()))};
    return d;
}

// One pass of a layer, accumulated kernel by kernel.
struct Pass
{
    OpCost cost;
    double gemmSeconds = 0; // of the linear layers: what TP overlap can hide behind
    double coreSeconds = 0; // of the attention core: what the CP ring overlaps with
};

struct LayerKernels
{
    Pass forward, backward, core; // core: the attention core's forward alone (selective recompute)
    OpCost weight; // the linear layers' weight-gradient GEMMs: the part of the backward a W pass runs
};

// The casts of one FP8 GEMM's operands, forward and backward (Fp8Gemms).
void addFp8Casts(const HardwareConfig &hw, LayerKernels &k, const Gemm &g, double act, const Fp8Gemms &q)
{
    const double in = g.batch * g.m * g.k, out = g.batch * g.m * g.n, w = g.batch * g.k * g.n;
    // One cast of `elements` writing `written` bytes each, after its amax pass under current scaling.
    const auto cast = [&](double elements, double written) {
        OpCost c = memoryCost(hw, elements * (act + written));
        if (q.amaxPass)
            c += memoryCost(hw, elements * act);
        return c;
    };
    if (q.transformerEngine) {
        const double written = q.copies * q.operand;
        OpCost weight = cast(w, written);
        weight.bytes /= q.microBatches;
        weight.seconds /= q.microBatches;
        k.forward.cost += cast(in, written);
        k.forward.cost += weight;
        k.backward.cost += cast(out, written);
        return;
    }
    k.forward.cost += cast(in, 1);
    k.forward.cost += cast(w, 1);
    k.backward.cost += cast(out, 2);
    k.backward.cost += cast(in, 1);
    k.backward.cost += cast(w, 1);
}

// `fp8`: a linear layer's GEMM under training.fp8_recipe (nullptr: 16-bit).
void addGemm(const HardwareConfig &hw, LayerKernels &k, const Gemm &g, double act, bool linear,
             const Fp8Gemms *fp8 = nullptr)
{
    const bool q = fp8 && fp8->on;
    const OpCost f = q ? fp8GemmCost(hw, g, fp8->operand, act) : gemmCost(hw, g, act);
    const OpCost b = q ? fp8GemmBackwardCost(hw, g, fp8->operand, act) : gemmBackwardCost(hw, g, act);
    k.forward.cost += f;
    k.backward.cost += b;
    if (q)
        addFp8Casts(hw, k, g, act, *fp8);
    if (linear) {
        k.forward.gemmSeconds += f.seconds;
        k.backward.gemmSeconds += b.seconds;
        const Gemm dB{g.batch, g.k, g.n, g.m}; // dB = Aᵀ · dC, as gemmBackwardCost's second
        k.weight += q ? fp8GemmCost(hw, dB, fp8->operand, act) : gemmCost(hw, dB, act);
    } else {
        k.forward.coreSeconds += f.seconds;
        k.backward.coreSeconds += b.seconds;
        k.core.cost += f;
    }
}

// A memory-bound forward kernel moving `bytes`; its backward reads the saved
// input and the incoming gradient and writes the outgoing one: twice the bytes.
void addMemory(const HardwareConfig &hw, LayerKernels &k, double bytes, bool core = false)
{
    k.forward.cost += memoryCost(hw, bytes);
    k.backward.cost += memoryCost(hw, 2.0 * bytes);
    if (core)
        k.core.cost += memoryCost(hw, bytes);
}

// Two GEMMs of an MLP (fc1 gated with SwiGLU: twice as wide) and the activation between.
void addMlp(const HardwareConfig &hw, LayerKernels &k, const Dims &d, double batch, double tokens, double ffn,
            double split, bool swiglu)
{
    const double in = ffn * (swiglu ? 2.0 : 1.0) / split;
    addGemm(hw, k, {batch, tokens, in, d.h}, d.act, true, &d.fp8);
    addMemory(hw, k,
              batch * tokens * (in + ffn / split) * d.act); // GeLU / SwiGLU: read fc1's output, write fc2's input
    addGemm(hw, k, {batch, tokens, d.h, ffn / split}, d.act, true, &d.fp8);
}

// What the backward re-runs of the layer's forward under recompute_granularity.
void addRecompute(const Config &config, const Dims &d, const LayerKernels &k, LayerCost &cost)
{
    const StrategyConfig &st = config.strategy;
    switch (st.recompute_granularity) {
    case RecomputeGranularity::None:
        break;
    case RecomputeGranularity::Selective:
        // The attention core again; FlashAttention recomputes inside its own kernel.
        if (!st.flash_attention)
            cost.recompute = k.core.cost;
        break;
    case RecomputeGranularity::Full:
        cost.recompute = cost.forward;
        cost.recomputeComm = cost.forwardComm;
        break;
    case RecomputeGranularity::SelectiveOp: {
        // torchtitan's per-op checkpointing re-runs the block without the
        // kept matmuls and the attention kernel: wk, wo and w3 (fc2 without a
        // gated MLP), by their share of the forward's matmul work, every
        // elementwise op, and the all-gathers, which it does not keep (the
        // reduce-scatters' outputs it does).
        const double f = double(config.model.ffn());
        const double kw = d.h * d.g * d.dqk, qw = d.h * d.a * d.dqk, vw = d.h * d.g * d.dv, ow = d.a * d.dv * d.h;
        const double mlp = config.model.swiglu ? 3.0 * d.h * f : 2.0 * d.h * f;
        const double rebuilt = kw + ow + d.h * f; // w3, or fc2
        const double share = rebuilt / (qw + kw + vw + ow + mlp);
        const double elementwise
            = std::max(0.0, k.forward.cost.seconds - k.forward.gemmSeconds - k.forward.coreSeconds);
        cost.recomputeComm.tensor = d.sp ? cost.forwardComm.tensor / 2.0 : 0.0;
        cost.recompute.seconds = share * k.forward.gemmSeconds + elementwise + cost.recomputeComm.total();
        cost.recompute.flops = share * k.forward.cost.flops;
        cost.recompute.bytes = k.forward.cost.bytes;
        break;
    }
    }
}

LayerCost layerCost(const Config &config, const Dims &d, bool moe)
{
    const HardwareConfig &hw = config.hardware;
    const ModelConfig &m = config.model;
    const StrategyConfig &st = config.strategy;
    LayerKernels k;

    // Attention: norm, QKV, core, output projection, bias-dropout-add.
    const double hiddenMask = m.hidden_dropout > 0 ? 1.0 : 0.0;
    addMemory(hw, k, 2.0 * d.spTokens * d.h * d.act);
    double qkvWidth = (d.a * d.dqk + d.g * (d.dqk + d.dv)) / d.t;
    if (m.multi_latent_attention) {
        // Down- and up-projections together: the layer's attention weights past the output projection.
        const LayerParams lp
            = layerParams(m, moe, config.parallelism.tensor_model_parallel_size,
                          config.parallelism.expert_model_parallel_size, config.parallelism.expertTensorParallel());
        qkvWidth = std::max(1.0, double(lp.dense.params - lp.mlpDense) / d.h - d.a * d.dv / d.t);
    }
    addGemm(hw, k, {1, d.tokens, qkvWidth, d.h}, d.act, true, &d.fp8);
    if (m.position_embedding_type == PositionEmbedding::Rope)
        addMemory(hw, k, 2.0 * d.tokens * (d.a + d.g) * d.dqk / d.t * d.act);
    const double heads = d.b * d.a / d.t;
    const Gemm scores{heads, d.sLocal, d.s, d.dqk}, context{heads, d.sLocal, d.dv, d.s};
    if (st.flash_attention) {
        // Causal: the blocks above the diagonal are skipped, half the work.
        const double flops = 0.5 * 2.0 * heads * d.sLocal * d.s * (d.dqk + d.dv);
        const double io = d.tokens * (d.a * 2.0 * d.dqk + d.g * (d.dqk + d.dv)) / d.t * d.act; // q, k, v in, o out
        const double eff = efficiencyAt(hw.gemm_efficiency, flops);
        const OpCost f{flops, io,
                       flops / (hw.peak_bf16_flops * eff * kFlashForwardShare) + io / hw.hbm_bytes_per_s
                           + hw.kernel_launch_s};
        const double bflops = kFlashBackwardWork * flops;
        const OpCost b{bflops, 2.0 * io,
                       bflops / (hw.peak_bf16_flops * eff * kFlashBackwardShare) + 2.0 * io / hw.hbm_bytes_per_s
                           + hw.kernel_launch_s};
        k.forward.cost += f;
        k.backward.cost += b;
        k.forward.coreSeconds += f.seconds;
        k.backward.coreSeconds += b.seconds;
    } else {
        // Megatron's unfused core: QKᵀ over the whole square, the fused
        // scale-mask-softmax, dropout with its mask, then the product with V.
        const double elements = heads * d.sLocal * d.s;
        addGemm(hw, k, scores, d.act, false);
        addMemory(hw, k, 2.0 * elements * d.act, true);
        if (m.attention_dropout > 0)
            addMemory(hw, k, elements * (2.0 * d.act + 1.0), true);
        addGemm(hw, k, context, d.act, false);
    }
    addGemm(hw, k, {1, d.tokens, d.h, d.a * d.dv / d.t}, d.act, true, &d.fp8);
    addMemory(hw, k, d.spTokens * d.h * (3.0 * d.act + hiddenMask)); // bias, dropout, residual add

    // MLP: norm, the MLP (or router, experts and shared experts), bias-dropout-add.
    addMemory(hw, k, 2.0 * d.spTokens * d.h * d.act);
    if (moe) {
        const double experts = double(m.num_experts);
        const double local = experts / d.e;
        addGemm(hw, k, {1, d.spTokens, experts, d.h}, d.act, true); // router
        addMemory(hw, k, 4.0 * d.moeTokens * d.h * d.act); // permute in, unpermute out
        addMlp(hw, k, d, local, d.moeTokens / local, double(m.moeFfn()), d.etp, m.swiglu);
        if (m.moe_shared_expert_intermediate_size > 0)
            addMlp(hw, k, d, 1, d.tokens, double(m.moe_shared_expert_intermediate_size), d.t, m.swiglu);
    } else {
        addMlp(hw, k, d, 1, d.tokens, double(m.ffn()), d.t, m.swiglu);
    }
    addMemory(hw, k, d.spTokens * d.h * (3.0 * d.act + hiddenMask));

    // Tensor-parallel collectives of one pass: with SP an all-gather before
    // and a reduce-scatter after each half (its backward the mirror image),
    // without it one all-reduce after each half (Megatron; Korthikanti et al.
    // 2022 §4.2.2). The backward's re-gather of SP inputs for the weight
    // gradient overlaps the input-gradient GEMM (Megatron) and is left out.
    const double message = d.tokens * d.h * d.act;
    double tp = 0;
    if (d.t > 1) {
        const double halves = 2.0;
        tp = d.sp ? halves
                        * (collectiveSeconds(hw, Collective::AllGather, message, d.t, d.nvlinkTp)
                           + collectiveSeconds(hw, Collective::ReduceScatter, message, d.t, d.nvlinkTp))
                  : halves * collectiveSeconds(hw, Collective::AllReduce, message, d.t, d.nvlinkTp);
    }
    // Expert parallelism: dispatch and combine all-to-alls per pass.
    const double ep
        = moe ? 2.0 * collectiveSeconds(hw, Collective::AllToAll, d.moeTokens / d.etp * d.h * d.act, d.e, d.nvlinkEp)
              : 0.0;
    // Context parallelism: the ring passes K and V c−1 times forward; backward
    // also returns their gradients. It overlaps the attention core's blocks.
    const double kv = d.tokens * d.g * (d.dqk + d.dv) / d.t * d.act;
    const double ring = d.c > 1 ? (d.c - 1) * collectiveSeconds(hw, Collective::Send, kv, 2, d.nvlinkCp) : 0.0;

    const auto exposedTp = [&](double gemm) { return st.tp_comm_overlap ? std::max(0.0, tp - gemm) : tp; };
    LayerCost cost;
    cost.forwardComm = {exposedTp(k.forward.gemmSeconds), std::max(0.0, ring - k.forward.coreSeconds), ep};
    cost.backwardComm = {exposedTp(k.backward.gemmSeconds), std::max(0.0, 2.0 * ring - k.backward.coreSeconds), ep};
    cost.forward = k.forward.cost;
    cost.forward.seconds += cost.forwardComm.total();
    cost.backward = k.backward.cost;
    cost.weightGrad = k.weight;
    cost.backward.seconds += cost.backwardComm.total();
    addRecompute(config, d, k, cost);
    return cost;
}

} // namespace

CostModel costModel(const Config &config, std::int64_t gpusPerNode)
{
    if (gpusPerNode <= 0)
        gpusPerNode = std::max<std::int64_t>(1, config.hardware.gpus_per_node);
    const Dims d = dimsOf(config, gpusPerNode);
    const ParallelismConfig &par = config.parallelism;
    const HardwareConfig &hw = config.hardware;
    CostModel cm;
    cm.dense = layerCost(config, d, false);
    cm.moe = config.model.isMoe() ? layerCost(config, d, true) : cm.dense;
    if (!config.strategy.tensor_policies.empty()
        && config.strategy.recompute_granularity != RecomputeGranularity::Full) {
        // Per-tensor policies: what each recomputed tensor's own ops and each
        // quantised tensor's two passes cost (core/time/layergraph.h), each
        // layer kind on its own graph: an MoE layer's expert tensors at the
        // routed copies' shapes, their recompute repeating the all-to-all.
        Config plain = config;
        plain.strategy.tensor_policies.clear();
        const TensorPlan plan = configuredTensorPlan(config, layerGraph(plain), TensorCost::Roofline);
        cm.dense.recompute = OpCost{};
        cm.dense.recompute.seconds = plan.recomputeSeconds + plan.quantizeSeconds;
        cm.policyOffloadBytes = double(plan.offloadedBytes);
        cm.moe.recompute = cm.dense.recompute;
        cm.policyOffloadBytesMoe = cm.policyOffloadBytes;
        if (config.model.isMoe()) {
            const TensorPlan moe = configuredTensorPlan(config, moeLayerGraph(plain), TensorCost::Roofline, true);
            cm.moe.recompute = OpCost{};
            cm.moe.recompute.seconds = moe.recomputeSeconds + moe.quantizeSeconds;
            cm.policyOffloadBytesMoe = double(moe.offloadedBytes);
        }
    }

    // Final norm, the logits GEMM, then Megatron's vocab-parallel cross
    // entropy over the fp32 logits (max, exp-sum, loss; its backward in place).
    const double vocab = double(paddedVocab(config.model, par.tensor_model_parallel_size)) / d.t;
    const double logits = d.tokens * vocab;
    const Gemm out{1, d.tokens, vocab, d.h};
    cm.outputForward = memoryCost(hw, 2.0 * d.spTokens * d.h * d.act);
    cm.outputForward += gemmCost(hw, out, d.act);
    cm.outputForward += memoryCost(hw, logits * (d.act + 4.0 + 4.0));
    cm.outputBackward = memoryCost(hw, logits * (4.0 + d.act));
    cm.outputBackward += gemmBackwardCost(hw, out, d.act);
    cm.outputWeightGrad = gemmCost(hw, {out.batch, out.k, out.n, out.m}, d.act);
    cm.outputBackward += memoryCost(hw, 4.0 * d.spTokens * d.h * d.act);

    const double distance = d.t * d.c * double(par.data_parallel_size);
    if (par.pipeline_model_parallel_size > 1)
        cm.p2pSeconds = pipelineSendSeconds(config, distance < double(gpusPerNode));
    return cm;
}

double pipelineSendSeconds(const Config &config, bool nvlink)
{
    const Dims d = dimsOf(config, 8);
    const double full = d.tokens * d.h * d.act;
    const bool split = d.sp || (d.t > 1 && config.strategy.scatter_gather_tensors_in_pipeline);
    double seconds = collectiveSeconds(config.hardware, Collective::Send, split ? full / d.t : full, 2, nvlink);
    if (split && !d.sp) // the receiver puts the pieces back together over NVLink
        seconds += collectiveSeconds(config.hardware, Collective::AllGather, full, d.t, true);
    return seconds;
}

double optimizerShard(const Config &config, std::int64_t params, std::int64_t expertParams)
{
    const ParallelismConfig &par = config.parallelism;
    // ZeRO's shard groups: under HSDP the data_parallel_shard_size part of d.
    const std::int64_t replicas = par.data_parallel_size / std::max<std::int64_t>(1, par.dataParallelShard());
    const std::int64_t dp = par.dataParallelShard() * par.context_parallel_size;
    const std::int64_t edp = config.model.isMoe() ? std::max<std::int64_t>(
                                 1, par.tensor_model_parallel_size * par.context_parallel_size * par.data_parallel_size
                                        / (par.expertTensorParallel() * par.expert_model_parallel_size)
                                        / std::max<std::int64_t>(1, replicas))
                                                  : 1;
    const bool sharded = par.zero_stage >= 1;
    return double(params - expertParams) / double(sharded ? dp : 1) + double(expertParams) / double(sharded ? edp : 1);
}

OptimizerCost optimizerStepCost(const HardwareConfig &hardware, double shard, double optimizerBytesPerParam,
                                double gradBytes, double weightBytes, double offloadLinkBytesPerS, bool gradsOnHost)
{
    OptimizerCost oc;
    if (offloadLinkBytesPerS <= 0) {
        // Read and write every state, read the gradient, write the weight; and
        // one read of the gradients before, for the global norm (clipping).
        oc.deviceSeconds
            = memoryCost(hardware, shard * (2.0 * optimizerBytesPerParam + 2.0 * gradBytes + weightBytes)).seconds;
        return oc;
    }
    oc.copyOutSeconds = gradsOnHost ? 0.0 : shard * gradBytes / offloadLinkBytesPerS;
    oc.cpuSeconds = shard / hardware.cpu_adam_params_per_s;
    oc.copyInSeconds = shard * weightBytes / offloadLinkBytesPerS;
    return oc;
}

double optimizerOffloadLink(const Config &config)
{
    switch (config.strategy.optimizer_offload) {
    case OffloadTarget::None:
        return 0.0;
    case OffloadTarget::NVMe:
        return std::min(config.hardware.host_link_bytes_per_s, config.hardware.nvme_bytes_per_s);
    default:
        return config.hardware.host_link_bytes_per_s;
    }
}

OptimizerCost optimizerCost(const Config &config, std::int64_t params, std::int64_t expertParams)
{
    const StateBytes sb = stateBytes(config.training);
    return optimizerStepCost(config.hardware, optimizerShard(config, params, expertParams), sb.optimizerPerParam(),
                             double(sb.grad), double(sb.weight), optimizerOffloadLink(config),
                             config.strategy.grad_offload != OffloadTarget::None);
}

bool recomputesLayer(const StrategyConfig &strategy, std::int64_t indexInChunk)
{
    return strategy.recompute_granularity != RecomputeGranularity::Full
           || strategy.recompute_method != RecomputeMethod::Block || indexInChunk < strategy.recompute_num_layers;
}

} // namespace memledger
