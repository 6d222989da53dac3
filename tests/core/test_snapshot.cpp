// SPDX-License-Identifier: MIT
// loadSnapshot on the fixtures of tests/data/snapshots/ (written by
// make_fixtures.py with Python's pickle): what is kept, which device, shared
// frames, annotations, wrong shapes named by place, truncation at every byte,
// cancel, and a large generated snapshot streamed.
#include "core/trace/bytesource.h"
#include "core/trace/snapshot.h"
#include "snapshotgen.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

using namespace memledger;

namespace {

std::string fixture(const std::string &name)
{
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/snapshots/" + name, std::ios::binary);
    REQUIRE(in);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TraceLoadResult load(const std::string &bytes, TraceImportOptions options = {})
{
    auto source = ByteSource::fromMemory(bytes);
    return loadSnapshot(*source, options);
}

std::string problemsOf(const TraceLoadResult &r)
{
    std::string s;
    for (const Problem &p : r.problems)
        s += p.toString() + "\n";
    return s;
}

} // namespace

TEST_CASE("A snapshot's events, blocks, segments, frames and annotations", "[trace][snapshot]")
{
    for (const char *name : {"basic-p1.pickle", "basic-p2.pickle", "basic-p3.pickle", "basic-p4.pickle",
                             "basic-p5.pickle", "basic.pickle.gz"}) {
        INFO(name);
        const std::string bytes = fixture(name);
        const TraceLoadResult r = load(bytes);
        INFO(problemsOf(r));
        REQUIRE(r.trace);
        CHECK(r.problems.empty());
        const MeasuredTrace &t = *r.trace;
        CHECK(t.format == TraceFormat::Snapshot);
        CHECK(t.device == 0);
        CHECK(t.devices == std::vector<int>{0});
        CHECK(t.has_times);
        REQUIRE(t.events.size() == 11);
        CHECK(t.events[0].action == TraceAction::SegmentAlloc);
        CHECK(t.events[0].size == 2097152);
        CHECK(t.events[1].action == TraceAction::Alloc);
        CHECK(t.events[1].addr == 0x1000);
        CHECK(t.events[1].size == 100);
        CHECK(t.events[1].time_us == 1);
        CHECK(t.events[3].action == TraceAction::FreeRequested);
        CHECK(t.events[4].action == TraceAction::FreeCompleted);
        CHECK(t.events[9].action == TraceAction::Oom); // no addr: device_free instead
        CHECK(t.events[10].action == TraceAction::Snapshot);
        // Frames: stacks [linear, train], [train], [linear], deduplicated by
        // content, innermost first, as PyTorch lists them. Block B comes first
        // in the file (segments precede device_traces).
        REQUIRE(t.stacks.size() == 3);
        CHECK(t.stacks[0].size() == 2);
        CHECK(t.stacks[0][0] == TraceFrame{"/usr/lib/python3/torch/nn/modules/linear.py", 125, "forward"});
        CHECK(t.stacks[0][1] == TraceFrame{"train.py", 42, "step"});
        CHECK(t.stacks[1] == std::vector<TraceFrame>{{"train.py", 42, "step"}});
        CHECK(t.events[1].stack == 0); // the shared list, through the memo
        CHECK(t.events[2].stack == 0);
        CHECK(t.events[5].stack == 1);
        CHECK(t.events[6].stack == 2);
        CHECK(t.events[7].stack == -1); // empty frames
        // Live blocks: active_allocated only, addresses from the segment's plus
        // the sizes before, sized by requested_size.
        REQUIRE(t.live_blocks.size() == 3);
        CHECK(t.live_blocks[0].addr == 0x2000);
        CHECK(t.live_blocks[0].size == 200);
        CHECK(t.live_blocks[1].addr == 0x3000);
        CHECK(t.live_blocks[2].addr == 0x4000);
        CHECK(t.live_blocks[2].size == 1000);
        CHECK(t.live_blocks[2].stack == 1);
        REQUIRE(t.segments.size() == 1);
        CHECK(t.segments[0].addr == 0x1000);
        CHECK(t.segments[0].total_size == 65536);
        // Annotations of device 0, START / END paired, by start.
        REQUIRE(t.ranges.size() == 2);
        CHECK(t.ranges[0].name == "forward");
        CHECK(t.ranges[0].start_us == 1);
        CHECK(t.ranges[0].end_us == 5);
        CHECK(t.ranges[1].name == "backward");
    }
}

TEST_CASE("Several devices: the lowest with events, or the one asked for", "[trace][snapshot]")
{
    const std::string bytes = fixture("multidevice.pickle");
    const TraceLoadResult r = load(bytes);
    REQUIRE(r.trace);
    // Device 0 has segments but no events; 1 is the lowest with events.
    CHECK(r.trace->devices == std::vector<int>{0, 1, 2});
    CHECK(r.trace->device == 1);
    CHECK(r.trace->events.size() == 3);
    CHECK(r.trace->live_blocks.empty());
    TraceImportOptions two;
    two.device = 2;
    const TraceLoadResult r2 = load(bytes, two);
    REQUIRE(r2.trace);
    CHECK(r2.trace->device == 2);
    CHECK(r2.trace->events.size() == 2);
    REQUIRE(r2.trace->live_blocks.size() == 1);
    CHECK(r2.trace->live_blocks[0].addr == 0x20000);
    TraceImportOptions five;
    five.device = 5;
    const TraceLoadResult r5 = load(bytes, five);
    CHECK_FALSE(r5.trace);
    CHECK(problemsOf(r5) == "device: device 5 has no events or segments in this snapshot (devices: 0, 1, 2)\n");
}

TEST_CASE("One-item lists (APPEND / SETITEM) and empty traces load", "[trace][snapshot]")
{
    const std::string both = fixture("multidevice-single.pickle");
    const TraceLoadResult m0 = load(both);
    REQUIRE(m0.trace);
    CHECK(m0.trace->device == 0);
    CHECK(m0.trace->events.size() == 1);
    CHECK(m0.trace->devices == std::vector<int>{0, 1});
    TraceImportOptions one;
    one.device = 1;
    const TraceLoadResult m1 = load(both, one);
    REQUIRE(m1.trace);
    CHECK(m1.trace->events.size() == 2);
    CHECK(m1.trace->stacks.empty()); // device 0's frames are not kept
    const std::string single = fixture("single.pickle");
    const TraceLoadResult r = load(single);
    INFO(problemsOf(r));
    REQUIRE(r.trace);
    REQUIRE(r.trace->events.size() == 1);
    CHECK(r.trace->events[0].size == 512);
    CHECK(r.trace->events[0].stack == 0);
    CHECK_FALSE(r.trace->has_times);
    const std::string empty = fixture("empty.pickle");
    const TraceLoadResult e = load(empty);
    REQUIRE(e.trace);
    CHECK(e.trace->events.empty());
    CHECK(e.trace->devices.empty());
}

TEST_CASE("Wrong shapes are one problem naming the place", "[trace][snapshot]")
{
    CHECK(problemsOf(load(fixture("bad-noaddr.pickle"))) == "device_traces[0][1].addr: missing\n");
    CHECK(problemsOf(load(fixture("bad-traces-dict.pickle"))) == "device_traces: expected a list, found dict\n");
    CHECK(problemsOf(load(fixture("bad-blocksize.pickle")))
          == "segments[0].blocks[2].size: expected an int, found str\n");
    CHECK(problemsOf(load(fixture("toplevel-list.pickle")))
          == "the pickle holds a list, not the dict of torch.cuda.memory._snapshot() (record one with "
             "torch.cuda.memory._dump_snapshot())\n");
    CHECK(problemsOf(load(fixture("basic-p0.pickle"))).find("is not supported") != std::string::npos);
    CHECK(problemsOf(load("\x80\x04}."))
          == "device_traces: missing: the snapshot holds no allocator trace (record with "
             "torch.cuda.memory._record_memory_history() before the snapshot)\n");
    // A refused opcode stops the import: nothing is returned but the problem.
    const TraceLoadResult evil = load("cos\nsystem\n(S'touch /tmp/memledger-pwned'\ntR.");
    CHECK_FALSE(evil.trace);
    CHECK(problemsOf(evil) == "pickle opcode GLOBAL at byte 0 is refused: a snapshot is data and is never executed\n");
}

TEST_CASE("A snapshot cut at every byte is one problem, never a crash", "[trace][snapshot]")
{
    for (const char *name : {"basic-p4.pickle", "basic-p2.pickle", "basic.pickle.gz"}) {
        const std::string whole = fixture(name);
        for (std::size_t cut = 0; cut < whole.size(); ++cut) {
            INFO(name << " cut at " << cut);
            const std::string part = whole.substr(0, cut);
            const TraceLoadResult r = load(part);
            CHECK_FALSE(r.trace);
            CHECK(r.problems.size() == 1);
        }
    }
}

TEST_CASE("A large snapshot streams, reports progress and can be cancelled", "[trace][snapshot]")
{
    const test::GeneratedSnapshot g = test::generateSnapshot(24u << 20);
    struct Seen
    {
        int calls = 0;
        std::uint64_t last = 0;
        int cancelAt = -1;
    } seen;
    TraceImportOptions options;
    options.progress_context = &seen;
    options.progress = [](void *c, std::uint64_t read, std::uint64_t total) {
        auto &s = *static_cast<Seen *>(c);
        CHECK(read >= s.last);
        CHECK(read <= total);
        s.last = read;
        return ++s.calls != s.cancelAt;
    };
    const TraceLoadResult r = load(g.bytes, options);
    INFO(problemsOf(r));
    REQUIRE(r.trace);
    CHECK(static_cast<std::int64_t>(r.trace->events.size()) == g.events);
    CHECK(seen.calls >= 4);
    CHECK(r.trace->stacks.size() <= 3000);
    seen = Seen{};
    seen.cancelAt = 2;
    const TraceLoadResult cancelled = load(g.bytes, options);
    CHECK_FALSE(cancelled.trace);
    CHECK(problemsOf(cancelled) == "import cancelled\n");
}

TEST_CASE("looksLikePickle tells a pickle from JSON", "[trace][snapshot]")
{
    CHECK(looksLikePickle("\x80\x04\x95"));
    CHECK(looksLikePickle("(lp0"));
    CHECK_FALSE(looksLikePickle("{\"traceEvents\""));
    CHECK_FALSE(looksLikePickle("\x80\x09"));
    CHECK_FALSE(looksLikePickle(""));
}

TEST_CASE("An annotation that ends before it starts is no range, and is counted among the unmatched",
          "[trace][snapshot]")
{
    // tests/data/fuzz-regressions/snapshot: forward START at 5 µs, END at 3; backward 7 to 9.
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/fuzz-regressions/snapshot/annotation-end-before-start.pickle",
                     std::ios::binary);
    REQUIRE(in);
    std::ostringstream ss;
    ss << in.rdbuf();
    const TraceLoadResult r = load(ss.str());
    REQUIRE(r.trace.has_value());
    REQUIRE(r.trace->ranges.size() == 1);
    CHECK(r.trace->ranges[0].name == "backward");
    CHECK_THAT(problemsOf(r), Catch::Contains("2 annotation(s) without a matching START / END"));
}
