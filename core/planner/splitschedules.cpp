// SPDX-License-Identifier: MIT
#include "core/planner/splitschedules.h"

#include "core/ledger.h"
#include "core/schedule.h"
#include "core/steptime.h"
#include "core/validate.h"

#include <algorithm>
#include <array>

namespace memledger {

namespace {

// The fastest plans tried: enough to find a better schedule for the layouts
// that matter, few enough to keep a search interactive (each try is a ledger).
constexpr std::size_t kPlansTried = 2;

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

} // namespace

void trySplitSchedules(SearchResult &res, const SearchOptions &opt, Bytes limit)
{
    std::vector<SearchPlan> found;
    const std::size_t tried = std::min(kPlansTried, res.plans.size());
    for (PipelineSchedule s : kSplit) {
        std::string verdict;
        int faster = 0, slower = 0, over = 0;
        std::string invalid;
        for (std::size_t i = 0; i < tried; ++i) {
            const SearchPlan &plan = res.plans[i];
            if (plan.config.parallelism.pipeline_model_parallel_size < 2)
                continue;
            Config cfg = plan.config;
            ParallelismConfig &par = cfg.parallelism;
            par.pipeline_schedule = s;
            par.virtual_pipeline_model_parallel_size = chunksPerRankFor(s, par.virtual_pipeline_model_parallel_size);
            par.pipeline_layout.clear();
            Problems problems = validate(cfg);
            const auto error
                = std::find_if(problems.begin(), problems.end(), [](const Problem &p) { return p.isError(); });
            if (error != problems.end()) {
                if (invalid.empty())
                    invalid = error->path + ": " + error->message;
                continue;
            }
            SearchPlan variant;
            variant.ledger = computeLedger(cfg);
            ++res.ledgersRun;
            if (variant.ledger.peak_bytes > limit) {
                ++over;
                continue;
            }
            variant.time = estimateStepTime(cfg, opt.gpusPerNode);
            if (variant.time.total >= plan.time.total) {
                ++slower;
                continue;
            }
            ++faster;
            cfg.name = renamed(cfg.name, par.virtual_pipeline_model_parallel_size) + " " + std::string(scheduleName(s));
            variant.config = std::move(cfg);
            variant.estimateBytes = variant.ledger.peak_bytes;
            found.push_back(std::move(variant));
        }
        const std::string name(scheduleName(s));
        if (faster > 0)
            verdict = name + ": faster on " + std::to_string(faster) + " of the " + std::to_string(tried)
                      + " fastest plans";
        else if (slower > 0)
            verdict = name + ": slower than the 1F1B or interleaved plan it would replace";
        else if (over > 0)
            verdict = name + ": over " + formatGB(double(limit)) + " on every plan it could run";
        else if (!invalid.empty())
            verdict = name + ": not applicable (" + invalid + ")";
        else
            verdict = name + ": needs a pipeline (p ≥ 2)";
        res.notes.push_back("Schedule " + verdict + ".");
    }
    if (found.empty())
        return;
    for (SearchPlan &p : found)
        res.plans.push_back(std::move(p));
    std::stable_sort(res.plans.begin(), res.plans.end(),
                     [](const SearchPlan &a, const SearchPlan &b) { return a.time.total < b.time.total; });
    if (static_cast<int>(res.plans.size()) > opt.top)
        res.plans.resize(static_cast<std::size_t>(opt.top));
}

} // namespace memledger
