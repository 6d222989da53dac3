// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/measuredtrace.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memledger {

// Allocated memory over a measured trace, replayed exactly as PyTorch's own
// viewer does (torch/utils/viz/MemoryViz.js, process_alloc_data): `alloc`
// adds its size, `free_completed` removes the block it frees (`free_requested`
// changes nothing), a free of an address the window never allocated was
// allocated before the window (it counts from the start), and so does every
// block still active_allocated in the snapshot's segments that the window did
// not allocate (process_alloc_data checks only the allocations still open at
// the end, and counts such a block by its requested_size). A free_requested
// followed at once by the free_completed of the same address is one free at
// the free_requested (annotate_snapshot folds them). Reserved memory is the
// segments at the snapshot walked back over segment_alloc / segment_map /
// segment_free / segment_unmap (MemoryView's simulate_memory), then forward.
// The peak includes the state before the first event, as MemoryViz.js's
// max_at_time does (its y-axis max_size leaves that state out, which differs
// only when the window opens with frees that never come back).

struct ReplayPoint
{
    double time_us = 0; ///< the event's time (its index when the trace has no times)
    Bytes allocated = 0; ///< after the event
    Bytes reserved = 0; ///< after the event
};

struct ReplayBlock
{
    std::uint64_t addr = 0;
    Bytes size = 0;
    std::int32_t stack = -1; ///< into MeasuredTrace::stacks
    std::int64_t alloc_event = -1; ///< index of its alloc event, -1 when allocated before the window
    /// The part of a profiler trace's initial Total Allocated that no event
    /// names: one anonymous block at address 0 (no real block sits there).
    bool anonymous() const { return addr == 0 && alloc_event < 0 && stack < 0; }
};

struct MemoryReplay
{
    Bytes initial_allocated_bytes = 0; ///< alive before the first event
    Bytes peak_allocated_bytes = 0; ///< the largest allocated total, the initial one included
    std::int64_t peak_event = -1; ///< index of the event after which the peak holds; -1: at the start
    double peak_time_us = 0;
    Bytes peak_reserved_bytes = 0;
    std::vector<ReplayPoint> curve; ///< one point per alloc / free_completed / segment event
    std::vector<ReplayBlock> alive_at_peak; ///< largest first
};

// Precondition: none; any trace (even an empty one) replays.
MemoryReplay replayAllocated(const MeasuredTrace &trace);

} // namespace memledger
