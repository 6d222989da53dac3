// SPDX-License-Identifier: MIT
#include "core/timeline/allocationstream.h"

#include "core/timeline/lifetimetensors.h"

#include <algorithm>
#include <tuple>

namespace memledger {

namespace {

// Where an event goes in the iteration's order: its time, then frees (0)
// before allocations (1), then, for a layer half's tensors, where its forward
// makes them (1 + the position; 0 for everything else, first), then the
// order it was made in.
struct Key
{
    double time;
    std::uint64_t rankAndOrder;
    std::uint32_t index;
    bool operator<(const Key &o) const { return std::tie(time, rankAndOrder) < std::tie(o.time, o.rankAndOrder); }
};

} // namespace

AllocationStream allocationStream(const Config &config, const RankLedger &ledger, const RankTimeline &rank)
{
    const LifetimeTensors tensors(config, ledger, rank.pipeline_rank);
    AllocationStream out;
    std::vector<AllocationEvent> events, lazy;
    std::vector<Key> keys;
    std::vector<Bytes> parts; // one lifetime's tensors, the buffer kept from one to the next
    std::vector<std::int32_t> positions; // where the forward makes them, for a layer half's
    std::int32_t next = 0;
    std::uint64_t order = 0;
    constexpr int kPositionShift = 40; // orders below 2^40, positions below 2^23
    const auto add = [&](const AllocationEvent &e, bool allocation, std::int32_t position = -1) {
        const std::uint64_t within = position >= 0 ? std::uint64_t(position) + 1 : 0;
        keys.push_back({e.time, (std::uint64_t(allocation) << 63) | (within << kPositionShift) | order++,
                        std::uint32_t(events.size())});
        events.push_back(e);
    };
    for (const Lifetime &l : rank.lifetimes) {
        // The runtime reserve is the CUDA context and the libraries' own
        // memory: no tensor of the caching allocator.
        if (l.bytes <= 0 || l.category == Category::Runtime)
            continue;
        tensors.partsOf(l, parts);
        if (parts.empty())
            parts.push_back(l.bytes);
        // Copied back by the copy stream; a ledger row on the stream it names.
        const StreamId stream = l.offloaded ? kCopyStream
                                : l.entry >= 0 && l.category != Category::Activations
                                    ? ledger.entries[static_cast<std::size_t>(l.entry)].stream
                                    : kComputeStream;
        if (tensors.allocatedOnce(l)) {
            const std::size_t early = tensors.partsBeforeTraining(l, parts.size());
            for (std::size_t i = 0; i < parts.size(); ++i) {
                // The rest are made in the first step, before what the step itself allocates then.
                const AllocationEvent e{.time = i < early ? 0.0 : rank.optimizer_start,
                                        .bytes = parts[i],
                                        .tensor = next++,
                                        .stream = stream};
                (i < early ? out.setup : lazy).push_back(e);
            }
            continue;
        }
        if (l.end <= l.start)
            continue;
        tensors.forwardPositions(l, positions);
        if (positions.size() != parts.size())
            positions.clear();
        const std::int32_t first = next;
        for (std::size_t i = 0; i < parts.size(); ++i)
            add({.time = l.start, .bytes = parts[i], .tensor = next++, .stream = stream}, true,
                positions.empty() ? -1 : positions[i]);
        // Freed in reverse order, before what is allocated at the same instant.
        for (std::int32_t id = next - 1; id >= first; --id)
            add({.time = l.end, .tensor = id, .stream = stream, .free = true}, false);
    }
    std::sort(keys.begin(), keys.end());
    out.iteration.reserve(events.size());
    for (const Key &k : keys)
        out.iteration.push_back(events[k.index]);
    // The first iteration: the lazily made states at the step's start, after
    // that instant's frees and before its allocations.
    const auto at = std::find_if(out.iteration.begin(), out.iteration.end(), [&](const AllocationEvent &e) {
        return e.time > rank.optimizer_start || (e.time == rank.optimizer_start && !e.free);
    });
    out.firstIteration.reserve(out.iteration.size() + lazy.size());
    out.firstIteration.insert(out.firstIteration.end(), out.iteration.begin(), at);
    out.firstIteration.insert(out.firstIteration.end(), lazy.begin(), lazy.end());
    out.firstIteration.insert(out.firstIteration.end(), at, out.iteration.end());
    out.tensors = next;
    return out;
}

} // namespace memledger
