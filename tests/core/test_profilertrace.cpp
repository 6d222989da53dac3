// SPDX-License-Identifier: MIT
// The profiler Chrome trace importer against the figures tools/measure
// replayed on its own (tests/data/measured/<run>/measured.json), and on
// malformed input.
#include "core/trace/profilertrace.h"
#include "core/trace/replay.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

namespace {

namespace fs = std::filesystem;

TraceLoadResult loadText(const std::string &text, const TraceImportOptions &options = {})
{
    const std::unique_ptr<ByteSource> source = ByteSource::fromMemory(text);
    return loadProfilerTrace(*source, options);
}

std::string firstProblem(const TraceLoadResult &r)
{
    return r.problems.empty() ? std::string{} : r.problems.front().toString();
}

// MemoryViz.js process_alloc_data over the trace alone: a free of an address
// the window never allocated counts from the start.
struct Replayed
{
    Bytes initial = 0;
    Bytes peak = 0;
};

Replayed replay(const MeasuredTrace &t)
{
    std::map<std::uint64_t, Bytes> live;
    Replayed r;
    for (const TraceEvent &e : t.events) {
        if (e.action == TraceAction::Alloc)
            live[e.addr] = e.size;
        else if (e.action == TraceAction::FreeCompleted && !live.erase(e.addr))
            r.initial += e.size;
    }
    Bytes total = r.initial;
    r.peak = total;
    for (const TraceEvent &e : t.events) {
        total += e.action == TraceAction::Alloc ? e.size : -e.size;
        r.peak = std::max(r.peak, total);
    }
    return r;
}

std::string memoryEvent(const std::string &args, const std::string &ts = "1.000")
{
    return R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" + ts
           + R"(, "args": {)" + args + "}}";
}

std::string wrap(const std::string &events)
{
    return R"({"schemaVersion": 1, "traceEvents": [)" + events + "]}";
}

} // namespace

TEST_CASE("Every measured fixture's profiler trace imports with the script's own figures", "[trace][profiler]")
{
    const fs::path root = fs::path(MEMLEDGER_TEST_DATA) / "measured";
    REQUIRE(fs::is_directory(root));
    int runs = 0;
    for (const fs::directory_entry &dir : fs::directory_iterator(root)) {
        const fs::path tracePath = dir.path() / "trace.json.gz";
        if (!fs::exists(tracePath))
            continue;
        ++runs;
        INFO(dir.path().filename().string());
        std::ifstream in(dir.path() / "measured.json");
        const nlohmann::json measured = nlohmann::json::parse(in);
        const nlohmann::json &expect = measured.at("trace");

        std::string error;
        const std::unique_ptr<ByteSource> source = ByteSource::openFile(tracePath.string(), error);
        REQUIRE(source);
        const TraceLoadResult r = loadProfilerTrace(*source);
        INFO(firstProblem(r));
        REQUIRE(r.trace);
        CHECK(r.problems.empty());
        const MeasuredTrace &t = *r.trace;
        CHECK(t.format == TraceFormat::ProfilerTrace);
        CHECK(t.device == -1); // a CPU-only trace: the CPU is chosen
        CHECK(t.devices == std::vector<int>{-1});
        CHECK(t.has_times);
        REQUIRE(t.events.size() == expect.at("memory_events").get<std::size_t>());

        std::size_t allocs = 0, frees = 0;
        Bytes allocBytes = 0, freeBytes = 0;
        for (const TraceEvent &e : t.events) {
            if (e.action == TraceAction::Alloc) {
                ++allocs;
                allocBytes += e.size;
            } else {
                CHECK(e.action == TraceAction::FreeCompleted);
                ++frees;
                freeBytes += e.size;
            }
        }
        CHECK(allocs == expect.at("alloc_events").get<std::size_t>());
        CHECK(frees == expect.at("free_events").get<std::size_t>());
        CHECK(allocBytes == expect.at("alloc_bytes").get<Bytes>());
        CHECK(freeBytes == expect.at("free_bytes").get<Bytes>());
        CHECK(t.events.front().addr == expect.at("first_addr").get<std::uint64_t>());
        CHECK(t.events.front().size == std::abs(expect.at("first_bytes").get<Bytes>()));
        for (std::size_t i = 1; i < t.events.size(); ++i)
            REQUIRE(t.events[i - 1].time_us <= t.events[i].time_us);

        // The trace alone holds no block alive through the whole window: its
        // replay is the snapshot's less those (the script says by how much).
        const Replayed rp = replay(t);
        CHECK(rp.initial == expect.at("replay_initial_bytes").get<Bytes>());
        CHECK(rp.peak == expect.at("replay_peak_allocated_bytes").get<Bytes>());
        CHECK(rp.peak + expect.at("alive_throughout_bytes").get<Bytes>()
              == measured.at("peak_allocated_bytes").get<Bytes>());
        // Kineto's "Total Allocated" says what was allocated before the first
        // event: the last total less the window's net change.
        REQUIRE(t.initial_allocated_bytes);
        CHECK(*t.initial_allocated_bytes == expect.at("last_total_allocated").get<Bytes>() - (allocBytes - freeBytes));
        CHECK(*t.initial_allocated_bytes >= expect.at("alive_throughout_bytes").get<Bytes>());

        CHECK(t.ranges.size() == expect.at("ranges").get<std::size_t>());
        std::size_t steps = 0;
        for (std::size_t i = 0; i < t.ranges.size(); ++i) {
            CHECK(t.ranges[i].end_us >= t.ranges[i].start_us);
            if (i > 0)
                CHECK(t.ranges[i - 1].start_us <= t.ranges[i].start_us);
            steps += t.ranges[i].name.rfind("ProfilerStep#", 0) == 0;
        }
        CHECK(steps == expect.at("profiler_steps").get<std::size_t>());
        CHECK(t.ranges.front().name.rfind("ProfilerStep#", 0) == 0);
    }
    CHECK(runs >= 12);
}

TEST_CASE("A profiler trace's [memory] events become allocs and frees of one device", "[trace][profiler]")
{
    const std::string text = wrap(
        memoryEvent(
            R"("Total Reserved": 0, "Total Allocated": 64, "Bytes": 64, "Addr": 4096, "Device Id": -1, "Device Type": 0)",
            "1.500")
        + ","
        + memoryEvent(R"("Bytes": 512, "Addr": 8192, "Device Id": 1, "Device Type": 1, "Total Allocated": 512)",
                      "2.000")
        + "," + memoryEvent(R"("Bytes": 256, "Addr": 9000, "Device Id": 0, "Device Type": 1)", "3.000") + ","
        + memoryEvent(R"("Bytes": -256, "Addr": 9000, "Device Id": 0, "Device Type": 1)", "2.500") + ","
        + R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 1.0, "dur": 10.0},)"
        + R"({"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 1.0, "dur": 1.0, "args": {"External id": 3}},)"
        + R"({"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 1, "ts": 0.5, "dur": 2},)"
        + R"({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 11.0})");

    SECTION("the lowest accelerator by default")
    {
        const TraceLoadResult r = loadText(text);
        INFO(firstProblem(r));
        REQUIRE(r.trace);
        CHECK(r.trace->device == 0);
        CHECK(r.trace->devices == std::vector<int>{-1, 0, 1});
        REQUIRE(r.trace->events.size() == 2);
        // In time order: the free written last happened first.
        CHECK(r.trace->events[0].action == TraceAction::FreeCompleted);
        CHECK(r.trace->events[0].size == 256);
        CHECK(r.trace->events[0].time_us == 2.5);
        CHECK(r.trace->events[1].action == TraceAction::Alloc);
        CHECK(r.trace->events[1].addr == 9000);
        REQUIRE(r.trace->ranges.size() == 2);
        CHECK(r.trace->ranges[0].name == "forward");
        CHECK(r.trace->ranges[0].end_us == 2.5);
        CHECK(r.trace->ranges[1].name == "ProfilerStep#3");
    }
    SECTION("the CPU when asked")
    {
        TraceImportOptions options;
        options.device = -1;
        const TraceLoadResult r = loadText(text, options);
        REQUIRE(r.trace);
        REQUIRE(r.trace->events.size() == 1);
        CHECK(r.trace->events[0].addr == 4096);
        CHECK(r.trace->events[0].time_us == 1.5);
    }
    SECTION("a device the trace does not have")
    {
        TraceImportOptions options;
        options.device = 5;
        const TraceLoadResult r = loadText(text, options);
        CHECK_FALSE(r.trace);
        CHECK_THAT(firstProblem(r), Catch::Contains("device 5") && Catch::Contains("-1 (CPU), 0, 1"));
    }
    SECTION("an older export, the bare array of events")
    {
        const TraceLoadResult r
            = loadText("[" + memoryEvent(R"("Bytes": 8, "Addr": 1, "Device Id": -1, "Device Type": 0)") + "]");
        REQUIRE(r.trace);
        CHECK(r.trace->events.size() == 1);
        CHECK(r.trace->device == -1);
    }
}

TEST_CASE("A malformed profiler trace is a problem naming the place, never a crash", "[trace][profiler]")
{
    const auto problem = [](const std::string &text) {
        const TraceLoadResult r = loadText(text);
        CHECK_FALSE(r.trace);
        REQUIRE_FALSE(r.problems.empty());
        return r.problems.front().toString();
    };
    CHECK_THAT(problem(""), Catch::Contains("not valid JSON"));
    CHECK_THAT(problem(R"({"traceEvents": [)"), Catch::Contains("not valid JSON"));
    CHECK_THAT(problem(R"({"traceEvents": [] } trailing)"), Catch::Contains("not valid JSON"));
    CHECK_THAT(problem("42"), Catch::Contains("expected a Chrome trace"));
    CHECK_THAT(problem(R"({"schemaVersion": 1})"), Catch::Contains("traceEvents: missing"));
    CHECK_THAT(problem(R"({"traceEvents": {}})"), Catch::Contains("traceEvents: expected an array"));
    CHECK_THAT(problem(R"({"traceEvents": 3})"), Catch::Contains("traceEvents: expected an array"));
    CHECK_THAT(problem(R"({"traceEvents": [1]})"), Catch::Contains("traceEvents[0]: expected an event object"));
    CHECK_THAT(problem(R"({"traceEvents": [{}, []]})"), Catch::Contains("traceEvents[1]: expected an event object"));
    CHECK_THAT(problem(wrap(R"({"ph": "X", "name": "x"})")), Catch::Contains("no [memory] events"));
    CHECK_THAT(problem(wrap(memoryEvent(R"("Addr": 1, "Device Id": -1, "Device Type": 0)"))),
               Catch::Contains("traceEvents[0].args.Bytes: missing"));
    CHECK_THAT(problem(wrap(R"({"name": "[memory]", "ph": "i", "ts": 1})")),
               Catch::Contains("traceEvents[0].args.Device Type: missing"));
    CHECK_THAT(problem(wrap(memoryEvent(R"("Bytes": "12", "Addr": 1, "Device Id": -1, "Device Type": 0)"))),
               Catch::Contains("traceEvents[0].args.Bytes: expected an integer, got string \"12\""));
    CHECK_THAT(problem(wrap(memoryEvent(R"("Bytes": 1.5, "Addr": 1, "Device Id": -1, "Device Type": 0)"))),
               Catch::Contains("args.Bytes: expected an integer"));
    CHECK_THAT(problem(wrap(memoryEvent(R"("Bytes": 1, "Addr": {"a": 1}, "Device Id": -1, "Device Type": 0)"))),
               Catch::Contains("args.Addr: expected an integer, got an object or array"));
    CHECK_THAT(problem(wrap(memoryEvent(R"("Bytes": 1, "Addr": 1, "Device Id": -3, "Device Type": 1)"))),
               Catch::Contains("args.Device Id: expected a device index"));
    CHECK_THAT(problem(wrap(memoryEvent(R"("Bytes": 1, "Addr": 1, "Device Id": -1, "Device Type": 0)", "\"soon\""))),
               Catch::Contains("traceEvents[0].ts: expected a number of microseconds"));
    CHECK_THAT(problem(wrap(R"({"ph": "X", "cat": "user_annotation", "name": "forward", "dur": 1})")),
               Catch::Contains("traceEvents[0].ts: missing"));
    CHECK_THAT(problem(wrap(R"({"ph": "X", "cat": "user_annotation", "name": "forward", "ts": 1, "dur": -1})")),
               Catch::Contains("negative duration"));
    CHECK_THAT(
        problem(wrap(memoryEvent(R"("Bytes": -9223372036854775808, "Addr": 1, "Device Id": -1, "Device Type": 0)"))),
        Catch::Contains("args.Bytes: out of range"));
}

TEST_CASE("A profiler trace tolerates what it does not read", "[trace][profiler]")
{
    // Nested metadata, unknown keys, arrays in args, deep nesting elsewhere.
    std::string deep(5000, '[');
    deep += std::string(5000, ']');
    const TraceLoadResult r = loadText(
        R"({"deviceProperties": [{"id": 0, "name": "H100"}], "distributedInfo": {"rank": 0}, "deep": )" + deep
        + R"(, "traceEvents": [{"ph": "M", "name": "process_name", "args": {"name": "python"}}, )"
        + memoryEvent(
            R"("Bytes": 18446744073709551615, "Addr": 18446744073709551615, "Device Id": 0, "Device Type": 1, "Input Dims": [[1, 2]])")
        + R"(], "traceName": "x.json"})");
    INFO(firstProblem(r));
    // 2^64 - 1 bytes is not a size: refused; the address alone would be fine.
    CHECK_FALSE(r.trace);
    const TraceLoadResult ok = loadText(
        R"({"deep": )" + deep + R"(, "traceEvents": [)"
        + memoryEvent(
            R"("Bytes": 16, "Addr": 18446744073709551615, "Device Id": 0, "Device Type": 1, "Input Dims": [[1, 2]])")
        + "]}");
    INFO(firstProblem(ok));
    REQUIRE(ok.trace);
    CHECK(ok.trace->events[0].addr == 18446744073709551615ull);
}

TEST_CASE("A profiler trace import can be cancelled", "[trace][profiler]")
{
    std::string events;
    for (int i = 0; i < 200000; ++i)
        events += (i ? "," : "") + memoryEvent(R"("Bytes": 64, "Addr": 4096, "Device Id": 0, "Device Type": 1)");
    const std::string text = wrap(events);
    TraceImportOptions options;
    int calls = 0;
    options.progress_context = &calls;
    options.progress = [](void *context, std::uint64_t, std::uint64_t) {
        ++*static_cast<int *>(context);
        return false;
    };
    const TraceLoadResult r = loadText(text, options);
    CHECK(calls == 1);
    CHECK_FALSE(r.trace);
    CHECK_THAT(firstProblem(r), Catch::Contains("cancelled"));
}

TEST_CASE("A profiler trace's Total Allocated gives what was allocated before its window", "[trace][profiler]")
{
    // 1000 B allocated before the first event (alloc 100 -> total 1100), then
    // a free of a block the window never saw (600 of those 1000).
    const TraceLoadResult r = loadText(wrap(
        memoryEvent(R"("Bytes": 100, "Addr": 16, "Device Id": 0, "Device Type": 1, "Total Allocated": 1100)", "1.0")
        + ","
        + memoryEvent(R"("Bytes": -600, "Addr": 32, "Device Id": 0, "Device Type": 1, "Total Allocated": 500)",
                      "2.0")));
    INFO(firstProblem(r));
    REQUIRE(r.trace);
    REQUIRE(r.trace->initial_allocated_bytes);
    CHECK(*r.trace->initial_allocated_bytes == 1000);
    const MemoryReplay replay = replayAllocated(*r.trace);
    CHECK(replay.initial_allocated_bytes == 1000);
    CHECK(replay.peak_allocated_bytes == 1100);
    REQUIRE(replay.curve.size() == 2);
    CHECK(replay.curve.back().allocated == 500); // Kineto's own total after the last event

    // Without it (older writers), only what the window frees is known.
    const TraceLoadResult bare
        = loadText(wrap(memoryEvent(R"("Bytes": -600, "Addr": 32, "Device Id": 0, "Device Type": 1)")));
    REQUIRE(bare.trace);
    CHECK(!bare.trace->initial_allocated_bytes);
    CHECK(replayAllocated(*bare.trace).initial_allocated_bytes == 600);
    // A total that is not an integer is refused, naming the field.
    const TraceLoadResult bad = loadText(
        wrap(memoryEvent(R"("Bytes": 1, "Addr": 32, "Device Id": 0, "Device Type": 1, "Total Allocated": "lots")")));
    CHECK_THAT(firstProblem(bad), Catch::Contains("Total Allocated"));
}
