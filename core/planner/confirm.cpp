// SPDX-License-Identifier: MIT
#include "core/planner/confirm.h"

#include "core/check/validate.h"
#include "core/ledger/scheduledledger.h"
#include "core/time/passtimes.h"
#include "core/time/steptime.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/reserved.h"

#include <algorithm>
#include <string>

namespace memledger::plansearch {

Config configOf(const Config &base, const Candidate &x, std::int64_t globalBatch)
{
    Config cfg = base;
    ParallelismConfig &par = cfg.parallelism;
    par.tensor_model_parallel_size = x.t;
    par.pipeline_model_parallel_size = x.p;
    par.virtual_pipeline_model_parallel_size = x.v;
    par.data_parallel_size = x.d;
    par.context_parallel_size = x.c;
    par.expert_model_parallel_size = x.e;
    par.sequence_parallel = x.sp != 0;
    par.zero_stage = x.zero;
    par.pipeline_schedule.reset(); // interleaved when v > 1, else 1F1B
    // The search splits the layers evenly, or, where p·v does not divide them,
    // as evenly as they go with the edge stages lighter (unevenChunks).
    par.pipeline_layout.clear();
    if (unevenChunks(cfg.model.num_layers, x.p, x.v))
        par.pipeline_layout = unevenLayout(cfg.model.num_layers, x.p, x.v);
    cfg.training.micro_batch_size = x.mbs;
    cfg.training.global_batch_size = globalBatch;
    cfg.strategy.recompute_granularity = kGranularities[static_cast<std::size_t>(x.recompute)];
    if (cfg.strategy.recompute_granularity == RecomputeGranularity::Full)
        cfg.strategy.tensor_policies.clear(); // full recompute keeps only each layer's input: nothing to refine
    cfg.strategy.recompute_method = RecomputeMethod::Uniform;
    cfg.strategy.recompute_num_layers = 1;
    cfg.strategy.optimizer_offload = (x.offload & 1) ? OffloadTarget::CPU : OffloadTarget::None;
    cfg.strategy.param_offload = OffloadTarget::None;
    cfg.strategy.activation_offload = (x.offload & 2) ? OffloadTarget::CPU : OffloadTarget::None;
    // Balancing and gradient offload are tried on the answer afterwards
    // (core/planner/trystrategies.h); the bound counts neither.
    cfg.strategy.pipeline_activation_balance = ActivationBalance::None;
    cfg.strategy.grad_offload = OffloadTarget::None;
    cfg.name = base.name + " t" + std::to_string(x.t) + " p" + std::to_string(x.p)
               + (x.v > 1 ? " v" + std::to_string(x.v) : "") + " d" + std::to_string(x.d)
               + (x.c > 1 ? " c" + std::to_string(x.c) : "") + (x.e > 1 ? " e" + std::to_string(x.e) : "") + " b"
               + std::to_string(x.mbs) + " zero" + std::to_string(x.zero) + " "
               + std::string(granularityName(cfg.strategy.recompute_granularity)) + ((x.offload & 1) ? " cpu-adam" : "")
               + ((x.offload & 2) ? " act-offload" : "");
    return cfg;
}

LedgerUnder ledgerUnder(const Config &config, Bytes limit, bool reserved)
{
    // ZB-V ordered as the simulation orders it (its fill is timed by the
    // passes), so that the rows are the peak ledger's.
    Ledger rows = config.parallelism.schedule() == PipelineSchedule::ZbV
                      ? computeLedger(config, scheduledOps(config, costModel(config)))
                      : computeLedger(config);
    const Bytes rowsPeak = rows.peak_bytes;
    if (rowsPeak > limit)
        return {std::move(rows), rowsPeak, rowsPeak, false};
    PlanPeak plan = planPeak(config);
    const Bytes peak = plan.ledger.peak_bytes;
    if (peak > limit || !reserved) // the allocated peak bounds what the allocator reserves
        return {std::move(plan.ledger), rowsPeak, peak, peak <= limit};
    const PlanReserved simulated = simulateReserved(config, plan.timeline);
    const bool ooms
        = std::any_of(simulated.ranks.begin(), simulated.ranks.end(), [](const RankReserved &r) { return r.ooms > 0; });
    return {std::move(plan.ledger), rowsPeak, simulated.peak_bytes, simulated.peak_bytes <= limit && !ooms};
}

std::optional<std::pair<Config, LedgerUnder>> LedgerCheck::operator()(const Candidate &x)
{
    Config cfg = configOf(m_base, x, m_globalBatch);
    const auto id = identityOf(x);
    const auto known = m_confirmed.find(id);
    if (known != m_confirmed.end() && !known->second)
        return std::nullopt;
    if (known == m_confirmed.end()) {
        ++m_ledgersRun;
        if (hasErrors(validate(cfg))) {
            m_confirmed.emplace(id, false);
            return std::nullopt;
        }
    }
    LedgerUnder under = ledgerUnder(cfg, m_limit, m_reserved);
    const bool ok = under.fits;
    m_confirmed.insert_or_assign(id, ok);
    if (!ok)
        return std::nullopt;
    return std::make_pair(std::move(cfg), std::move(under));
}

double confirmFastest(std::vector<Candidate> &kept, LedgerCheck &check, const SearchOptions &opt, SearchResult &res)
{
    auto slower = [](const Candidate &a, const Candidate &b) { return rankKey(a) > rankKey(b); };
    std::make_heap(kept.begin(), kept.end(), slower);
    double bestTime = 0;
    while (!kept.empty() && static_cast<int>(res.plans.size()) < opt.top) {
        std::pop_heap(kept.begin(), kept.end(), slower);
        const Candidate x = kept.back();
        kept.pop_back();
        auto ok = check(x);
        if (!ok) {
            ++res.rejectedByLedger;
            continue;
        }
        if (res.plans.empty())
            bestTime = x.time;
        SearchPlan plan;
        plan.time = estimateStepTime(ok->first, opt.gpusPerNode);
        plan.config = std::move(ok->first);
        plan.ledger = std::move(ok->second.ledger);
        plan.reservedBytes = ok->second.deviceBytes;
        plan.estimateBytes = x.bound;
        res.plans.push_back(std::move(plan));
    }
    return bestTime;
}

std::vector<std::int64_t> pipelineSizesFor(const Enumeration &en, PipelineSchedule s, std::int64_t layers)
{
    const Domain &pd = en.domains[dimIndex(SearchDimension::P)];
    std::vector<std::int64_t> out;
    for (std::size_t k = 0; k < pd.values.size(); ++k) {
        const std::int64_t p = pd.values[k];
        if (p < 2 || !pd.slots[k].tried())
            continue;
        // A V holds two chunks a rank, each at least a layer (uneven ones by
        // plansearch::unevenLayout); DualPipe pairs rank r with p − 1 − r.
        if ((s == PipelineSchedule::ZbV || s == PipelineSchedule::DualPipeV) && layers < 2 * p)
            continue;
        if (s == PipelineSchedule::DualPipe && p % 2 != 0)
            continue;
        out.push_back(p);
    }
    return out;
}

std::optional<SearchPlan> fastestPipelinedPlan(const Enumeration &en, PipelineSchedule s, LedgerCheck &check,
                                               const SearchOptions &opt, std::int64_t layers,
                                               const std::vector<std::int64_t> &skip)
{
    const Domain &pd = en.domains[dimIndex(SearchDimension::P)];
    std::vector<Candidate> order;
    for (const std::int64_t p : pipelineSizesFor(en, s, layers)) {
        if (std::find(skip.begin(), skip.end(), p) != skip.end())
            continue;
        const Slot &slot = pd.slots[pd.indexOf(p)];
        if (slot.kept())
            order.push_back(slot.fastest);
    }
    std::sort(order.begin(), order.end(),
              [](const Candidate &a, const Candidate &b) { return rankKey(a) < rankKey(b); });
    for (const Candidate &x : order)
        if (auto ok = check(x)) {
            SearchPlan plan;
            plan.time = estimateStepTime(ok->first, opt.gpusPerNode);
            plan.config = std::move(ok->first);
            plan.reservedBytes = ok->second.deviceBytes;
            plan.estimateBytes = x.bound;
            return plan;
        }
    return std::nullopt;
}

std::vector<Config> overLimitPlans(const Enumeration &en, const Config &base, std::int64_t globalBatch,
                                   const SearchOptions &opt, const SearchResult &res)
{
    std::map<decltype(identityOf(Candidate{})), Candidate> unique;
    for (const SearchDimension d : kSearchDimensions)
        for (const Slot &slot : en.domains[dimIndex(d)].slots)
            if (slot.tried())
                unique.emplace(identityOf(slot.least), slot.least);
    std::vector<std::pair<double, Config>> ranked;
    const bool full = static_cast<int>(res.plans.size()) >= opt.top;
    const double slowest = res.plans.empty() ? 0.0 : res.plans.back().time.total;
    for (const auto &[id, x] : unique) {
        Config cfg = configOf(base, x, globalBatch);
        const bool listed = std::any_of(res.plans.begin(), res.plans.end(),
                                        [&](const SearchPlan &p) { return p.config.name == cfg.name; });
        if (listed || hasErrors(validate(cfg)))
            continue;
        double key = double(x.bound);
        if (!res.plans.empty()) {
            key = estimateStepTime(cfg, opt.gpusPerNode).total;
            if (full && key >= slowest)
                continue;
        }
        ranked.emplace_back(key, std::move(cfg));
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<Config> out;
    for (auto &r : ranked)
        out.push_back(std::move(r.second));
    return out;
}

} // namespace memledger::plansearch
