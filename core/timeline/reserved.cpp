// SPDX-License-Identifier: MIT
#include "core/timeline/reserved.h"

#include "core/allocator/cachingallocator.h"
#include "core/timeline/allocationstream.h"

#include <algorithm>

namespace memledger {

namespace {

// Iterations after the first run again until one reserves no new memory:
// steady state, as a training job reaches it after a few steps. Rarely more
// than one is needed; a plan that keeps emptying the cache never settles and
// stops here.
constexpr int kMaxIterations = 5;

// The rank's device rows outside the caching allocator.
Bytes runtimeBytes(const RankLedger &ledger)
{
    Bytes sum = 0;
    for (const LedgerEntry &e : ledger.entries)
        if (e.category == Category::Runtime && e.placement == Placement::Device)
            sum += e.bytes;
    return sum;
}

RankReserved simulateRank(const Config &config, const Timeline &timeline, const RankTimeline &rank)
{
    const RankLedger &ledger = timeline.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)];
    const AllocationStream stream = allocationStream(config, ledger, rank);
    // What cudaMalloc can get: the device less everything outside the
    // caching allocator on this rank (the runtime reserve, and buffers their
    // libraries allocate themselves, such as DeepEP's).
    const Bytes limit = std::min(timeline.ledger.usable_bytes, config.hardware.hbm_bytes - runtimeBytes(ledger));
    CachingAllocator allocator(config.strategy.allocator, limit, config.hardware.hbm_bytes);
    std::vector<AllocationId> ids(static_cast<std::size_t>(stream.tensors), -1);
    for (const AllocationEvent &e : stream.setup)
        ids[static_cast<std::size_t>(e.tensor)] = allocator.malloc(e.bytes, e.stream);
    RankReserved out;
    out.pipeline_rank = rank.pipeline_rank;
    // One iteration's requests; its reserved memory over time goes to the curve.
    const auto run = [&](const std::vector<AllocationEvent> &events) {
        out.curve.assign(1, {0.0, allocator.stats().reserved});
        for (const AllocationEvent &e : events) {
            AllocationId &id = ids[static_cast<std::size_t>(e.tensor)];
            if (e.free) {
                allocator.free(id);
                id = -1;
                continue;
            }
            id = allocator.malloc(e.bytes, e.stream);
            if (allocator.stats().reserved != out.curve.back().bytes)
                out.curve.push_back({e.time, allocator.stats().reserved});
        }
    };
    run(stream.firstIteration);
    for (int iteration = 1; iteration < kMaxIterations; ++iteration) {
        const std::int64_t reservations = allocator.stats().device_allocs;
        run(stream.iteration);
        if (allocator.stats().device_allocs == reservations)
            break;
    }
    for (const AllocationEvent &e : stream.iteration)
        out.requests += !e.free;
    out.curve.push_back({timeline.step_time, allocator.stats().reserved});
    const AllocatorStats &s = allocator.stats();
    out.reserved_peak = s.reserved_peak;
    out.allocated_peak = s.allocated_peak;
    out.requested_peak = s.requested_peak;
    out.allocated_at_reserved_peak = s.allocated_at_reserved_peak;
    out.fragmentation = s.split_free_at_reserved_peak;
    out.cached = s.reserved_peak - s.allocated_at_reserved_peak - s.split_free_at_reserved_peak;
    out.segments = s.segments;
    out.alloc_retries = s.alloc_retries;
    out.ooms = s.ooms;
    return out;
}

} // namespace

bool PlanReserved::fits() const
{
    return std::all_of(ranks.begin(), ranks.end(), [](const RankReserved &r) { return r.fits; });
}

PlanReserved simulateReserved(const Config &config, const Timeline &timeline)
{
    PlanReserved out;
    out.settings = config.strategy.allocator;
    out.capacity_bytes = timeline.ledger.capacity_bytes;
    out.ranks.reserve(timeline.ranks.size());
    for (const RankTimeline &rank : timeline.ranks) {
        RankReserved r = simulateRank(config, timeline, rank);
        r.runtime_bytes = runtimeBytes(timeline.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)]);
        r.device_peak_bytes = r.reserved_peak + r.runtime_bytes;
        r.fits = r.ooms == 0 && r.device_peak_bytes <= out.capacity_bytes;
        if (out.ranks.empty() || r.device_peak_bytes > out.peak_bytes) {
            out.peak_rank = r.pipeline_rank;
            out.peak_bytes = r.device_peak_bytes;
        }
        out.ranks.push_back(std::move(r));
    }
    return out;
}

std::vector<CurvePoint> deviceReservedCurve(const RankReserved &rank)
{
    std::vector<CurvePoint> out = rank.curve;
    for (CurvePoint &p : out)
        p.bytes += rank.runtime_bytes;
    return out;
}

} // namespace memledger
