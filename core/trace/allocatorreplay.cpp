// SPDX-License-Identifier: MIT
#include "core/trace/allocatorreplay.h"

#include <unordered_map>

namespace memledger {

namespace {

std::optional<SegmentAction> segmentAction(TraceAction a)
{
    switch (a) {
    case TraceAction::SegmentAlloc:
        return SegmentAction::Alloc;
    case TraceAction::SegmentFree:
        return SegmentAction::Free;
    case TraceAction::SegmentMap:
        return SegmentAction::Map;
    case TraceAction::SegmentUnmap:
        return SegmentAction::Unmap;
    default:
        return std::nullopt;
    }
}

// The blocks the trace's window did not allocate but that were alive in it:
// those it frees without allocating them, and those still allocated in the
// snapshot's segments that no open allocation of the window explains
// (MemoryViz.js's rule). Their sizes, in the trace's order.
std::vector<TraceEvent> allocatedBefore(const MeasuredTrace &trace)
{
    std::vector<TraceEvent> before;
    std::unordered_map<std::uint64_t, Bytes> open;
    for (const TraceEvent &e : trace.events) {
        if (e.action == TraceAction::Alloc)
            open[e.addr] = e.size;
        else if (e.action == TraceAction::FreeCompleted && !open.erase(e.addr))
            before.push_back(e);
    }
    for (const TraceBlock &b : trace.live_blocks)
        if (!open.count(b.addr))
            before.push_back({.action = TraceAction::Alloc, .addr = b.addr, .size = b.size});
    return before;
}

} // namespace

AllocatorReplay replayThroughAllocator(const MeasuredTrace &trace, const AllocatorReplayOptions &options)
{
    AllocatorReplay out;
    out.settings = options.settings ? *options.settings : trace.allocator_settings.value_or(AllocatorConfig{});
    CachingAllocator allocator(out.settings, options.device_limit, options.device_total);
    std::unordered_map<std::uint64_t, AllocationId> alive; // by the trace's address
    std::unordered_map<std::uint64_t, AllocationId> earlier; // allocated before the window, by address
    for (const TraceEvent &e : allocatedBefore(trace)) {
        earlier[e.addr] = allocator.malloc(e.size, static_cast<StreamId>(e.stream));
        ++out.allocated_before;
    }
    allocator.recordSegments(true);
    std::int64_t allocs = 0;
    for (const TraceEvent &e : trace.events) {
        if (const std::optional<SegmentAction> a = segmentAction(e.action)) {
            out.recorded.push_back({.action = *a,
                                    .addr = e.addr,
                                    .size = e.size,
                                    .stream = static_cast<StreamId>(e.stream),
                                    .request = allocs});
            continue;
        }
        if (e.action == TraceAction::Alloc) {
            alive[e.addr] = allocator.malloc(e.size, static_cast<StreamId>(e.stream));
            ++allocs;
        } else if (e.action == TraceAction::FreeCompleted) {
            std::unordered_map<std::uint64_t, AllocationId> &owner = alive.count(e.addr) ? alive : earlier;
            const auto it = owner.find(e.addr);
            if (it == owner.end())
                continue;
            allocator.free(it->second);
            owner.erase(it);
        }
    }
    out.stats = allocator.stats();
    out.simulated = allocator.segmentEvents();
    return out;
}

} // namespace memledger
