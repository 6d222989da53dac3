// SPDX-License-Identifier: MIT
#include "core/serving/inferencetimeline.h"

#include "core/config/efficiency.h"
#include "core/model/parameters.h"
#include "core/schedule/stagelayers.h"
#include "core/serving/inference.h"
#include "core/timeline/curve.h"
#include "core/timeline/lifetimelabels.h"

#include <algorithm>
#include <map>

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

// Seconds of `flops` of GEMM work and `bytes` through HBM, each at its achieved rate.
double roofline(const HardwareConfig &hw, double flops, double bytes)
{
    const double compute = flops > 0 ? flops / (hw.peak_bf16_flops * efficiencyAt(hw.gemm_efficiency, flops)) : 0;
    const double memory = bytes > 0 ? bytes / (hw.hbm_bytes_per_s * efficiencyAt(hw.hbm_efficiency, bytes)) : 0;
    return compute + memory + kKernelsPerLayer * hw.kernel_launch_s;
}

struct LayerWork
{
    std::int64_t layer = 0;
    bool moe = false;
    double seconds = 0;
};

} // namespace

Timeline simulateInferenceForward(const Config &config, ServingPass pass)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const HardwareConfig &hw = config.hardware;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size;
    const InferenceLedger il = computeInference(config);
    const InferenceConfig &inf = il.settings;
    const ForwardShape shape = pass == ServingPass::Prefill ? prefillShape(config, inf) : decodeShape(config, inf);
    const std::int64_t n = shape.tokens;
    const WorkingSet denseSet = forwardWorkingSet(config, shape, true, false, false);
    const WorkingSet moeSet = forwardWorkingSet(config, shape, false, true, false);
    const WorkingSet headSet = forwardWorkingSet(config, shape, false, false, true);
    const Bytes kvLayer = kvBytesPerTokenLayer(m, inf.kv_cache_dtype, t) * il.cached_tokens * inf.batch_size;
    const Bytes hidden = n * m.hidden_size * kActBytes;

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
    const double denseSeconds = layerSeconds(false);
    const double moeSeconds = m.isMoe() ? layerSeconds(true) : denseSeconds;
    const double headSeconds
        = roofline(hw, 2.0 * double(shape.sequences) * double(paddedVocab(m, t) / t) * double(m.hidden_size),
                   double(servedWeightBytes(paddedVocab(m, t) / t * m.hidden_size, ServingDtype::BF16)));

    Timeline tl;
    tl.kind = pass == ServingPass::Prefill ? TimelineKind::Prefill : TimelineKind::Decode;
    Ledger &ledger = tl.ledger;
    ledger.total_parameters = il.total_parameters;
    ledger.gpus = par.gpus();
    ledger.micro_batches = 1;
    ledger.capacity_bytes = il.capacity_bytes;
    ledger.usable_bytes = hw.usableBytes();
    ledger.host_capacity_bytes = hw.host_bytes;
    ledger.peak_rank = il.peak_rank;
    ledger.peak_bytes = il.peak_bytes;

    // The pipeline in time: a rank starts when the previous one hands its output on.
    const std::vector<StageLayers> stages = stageLayers(config);
    std::vector<std::vector<LayerWork>> work(static_cast<std::size_t>(p));
    std::vector<double> start(static_cast<std::size_t>(p)), end(static_cast<std::size_t>(p));
    double clock = 0;
    for (std::int64_t r = 0; r < p; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        start[ri] = clock;
        for (std::size_t s = ri; s < stages.size(); s += static_cast<std::size_t>(p))
            for (std::int64_t l = stages[s].first; l < stages[s].first + stages[s].count; ++l) {
                const bool isMoe = m.isMoeLayer(l);
                work[ri].push_back({l, isMoe, isMoe ? moeSeconds : denseSeconds});
                clock += work[ri].back().seconds;
            }
        if (r == p - 1)
            clock += headSeconds;
        end[ri] = clock;
    }
    const double finish = clock;
    tl.step_time = tl.pipeline_time = finish;

    for (std::int64_t r = 0; r < p; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        const InferenceRank &ir = il.ranks[ri];
        RankLedger rl;
        rl.pipeline_rank = static_cast<int>(r);
        rl.parameters = ir.parameters;
        rl.layers = ir.layers;
        RankTimeline rt;
        rt.pipeline_rank = static_cast<int>(r);
        rt.ops.push_back({{OpKind::Forward, 0, 0}, start[ri], end[ri], 0});
        rt.busy_s = end[ri] - start[ri];
        rt.pipeline_end = end[ri];
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
        add(start[ri], end[ri], hidden, LifetimeKind::InferenceWorkingSet, -1, -1); // the residual stream
        double now = start[ri];
        for (const LayerWork &w : work[ri]) {
            const WorkingSet &set = w.moe ? moeSet : denseSet;
            const double mid = now + w.seconds / 2;
            add(pass == ServingPass::Prefill ? now : 0.0, finish, kvLayer, LifetimeKind::KvCache, w.layer, -1);
            add(now, mid, hidden + set.attention, LifetimeKind::InferenceWorkingSet, w.layer, 0);
            add(mid, now + w.seconds, hidden + set.mlp + set.moe_routing, LifetimeKind::InferenceWorkingSet, w.layer,
                1);
            now += w.seconds;
        }
        if (r == p - 1)
            add(now, end[ri], headSet.logits, LifetimeKind::InferenceWorkingSet, -1, 2);
        rl.device_total_bytes = ir.device_total_bytes;
        rl.fits = ir.fits;
        ledger.ranks.push_back(std::move(rl));
        tl.ranks.push_back(std::move(rt));
    }

    // The memory curve and what is alive at its peak, as the training timeline reports them.
    for (RankTimeline &rt : tl.ranks) {
        std::map<double, Bytes> deltas;
        for (const Lifetime &l : rt.lifetimes) {
            deltas[l.start] += l.bytes;
            deltas[l.end] -= l.bytes;
        }
        std::vector<CurvePoint> curve;
        Bytes now = 0;
        for (const auto &[time, delta] : deltas) {
            now += delta;
            curve.push_back({time, now});
            if (now > rt.peak_bytes) {
                rt.peak_bytes = now;
                rt.peak_time = time;
            }
        }
        rt.curve = downsampleKeepingMax(curve, TimelineOptions{}.curve_points);
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
        if (rt.peak_bytes > tl.ranks[static_cast<std::size_t>(tl.peak_rank)].peak_bytes)
            tl.peak_rank = rt.pipeline_rank;
    }
    return tl;
}

} // namespace memledger
