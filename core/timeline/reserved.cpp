// SPDX-License-Identifier: MIT
#include "core/timeline/reserved.h"

#include "core/allocator/cachingallocator.h"
#include "core/timeline/allocationstream.h"

namespace memledger {

namespace {

RankReserved simulateRank(const Config &config, const Timeline &timeline, const RankTimeline &rank)
{
    const RankLedger &ledger = timeline.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)];
    const AllocationStream stream = allocationStream(config, ledger, rank);
    CachingAllocator allocator(config.strategy.allocator, timeline.ledger.usable_bytes, config.hardware.hbm_bytes);
    std::vector<AllocationId> ids(static_cast<std::size_t>(stream.tensors), -1);
    for (const AllocationEvent &e : stream.setup)
        ids[static_cast<std::size_t>(e.tensor)] = allocator.malloc(e.bytes, e.stream);
    RankReserved out;
    out.pipeline_rank = rank.pipeline_rank;
    for (int pass = 0; pass < 2; ++pass) {
        const bool drawn = pass == 1;
        if (drawn)
            out.curve.push_back({0.0, allocator.stats().reserved});
        for (const AllocationEvent &e : drawn ? stream.iteration : stream.firstIteration) {
            AllocationId &id = ids[static_cast<std::size_t>(e.tensor)];
            if (e.free) {
                allocator.free(id);
                id = -1;
                continue;
            }
            id = allocator.malloc(e.bytes, e.stream);
            if (drawn && allocator.stats().reserved != out.curve.back().bytes)
                out.curve.push_back({e.time, allocator.stats().reserved});
            out.requests += pass == 0;
        }
    }
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

std::vector<RankReserved> simulateReserved(const Config &config, const Timeline &timeline)
{
    std::vector<RankReserved> out;
    out.reserve(timeline.ranks.size());
    for (const RankTimeline &rank : timeline.ranks)
        out.push_back(simulateRank(config, timeline, rank));
    return out;
}

} // namespace memledger
