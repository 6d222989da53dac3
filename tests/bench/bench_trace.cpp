// SPDX-License-Identifier: MIT
// Snapshot import throughput: MB of pickle per second on one core (issue 11
// target: >= 100 MB/s), on a generated snapshot shaped as Python's pickler
// writes torch.cuda.memory._snapshot() (tests/core/snapshotgen.h). Printed,
// never asserted.
#include "core/trace/bytesource.h"
#include "core/trace/replay.h"
#include "core/trace/snapshot.h"
#include "tests/core/snapshotgen.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>

using namespace memledger;

TEST_CASE("Snapshot import throughput", "[bench][trace]")
{
    const test::GeneratedSnapshot g = test::generateSnapshot(std::size_t{150} << 20);
    const double mb = static_cast<double>(g.bytes.size()) / 1e6;
    std::vector<double> rates;
    std::size_t events = 0;
    for (int run = 0; run < 3; ++run) {
        const auto start = std::chrono::steady_clock::now();
        auto source = ByteSource::fromMemory(g.bytes);
        const TraceLoadResult r = loadSnapshot(*source);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        REQUIRE(r.trace);
        events = r.trace->events.size();
        rates.push_back(mb / s);
    }
    std::sort(rates.begin(), rates.end());
    const auto start = std::chrono::steady_clock::now();
    auto source = ByteSource::fromMemory(g.bytes);
    const MemoryReplay replay = replayAllocated(*loadSnapshot(*source).trace);
    const double withReplay = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("snapshot import: %.1f MB pickle, %zu events: %.0f MB/s (median of 3, best %.0f); "
                "with replay %.0f MB/s (peak %.2f GB)\n",
                mb, events, rates[1], rates[2], mb / withReplay,
                static_cast<double>(replay.peak_allocated_bytes) / 1e9);
}
