// SPDX-License-Identifier: MIT
// Allocated memory as torch/utils/viz/MemoryViz.js draws its "Active Memory
// Timeline" (annotate_snapshot, then process_alloc_data with plot_segments
// false), and reserved memory as its "Allocator State History" sums segment
// sizes (MemoryView's simulate_memory, walking back from the segments).
#include "core/trace/replay.h"

#include <algorithm>
#include <unordered_map>

namespace memledger {

namespace {

// One allocation of process_alloc_data's `elements`.
struct Element
{
    std::uint64_t addr = 0;
    Bytes size = 0;
    std::int32_t stack = -1;
    std::int64_t alloc_event = -1;
};

// One entry of process_alloc_data's `actions`: the first action of an
// element adds it, the second removes it.
struct Action
{
    std::int32_t element = 0;
    std::int64_t event = 0; ///< index into trace.events
};

// Sums that saturate: a damaged or hostile file may hold sizes whose total
// passes int64; the replay stays defined (and the figure absurd, visibly).
Bytes plus(Bytes a, Bytes b)
{
    Bytes r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

} // namespace

MemoryReplay replayAllocated(const MeasuredTrace &trace)
{
    const std::vector<TraceEvent> &events = trace.events;
    std::vector<Element> elements;
    std::vector<Action> actions;
    std::vector<bool> initially; // per element: alive before the first event
    std::unordered_map<std::uint64_t, std::int32_t> addrToAlloc;
    // annotate_snapshot folds a free_requested and the free_completed right
    // after it (same address) into one "free" at the free_requested: its
    // time and size.
    std::vector<std::int64_t> actionTimeSource(events.size(), -1);

    auto addElement = [&](const Element &e, bool initial) {
        elements.push_back(e);
        initially.push_back(initial);
        return static_cast<std::int32_t>(elements.size() - 1);
    };

    std::int64_t prevKept = -1; // the previous event annotate_snapshot kept
    for (std::size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &e = events[i];
        const std::int64_t idx = static_cast<std::int64_t>(i);
        if (e.action == TraceAction::FreeCompleted && prevKept >= 0
            && events[static_cast<std::size_t>(prevKept)].action == TraceAction::FreeRequested
            && events[static_cast<std::size_t>(prevKept)].addr == e.addr) {
            actionTimeSource[i] = prevKept; // elided into the free_requested ("free")
        } else {
            prevKept = idx;
        }
        const TraceEvent &src = actionTimeSource[i] >= 0 ? events[static_cast<std::size_t>(actionTimeSource[i])] : e;
        switch (e.action) {
        case TraceAction::Alloc: {
            const std::int32_t el = addElement({e.addr, e.size, e.stack, idx}, false);
            addrToAlloc[e.addr] = el;
            actions.push_back({el, idx});
            break;
        }
        case TraceAction::FreeCompleted: {
            const auto it = addrToAlloc.find(e.addr);
            if (it != addrToAlloc.end()) {
                actions.push_back({it->second, idx});
                addrToAlloc.erase(it);
            } else {
                // Allocated before the window: alive from its start, with the
                // free's size and stack.
                const std::int32_t el = addElement({e.addr, src.size, src.stack, -1}, true);
                actions.push_back({el, idx});
            }
            break;
        }
        default:
            break; // free_requested alone changes nothing
        }
    }
    // Blocks still active_allocated when the snapshot was taken, that the
    // window did not allocate (or allocated and freed: MemoryViz.js checks
    // only the allocations still open), count from the start with their
    // requested_size.
    for (const TraceBlock &b : trace.live_blocks)
        if (!addrToAlloc.count(b.addr))
            addElement({b.addr, b.size, b.stack, -1}, true);

    MemoryReplay r;
    for (std::size_t el = 0; el < elements.size(); ++el)
        if (initially[el])
            r.initial_allocated_bytes = plus(r.initial_allocated_bytes, elements[el].size);
    // A profiler trace says what the allocator held before its first event;
    // what the window never frees of it stays one anonymous block.
    if (trace.initial_allocated_bytes && *trace.initial_allocated_bytes > r.initial_allocated_bytes) {
        addElement({0, *trace.initial_allocated_bytes - r.initial_allocated_bytes, -1, -1}, true);
        r.initial_allocated_bytes = *trace.initial_allocated_bytes;
    }

    // Reserved: the segments at the snapshot, walked back over the segment
    // events (MemoryView.simulate_memory), then forward.
    Bytes reserved = 0;
    for (const TraceSegment &s : trace.segments)
        reserved = plus(reserved, s.total_size);
    for (const TraceEvent &e : events) {
        if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap)
            reserved = plus(reserved, -e.size);
        else if (e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap)
            reserved = plus(reserved, e.size);
    }
    reserved = std::max<Bytes>(reserved, 0);

    auto timeOf = [&](std::size_t i) {
        const std::size_t src = actionTimeSource[i] >= 0 ? static_cast<std::size_t>(actionTimeSource[i]) : i;
        return trace.has_times ? events[src].time_us : static_cast<double>(i);
    };

    Bytes allocated = r.initial_allocated_bytes;
    r.peak_allocated_bytes = allocated;
    r.peak_reserved_bytes = reserved;
    r.peak_time_us = events.empty() ? 0 : timeOf(0);
    std::vector<bool> alive = initially;
    std::size_t nextAction = 0;
    std::size_t peakActions = 0; // actions applied when the peak holds
    for (std::size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &e = events[i];
        bool point = false;
        if (nextAction < actions.size() && actions[nextAction].event == static_cast<std::int64_t>(i)) {
            const std::size_t el = static_cast<std::size_t>(actions[nextAction].element);
            allocated = plus(allocated, alive[el] ? -elements[el].size : elements[el].size);
            alive[el] = !alive[el];
            ++nextAction;
            point = true;
        }
        switch (e.action) {
        case TraceAction::SegmentAlloc:
        case TraceAction::SegmentMap:
            reserved = plus(reserved, e.size);
            point = true;
            break;
        case TraceAction::SegmentFree:
        case TraceAction::SegmentUnmap:
            reserved = plus(reserved, -e.size);
            point = true;
            break;
        default:
            break;
        }
        if (!point)
            continue;
        r.curve.push_back({timeOf(i), allocated, reserved});
        if (allocated > r.peak_allocated_bytes) {
            r.peak_allocated_bytes = allocated;
            r.peak_event = static_cast<std::int64_t>(i);
            r.peak_time_us = timeOf(i);
            peakActions = nextAction;
        }
        r.peak_reserved_bytes = std::max(r.peak_reserved_bytes, reserved);
    }

    // Who is alive at the peak: replay the actions up to it again.
    std::vector<bool> atPeak = initially;
    for (std::size_t a = 0; a < peakActions; ++a) {
        const std::size_t el = static_cast<std::size_t>(actions[a].element);
        atPeak[el] = !atPeak[el];
    }
    for (std::size_t el = 0; el < elements.size(); ++el)
        if (atPeak[el])
            r.alive_at_peak.push_back(
                {elements[el].addr, elements[el].size, elements[el].stack, elements[el].alloc_event});
    std::stable_sort(r.alive_at_peak.begin(), r.alive_at_peak.end(),
                     [](const ReplayBlock &a, const ReplayBlock &b) { return a.size > b.size; });
    return r;
}

} // namespace memledger
