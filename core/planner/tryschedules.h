// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/planner/search.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memledger {

// What became of one split schedule on the plans it was tried on: the search's
// "why not" verdict for it is made from this.
struct ScheduleTry
{
    PipelineSchedule schedule = PipelineSchedule::ZbH1;
    int tried = 0; // base plans it was put on (valid or not)
    int elsewhere = 0; // of them, the fallback's plans at other pipeline sizes
    int faster = 0, slower = 0, over = 0; // valid variants: faster than their base, not faster, over the limit
    std::string invalid; // the first validation error ("path: message") on a plan it could not run
    std::optional<SearchPlan> fastestFit; // the fastest variant under the limit, whether it joined the answer or not
    std::optional<SearchPlan> leastOver; // the variant over the limit with the least peak
};

// The plan to try a schedule on when it could run on none of the answer's
// fastest pipelined plans (say, ZB-V on p = 3 with 80 layers), or fit on none
// (DualPipe's two copies of the parameters on the p the answer chose): the
// fastest confirmed plan at a pipeline size the schedule can use other than
// those given, if there is one.
using ScheduleFallback
    = std::function<std::optional<SearchPlan>(PipelineSchedule, const std::vector<std::int64_t> &skip)>;

// The schedules that split backwards (ZB-H1, ZB-H2, ZB-V, DualPipe,
// DualPipeV) tried on `bases` (the search's fastest pipelined plans), and on
// the fallback's plans where a schedule could run on none of them or fit on
// none (up to two more pipeline sizes, the fastest first): each variant
// that is valid, stays under `limit` and is faster than its plan joins the
// answer (the answer stays sorted by step time and at most options.top long),
// and one note per schedule says what became of it: in the answer, slower,
// over the limit, or why no plan could run it. Returns one ScheduleTry per
// schedule, in the order above.
std::vector<ScheduleTry> trySplitSchedules(SearchResult &result, const SearchOptions &options, Bytes limit,
                                           const std::vector<SearchPlan> &bases, const ScheduleFallback &fallback);

// The schedules trySplitSchedules tries, in its order.
const std::vector<PipelineSchedule> &splitSchedules();

} // namespace memledger
