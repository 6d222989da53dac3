// SPDX-License-Identifier: MIT
#pragma once

#include "core/planner/search.h"
#include "core/units.h"

namespace memledger {

// The schedules that split backwards (ZB-H1, ZB-H2, ZB-V, DualPipe,
// DualPipeV) tried on the search's fastest pipelined plans: each variant that
// is valid, stays under `limit` and is faster than its plan joins the answer
// (the answer stays sorted by step time and at most options.top long), and one
// note per schedule says what became of it: in the answer, slower, over the
// limit, or why no plan could run it.
void trySplitSchedules(SearchResult &result, const SearchOptions &options, Bytes limit);

} // namespace memledger
