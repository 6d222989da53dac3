// SPDX-License-Identifier: MIT
#include "core/planner/chain.h"

#include "core/model/activations.h"
#include "core/schedule/stagelayers.h"
#include "core/time/costmodel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace memledger {

namespace {

struct Prefix
{
    std::vector<double> size; // size[k] = Σ size[0..k-1]
    std::vector<double> cost; // cost[k] = Σ cost of layers 1..k
    explicit Prefix(const Chain &c)
        : size(c.size.size() + 1, 0.0)
        , cost(c.cost.size() + 1, 0.0)
    {
        for (std::size_t k = 0; k < c.size.size(); ++k)
            size[k + 1] = size[k] + c.size[k];
        for (std::size_t k = 0; k < c.cost.size(); ++k)
            cost[k + 1] = cost[k] + c.cost[k];
    }
    double outputs(int i, int j) const { return size[j + 1] - size[i + 1]; } // x(i+1)..x(j)
    double recompute(int i, int j) const { return j - 1 > i ? cost[j - 1] - cost[i] : 0.0; } // layers i+1..j-1
};

// Segment (i, j]'s memory given the kept checkpoint bytes up to x(i) (chain.h).
double segmentMemory(const Chain &c, const Prefix &pre, double kept, int i, int j)
{
    return kept + pre.outputs(i, j) + std::max(c.size[i], c.size[i + 1]);
}

double totalCost(const Chain &c)
{
    double t = 0;
    for (double x : c.cost)
        t += x;
    return t;
}

} // namespace

std::vector<int> ChainPlan::segmentLengths() const
{
    std::vector<int> out;
    int prev = 0;
    for (int k : checkpoints) {
        out.push_back(k - prev);
        prev = k;
    }
    out.push_back(layers - prev);
    return out;
}

Chain uniformChain(int n)
{
    return alternatingChain(n, 1, 1, 1, 1);
}

Chain alternatingChain(int n, double sizeOdd, double sizeEven, double costOdd, double costEven)
{
    Chain c;
    c.size.push_back(sizeOdd);
    for (int l = 1; l <= n; ++l) {
        c.size.push_back(l % 2 == 1 ? sizeOdd : sizeEven);
        c.cost.push_back(l % 2 == 1 ? costOdd : costEven);
    }
    return c;
}

Chain chainFromConfig(const Config &config)
{
    // The rank holding the most layers (all of them equal unless pipeline_layout says otherwise).
    const std::int64_t p = std::max<std::int64_t>(1, config.parallelism.pipeline_model_parallel_size);
    const std::vector<StageLayers> stages = stageLayers(config);
    std::int64_t most = 1;
    for (std::int64_t r = 0; r < p; ++r)
        most = std::max(most, rankLayers(stages, p, r));
    const int n = static_cast<int>(most);
    const CostModel cm = costModel(config);
    const LayerActivations dense = layerActivations(config, false, false);
    const LayerActivations moe = config.model.isMoe() ? layerActivations(config, true, false) : dense;
    Chain c;
    c.size.push_back(static_cast<double>(dense.checkpoint)); // the first layer's input
    for (int l = 1; l <= n; ++l) {
        const bool isMoe = config.model.isMoeLayer(l - 1);
        c.size.push_back(static_cast<double>((isMoe ? moe : dense).checkpoint)); // x(l) is layer l+1's input
        c.cost.push_back((isMoe ? cm.moe : cm.dense).forward.seconds);
    }
    return c;
}

ChainPlan evaluateChain(const Chain &chain, std::vector<int> checkpoints, std::string name)
{
    const int n = chain.layers();
    std::sort(checkpoints.begin(), checkpoints.end());
    checkpoints.erase(std::unique(checkpoints.begin(), checkpoints.end()), checkpoints.end());
    if (!checkpoints.empty() && (checkpoints.front() < 1 || checkpoints.back() > n - 1))
        throw std::invalid_argument("checkpoints must lie in 1..n-1");
    const Prefix pre(chain);
    ChainPlan plan;
    plan.name = std::move(name);
    plan.layers = n;
    double kept = chain.size[0];
    int i = 0;
    for (std::size_t k = 0; k <= checkpoints.size(); ++k) {
        const int j = k < checkpoints.size() ? checkpoints[k] : n;
        plan.peak = std::max(plan.peak, segmentMemory(chain, pre, kept, i, j));
        plan.recompute += pre.recompute(i, j);
        if (j < n)
            kept += chain.size[j];
        i = j;
    }
    plan.checkpoints = std::move(checkpoints);
    plan.forward = totalCost(chain) + plan.recompute;
    return plan;
}

ChainPlan uniformPlan(const Chain &chain)
{
    const int n = chain.layers();
    const int len = std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(n)))));
    std::vector<int> cps;
    for (int k = len; k < n; k += len)
        cps.push_back(k);
    return evaluateChain(chain, cps, "uniform √n");
}

namespace {

// Segment [i, j] with x(i) kept (kept bytes include it) and the gradient of
// x(j) arriving. The top level's midpoint is kept during the first forward,
// so it costs nothing extra; below, reaching the midpoint is recompute.
void bisect(const Chain &c, const Prefix &pre, int i, int j, double kept, bool top, double &peak, double &recompute)
{
    if (j - i == 1) {
        peak = std::max(peak, segmentMemory(c, pre, kept, i, j));
        return;
    }
    const int m = i + (j - i) / 2;
    if (!top)
        recompute += pre.cost[m] - pre.cost[i];
    bisect(c, pre, m, j, kept + c.size[m], false, peak, recompute);
    bisect(c, pre, i, m, kept, false, peak, recompute);
}

} // namespace

ChainPlan recursivePlan(const Chain &chain)
{
    const Prefix pre(chain);
    ChainPlan plan;
    plan.name = "recursive";
    plan.layers = chain.layers();
    bisect(chain, pre, 0, chain.layers(), chain.size[0], true, plan.peak, plan.recompute);
    plan.forward = totalCost(chain) + plan.recompute;
    return plan;
}

ChainPlan greedyPlan(const Chain &chain, double budget)
{
    std::vector<int> cps;
    double temp = 0;
    for (int l = 1; l < chain.layers(); ++l) {
        temp += chain.size[l];
        if (temp > budget) {
            cps.push_back(l);
            temp = 0;
        }
    }
    return evaluateChain(chain, cps, "greedy (Chen alg. 3)");
}

namespace {

std::vector<ChainPlan> paretoOf(std::vector<ChainPlan> plans)
{
    std::stable_sort(plans.begin(), plans.end(), [](const ChainPlan &a, const ChainPlan &b) {
        return a.peak != b.peak ? a.peak < b.peak : a.recompute < b.recompute;
    });
    std::vector<ChainPlan> out;
    for (ChainPlan &p : plans)
        if (out.empty() || p.recompute < out.back().recompute)
            out.push_back(std::move(p));
    return out;
}

} // namespace

std::vector<ChainPlan> frontierExhaustive(const Chain &chain)
{
    const int n = chain.layers();
    if (n < 1 || n > 20)
        throw std::invalid_argument("exhaustive search is for 1 ≤ n ≤ 20 layers");
    const Prefix pre(chain);
    // Best (lowest recompute, first found) per distinct peak; the frontier follows.
    std::vector<ChainPlan> best;
    const std::uint32_t masks = 1u << (n - 1);
    for (std::uint32_t mask = 0; mask < masks; ++mask) {
        double kept = chain.size[0], peak = 0, rec = 0;
        int i = 0;
        for (int j = 1; j <= n; ++j) {
            if (j < n && !(mask >> (j - 1) & 1u))
                continue;
            peak = std::max(peak, segmentMemory(chain, pre, kept, i, j));
            rec += pre.recompute(i, j);
            if (j < n)
                kept += chain.size[j];
            i = j;
        }
        auto it = std::find_if(best.begin(), best.end(), [&](const ChainPlan &p) { return p.peak == peak; });
        if (it != best.end() && it->recompute <= rec)
            continue;
        ChainPlan plan;
        plan.name = "optimal";
        plan.layers = n;
        plan.peak = peak;
        plan.recompute = rec;
        plan.forward = totalCost(chain) + rec;
        for (int l = 1; l < n; ++l)
            if (mask >> (l - 1) & 1u)
                plan.checkpoints.push_back(l);
        if (it != best.end())
            *it = std::move(plan);
        else
            best.push_back(std::move(plan));
    }
    return paretoOf(std::move(best));
}

namespace {

struct Label
{
    double kept, peak, rec;
    int from, fromLabel; // predecessor position and its label index
};

bool dominates(const Label &a, const Label &b)
{
    return a.kept <= b.kept && a.peak <= b.peak && a.rec <= b.rec;
}

void insertLabel(std::vector<Label> &set, const Label &l)
{
    for (const Label &o : set)
        if (dominates(o, l))
            return;
    std::erase_if(set, [&](const Label &o) { return dominates(l, o); });
    set.push_back(l);
}

std::vector<int> tracePath(const std::vector<std::vector<Label>> &labels, int pos, int idx)
{
    std::vector<int> cps;
    while (pos > 0) {
        cps.push_back(pos);
        const Label &l = labels[pos][idx];
        pos = l.from;
        idx = l.fromLabel;
    }
    std::reverse(cps.begin(), cps.end());
    return cps;
}

} // namespace

std::vector<ChainPlan> frontierDP(const Chain &chain)
{
    // Labels at a checkpoint position i: a kept-bytes, peak-so-far and
    // recompute triple of some prefix plan. A prefix whose triple is
    // dominated can never finish better (later segments only add to kept
    // bytes, the peak is a max and recompute a sum), so pruning is exact.
    const int n = chain.layers();
    const Prefix pre(chain);
    std::vector<std::vector<Label>> labels(n);
    labels[0].push_back({chain.size[0], 0.0, 0.0, -1, -1});
    std::vector<ChainPlan> finals;
    for (int j = 1; j <= n; ++j) {
        std::vector<Label> here;
        for (int i = 0; i < j; ++i)
            for (std::size_t k = 0; k < labels[i].size(); ++k) {
                const Label &l = labels[i][k];
                Label next{l.kept + (j < n ? chain.size[j] : 0.0),
                           std::max(l.peak, segmentMemory(chain, pre, l.kept, i, j)), l.rec + pre.recompute(i, j), i,
                           static_cast<int>(k)};
                insertLabel(here, next);
            }
        if (j < n) {
            labels[j] = std::move(here);
            continue;
        }
        for (const Label &l : here) {
            ChainPlan plan;
            plan.name = "optimal";
            plan.layers = n;
            plan.peak = l.peak;
            plan.recompute = l.rec;
            plan.forward = totalCost(chain) + l.rec;
            plan.checkpoints = l.from > 0 ? tracePath(labels, l.from, l.fromLabel) : std::vector<int>{};
            finals.push_back(std::move(plan));
        }
    }
    return paretoOf(std::move(finals));
}

ChainPlan bestUnderBudget(const Chain &chain, double budget)
{
    // Two-dimensional labels (kept bytes, recompute) per position; a segment
    // is taken only when it fits the budget.
    const int n = chain.layers();
    const Prefix pre(chain);
    std::vector<std::vector<Label>> labels(n);
    labels[0].push_back({chain.size[0], 0.0, 0.0, -1, -1});
    ChainPlan best;
    best.name = "optimal under budget";
    best.layers = n;
    best.recompute = std::numeric_limits<double>::infinity();
    best.peak = std::numeric_limits<double>::infinity();
    for (int j = 1; j <= n; ++j) {
        std::vector<Label> here;
        for (int i = 0; i < j; ++i)
            for (std::size_t k = 0; k < labels[i].size(); ++k) {
                const Label &l = labels[i][k];
                const double mem = segmentMemory(chain, pre, l.kept, i, j);
                if (mem > budget)
                    continue;
                Label next{l.kept + (j < n ? chain.size[j] : 0.0), 0.0, l.rec + pre.recompute(i, j), i,
                           static_cast<int>(k)};
                insertLabel(here, next);
            }
        if (j < n) {
            labels[j] = std::move(here);
            continue;
        }
        for (const Label &l : here)
            if (l.rec < best.recompute) {
                std::vector<int> cps = l.from > 0 ? tracePath(labels, l.from, l.fromLabel) : std::vector<int>{};
                best = evaluateChain(chain, cps, "optimal under budget");
            }
    }
    return best;
}

} // namespace memledger
