// SPDX-License-Identifier: MIT
#pragma once

// The search's second step (searchPlans, core/planner/search.h): candidates
// put to validate() and the full ledger, fastest first, and the plans the
// schedules and strategies tried next start from. Internal to the search.

#include "core/ledger/ledger.h"
#include "core/planner/enumerate.h"

#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace memledger::plansearch {

// The preset of a candidate: the base's model, device and training settings
// with the candidate's split, micro-batch, ZeRO, recompute and offload.
Config configOf(const Config &base, const Candidate &x, std::int64_t globalBatch);

// A plan's ledger as its verdict reads it: the rows (computeLedger), and,
// when they stay under `limit`, the simulated peak carried
// (core/timeline/peakledger.h); when that peak stays under it too, what
// PyTorch's caching allocator reserves for the iteration plus the runtime
// reserve (simulateReserved, core/timeline/reserved.h), which decides. Each
// figure is a lower bound on the next, so a plan over the limit by one is
// over it without the costlier next (its ledger is then the rows' or the
// peak's): the rows are below the peak but where maxima that never coincide
// overcount, so the search errs on the safe side there.
struct LedgerUnder
{
    Ledger ledger;
    Bytes rowsPeak = 0; // the rows' peak: a lower bound on ledger.peak_bytes
    // What decides: reserved + the runtime reserve when the allocator was
    // simulated, else the last figure computed (over the limit).
    Bytes deviceBytes = 0;
    bool fits = false; // deviceBytes within the limit and no request out of memory
};
// `reserved` false: the simulated peak decides (a lower bound on reserved +
// the reserve), for the plans that do not enter the answer (verdicts, the
// slower variants of a schedule or a strategy), since the allocator's
// simulation costs 20–110 ms a plan.
LedgerUnder ledgerUnder(const Config &config, Bytes limit, bool reserved = true);

// What makes two candidates the same plan.
inline auto identityOf(const Candidate &x)
{
    return std::make_tuple(x.t, x.p, x.v, x.d, x.c, x.e, x.mbs, int(x.zero), int(x.recompute), int(x.offload),
                           int(x.sp));
}

// Puts candidates to validate() and computeLedger, each at most once (the
// fastest plan of several values is often the same one).
class LedgerCheck
{
public:
    LedgerCheck(const Config &base, std::int64_t globalBatch, Bytes limit, std::int64_t &ledgersRun)
        : m_base(base)
        , m_globalBatch(globalBatch)
        , m_limit(limit)
        , m_ledgersRun(ledgersRun)
    { }
    // The configuration of a candidate when it is valid and what it reserves stays under the limit.
    std::optional<std::pair<Config, LedgerUnder>> operator()(const Candidate &x);
    // From now on, judge candidates not yet checked by their simulated peak
    // alone (ledgerUnder's `reserved` false): for the verdicts, after the answer.
    void judgeByPeak() { m_reserved = false; }

private:
    const Config &m_base;
    std::int64_t m_globalBatch;
    Bytes m_limit;
    std::int64_t &m_ledgersRun;
    bool m_reserved = true;
    std::map<decltype(identityOf(Candidate{})), bool> m_confirmed;
};

// Pops `kept` fastest first, confirming each with the ledger, until `top`
// fit; what is left of `kept` stays a heap for the verdicts. Returns the
// search's own estimate for the best plan (0 when none fits).
double confirmFastest(std::vector<Candidate> &kept, LedgerCheck &check, const SearchOptions &opt, SearchResult &res);

// The pipeline sizes p ≥ 2 that some valid split has and that schedule `s`
// can run on: ZB-V and DualPipeV cut the layers into 2p chunks of a layer or
// more, DualPipe pairs rank r with rank p − 1 − r.
std::vector<std::int64_t> pipelineSizesFor(const Enumeration &en, PipelineSchedule s, std::int64_t layers);

// The fastest confirmed plan at a pipeline size schedule `s` can run on (its
// own schedule 1F1B or interleaved), other than the sizes in `skip`: the plan
// trySplitSchedules falls back to.
std::optional<SearchPlan> fastestPipelinedPlan(const Enumeration &en, PipelineSchedule s, LedgerCheck &check,
                                               const SearchOptions &opt, std::int64_t layers,
                                               const std::vector<std::int64_t> &skip = {});

// The plans a strategy might bring under the limit: per value of every
// enumerated dimension, the split with the least bound (those over the limit
// by the bound or, once tryStrategies runs their ledgers, by the ledger).
// With an answer, the ones faster than its slowest plan (or all, when it has
// room), fastest first; without one, the nearest to fitting first.
std::vector<Config> overLimitPlans(const Enumeration &en, const Config &base, std::int64_t globalBatch,
                                   const SearchOptions &opt, const SearchResult &res);

} // namespace memledger::plansearch
