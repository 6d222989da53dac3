// SPDX-License-Identifier: MIT
// replayAllocated against figures worked out by hand from the fixtures of
// tests/data/snapshots/make_fixtures.py, following MemoryViz.js's
// process_alloc_data rule by rule.
#include "core/trace/bytesource.h"
#include "core/trace/replay.h"
#include "core/trace/snapshot.h"
#include "snapshotgen.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace memledger;

namespace {

MeasuredTrace loadFixture(const std::string &name, std::optional<int> device = std::nullopt)
{
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/snapshots/" + name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    auto source = ByteSource::fromMemory(bytes);
    TraceImportOptions options;
    options.device = device;
    TraceLoadResult r = loadSnapshot(*source, options);
    REQUIRE(r.trace);
    return std::move(*r.trace);
}

} // namespace

TEST_CASE("Replay of the basic snapshot, rule by rule", "[trace][replay]")
{
    const MemoryReplay r = replayAllocated(loadFixture("basic-p4.pickle"));
    // Alive before the window (counted from its start):
    //   D: free_completed 0x9000 (400 B) never allocated in the window  -> 400
    //   E: block 0x4000 active_allocated, never allocated in the window -> 1000 (requested_size)
    //   B (0x2000) and C (0x3000) are active_allocated too, but allocated in
    //   the window and still open: not counted twice. 0x5000 is
    //   active_pending_free: not counted.
    CHECK(r.initial_allocated_bytes == 1400);
    // 0 segment_alloc        1400 (reserved +2 MiB)
    // 1 alloc A 100          1500
    // 2 alloc B 200          1700  <- peak
    // 3 free_requested A     (nothing; folded with 4 into one "free" at t = 3)
    // 4 free_completed A     1600
    // 5 alloc C 50           1650
    // 6 free_completed D     1250
    // 7 free_requested B     (nothing: B stays allocated)
    // 8 segment_free         1250 (reserved -2 MiB)
    CHECK(r.peak_allocated_bytes == 1700);
    CHECK(r.peak_event == 2);
    CHECK(r.peak_time_us == 2);
    REQUIRE(r.curve.size() == 7);
    const Bytes expected[] = {1400, 1500, 1700, 1600, 1650, 1250, 1250};
    for (std::size_t i = 0; i < 7; ++i)
        CHECK(r.curve[i].allocated == expected[i]);
    CHECK(r.curve[3].time_us == 3); // the folded free sits at its free_requested
    // Reserved: the segments at the snapshot (64 KiB), walked back over the
    // segment events: 65536 - 2097152 + 2097152 = 65536 at the start,
    // 2162688 between events 0 and 8.
    CHECK(r.curve[0].reserved == 2162688);
    CHECK(r.curve[6].reserved == 65536);
    CHECK(r.peak_reserved_bytes == 2162688);
    // Alive at the peak, largest first: E 1000, D 400, B 200, A 100.
    REQUIRE(r.alive_at_peak.size() == 4);
    CHECK(r.alive_at_peak[0].size == 1000);
    CHECK(r.alive_at_peak[0].alloc_event == -1);
    CHECK(r.alive_at_peak[1].addr == 0x9000);
    CHECK(r.alive_at_peak[1].alloc_event == -1);
    CHECK(r.alive_at_peak[1].stack == 2); // the free's stack, as MemoryViz.js shows it
    CHECK(r.alive_at_peak[2].addr == 0x2000);
    CHECK(r.alive_at_peak[2].alloc_event == 2);
    CHECK(r.alive_at_peak[3].size == 100);
}

TEST_CASE("Replay per device", "[trace][replay]")
{
    // Device 1: 0 -> alloc 10 -> alloc 20 -> free 10: peak 30 after event 1.
    const MemoryReplay d1 = replayAllocated(loadFixture("multidevice.pickle"));
    CHECK(d1.initial_allocated_bytes == 0);
    CHECK(d1.peak_allocated_bytes == 30);
    CHECK(d1.peak_event == 1);
    // Device 0: no events, one active block of requested_size 4000: a flat 4000.
    const MemoryReplay d0 = replayAllocated(loadFixture("multidevice.pickle", 0));
    CHECK(d0.initial_allocated_bytes == 4000);
    CHECK(d0.peak_allocated_bytes == 4000);
    CHECK(d0.peak_event == -1);
    CHECK(d0.curve.empty());
    REQUIRE(d0.alive_at_peak.size() == 1);
    // Device 2: block 0x20000 (1000) alive before; alloc 300, free 300: peak 1300 after event 0.
    const MemoryReplay d2 = replayAllocated(loadFixture("multidevice.pickle", 2));
    CHECK(d2.initial_allocated_bytes == 1000);
    CHECK(d2.peak_allocated_bytes == 1300);
    CHECK(d2.peak_event == 0);
    CHECK(d2.peak_reserved_bytes == 8192); // one segment, no segment events
}

TEST_CASE("An empty trace replays to zero", "[trace][replay]")
{
    const MemoryReplay r = replayAllocated(loadFixture("empty.pickle"));
    CHECK(r.peak_allocated_bytes == 0);
    CHECK(r.peak_event == -1);
    CHECK(r.curve.empty());
    CHECK(r.alive_at_peak.empty());
    CHECK(replayAllocated(MeasuredTrace{}).peak_allocated_bytes == 0);
}

TEST_CASE("free_requested never frees — a free of an unseen address was alive before", "[trace][replay]")
{
    MeasuredTrace t;
    auto ev = [](TraceAction a, std::uint64_t addr, Bytes size) {
        TraceEvent e;
        e.action = a;
        e.addr = addr;
        e.size = size;
        return e;
    };
    // free_requested of 1 then an unrelated alloc, then free_completed of 1:
    // not adjacent, so not folded; the free still removes at its own event.
    t.events = {ev(TraceAction::Alloc, 1, 10), ev(TraceAction::FreeRequested, 1, 10), ev(TraceAction::Alloc, 2, 5),
                ev(TraceAction::FreeCompleted, 1, 10), ev(TraceAction::FreeCompleted, 3, 7)};
    const MemoryReplay r = replayAllocated(t);
    // 7 (addr 3, alive before) -> 17 -> 22 -> 12 -> 5
    CHECK(r.initial_allocated_bytes == 7);
    CHECK(r.peak_allocated_bytes == 22);
    CHECK(r.peak_event == 2);
    REQUIRE(r.curve.size() == 4);
    CHECK(r.curve.back().allocated == 5);
    CHECK(r.curve[0].time_us == 0); // no times: the event's index
    CHECK(r.curve[2].time_us == 3);
}

TEST_CASE("Replay of a large generated snapshot matches its own count", "[trace][replay]")
{
    const test::GeneratedSnapshot g = test::generateSnapshot(8u << 20, 3);
    auto source = ByteSource::fromMemory(g.bytes);
    const TraceLoadResult r = loadSnapshot(*source);
    REQUIRE(r.trace);
    CHECK(replayAllocated(*r.trace).peak_allocated_bytes == g.peak_allocated);
}

TEST_CASE("Replay reproduces tools/measure's own figures for every measured run", "[trace][replay]")
{
    // tests/data/measured/*: snapshots written by tools/measure/measure.py with
    // their replay computed there, in Python, independently of this code.
    namespace fs = std::filesystem;
    int runs = 0;
    for (const fs::directory_entry &dir : fs::directory_iterator(fs::path(MEMLEDGER_TEST_DATA) / "measured")) {
        const fs::path snapshot = dir.path() / "snapshot.pickle.gz";
        if (!fs::exists(snapshot))
            continue;
        INFO(dir.path().string());
        std::ifstream in(dir.path() / "measured.json");
        const nlohmann::json m = nlohmann::json::parse(in);
        std::string error;
        const auto source = ByteSource::openFile(snapshot.string(), error);
        REQUIRE(source);
        const TraceLoadResult r = loadSnapshot(*source);
        REQUIRE(r.trace);
        CHECK(static_cast<std::int64_t>(r.trace->events.size()) == m.at("events").get<std::int64_t>());
        const MemoryReplay replay = replayAllocated(*r.trace);
        CHECK(replay.initial_allocated_bytes == m.at("initial_allocated_bytes").get<Bytes>());
        CHECK(replay.peak_allocated_bytes == m.at("peak_allocated_bytes").get<Bytes>());
        CHECK(replay.peak_event == m.at("peak_event").get<std::int64_t>());
        ++runs;
    }
    CHECK(runs >= 1);
}
