// SPDX-License-Identifier: MIT
#include "core/time/layergraph.h"

#include "core/model/activations.h"
#include "core/model/tensorpolicy.h"
#include "core/time/costmodel.h"

#include <algorithm>
#include <map>

namespace memledger {

namespace {

enum Node {
    kInput,
    kQkvInput,
    kQkv,
    kSoftmax,
    kCoreMask,
    kCoreDropout,
    kProjInput,
    kHiddenMask,
    kMlpNormInput,
    kFc1Input,
    kFc1Output,
    kFc2Input,
    kMlpMask,
    kNodeCount
};

const char *kNodeNames[kNodeCount] = {"input_norm.input",       "attention.qkv.input",
                                      "attention.q,k,v",        "attention.softmax_output",
                                      "attention.dropout_mask", "attention.dropout_output",
                                      "attention.proj.input",   "attention.hidden_dropout_mask",
                                      "pre_mlp_norm.input",     "mlp.fc1.input",
                                      "mlp.fc1.output",         "mlp.fc2.input",
                                      "mlp.dropout_mask"};

// An MoE layer's graph: the attention half's nodes (kInput … kMlpNormInput)
// as the dense layer's, then the router, the routed experts and the shared
// expert in place of the MLP.
enum MoeNode {
    kRouterInput = kMlpNormInput + 1,
    kRouterProbs,
    kExpertFc1Input, // the permuted token copies this rank's experts received
    kExpertFc1Output,
    kExpertFc2Input,
    kExpertOutput, // after the combine, weighted by the routing probabilities in the unpermute
    kSharedFc1Output,
    kSharedFc2Input,
    kMoeMlpMask,
    kMoeNodeCount
};

const char *kMoeNodeNames[kMoeNodeCount - kRouterInput]
    = {"moe.router.input",      "moe.router.probs",   "moe.experts.fc1.input",        "moe.experts.fc1.output",
       "moe.experts.fc2.input", "moe.experts.output", "moe.shared_expert.fc1.output", "moe.shared_expert.fc2.input",
       "mlp.dropout_mask"};

// Which graph node a row of layerActivations belongs to.
int nodeOf(const SavedTensor &s)
{
    const std::string &n = s.name;
    if (n.rfind("input_norm.", 0) == 0)
        return kInput;
    if (n == "attention.qkv.input")
        return kQkvInput;
    if (n == "attention.q" || n == "attention.k" || n == "attention.v")
        return kQkv;
    if (n == "attention.softmax_output" || n == "attention.softmax_lse")
        return kSoftmax;
    if (n == "attention.softmax_dropout_mask")
        return kCoreMask;
    if (n == "attention.dropout_mask")
        return kHiddenMask;
    if (n == "attention.dropout_output")
        return kCoreDropout;
    if (n == "attention.proj.input")
        return kProjInput;
    if (n.rfind("pre_mlp_norm.", 0) == 0 || n == "attention.proj.reduce_scatter")
        return kMlpNormInput;
    if (n == "mlp.fc1.input")
        return kFc1Input;
    if (n == "mlp.fc1.output" || n == "mlp.fc1.gate" || n == "mlp.fc1.up" // the last two: selective_op's split
        || n == "mlp.fc1.relu_output") // squared ReLU: relu's output stands for fc1's
        return kFc1Output;
    if (n == "mlp.fc2.input")
        return kFc2Input;
    if (n == "mlp.dropout_mask")
        return kMlpMask;
    // Anything else (other layer kinds, the QK norms' tensors: kQkv's size is
    // the width its GEMM is priced by) stays with the checkpoint.
    return kInput;
}

// The same for an MoE layer's rows.
int moeNodeOf(const SavedTensor &s)
{
    if (s.name == "mlp.dropout_mask")
        return kMoeMlpMask;
    for (int k = kRouterInput; k < kMoeMlpMask; ++k)
        if (s.name == kMoeNodeNames[k - kRouterInput])
            return k;
    const int k = nodeOf(s);
    return k <= kMlpNormInput ? k : kInput;
}

} // namespace

double opSeconds(const LayerGraph &g, const TensorNode &n, TensorCost cost)
{
    if (cost == TensorCost::Flops)
        return n.flops / g.peakFlops;
    // As core/time/kernelcost.h prices a kernel, so the layer's own time (the cost model's) is the same scale.
    const double compute = n.flops > 0 ? n.flops / (g.peakFlops * efficiencyAt(g.gemmEfficiency, n.flops)) : 0.0;
    const double memory
        = n.bytesMoved > 0 ? n.bytesMoved / (g.hbmBytesPerS * efficiencyAt(g.hbmEfficiency, n.bytesMoved)) : 0.0;
    return compute + memory + n.commSeconds;
}

// Quantising in the forward and dequantising in the backward: two
// memory-bound kernels per tensor (a few FLOPs per element: amax, scale, cast).
double quantizeSeconds(const LayerGraph &g, const TensorNode &n, TensorCost cost)
{
    if (n.quantizeBytesMoved <= 0)
        return 0;
    if (cost == TensorCost::Flops)
        return 4 * n.quantizedElements / g.peakFlops;
    const double pass = n.quantizeBytesMoved / 2;
    return 2 * pass / (g.hbmBytesPerS * efficiencyAt(g.hbmEfficiency, pass));
}

Bytes LayerGraph::total() const
{
    Bytes t = 0;
    for (const TensorNode &n : nodes)
        t += n.bytes;
    return t;
}

namespace {

// What the dense and the MoE node setters both read: the activation element
// size A, a dropout mask's M, a weight's W and the tensor-parallel degree t.
struct ElementSizes
{
    double A, M, W, t;
};

ElementSizes elementSizes(const Config &config)
{
    const double A = activationBytes(config);
    return {A, config.strategy.dropout_mask_dtype == DropoutMaskDtype::Bool ? 1.0 : A,
            double(dtypeBytes(config.training.params_dtype)), double(config.parallelism.tensor_model_parallel_size)};
}

// The MoE half of an MoE layer, priced from its own shapes (Megatron-LM's
// MoELayer: router, token dispatcher, grouped experts, shared expert). Per
// micro-batch on one rank: T = s·b/c tokens, T/t of them under sequence
// parallelism; balanced routing sends each of them to k experts, and each
// rank of the expert-parallel group receives as many copies as its tokens
// send, all-gathered over the etp ranks that split each expert: R = T/t·k·etp
// copies (T·k·etp without SP). Under a capacity factor the shapes are static
// (Megatron's moe_pad_expert_input_to_capacity, GShard's expert capacity):
// the experts run on factor × R rows, padding included, and the dispatch
// moves that many. Recomputing the permuted tokens repeats the dispatch
// all-to-all, recomputing the experts' output the combine.
void setMoeNodes(LayerGraph &g, const Config &config)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const auto [A, M, W, t] = elementSizes(config);
    const bool seqPar = par.sequence_parallel && par.tensor_model_parallel_size > 1;
    const double sp = seqPar ? t : 1.0;
    const double e = double(par.expert_model_parallel_size), etp = double(par.expertTensorParallel());
    const double h = double(m.hidden_size), E = double(m.num_experts), k = double(m.moe_router_topk);
    const double gate = m.swiglu ? 2.0 : 1.0;
    const double f = double(m.moeFfn()) / etp; // one expert's width on this rank
    const double fs = double(m.moe_shared_expert_intermediate_size) / t;
    const double T = double(config.training.seq_length) / double(par.context_parallel_size)
                     * double(config.training.micro_batch_size);
    const double cf = config.strategy.moe_expert_capacity_factor;
    const double R = T / sp * k * etp * (cf > 0 ? cf : 1.0);
    const double local = E / e; // experts on this rank: their weights are read once per pass
    const std::int64_t node = std::max<std::int64_t>(1, config.hardware.gpus_per_node);
    const bool nvlinkEp = par.tensor_model_parallel_size * par.context_parallel_size * par.expert_model_parallel_size
                          <= node; // as the cost model places the expert-parallel group
    // One all-to-all of the copies over the expert-parallel group (the cost model's dispatch, or combine).
    const double allToAll = collectiveSeconds(config.hardware, Collective::AllToAll, R / etp * h * A, e, nvlinkEp);
    auto B = [&](int n) { return double(g.nodes[static_cast<std::size_t>(n)].bytes); };
    auto set = [&](int n, double flops, double moved, double comm, std::vector<int> deps) {
        TensorNode &x = g.nodes[static_cast<std::size_t>(n)];
        x.flops = flops;
        x.bytesMoved = moved;
        x.commSeconds = comm;
        x.deps = std::move(deps);
    };
    // The pre-MLP norm's output.
    set(kRouterInput, 8 * B(kRouterInput) / A, B(kMlpNormInput) + B(kRouterInput), 0, {kMlpNormInput});
    // The router's GEMM (T/t tokens × h × E) and its softmax and top-k (a few FLOPs per score).
    set(kRouterProbs, 2 * T / sp * h * E + 5 * T / sp * E, T / sp * h * A + h * E * W + B(kRouterProbs), 0,
        {kRouterInput});
    // Permute: each token copied to its k experts' rows, then the dispatch.
    set(kExpertFc1Input, 0, 2 * R * h * A, allToAll, {kRouterInput, kRouterProbs});
    // The local experts' fc1 (gate and up under SwiGLU) over their R rows.
    set(kExpertFc1Output, 2 * R * h * gate * f, R * h * A + local * h * gate * f * W + R * gate * f * A, 0,
        {kExpertFc1Input});
    set(kExpertFc2Input, 8 * R * gate * f, R * gate * f * A + R * f * A, 0, {kExpertFc1Output});
    // fc2, then the combine back to the tokens' ranks.
    set(kExpertOutput, 2 * R * f * h, R * f * A + local * f * h * W + R * h * A, allToAll, {kExpertFc2Input});
    // The shared expert: a tensor-parallel MLP over all T tokens (gathered under SP).
    set(kSharedFc1Output, 2 * T * h * gate * fs, T * h * A + h * gate * fs * W + T * gate * fs * A, 0, {kRouterInput});
    set(kSharedFc2Input, 8 * T * gate * fs, T * gate * fs * A + T * fs * A, 0, {kSharedFc1Output});
    set(kMoeMlpMask, B(kMoeMlpMask) / M, B(kMoeMlpMask), 0, {});
}

LayerGraph graphOf(const Config &config, bool moe)
{
    LayerGraph g;
    const int count = moe ? int(kMoeNodeCount) : int(kNodeCount);
    g.nodes.resize(static_cast<std::size_t>(count));
    for (int k = 0; k < count; ++k)
        g.nodes[static_cast<std::size_t>(k)].name
            = k < kRouterInput || !moe ? kNodeNames[k] : kMoeNodeNames[k - kRouterInput];
    const LayerActivations la = layerActivations(config, moe, true);
    const int elementBytes = activationBytes(config);
    for (const SavedTensor &s : la.tensors) {
        // Grouped K/V expanded inside the checkpointed core (selective recompute, unfused attention): a
        // copy rebuilt with the scores, whose bytes the nodes' costs would misread as scores or as projections.
        if (s.name == "attention.k_expanded" || s.name == "attention.v_expanded")
            continue;
        TensorNode &n = g.nodes[static_cast<std::size_t>(moe ? moeNodeOf(s) : nodeOf(s))];
        n.bytes += s.bytes;
        n.attentionCore = n.attentionCore || s.attentionCore;
        n.tensors.push_back(s.name);
        const Bytes q = quantizedBytes(config.strategy, s.bytes, s.elementBytes, elementBytes);
        n.quantizedBytes += q;
        if (q != s.bytes)
            n.quantizedElements += double(s.bytes / s.elementBytes);
        if (q != s.bytes)
            n.quantizeBytesMoved += 2.0 * double(s.bytes + q); // forward: read 16-bit, write fp8; backward: back
    }
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const auto [A, M, W, t] = elementSizes(config);
    const double h = double(m.hidden_size), d = double(m.headDim());
    const double T = double(config.training.seq_length) / double(par.context_parallel_size)
                     * double(config.training.micro_batch_size);
    auto B = [&](int k) { return double(g.nodes[static_cast<std::size_t>(k)].bytes); };
    auto set = [&](int k, double flops, double moved, std::vector<int> deps) {
        TensorNode &n = g.nodes[static_cast<std::size_t>(k)];
        n.flops = flops;
        n.bytesMoved = moved;
        n.deps = std::move(deps);
    };
    const double qkvWidth = B(kQkv) / A / T; // elements of q, k and v per token on this rank
    // Norms: a handful of FLOPs per element, read input, write output.
    set(kQkvInput, 8 * B(kQkvInput) / A, B(kInput) + B(kQkvInput), {kInput});
    set(kQkv, 2 * h * B(kQkv) / A, B(kQkvInput) + h * qkvWidth * W + B(kQkv), {kQkvInput});
    // QK^T (2d FLOPs per score) and the softmax: scores written, read, probabilities written.
    const double scores = B(kCoreDropout) > 0 ? B(kCoreDropout) / A : B(kSoftmax) / A;
    set(kSoftmax, 2 * d * scores + 5 * scores, B(kQkv) * 2.0 / 3.0 + 3 * B(kSoftmax), {kQkv});
    set(kCoreMask, B(kCoreMask) / M, B(kCoreMask), {});
    set(kCoreDropout, B(kCoreDropout) / A, B(kSoftmax) + B(kCoreMask) + B(kCoreDropout), {kSoftmax, kCoreMask});
    // Probabilities × V.
    set(kProjInput, 2 * d * scores,
        (B(kCoreDropout) > 0 ? B(kCoreDropout) : B(kSoftmax)) + B(kQkv) / 3.0 + B(kProjInput),
        {kCoreDropout, kSoftmax, kQkv});
    set(kHiddenMask, B(kHiddenMask) / M, B(kHiddenMask), {});
    // Output projection, dropout and the residual add give the MLP norm's input.
    set(kMlpNormInput, 2 * h * B(kProjInput) / A + 3 * T * h,
        B(kProjInput) + h * h / t * W + B(kHiddenMask) + B(kInput) + B(kMlpNormInput),
        {kProjInput, kHiddenMask, kInput});
    if (moe) {
        setMoeNodes(g, config);
    } else {
        set(kFc1Input, 8 * B(kFc1Input) / A, B(kMlpNormInput) + B(kFc1Input), {kMlpNormInput});
        const double fc1Width = B(kFc1Output) / A / T;
        set(kFc1Output, 2 * h * B(kFc1Output) / A, B(kFc1Input) + h * fc1Width * W + B(kFc1Output), {kFc1Input});
        set(kFc2Input, 8 * B(kFc1Output) / A, B(kFc1Output) + B(kFc2Input), {kFc1Output});
        set(kMlpMask, B(kMlpMask) / M, B(kMlpMask), {});
    }

    const CostModel cm = costModel(config);
    const LayerCost &lc = moe ? cm.moe : cm.dense;
    g.forwardFlops = lc.forward.flops;
    g.backwardFlops = lc.backward.flops;
    g.forwardSeconds = lc.forward.seconds;
    g.backwardSeconds = lc.backward.seconds;
    g.peakFlops = config.hardware.peak_bf16_flops;
    g.hbmBytesPerS = config.hardware.hbm_bytes_per_s;
    g.gemmEfficiency = config.hardware.gemm_efficiency;
    g.hbmEfficiency = config.hardware.hbm_efficiency;
    g.linkBytesPerS = config.hardware.host_link_bytes_per_s;
    return g;
}

} // namespace

LayerGraph layerGraph(const Config &config)
{
    return graphOf(config, false);
}

LayerGraph moeLayerGraph(const Config &config)
{
    return graphOf(config, true);
}

double offloadStall(double bytes, double linkBytesPerS, double forward, double backward)
{
    if (bytes <= 0)
        return 0;
    const double copy = bytes / linkBytesPerS;
    return std::max(0.0, copy - forward) + std::max(0.0, copy - backward);
}

double layerSeconds(const LayerGraph &g, TensorCost cost)
{
    return cost == TensorCost::Flops ? (g.forwardFlops + g.backwardFlops) / g.peakFlops
                                     : g.forwardSeconds + g.backwardSeconds;
}

TensorPlan evaluateTensorPlan(const LayerGraph &g, const std::vector<Fate> &fates, TensorCost cost)
{
    TensorPlan p;
    p.fates = fates;
    p.fates.resize(g.nodes.size(), Fate::Store);
    if (!p.fates.empty() && p.fates[0] != Fate::QuantizeFp8)
        p.fates[0] = Fate::Store; // the checkpoint: kept, in fp8 at most
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const TensorNode &n = g.nodes[k];
        switch (p.fates[k]) {
        case Fate::Store:
            p.deviceBytes += n.bytes;
            break;
        case Fate::Recompute:
            p.recomputeSeconds += opSeconds(g, n, cost);
            break;
        case Fate::Offload:
            p.offloadedBytes += n.bytes;
            break;
        case Fate::QuantizeFp8:
        case Fate::QuantizeE5M6: // the planner never proposes it: priced as fp8
            p.deviceBytes += n.quantizedBytes;
            p.quantizeSeconds += quantizeSeconds(g, n, cost);
            break;
        case Fate::QuantizeFp8Offload:
            p.offloadedBytes += n.quantizedBytes;
            p.quantizeSeconds += quantizeSeconds(g, n, cost);
            break;
        }
    }
    p.stallSeconds = offloadStall(double(p.offloadedBytes), g.linkBytesPerS, g.forwardSeconds, g.backwardSeconds);
    p.overhead = (p.recomputeSeconds + p.quantizeSeconds + p.stallSeconds) / layerSeconds(g, cost);
    return p;
}
TensorPlan configuredTensorPlan(const Config &config, const LayerGraph &g, TensorCost cost)
{
    return configuredTensorPlan(config, g, cost, false);
}

TensorPlan configuredTensorPlan(const Config &config, const LayerGraph &g, TensorCost cost, bool moeLayer)
{
    TensorPlan p;
    p.fates.assign(g.nodes.size(), Fate::Store);
    const LayerActivations la = layerActivations(config, moeLayer, true);
    const int A = activationBytes(config);
    std::vector<std::map<Fate, Bytes>> byFate(g.nodes.size());
    for (const SavedTensor &s : la.tensors) {
        const std::size_t k = static_cast<std::size_t>(moeLayer ? moeNodeOf(s) : nodeOf(s));
        byFate[k][s.fate] += s.bytes;
        const TensorNode &n = g.nodes[k];
        const double share = n.bytes > 0 ? double(s.bytes) / double(n.bytes) : 0.0;
        if (s.fate == Fate::Recompute)
            p.recomputeSeconds += share * opSeconds(g, n, cost);
        if (quantizes(s.fate) && quantizedBytes(config.strategy, s.bytes, s.elementBytes, A, s.fate) != s.bytes) {
            const double nodeQuantized = double(n.bytes - n.quantizedBytes);
            const double own = double(s.bytes - quantizedBytes(config.strategy, s.bytes, s.elementBytes, A, s.fate));
            p.quantizeSeconds += nodeQuantized > 0 ? own / nodeQuantized * quantizeSeconds(g, n, cost) : 0.0;
        }
        if (offloads(s.fate))
            p.offloadedBytes += s.placed;
        else if (s.fate != Fate::Recompute)
            p.deviceBytes += s.placed;
    }
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        Bytes most = 0;
        for (const auto &[fate, bytes] : byFate[k])
            if (bytes > most) {
                most = bytes;
                p.fates[k] = fate;
            }
    }
    p.stallSeconds = offloadStall(double(p.offloadedBytes), g.linkBytesPerS, g.forwardSeconds, g.backwardSeconds);
    p.overhead = (p.recomputeSeconds + p.quantizeSeconds + p.stallSeconds) / layerSeconds(g, cost);
    return p;
}

} // namespace memledger
