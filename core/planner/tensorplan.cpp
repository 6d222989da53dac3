// SPDX-License-Identifier: MIT
#include "core/planner/tensorplan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace memledger {

namespace {

// A plan found by a frontier search: its device bytes, its overhead and a key
// from which `fatesOf` rebuilds its fates.
struct Point
{
    Bytes device;
    double overhead;
    std::uint64_t key;
};

// The Pareto frontier of `points`, fewest bytes first: each point that beats
// every one with no more bytes on overhead (the first of equals), evaluated.
template<class FatesOf>
std::vector<TensorPlan> frontierOf(const LayerGraph &g, TensorCost cost, std::vector<Point> &points, FatesOf fatesOf)
{
    std::stable_sort(points.begin(), points.end(), [](const Point &a, const Point &b) {
        return a.device != b.device ? a.device < b.device : a.overhead < b.overhead;
    });
    std::vector<TensorPlan> out;
    double best = INFINITY;
    for (const Point &p : points) {
        if (!(p.overhead < best))
            continue;
        best = p.overhead;
        out.push_back(evaluateTensorPlan(g, fatesOf(p.key), cost));
    }
    return out;
}

} // namespace

std::vector<Fate> selectivePlan(const LayerGraph &g)
{
    std::vector<Fate> f(g.nodes.size(), Fate::Store);
    for (std::size_t k = 1; k < g.nodes.size(); ++k)
        if (g.nodes[k].attentionCore)
            f[k] = Fate::Recompute;
    return f;
}

std::vector<TensorPlan> tensorFrontier(const LayerGraph &g, TensorCost cost, bool allowOffload, bool allowQuantize)
{
    // With a third fate the dynamic programme is exact and far faster than
    // enumerating 3^12 plans (65 ms → 5 ms on GPT-3's layer without FlashAttention).
    if (allowQuantize || allowOffload) {
        std::vector<Fate> fates = {Fate::Store, Fate::Recompute};
        if (allowQuantize)
            fates.push_back(Fate::QuantizeFp8);
        if (allowOffload)
            fates.push_back(Fate::Offload);
        if (allowOffload && allowQuantize)
            fates.push_back(Fate::QuantizeFp8Offload);
        return tensorFrontierOf(g, cost, fates);
    }
    return tensorFrontierEnumerated(g, cost, false);
}

std::vector<TensorPlan> tensorFrontierEnumerated(const LayerGraph &g, TensorCost cost, bool allowOffload)
{
    // Tensors of zero bytes (no dropout, FlashAttention's scores) have no choice.
    std::vector<std::size_t> free;
    for (std::size_t k = 1; k < g.nodes.size(); ++k)
        if (g.nodes[k].bytes > 0)
            free.push_back(k);
    const int radix = allowOffload ? 3 : 2;
    std::vector<double> rec(g.nodes.size());
    for (std::size_t k = 0; k < g.nodes.size(); ++k)
        rec[k] = opSeconds(g, g.nodes[k], cost);
    const double layer = layerSeconds(g, cost);
    Bytes all = g.total();

    std::vector<Point> points;
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < free.size(); ++i)
        count *= static_cast<std::uint64_t>(radix);
    points.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t code = 0; code < count; ++code) {
        Bytes device = all, off = 0;
        double r = 0;
        std::uint64_t c = code;
        for (std::size_t i = 0; i < free.size(); ++i, c /= static_cast<std::uint64_t>(radix)) {
            const int fate = static_cast<int>(c % static_cast<std::uint64_t>(radix));
            const std::size_t k = free[i];
            if (fate == 1) {
                device -= g.nodes[k].bytes;
                r += rec[k];
            } else if (fate == 2) {
                device -= g.nodes[k].bytes;
                off += g.nodes[k].bytes;
            }
        }
        const double stall = offloadStall(double(off), g.linkBytesPerS, g.forwardSeconds, g.backwardSeconds);
        points.push_back({device, (r + stall) / layer, code});
    }
    return frontierOf(g, cost, points, [&](std::uint64_t code) {
        std::vector<Fate> fates(g.nodes.size(), Fate::Store);
        for (std::size_t i = 0; i < free.size(); ++i, code /= static_cast<std::uint64_t>(radix))
            fates[free[i]] = static_cast<Fate>(code % static_cast<std::uint64_t>(radix));
        return fates;
    });
}

std::vector<TensorPlan> tensorFrontierOf(const LayerGraph &g, TensorCost cost, const std::vector<Fate> &fates)
{
    struct State
    {
        Bytes device;
        double seconds; // recompute + quantise
        Bytes offloaded;
        std::int32_t parent;
        Fate fate;
    };
    const auto quantizable = [&](const TensorNode &n) { return n.quantizedBytes != n.bytes; };
    std::vector<std::vector<State>> steps;
    if (g.nodes.empty())
        return {};
    // The layer input is the checkpoint every planner keeps; with quantise
    // among the fates it may be kept in fp8.
    steps.push_back({{g.nodes[0].bytes, 0.0, 0, -1, Fate::Store}});
    if (std::find(fates.begin(), fates.end(), Fate::QuantizeFp8) != fates.end() && quantizable(g.nodes[0]))
        steps.back().push_back(
            {g.nodes[0].quantizedBytes, quantizeSeconds(g, g.nodes[0], cost), 0, -1, Fate::QuantizeFp8});
    std::vector<State> next;
    std::map<double, Bytes> stair; // seconds → fewest offloaded bytes, among kept states of no more device bytes
    for (std::size_t k = 1; k < g.nodes.size(); ++k) {
        const TensorNode &n = g.nodes[k];
        const std::vector<State> &prev = steps.back();
        next.clear();
        const double rec = opSeconds(g, n, cost), quant = quantizeSeconds(g, n, cost);
        for (std::size_t i = 0; i < prev.size(); ++i) {
            const State &s = prev[i];
            const auto parent = static_cast<std::int32_t>(i);
            for (Fate f : fates) {
                if (n.bytes == 0 && f != Fate::Store)
                    continue; // no choice to make
                if ((f == Fate::QuantizeFp8 || f == Fate::QuantizeFp8Offload) && !quantizable(n))
                    continue; // the same as storing or offloading it
                State t{s.device, s.seconds, s.offloaded, parent, f};
                switch (f) {
                case Fate::Store:
                    t.device += n.bytes;
                    break;
                case Fate::Recompute:
                    t.seconds += rec;
                    break;
                case Fate::Offload:
                    t.offloaded += n.bytes;
                    break;
                case Fate::QuantizeFp8:
                case Fate::QuantizeE5M6: // not among the fates the planner tries
                    t.device += n.quantizedBytes;
                    t.seconds += quant;
                    break;
                case Fate::QuantizeFp8Offload:
                    t.offloaded += n.quantizedBytes;
                    t.seconds += quant;
                    break;
                }
                next.push_back(t);
            }
        }
        std::sort(next.begin(), next.end(), [](const State &a, const State &b) {
            if (a.device != b.device)
                return a.device < b.device;
            if (a.seconds != b.seconds)
                return a.seconds < b.seconds;
            return a.offloaded < b.offloaded;
        });
        // Keep a state unless one kept before it (no more device bytes) has
        // no more seconds and no more offloaded bytes.
        stair.clear();
        std::vector<State> kept;
        for (const State &t : next) {
            auto it = stair.upper_bound(t.seconds);
            if (it != stair.begin() && std::prev(it)->second <= t.offloaded)
                continue;
            kept.push_back(t);
            it = stair.insert_or_assign(t.seconds, t.offloaded).first;
            for (auto j = std::next(it); j != stair.end() && j->second >= t.offloaded;)
                j = stair.erase(j);
        }
        steps.push_back(std::move(kept));
    }

    const double layer = layerSeconds(g, cost);
    std::vector<Point> points;
    const std::vector<State> &last = steps.back();
    for (std::size_t i = 0; i < last.size(); ++i) {
        const State &s = last[i];
        const double stall = offloadStall(double(s.offloaded), g.linkBytesPerS, g.forwardSeconds, g.backwardSeconds);
        points.push_back({s.device, (s.seconds + stall) / layer, i});
    }
    return frontierOf(g, cost, points, [&](std::uint64_t index) {
        std::vector<Fate> plan(g.nodes.size(), Fate::Store);
        std::int32_t at = static_cast<std::int32_t>(index);
        for (std::size_t k = g.nodes.size(); k-- > 0;) {
            const State &s = steps[k][static_cast<std::size_t>(at)];
            plan[k] = s.fate;
            at = s.parent;
        }
        return plan;
    });
}

std::vector<TensorPolicy> policiesOf(const LayerGraph &g, const std::vector<Fate> &fates)
{
    std::vector<TensorPolicy> out;
    for (std::size_t k = 0; k < g.nodes.size() && k < fates.size(); ++k)
        if (fates[k] != Fate::Store)
            for (const std::string &name : g.nodes[k].tensors)
                out.push_back({name, fates[k]});
    std::sort(out.begin(), out.end(),
              [](const TensorPolicy &a, const TensorPolicy &b) { return a.pattern < b.pattern; });
    return out;
}

Config withTensorPlan(const Config &config, const LayerGraph &g, const std::vector<Fate> &fates)
{
    Config c = config;
    // The plan names every tensor's fate: nothing is left for the coarse knob.
    c.strategy.recompute_granularity = RecomputeGranularity::None;
    c.strategy.tensor_policies = policiesOf(g, fates);
    return c;
}

} // namespace memledger
