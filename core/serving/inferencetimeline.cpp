// SPDX-License-Identifier: MIT
#include "core/serving/inferencetimeline.h"

#include "core/model/parameters.h"
#include "core/model/runtimereserve.h"
#include "core/schedule/stagelayers.h"
#include "core/serving/inference.h"
#include "core/serving/inferenceactivations.h"
#include "core/time/kernelcost.h"
#include "core/timeline/curve.h"
#include "core/timeline/lifetimelabels.h"

#include <algorithm>

namespace memledger {

namespace {

constexpr Bytes kActBytes = 2; // as core/serving/inferenceactivations.cpp
// Launches per layer forward: norms, projections, attention, MLP, residual adds.
constexpr double kKernelsPerLayer = 10;

Category categoryOf(InferenceCategory c)
{
    switch (c) {
    case InferenceCategory::Weights:
        return Category::Weights;
    case InferenceCategory::KvCache:
    case InferenceCategory::Activations:
        return Category::Activations;
    case InferenceCategory::Runtime:
        return Category::Runtime;
    }
    return Category::Runtime;
}

// Seconds of `flops` of GEMM work and `bytes` through HBM, each at its
// achieved rate (the kernel costs' own terms), and the layer's launches. A
// whole layer as one roofline, not GEMM by GEMM as the training cost model
// prices it: serving's shapes (a decode step's one token per sequence) and
// its KV-cache reads are not the training layer's.
double roofline(const HardwareConfig &hw, double flops, double bytes)
{
    return gemmSeconds(hw, flops, hw.peak_bf16_flops) + hbmSeconds(hw, bytes) + kKernelsPerLayer * hw.kernel_launch_s;
}

// One forward's seconds: a dense layer, an MoE layer and the output head.
struct ForwardSeconds
{
    double dense = 0, moe = 0, head = 0;
};

ForwardSeconds forwardSeconds(const Config &config, const InferenceConfig &inf, const ForwardShape &shape,
                              ServingPass pass, Bytes kvLayer)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const HardwareConfig &hw = config.hardware;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size;
    const std::int64_t n = shape.tokens;
    const LayerParams dense = layerParams(m, false, t, e, par.expertTensorParallel());
    const LayerParams moe = m.isMoe() ? layerParams(m, true, t, e, par.expertTensorParallel()) : dense;
    const std::int64_t localExperts = std::max<std::int64_t>(1, m.num_experts / std::max<std::int64_t>(1, e));
    const std::int64_t headsT = std::max<std::int64_t>(1, m.num_attention_heads / t);
    const double attnDim = m.multi_latent_attention ? double(m.qk_head_dim + m.qk_pos_emb_head_dim + m.v_head_dim)
                                                    : 2.0 * double(m.headDim());
    const auto layerSeconds = [&](bool isMoe) {
        const LayerParams &lp = isMoe ? moe : dense;
        // Every token through the dense part, each routed copy through one of this rank's experts.
        double flops = 2.0 * double(lp.dense.params) * double(n);
        if (isMoe)
            flops += 2.0 * double(lp.expert.params) / double(localExperts) * double(n * m.moe_router_topk)
                     / double(std::max<std::int64_t>(1, e));
        flops += 2.0 * double(n) * double(shape.key_length) * double(headsT) * attnDim; // QKᵀ and PV
        double bytes = double(servedWeightBytes(lp.dense.params + lp.expert.params, inf.weights_dtype));
        if (pass == ServingPass::Decode)
            bytes += double(kvLayer); // attention reads every cached token
        return roofline(hw, flops, bytes);
    };
    ForwardSeconds out;
    out.dense = layerSeconds(false);
    out.moe = m.isMoe() ? layerSeconds(true) : out.dense;
    out.head = roofline(hw, 2.0 * double(shape.sequences) * double(paddedVocab(m, t) / t) * double(m.hidden_size),
                        double(servedWeightBytes(paddedVocab(m, t) / t * m.hidden_size, ServingDtype::BF16)));
    return out;
}

struct LayerWork
{
    std::int64_t layer = 0;
    bool moe = false;
    double seconds = 0;
};

// One rank's part of the forward: its layers in order, from when the previous
// rank hands its output on.
struct RankWork
{
    std::vector<LayerWork> layers;
    double start = 0, end = 0;
};

// The pipeline in time: a rank starts when the previous one hands its output on.
std::vector<RankWork> pipelineWork(const Config &config, const ForwardSeconds &fs)
{
    const std::int64_t p = config.parallelism.pipeline_model_parallel_size;
    const std::vector<StageLayers> stages = stageLayers(config, false);
    std::vector<RankWork> work(static_cast<std::size_t>(p));
    double clock = 0;
    for (std::int64_t r = 0; r < p; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        work[ri].start = clock;
        for (std::size_t s = ri; s < stages.size(); s += static_cast<std::size_t>(p))
            for (std::int64_t l = stages[s].first; l < stages[s].first + stages[s].count; ++l) {
                const bool isMoe = config.model.isMoeLayer(l);
                work[ri].layers.push_back({l, isMoe, isMoe ? fs.moe : fs.dense});
                clock += work[ri].layers.back().seconds;
            }
        if (r == p - 1)
            clock += fs.head;
        work[ri].end = clock;
    }
    return work;
}

// What every rank's lifetimes share: the working sets of a dense layer, an
// MoE layer and the head, one layer's KV cache and the residual stream.
struct ForwardBytes
{
    WorkingSet dense, moe, head;
    Bytes kvLayer = 0;
    Bytes hidden = 0;
};

// The ledger the timeline carries: the inference ledger's figures, its rows per rank below.
Ledger servingLedgerOf(const Config &config, const InferenceLedger &il)
{
    Ledger ledger;
    ledger.total_parameters = il.total_parameters;
    ledger.gpus = config.parallelism.gpus();
    ledger.micro_batches = 1;
    ledger.capacity_bytes = il.capacity_bytes;
    ledger.usable_bytes = config.hardware.hbm_bytes - maxRuntimeReserveBytes(config);
    ledger.host_capacity_bytes = config.hardware.host_bytes;
    ledger.peak_rank = il.peak_rank;
    ledger.peak_bytes = il.peak_bytes;
    return ledger;
}

// Rank r's ledger rows and lifetimes: the inference ledger's rows live
// throughout (the KV cache per layer, from when the prefill writes it), the
// residual stream while the rank computes, each layer's working set half the
// layer for attention and half for the MLP.
void addRank(Timeline &tl, int r, const InferenceRank &ir, const RankWork &w, const ForwardBytes &fb, ServingPass pass,
             double finish, bool last)
{
    RankLedger rl;
    rl.pipeline_rank = r;
    rl.parameters = ir.parameters;
    rl.layers = ir.layers;
    RankTimeline rt;
    rt.pipeline_rank = r;
    rt.ops.push_back({{OpKind::Forward, 0, 0}, w.start, w.end, 0});
    rt.busy_s = w.end - w.start;
    rt.pipeline_end = w.end;
    std::int32_t kvEntry = -1;
    for (const InferenceEntry &entry : ir.entries) {
        if (entry.category == InferenceCategory::Activations)
            continue; // drawn as the working sets below
        const auto index = static_cast<std::int32_t>(rl.entries.size());
        rl.entries.push_back(
            {categoryOf(entry.category), Placement::Device, entry.label, entry.bytes, entry.formula, {}, {}});
        rl.device[static_cast<std::size_t>(categoryOf(entry.category))] += entry.bytes;
        if (entry.category == InferenceCategory::KvCache) {
            kvEntry = index;
            continue; // per layer below
        }
        Lifetime life;
        life.start = 0;
        life.end = finish;
        life.bytes = entry.bytes;
        life.category = categoryOf(entry.category);
        life.kind = LifetimeKind::Persistent;
        life.entry = index;
        rt.lifetimes.push_back(life);
    }
    const auto add = [&](double from, double to, Bytes bytes, LifetimeKind kind, std::int64_t layer, int part) {
        Lifetime life;
        life.start = from;
        life.end = to;
        life.bytes = bytes;
        life.category = Category::Activations;
        life.kind = kind;
        life.layer = static_cast<std::int32_t>(layer);
        life.chunk = part;
        life.entry = kind == LifetimeKind::KvCache ? kvEntry : -1;
        rt.lifetimes.push_back(life);
    };
    add(w.start, w.end, fb.hidden, LifetimeKind::InferenceWorkingSet, -1, -1); // the residual stream
    double now = w.start;
    for (const LayerWork &lw : w.layers) {
        const WorkingSet &set = lw.moe ? fb.moe : fb.dense;
        const double mid = now + lw.seconds / 2;
        add(pass == ServingPass::Prefill ? now : 0.0, finish, fb.kvLayer, LifetimeKind::KvCache, lw.layer, -1);
        add(now, mid, fb.hidden + set.attention, LifetimeKind::InferenceWorkingSet, lw.layer, 0);
        add(mid, now + lw.seconds, fb.hidden + set.mlp + set.moe_routing, LifetimeKind::InferenceWorkingSet, lw.layer,
            1);
        now += lw.seconds;
    }
    if (last)
        add(now, w.end, fb.head.logits, LifetimeKind::InferenceWorkingSet, -1, 2);
    rl.device_total_bytes = ir.device_total_bytes;
    rl.fits = ir.fits;
    tl.ledger.ranks.push_back(std::move(rl));
    tl.ranks.push_back(std::move(rt));
}

// What is alive at a rank's peak, as the training timeline reports it: the
// KV cache's layers as one item, the rest one by one, largest first.
void addAliveAtPeak(const Timeline &tl, RankTimeline &rt)
{
    Bytes kv = 0;
    std::int64_t kvLayers = 0;
    for (const Lifetime &l : rt.lifetimes) {
        if (l.start > rt.peak_time || l.end <= rt.peak_time)
            continue;
        if (l.kind == LifetimeKind::KvCache) {
            kv += l.bytes;
            ++kvLayers;
        } else {
            rt.alive_at_peak.push_back({lifetimeLabel(tl, rt, l), l.category, l.bytes});
        }
    }
    if (kvLayers > 0)
        rt.alive_at_peak.push_back(
            {"KV cache (" + countOf(double(kvLayers), "layer", "layers") + ")", Category::Activations, kv});
    std::stable_sort(rt.alive_at_peak.begin(), rt.alive_at_peak.end(),
                     [](const AliveItem &a, const AliveItem &b) { return a.bytes > b.bytes; });
}

} // namespace

Timeline simulateInferenceForward(const Config &config, ServingPass pass)
{
    const InferenceLedger il = computeInference(config);
    const InferenceConfig &inf = il.settings;
    const ForwardShape shape = pass == ServingPass::Prefill ? prefillShape(config, inf) : decodeShape(config, inf);
    const ForwardBytes fb{
        .dense = forwardWorkingSet(config, shape, true, false, false),
        .moe = forwardWorkingSet(config, shape, false, true, false),
        .head = forwardWorkingSet(config, shape, false, false, true),
        .kvLayer = kvBytesPerTokenLayer(config.model, inf.kv_cache_dtype, config.parallelism.tensor_model_parallel_size)
                   * il.cached_tokens * inf.batch_size,
        .hidden = shape.tokens * config.model.hidden_size * kActBytes};

    Timeline tl;
    tl.kind = pass == ServingPass::Prefill ? TimelineKind::Prefill : TimelineKind::Decode;
    tl.ledger = servingLedgerOf(config, il);
    const std::vector<RankWork> work = pipelineWork(config, forwardSeconds(config, inf, shape, pass, fb.kvLayer));
    const double finish = work.back().end;
    tl.step_time = tl.pipeline_time = finish;
    for (std::size_t r = 0; r < work.size(); ++r)
        addRank(tl, static_cast<int>(r), il.ranks[r], work[r], fb, pass, finish, r + 1 == work.size());

    // The memory curve and what is alive at its peak, as the training timeline reports them.
    CurveBuilder curves;
    for (RankTimeline &rt : tl.ranks) {
        curves.build(rt, TimelineOptions{}.curve_points);
        addAliveAtPeak(tl, rt);
        if (rt.peak_bytes > tl.ranks[static_cast<std::size_t>(tl.peak_rank)].peak_bytes)
            tl.peak_rank = rt.pipeline_rank;
    }
    return tl;
}

} // namespace memledger
