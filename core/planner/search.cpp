// SPDX-License-Identifier: MIT
#include "core/planner/search.h"

#include "core/check/validate.h"
#include "core/model/fp8.h"
#include "core/model/modelstates.h"
#include "core/planner/confirm.h"
#include "core/planner/enumerate.h"
#include "core/planner/tryschedules.h"
#include "core/planner/trystrategies.h"
#include "core/planner/verdicts.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

namespace memledger {

Problems checkSearchOptions(const SearchOptions &o)
{
    Problems out;
    if (o.gpus < 1 || o.gpus > 1000000)
        out.push_back({"--gpus", "must be a GPU count from 1 to 1,000,000, got " + std::to_string(o.gpus)});
    if (o.top < 1)
        out.push_back({"--top", "must be at least 1, got " + std::to_string(o.top)});
    if (!(o.margin > 0.0 && o.margin <= 1.0))
        out.push_back({"--margin", "must be a fraction of the device memory in (0, 1], got " + std::to_string(o.margin),
                       "0.8 keeps the estimate under 80 % of HBM"});
    if (o.gpusPerNode < 1)
        out.push_back({"gpus_per_node", "must be at least 1"});
    return out;
}

Problems searchBlockers(const Config &base)
{
    const Problems own = validate(base);
    if (!hasErrors(own))
        return {};
    // Every setting the search chooses at its simplest, so that only the errors of what it keeps remain.
    Config simplest = base;
    ParallelismConfig &par = simplest.parallelism;
    par.tensor_model_parallel_size = 1;
    par.pipeline_model_parallel_size = 1;
    par.virtual_pipeline_model_parallel_size = 1;
    par.data_parallel_size = 1;
    par.context_parallel_size = 1;
    par.expert_model_parallel_size = 1;
    par.sequence_parallel = false;
    par.zero_stage = 0;
    par.pipeline_schedule.reset();
    par.pipeline_layout.clear();
    simplest.training.micro_batch_size = 1;
    simplest.strategy.recompute_granularity = RecomputeGranularity::None;
    simplest.strategy.optimizer_offload = OffloadTarget::None;
    simplest.strategy.activation_offload = OffloadTarget::None;
    const Problems kept = validate(simplest);
    Problems out;
    for (const Problem &p : own)
        if (p.isError()
            && std::any_of(kept.begin(), kept.end(), [&](const Problem &k) { return k.isError() && k.path == p.path; }))
            out.push_back(p);
    return out;
}

double percentSlower(double seconds, double fastest)
{
    return fastest > 0 ? (seconds / fastest - 1.0) * 100.0 : 0.0;
}

std::vector<std::size_t> paretoPlans(const SearchResult &result)
{
    std::vector<std::size_t> order(result.plans.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    const auto peak = [&](std::size_t i) { return result.plans[i].ledger.peak_bytes; };
    const auto time = [&](std::size_t i) { return result.plans[i].time.total; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return time(a) != time(b) ? time(a) < time(b) : peak(a) < peak(b);
    });
    // Fastest first: a plan joins when it needs less memory than every faster one.
    std::vector<std::size_t> out;
    for (std::size_t i : order)
        if (out.empty() || peak(i) < peak(out.back()))
            out.push_back(i);
    return out;
}

std::string_view dimensionName(SearchDimension d)
{
    constexpr std::array<std::string_view, plansearch::kDims> names = {"t",
                                                                       "p",
                                                                       "v",
                                                                       "d",
                                                                       "c",
                                                                       "e",
                                                                       "micro_batch_size",
                                                                       "zero_stage",
                                                                       "recompute_granularity",
                                                                       "offload",
                                                                       "pipeline_schedule",
                                                                       "pipeline_activation_balance",
                                                                       "grad_offload",
                                                                       "fp8_recipe"};
    return names[plansearch::dimIndex(d)];
}

std::string_view dimensionTitle(SearchDimension d)
{
    constexpr std::array<std::string_view, plansearch::kDims> titles = {"tensor-parallel degree",
                                                                        "pipeline-parallel degree",
                                                                        "virtual pipeline chunks per rank",
                                                                        "data-parallel degree",
                                                                        "context-parallel degree",
                                                                        "expert-parallel degree",
                                                                        "micro-batch size",
                                                                        "ZeRO stage",
                                                                        "activation recompute",
                                                                        "offload",
                                                                        "pipeline schedule",
                                                                        "cross-rank activation balancing",
                                                                        "gradient offload",
                                                                        "FP8 recipe"};
    return titles[plansearch::dimIndex(d)];
}

std::int64_t dimensionValue(const Config &config, SearchDimension d)
{
    const ParallelismConfig &par = config.parallelism;
    switch (d) {
    case SearchDimension::T:
        return par.tensor_model_parallel_size;
    case SearchDimension::P:
        return par.pipeline_model_parallel_size;
    case SearchDimension::V:
        return par.virtual_pipeline_model_parallel_size;
    case SearchDimension::D:
        return par.data_parallel_size;
    case SearchDimension::C:
        return par.context_parallel_size;
    case SearchDimension::E:
        return par.expert_model_parallel_size;
    case SearchDimension::MicroBatch:
        return config.training.micro_batch_size;
    case SearchDimension::ZeroStage:
        return par.zero_stage;
    case SearchDimension::Recompute:
        return static_cast<std::int64_t>(config.strategy.recompute_granularity);
    case SearchDimension::Offload:
        return (config.strategy.optimizer_offload != OffloadTarget::None ? 1 : 0)
               | (config.strategy.activation_offload != OffloadTarget::None ? 2 : 0);
    case SearchDimension::Schedule:
        return static_cast<std::int64_t>(par.schedule());
    case SearchDimension::ActivationBalance:
        return static_cast<std::int64_t>(config.strategy.pipeline_activation_balance);
    case SearchDimension::GradOffload:
        return config.strategy.grad_offload != OffloadTarget::None ? 1 : 0;
    case SearchDimension::Fp8Recipe:
        return static_cast<std::int64_t>(config.training.fp8_recipe);
    }
    return 0;
}

std::string_view verdictKindName(VerdictKind k)
{
    switch (k) {
    case VerdictKind::InTop:
        return "top";
    case VerdictKind::Structural:
        return "structural";
    case VerdictKind::Memory:
        return "memory";
    case VerdictKind::Slower:
        return "slower";
    case VerdictKind::Ledger:
        return "ledger";
    }
    return "structural";
}

namespace {

// Bytes per parameter of ZeRO's weight gathers under any ZeRO stage ≥ 1 (stepTime uses it only there).
double searchGatherBytes(Config base)
{
    base.parallelism.zero_stage = std::max(1, base.parallelism.zero_stage);
    // fp32 parameters are gathered as what they are cast to (FSDP's param_dtype).
    return fp8ParamGatherInForce(base) ? fp8GatherBytesPerParam(base) : double(stateBytes(base.training).compute);
}

// The global batches nearest `globalBatch`, below (if any) and above, that
// some data-parallel size of `splits` divides.
std::vector<std::int64_t> nearestGlobalBatches(std::int64_t globalBatch, const std::vector<std::int64_t> &splits)
{
    std::int64_t below = 0, above = std::numeric_limits<std::int64_t>::max();
    for (const std::int64_t d : splits) {
        below = std::max(below, globalBatch / d * d);
        above = std::min(above, (globalBatch + d - 1) / d * d);
    }
    std::vector<std::int64_t> out;
    if (below > 0 && below != globalBatch)
        out.push_back(below);
    if (!splits.empty() && above != globalBatch)
        out.push_back(above);
    return out;
}

// Why no plan came back, when none did.
void addEmptyAnswerNotes(SearchResult &res, const plansearch::Facts &f, const SearchOptions &opt)
{
    if (res.candidates == 0 && !res.nearestGlobalBatches.empty()) {
        std::string batches;
        for (const std::int64_t gb : res.nearestGlobalBatches)
            batches += (batches.empty() ? "" : " or ") + std::to_string(gb);
        res.notes.push_back("the global batch of " + std::to_string(f.GB) + " sequences does not split over the "
                            + "data-parallel replicas of any valid split of " + std::to_string(f.N)
                            + " GPUs; the nearest that do: " + batches
                            + " (set training.global_batch_size and search again)");
    } else if (res.candidates == 0)
        res.notes.push_back("no split of " + std::to_string(f.N)
                            + " GPUs is valid for this model (t must divide the heads, "
                              "query groups and FFN width; p must divide the layers; the global batch of "
                            + std::to_string(f.GB) + " must divide into micro-batches over d)");
    else if (res.plans.empty())
        res.notes.push_back("none of " + std::to_string(res.candidates) + " plans stays under "
                            + std::to_string(opt.margin)
                            + " × device memory by what the allocator reserves plus the runtime reserve; add GPUs, "
                              "shorten the sequence or use a larger device");
}

} // namespace

SearchResult searchPlans(const Config &base, const SearchOptions &opt)
{
    // Enumerate and bound, confirm by the ledger, try the split schedules and
    // the strategies, then say why each value is or is not in the answer.
    using namespace plansearch;
    const auto started = std::chrono::steady_clock::now();
    const ModelConfig &model = base.model;
    const Facts facts{.N = opt.gpus,
                      .G = opt.gpusPerNode,
                      .L = model.num_layers,
                      .s = base.training.seq_length,
                      .GB = base.globalBatch(),
                      .heads = model.num_attention_heads,
                      .groups = model.queryGroups(),
                      .ffn = model.ffn(),
                      .sharedFfn = model.moe_shared_expert_intermediate_size,
                      .moeFfn = model.moeFfn(),
                      .etp = base.parallelism.expert_tensor_parallel_size,
                      .moe = model.isMoe(),
                      .etpFixed = base.parallelism.expert_tensor_parallel_size > 0,
                      .gatherBytes = searchGatherBytes(base)};
    SearchResult res;
    res.limitBytes = static_cast<Bytes>(std::floor(opt.margin * double(base.hardware.hbm_bytes)));

    Enumeration en = enumerateCandidates(base, opt, facts, res.limitBytes);
    res.candidates = en.candidates;
    res.prunedByBound = en.prunedByBound;
    if (en.candidates == 0)
        res.nearestGlobalBatches = nearestGlobalBatches(facts.GB, en.batchSplits);

    // Fastest first; confirm each with the ledger until `top` fit.
    LedgerCheck check(base, facts.GB, res.limitBytes, res.ledgersRun);
    double bestTime = confirmFastest(en.kept, check, opt, res);
    // The schedules that split backwards, on the fastest pipelined plans (or,
    // when the answer has none, the fastest confirmed one).
    std::vector<SearchPlan> bases;
    for (const SearchPlan &plan : res.plans)
        if (plan.config.parallelism.pipeline_model_parallel_size >= 2)
            bases.push_back(plan);
    if (bases.empty())
        if (auto plan = fastestPipelinedPlan(en, PipelineSchedule::ZbH1, check, opt, facts.L))
            bases.push_back(std::move(*plan));
    const std::vector<ScheduleTry> tries = trySplitSchedules(
        res, opt, res.limitBytes, bases, [&](PipelineSchedule s, const std::vector<std::int64_t> &skip) {
            return fastestPipelinedPlan(en, s, check, opt, facts.L, skip);
        });
    // Balancing, gradient offload and FP8 on the fastest plans and on the nearest ones over the limit.
    std::vector<DimensionVerdicts> strategies
        = tryStrategies(res, base, opt, res.limitBytes, overLimitPlans(en, base, facts.GB, opt, res));
    if (!res.plans.empty()) // a split schedule or a strategy may now be the best: the verdicts measure against it
        bestTime = std::min(bestTime, res.plans.front().time.total);
    addEmptyAnswerNotes(res, facts, opt);

    check.judgeByPeak(); // the verdicts' plans do not enter the answer: the allocator is not simulated for them
    res.dimensions
        = dimensionVerdicts(en, check, res, verdictContextOf(base, opt, facts, res.limitBytes, bestTime), tries);
    for (DimensionVerdicts &dv : strategies)
        res.dimensions[dimIndex(dv.dimension)] = std::move(dv);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return res;
}

} // namespace memledger
