// SPDX-License-Identifier: MIT
#include "core/timeline/allocationstream.h"

#include "core/timeline/lifetimetensors.h"

#include <algorithm>
#include <tuple>

namespace memledger {

namespace {

struct Keyed
{
    double time;
    int rank; // at one instant: frees (0) before allocations (1)
    std::int64_t order;
    AllocationEvent event;
};

} // namespace

AllocationStream allocationStream(const Config &config, const RankLedger &ledger, const RankTimeline &rank)
{
    const LifetimeTensors tensors(config, ledger, rank.pipeline_rank);
    AllocationStream out;
    std::vector<Keyed> events, lazy;
    std::int32_t next = 0;
    std::int64_t order = 0;
    for (const Lifetime &l : rank.lifetimes) {
        // The runtime reserve is the CUDA context and the libraries' own
        // memory: no tensor of the caching allocator.
        if (l.bytes <= 0 || l.category == Category::Runtime)
            continue;
        std::vector<Bytes> parts = tensors.partsOf(l);
        if (parts.empty())
            parts.push_back(l.bytes);
        if (tensors.allocatedOnce(l)) {
            const std::size_t early = tensors.partsBeforeTraining(l, parts.size());
            for (std::size_t i = 0; i < parts.size(); ++i) {
                const AllocationEvent e{.time = 0, .bytes = parts[i], .tensor = next++};
                if (i < early)
                    out.setup.push_back(e);
                else // in the first step, before what the step itself allocates then
                    lazy.push_back({rank.optimizer_start,
                                    1,
                                    -1,
                                    {.time = rank.optimizer_start, .bytes = e.bytes, .tensor = e.tensor}});
            }
            continue;
        }
        if (l.end <= l.start)
            continue;
        const StreamId stream = l.offloaded ? 1 : 0; // copied back by the copy stream
        const std::int32_t first = next;
        for (const Bytes b : parts)
            events.push_back({l.start, 1, order++, {.time = l.start, .bytes = b, .tensor = next++, .stream = stream}});
        // Freed in reverse order, before what is allocated at the same instant.
        for (std::int32_t id = next - 1; id >= first; --id)
            events.push_back({l.end, 0, order++, {.time = l.end, .tensor = id, .stream = stream, .free = true}});
    }
    const auto inOrder = [](const Keyed &a, const Keyed &b) {
        return std::tie(a.time, a.rank, a.order) < std::tie(b.time, b.rank, b.order);
    };
    std::sort(events.begin(), events.end(), inOrder);
    out.iteration.reserve(events.size());
    for (const Keyed &k : events)
        out.iteration.push_back(k.event);
    events.insert(events.end(), lazy.begin(), lazy.end());
    std::stable_sort(events.begin(), events.end(), inOrder);
    out.firstIteration.reserve(events.size());
    for (const Keyed &k : events)
        out.firstIteration.push_back(k.event);
    out.tensors = next;
    return out;
}

} // namespace memledger
