// SPDX-License-Identifier: MIT
#include "core/planner/settingspoints.h"

#include "core/model/tensorpolicy.h"
#include "core/time/steptime.h"

#include <algorithm>
#include <cmath>

namespace memledger {

namespace {

bool same(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// a is at least as good as b on both axes and better on one.
bool beats(const SettingMarker &a, const SettingMarker &b)
{
    const bool noWorse
        = (a.memory <= b.memory || same(a.memory, b.memory)) && (a.cost <= b.cost || same(a.cost, b.cost));
    return noWorse && !(same(a.memory, b.memory) && same(a.cost, b.cost));
}

std::string layersText(std::int64_t k)
{
    return std::to_string(k) + (k == 1 ? " layer" : " layers");
}

} // namespace

Config applySetting(Config config, const SettingEdit &edit)
{
    StrategyConfig &st = config.strategy;
    st.recompute_granularity = edit.granularity;
    // A setting is the coarse knob alone: per-tensor rules would refine it into another point.
    st.tensor_policies.clear();
    if (edit.method)
        st.recompute_method = *edit.method;
    if (edit.numLayers)
        st.recompute_num_layers = *edit.numLayers;
    if (edit.activationOffload)
        st.activation_offload = *edit.activationOffload;
    return config;
}

std::vector<int> megatronCheckpoints(const StrategyConfig &strategy, int layers, int chunks)
{
    if (chunks < 1 || layers % chunks != 0)
        chunks = 1;
    std::vector<int> cps;
    const bool uniform = strategy.recompute_granularity == RecomputeGranularity::Full
                         && strategy.recompute_method == RecomputeMethod::Uniform;
    if (!uniform) {
        for (int l = 1; l < layers; ++l)
            cps.push_back(l);
        return cps;
    }
    const int perChunk = layers / chunks;
    const auto k = static_cast<int>(std::clamp<std::int64_t>(strategy.recompute_num_layers, 1, perChunk));
    for (int c = 0; c < chunks; ++c) {
        const int base = c * perChunk;
        if (c > 0)
            cps.push_back(base);
        for (int m = k; m < perChunk; m += k)
            cps.push_back(base + m);
    }
    return cps;
}

std::vector<SettingPoint> chainSettings(const Config &config, const Chain &chain)
{
    const int n = chain.layers();
    int chunks = static_cast<int>(std::max<std::int64_t>(1, config.parallelism.virtual_pipeline_model_parallel_size));
    if (n % chunks != 0)
        chunks = 1;
    const int perChunk = n / chunks;
    const std::vector<int> current = megatronCheckpoints(config.strategy, n, chunks);
    const double currentCost = recomputeSecondsPerMicroBatch(config);

    std::vector<SettingPoint> out;
    auto add = [&](SettingKind kind, std::string label, SettingEdit edit) {
        const Config applied = applySetting(config, edit);
        SettingPoint s;
        s.kind = kind;
        s.label = std::move(label);
        s.edit = edit;
        const ChainPlan plan = evaluateChain(chain, megatronCheckpoints(applied.strategy, n, chunks), s.label);
        s.memory = plan.peak;
        // What the applied plan's step time charges, not the chain's count:
        // Megatron re-runs every layer of a checkpointed group (uniform k) or
        // each of a chunk's first k layers (block k), where Chen's chain
        // spares a segment's last layer.
        s.cost = recomputeSecondsPerMicroBatch(applied);
        s.checkpoints = plan.checkpoints;
        s.current = s.checkpoints == current && same(s.cost, currentCost);
        s.exact = applied.strategy == config.strategy;
        out.push_back(std::move(s));
    };
    // Without full recompute the plan keeps its own granularity: a selective
    // plan's point is selective, not "store all".
    const RecomputeGranularity own = config.strategy.recompute_granularity;
    add(SettingKind::NoFullRecompute, "no full recompute",
        {own == RecomputeGranularity::Full ? RecomputeGranularity::None : own, {}, {}, {}});
    for (int k = 1; k <= perChunk; ++k)
        add(SettingKind::FullUniform, "full, uniform, " + layersText(k),
            {RecomputeGranularity::Full, RecomputeMethod::Uniform, k, {}});
    for (int k = 1; k <= perChunk; ++k)
        add(SettingKind::FullBlock, "full, block, " + layersText(k),
            {RecomputeGranularity::Full, RecomputeMethod::Block, k, {}});
    return out;
}

std::vector<Fate> megatronFates(const StrategyConfig &strategy, const LayerGraph &graph)
{
    std::vector<Fate> f(graph.nodes.size(), Fate::Store);
    switch (strategy.recompute_granularity) {
    case RecomputeGranularity::None:
        break;
    case RecomputeGranularity::Selective:
        f = selectivePlan(graph);
        break;
    case RecomputeGranularity::Full:
        for (std::size_t k = 1; k < graph.nodes.size(); ++k)
            if (graph.nodes[k].bytes > 0)
                f[k] = Fate::Recompute;
        break;
    case RecomputeGranularity::SelectiveOp:
        // torchtitan's per-op policy by tensor name: a node is kept when one of its tensors is.
        for (std::size_t k = 1; k < graph.nodes.size(); ++k)
            if (graph.nodes[k].bytes > 0
                && std::none_of(graph.nodes[k].tensors.begin(), graph.nodes[k].tensors.end(),
                                [](const std::string &n) { return selectiveOpKeeps(n); }))
                f[k] = Fate::Recompute;
        break;
    }
    if (strategy.activation_offload != OffloadTarget::None)
        for (std::size_t k = 1; k < graph.nodes.size(); ++k)
            if (f[k] == Fate::Store && graph.nodes[k].bytes > 0)
                f[k] = Fate::Offload;
    return f;
}

std::vector<SettingPoint> tensorSettings(const Config &config, const LayerGraph &graph, TensorCost cost, bool offload)
{
    const std::vector<Fate> current = megatronFates(config.strategy, graph);
    // Per-tensor rules put the plan between the settings: it gets its own point.
    const bool policies = !config.strategy.tensor_policies.empty()
                          && config.strategy.recompute_granularity != RecomputeGranularity::Full;
    std::vector<SettingPoint> out;
    if (policies) {
        const TensorPlan plan = configuredTensorPlan(config, graph, cost);
        SettingPoint s;
        s.kind = SettingKind::TensorPolicies;
        s.label = "tensor_policies";
        s.edit = {config.strategy.recompute_granularity, {}, {}, config.strategy.activation_offload};
        s.memory = double(plan.deviceBytes);
        s.cost = plan.overhead;
        s.fates = plan.fates;
        s.current = s.exact = true;
        out.push_back(std::move(s));
    }
    auto add = [&](SettingKind kind, std::string label, SettingEdit edit) {
        SettingPoint s;
        s.kind = kind;
        s.label = std::move(label);
        s.edit = edit;
        const TensorPlan plan
            = evaluateTensorPlan(graph, megatronFates(applySetting(config, edit).strategy, graph), cost);
        s.memory = double(plan.deviceBytes);
        s.cost = plan.overhead;
        s.fates = plan.fates;
        s.current = !policies && s.fates == current;
        s.exact = applySetting(config, edit).strategy == config.strategy;
        out.push_back(std::move(s));
    };
    const OffloadTarget none = OffloadTarget::None;
    add(SettingKind::None, "none", {RecomputeGranularity::None, {}, {}, none});
    add(SettingKind::Selective, "selective", {RecomputeGranularity::Selective, {}, {}, none});
    add(SettingKind::Full, "full", {RecomputeGranularity::Full, RecomputeMethod::Uniform, 1, none});
    if (offload && graph.linkBytesPerS > 0) {
        add(SettingKind::None, "none + activation offload", {RecomputeGranularity::None, {}, {}, OffloadTarget::CPU});
        add(SettingKind::Selective, "selective + activation offload",
            {RecomputeGranularity::Selective, {}, {}, OffloadTarget::CPU});
    }
    return out;
}

std::vector<SettingMarker> settingMarkers(const std::vector<SettingPoint> &settings, bool keepBeaten)
{
    std::vector<SettingMarker> groups;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const SettingPoint &s = settings[i];
        auto it = std::find_if(groups.begin(), groups.end(), [&](const SettingMarker &g) {
            return same(g.memory, s.memory) && same(g.cost, s.cost);
        });
        if (it == groups.end()) {
            groups.push_back({{int(i)}, s.memory, s.cost, s.current});
            continue;
        }
        const SettingPoint &lead = settings[std::size_t(it->settings.front())];
        if ((s.current && !lead.current) || (s.exact && !lead.exact)) {
            it->settings.insert(it->settings.begin(), int(i));
            it->current = it->current || s.current;
        } else {
            it->settings.push_back(int(i));
        }
    }
    std::vector<SettingMarker> out;
    for (SettingMarker &g : groups) {
        g.beaten = std::any_of(groups.begin(), groups.end(), [&](const SettingMarker &h) { return beats(h, g); });
        if (!g.beaten || g.current || keepBeaten)
            out.push_back(g);
    }
    return out;
}

int nearestMarkerAtMost(const std::vector<SettingMarker> &markers, double memory)
{
    int best = -1;
    for (std::size_t i = 0; i < markers.size(); ++i) {
        const SettingMarker &m = markers[i];
        if (m.beaten || (m.memory > memory && !same(m.memory, memory)))
            continue;
        if (best < 0 || m.cost < markers[std::size_t(best)].cost)
            best = int(i);
    }
    return best;
}

int markerAt(const std::vector<SettingMarker> &markers, double memory, double cost)
{
    for (std::size_t i = 0; i < markers.size(); ++i)
        if (same(markers[i].memory, memory) && same(markers[i].cost, cost))
            return int(i);
    return -1;
}

} // namespace memledger
