// SPDX-License-Identifier: MIT
#include "core/planner/tryschedules.h"

#include "core/check/validate.h"
#include "core/config/editrules.h"
#include "core/ledger/ledger.h"
#include "core/planner/confirm.h"
#include "core/schedule/schedule.h"
#include "core/time/steptime.h"

#include <algorithm>
#include <array>
#include <utility>

namespace memledger {

namespace {

// The fastest plans tried: enough to find a better schedule for the layouts
// that matter, few enough to keep a search interactive (each try is a ledger).
constexpr std::size_t kPlansTried = 2;
// Pipeline sizes the fallback offers a schedule that ran or fitted on none of the plans tried.
constexpr int kMoreSizes = 2;

constexpr std::array<PipelineSchedule, 5> kSplit
    = {PipelineSchedule::ZbH1, PipelineSchedule::ZbH2, PipelineSchedule::ZbV, PipelineSchedule::DualPipe,
       PipelineSchedule::DualPipeV};

// The search names a plan "<base> t4 p2 v4 d16 ...": the variant's own v in place of the plan's.
std::string renamed(const std::string &name, std::int64_t v)
{
    std::string out;
    bool placed = false;
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find(' ', start), name.size());
        const std::string token = name.substr(start, end - start);
        const bool isV = token.size() > 1 && token[0] == 'v'
                         && std::all_of(token.begin() + 1, token.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        const bool isP = token.size() > 1 && token[0] == 'p'
                         && std::all_of(token.begin() + 1, token.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        if (!isV)
            out += (out.empty() ? "" : " ") + token;
        if ((isP || isV) && !placed && v > 1) {
            out += " v" + std::to_string(v);
            placed = true;
        }
        start = end + 1;
    }
    return out;
}

// One schedule on one base plan: counts it in `tally` and returns the variant when it fits and beats its base.
std::optional<SearchPlan> tryOn(const SearchPlan &plan, PipelineSchedule s, const SearchOptions &opt, Bytes limit,
                                ScheduleTry &tally, std::int64_t &ledgersRun)
{
    ++tally.tried;
    Config cfg = plan.config;
    ParallelismConfig &par = cfg.parallelism;
    par.pipeline_schedule = s;
    par.virtual_pipeline_model_parallel_size = chunksPerRankFor(s, par.virtual_pipeline_model_parallel_size);
    // The search's layouts: even, or with lighter edge chunks (plansearch::unevenChunks),
    // over the schedule's stages (DualPipe's two directions share p).
    par.pipeline_layout.clear();
    const std::int64_t stages = par.pipelineStages();
    if (plansearch::unevenChunks(cfg.model.num_layers, stages, 1))
        par.pipeline_layout = plansearch::unevenLayout(cfg.model.num_layers, stages);
    Problems problems = validate(cfg);
    const auto error = std::find_if(problems.begin(), problems.end(), [](const Problem &p) { return p.isError(); });
    if (error != problems.end()) {
        if (tally.invalid.empty())
            tally.invalid = error->path + ": " + error->message;
        return std::nullopt;
    }
    SearchPlan variant;
    // By the simulated peak first; the allocator is simulated only for a variant that would beat its base.
    plansearch::LedgerUnder under = plansearch::ledgerUnder(cfg, limit, false);
    if (under.fits) {
        variant.time = estimateStepTime(cfg, opt.gpusPerNode);
        if (variant.time.total < plan.time.total)
            under = plansearch::ledgerUnder(cfg, limit);
    }
    variant.ledger = std::move(under.ledger);
    ++ledgersRun;
    cfg.name = renamed(cfg.name, par.virtual_pipeline_model_parallel_size) + " " + std::string(scheduleName(s));
    variant.estimateBytes = under.rowsPeak;
    variant.reservedBytes = under.deviceBytes;
    if (!under.fits) {
        ++tally.over;
        if (!tally.leastOver || variant.reservedBytes < tally.leastOver->reservedBytes) {
            variant.config = std::move(cfg);
            tally.leastOver = std::move(variant);
        }
        return std::nullopt;
    }
    variant.config = std::move(cfg);
    if (!tally.fastestFit || variant.time.total < tally.fastestFit->time.total)
        tally.fastestFit = variant;
    if (variant.time.total >= plan.time.total) {
        ++tally.slower;
        return std::nullopt;
    }
    ++tally.faster;
    return variant;
}

} // namespace

const std::vector<PipelineSchedule> &splitSchedules()
{
    static const std::vector<PipelineSchedule> schedules(kSplit.begin(), kSplit.end());
    return schedules;
}

std::vector<ScheduleTry> trySplitSchedules(SearchResult &res, const SearchOptions &opt, Bytes limit,
                                           const std::vector<SearchPlan> &bases, const ScheduleFallback &fallback)
{
    std::vector<SearchPlan> found;
    std::vector<ScheduleTry> tries;
    const std::size_t tried = std::min(kPlansTried, bases.size());
    for (PipelineSchedule s : kSplit) {
        ScheduleTry tally;
        tally.schedule = s;
        for (std::size_t i = 0; i < tried; ++i)
            if (bases[i].config.parallelism.pipeline_model_parallel_size >= 2)
                if (auto v = tryOn(bases[i], s, opt, limit, tally, res.ledgersRun))
                    found.push_back(std::move(*v));
        // Valid on none of them, or over the limit on every one: the fastest
        // plans at other pipeline sizes it can use (DualPipe keeps two copies of
        // the parameters, which a deeper pipeline splits further).
        std::vector<std::int64_t> sizes;
        for (std::size_t i = 0; i < tried; ++i)
            sizes.push_back(bases[i].config.parallelism.pipeline_model_parallel_size);
        for (int more = 0; more < kMoreSizes && tally.faster + tally.slower == 0 && fallback; ++more) {
            std::optional<SearchPlan> extra = fallback(s, sizes);
            if (!extra)
                break;
            sizes.push_back(extra->config.parallelism.pipeline_model_parallel_size);
            ++tally.elsewhere;
            if (auto v = tryOn(*extra, s, opt, limit, tally, res.ledgersRun))
                found.push_back(std::move(*v));
        }
        const std::string name(scheduleName(s));
        const std::string on = std::to_string(tally.tried) + (tally.tried == 1 ? " plan" : " plans") + " tried";
        std::string verdict;
        if (tally.faster > 0)
            verdict = name + ": faster on " + std::to_string(tally.faster) + " of the " + on;
        else if (tally.slower > 0)
            verdict = name + ": slower than the 1F1B or interleaved plan it would replace";
        else if (tally.over > 0)
            verdict = name + ": over " + formatGB(double(limit)) + " on every plan it could run";
        else if (!tally.invalid.empty())
            verdict = name + ": not applicable (" + tally.invalid + ")";
        else
            verdict = name + ": needs a pipeline (p ≥ 2)";
        res.notes.push_back("Schedule " + verdict + ".");
        tries.push_back(std::move(tally));
    }
    if (!found.empty()) {
        for (SearchPlan &p : found)
            res.plans.push_back(std::move(p));
        std::stable_sort(res.plans.begin(), res.plans.end(),
                         [](const SearchPlan &a, const SearchPlan &b) { return a.time.total < b.time.total; });
        if (static_cast<int>(res.plans.size()) > opt.top)
            res.plans.resize(static_cast<std::size_t>(opt.top));
    }
    return tries;
}

} // namespace memledger
