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

// process_alloc_data's elements and actions, and which elements are alive
// before the first event.
struct AllocData
{
    std::vector<Element> elements;
    std::vector<Action> actions;
    std::vector<bool> initially; // per element: alive before the first event
    // annotate_snapshot folds a free_requested and the free_completed right
    // after it (same address) into one "free" at the free_requested: its
    // time and size. Per event: the event it takes them from, or -1.
    std::vector<std::int64_t> actionTimeSource;

    std::int32_t add(const Element &e, bool initial)
    {
        elements.push_back(e);
        initially.push_back(initial);
        return static_cast<std::int32_t>(elements.size() - 1);
    }
};

// annotate_snapshot, then process_alloc_data: an element per allocation (or
// per block alive before the window), and the actions that add and remove them.
AllocData allocDataOf(const MeasuredTrace &trace)
{
    const std::vector<TraceEvent> &events = trace.events;
    AllocData a;
    a.actionTimeSource.assign(events.size(), -1);
    std::unordered_map<std::uint64_t, std::int32_t> addrToAlloc;
    std::int64_t prevKept = -1; // the previous event annotate_snapshot kept
    for (std::size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &e = events[i];
        const std::int64_t idx = static_cast<std::int64_t>(i);
        if (e.action == TraceAction::FreeCompleted && prevKept >= 0
            && events[static_cast<std::size_t>(prevKept)].action == TraceAction::FreeRequested
            && events[static_cast<std::size_t>(prevKept)].addr == e.addr) {
            a.actionTimeSource[i] = prevKept; // elided into the free_requested ("free")
        } else {
            prevKept = idx;
        }
        const TraceEvent &src
            = a.actionTimeSource[i] >= 0 ? events[static_cast<std::size_t>(a.actionTimeSource[i])] : e;
        switch (e.action) {
        case TraceAction::Alloc: {
            const std::int32_t el = a.add({e.addr, e.size, e.stack, idx}, false);
            addrToAlloc[e.addr] = el;
            a.actions.push_back({el, idx});
            break;
        }
        case TraceAction::FreeCompleted: {
            const auto it = addrToAlloc.find(e.addr);
            if (it != addrToAlloc.end()) {
                a.actions.push_back({it->second, idx});
                addrToAlloc.erase(it);
            } else {
                // Allocated before the window: alive from its start, with the
                // free's size and stack.
                const std::int32_t el = a.add({e.addr, src.size, src.stack, -1}, true);
                a.actions.push_back({el, idx});
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
            a.add({b.addr, b.size, b.stack, -1}, true);
    return a;
}

// What is allocated before the first event: the elements alive then and, from
// a profiler trace, what the allocator held that the window never frees (one
// anonymous block).
Bytes initialAllocated(const MeasuredTrace &trace, AllocData &a)
{
    Bytes initial = 0;
    for (std::size_t el = 0; el < a.elements.size(); ++el)
        if (a.initially[el])
            initial = plus(initial, a.elements[el].size);
    if (trace.initial_allocated_bytes && *trace.initial_allocated_bytes > initial) {
        a.add({0, *trace.initial_allocated_bytes - initial, -1, -1}, true);
        initial = *trace.initial_allocated_bytes;
    }
    return initial;
}

// Reserved before the first event: the segments at the snapshot, walked back
// over the segment events (MemoryView.simulate_memory).
Bytes initialReserved(const MeasuredTrace &trace)
{
    Bytes reserved = 0;
    for (const TraceSegment &s : trace.segments)
        reserved = plus(reserved, s.total_size);
    for (const TraceEvent &e : trace.events) {
        if (e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap)
            reserved = plus(reserved, -e.size);
        else if (e.action == TraceAction::SegmentFree || e.action == TraceAction::SegmentUnmap)
            reserved = plus(reserved, e.size);
    }
    return std::max<Bytes>(reserved, 0);
}

// The replay forward, event by event: a point per action or segment event,
// the allocated and reserved peaks. Returns the actions applied when the
// allocated peak holds.
std::size_t replayForward(const MeasuredTrace &trace, const AllocData &a, Bytes reserved, MemoryReplay &r)
{
    const std::vector<TraceEvent> &events = trace.events;
    auto timeOf = [&](std::size_t i) {
        const std::size_t src = a.actionTimeSource[i] >= 0 ? static_cast<std::size_t>(a.actionTimeSource[i]) : i;
        return trace.has_times ? events[src].time_us : static_cast<double>(i);
    };
    Bytes allocated = r.initial_allocated_bytes;
    r.peak_allocated_bytes = allocated;
    r.peak_reserved_bytes = reserved;
    r.peak_time_us = events.empty() ? 0 : timeOf(0);
    std::vector<bool> alive = a.initially;
    std::size_t nextAction = 0;
    std::size_t peakActions = 0; // actions applied when the peak holds
    for (std::size_t i = 0; i < events.size(); ++i) {
        const TraceEvent &e = events[i];
        bool point = false;
        if (nextAction < a.actions.size() && a.actions[nextAction].event == static_cast<std::int64_t>(i)) {
            const std::size_t el = static_cast<std::size_t>(a.actions[nextAction].element);
            allocated = plus(allocated, alive[el] ? -a.elements[el].size : a.elements[el].size);
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
    return peakActions;
}

// Who is alive at the peak: the actions up to it replayed again, largest block first.
std::vector<ReplayBlock> aliveAfter(const AllocData &a, std::size_t actions)
{
    std::vector<bool> atPeak = a.initially;
    for (std::size_t k = 0; k < actions; ++k) {
        const std::size_t el = static_cast<std::size_t>(a.actions[k].element);
        atPeak[el] = !atPeak[el];
    }
    std::vector<ReplayBlock> out;
    for (std::size_t el = 0; el < a.elements.size(); ++el)
        if (atPeak[el])
            out.push_back({a.elements[el].addr, a.elements[el].size, a.elements[el].stack, a.elements[el].alloc_event});
    std::stable_sort(out.begin(), out.end(),
                     [](const ReplayBlock &x, const ReplayBlock &y) { return x.size > y.size; });
    return out;
}

} // namespace

MemoryReplay replayAllocated(const MeasuredTrace &trace)
{
    AllocData a = allocDataOf(trace);
    MemoryReplay r;
    r.initial_allocated_bytes = initialAllocated(trace, a);
    // Reserved: the segments at the snapshot walked back, then forward.
    const std::size_t peakActions = replayForward(trace, a, initialReserved(trace), r);
    r.alive_at_peak = aliveAfter(a, peakActions);
    return r;
}

} // namespace memledger
