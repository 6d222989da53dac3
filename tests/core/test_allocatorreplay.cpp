// SPDX-License-Identifier: MIT
// A snapshot's own allocations replayed through the simulated caching
// allocator: where the snapshot comes from the same rules, its segment events
// come out again, the same actions and sizes before the same allocations.
// The fixtures (tests/data/snapshots/make_fixtures.py, allocator_*) are
// written by hand from c10/cuda/CUDACachingAllocator.cpp's rules, the
// segment events typed in, not computed.
#include "core/trace/allocatorreplay.h"
#include "core/trace/traceimport.h"

#include <catch2/catch.hpp>
#include <string>
#include <tuple>
#include <vector>

using namespace memledger;

namespace {

MeasuredTrace fixture(const std::string &name)
{
    const TraceLoadResult loaded = loadTraceFile(std::string(MEMLEDGER_TEST_DATA) + "/snapshots/" + name);
    REQUIRE(loaded.trace.has_value());
    return *loaded.trace;
}

// What must match: the action, the size, the stream and the allocation it came before.
std::vector<std::tuple<int, Bytes, int, std::int64_t>> shapeOf(const std::vector<SegmentEvent> &events)
{
    std::vector<std::tuple<int, Bytes, int, std::int64_t>> out;
    for (const SegmentEvent &e : events)
        out.emplace_back(int(e.action), e.size, e.stream, e.request);
    return out;
}

constexpr Bytes kMiB = Bytes(1) << 20;

} // namespace

TEST_CASE("Replaying a snapshot reproduces its segments: pools, rounding, splits, reuse and streams",
          "[allocator][trace]")
{
    const MeasuredTrace trace = fixture("allocator-rules.pickle");
    REQUIRE(trace.allocator_settings.has_value());
    CHECK(*trace.allocator_settings == AllocatorConfig{}); // max_split_size -1, threshold 0: unset
    const AllocatorReplay replay = replayThroughAllocator(trace);
    CHECK(replay.recorded.size() == 6);
    CHECK(shapeOf(replay.simulated) == shapeOf(replay.recorded));
    CHECK(replay.allocated_before == 0);
    CHECK(replay.stats.reserved_peak == (2 + 20 + 16 + 50 + 40 + 2) * kMiB);
}

TEST_CASE("Replaying under the snapshot's own settings: expandable segments and max_split_size", "[allocator][trace]")
{
    const MeasuredTrace expandable = fixture("allocator-expandable.pickle");
    REQUIRE(expandable.allocator_settings.has_value());
    CHECK(expandable.allocator_settings->expandable_segments);
    const AllocatorReplay e = replayThroughAllocator(expandable);
    CHECK(e.recorded.size() == 3);
    CHECK(shapeOf(e.simulated) == shapeOf(e.recorded));
    CHECK(e.stats.reserved_peak == 82 * kMiB);

    const MeasuredTrace split = fixture("allocator-max-split.pickle");
    REQUIRE(split.allocator_settings.has_value());
    CHECK(split.allocator_settings->max_split_size_mb == 40);
    const AllocatorReplay s = replayThroughAllocator(split);
    CHECK(shapeOf(s.simulated) == shapeOf(s.recorded));
    // Under the defaults the 30 kMiB request splits the cached 60 kMiB block: one segment fewer.
    AllocatorReplayOptions defaults;
    defaults.settings = AllocatorConfig{};
    CHECK(shapeOf(replayThroughAllocator(split, defaults).simulated) != shapeOf(s.recorded));
}

TEST_CASE("Replaying with the device's limit reproduces the release and retry of a failed cudaMalloc",
          "[allocator][trace]")
{
    const MeasuredTrace trace = fixture("allocator-retry.pickle");
    AllocatorReplayOptions options;
    options.device_limit = 100 * kMiB;
    const AllocatorReplay limited = replayThroughAllocator(trace, options);
    CHECK(shapeOf(limited.simulated) == shapeOf(limited.recorded));
    CHECK(limited.stats.alloc_retries == 1);
    // Without the limit nothing fails and the cached segment stays.
    CHECK(replayThroughAllocator(trace).simulated.size() == 2);
}

TEST_CASE("Blocks the window did not allocate are allocated first, and the replay says so", "[allocator][trace]")
{
    // basic.pickle: a free of a block allocated before the window, and a
    // block still allocated in the segments that no alloc of the window made.
    const AllocatorReplay replay = replayThroughAllocator(fixture("basic.pickle.gz"));
    CHECK(replay.allocated_before == 2);
}
