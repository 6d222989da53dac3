// SPDX-License-Identifier: MIT
#pragma once

// The search's last step (searchPlans, core/planner/search.h): why each value
// of each dimension the enumeration tried is, or is not, in the answer.
// Internal to the search.

#include "core/planner/confirm.h"
#include "core/planner/tryschedules.h"

#include <string>
#include <vector>

namespace memledger::plansearch {

// What every verdict measures against.
struct VerdictContext
{
    const Config &base;
    const SearchOptions &opt;
    const Facts &facts;
    Bytes limit;
    std::string limitText; // "64.0 GB (80 % of 80.0 GB)"
    double bestTime;
};

// A plan's step against the answer's best, for a "slower" verdict: "13.900 s
// a step, 1.0 % slower than the best (13.764 s)", or under 0.05 % slower
// "13.770 s a step, a tie with the best within 0.1 %".
std::string stepAgainstBest(double seconds, double best);

VerdictContext verdictContextOf(const Config &base, const SearchOptions &opt, const Facts &facts, Bytes limit,
                                double bestTime);

// One DimensionVerdicts per dimension, in kSearchDimensions order: in the
// answer, structural (the rules that skipped it), memory (its least bound),
// slower (its fastest confirmed plan) or ledger; the pipeline schedule's from
// what trySplitSchedules tried (`tries`). The strategies' dimensions come
// from tryStrategies, which replaces them.
std::vector<DimensionVerdicts> dimensionVerdicts(const Enumeration &en, LedgerCheck &check, const SearchResult &res,
                                                 const VerdictContext &vc, const std::vector<ScheduleTry> &tries);

} // namespace memledger::plansearch
