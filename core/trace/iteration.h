// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/compare.h"
#include "core/trace/measuredtrace.h"
#include "core/trace/replay.h"

#include <string>
#include <vector>

namespace memledger {

// Where one training iteration lies in a measured trace, and its phases.
// Found, in order of trust: from the profiler's ProfilerStep#N ranges; from
// ranges (record_function or snapshot annotations) named forward, backward
// and optimizer; from a snapshot's call stacks (the last optimizer step, its
// allocations in an optimizer's source, with the forward and the backward
// before it); from the climbs of allocated memory (each iteration rises
// through its forward and falls through its backward, between troughs); from
// the repeating pattern of the allocator events, the window starting where
// allocated memory is lowest.

struct PhaseSpan
{
    IterationPhase phase = IterationPhase::Forward;
    double start = 0; ///< on the replay's clock (time_us, or the event index without times)
    double end = 0;
};

struct IterationWindow
{
    bool found = false;
    std::size_t first_point = 0; ///< into MemoryReplay::curve: the iteration's first event
    std::size_t end_point = 0; ///< one past its last
    double start = 0; ///< the replay's clock
    double end = 0;
    std::vector<PhaseSpan> phases; ///< empty when the trace names none
    std::string how; ///< one sentence for the notes
};

// The last complete iteration of the trace (the earlier ones warm up).
IterationWindow findIteration(const MeasuredTrace &trace, const MemoryReplay &replay);

// Which phase a moment falls in; Outside when none (or none are known).
IterationPhase phaseAt(const std::vector<PhaseSpan> &phases, double time);

} // namespace memledger
