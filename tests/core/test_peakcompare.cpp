// SPDX-License-Identifier: MIT
// The ledger's peak beside the timeline's: which tensors make the difference.
#include "core/timeline/peakcompare.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>

using namespace memledger;

namespace {

constexpr Bytes GB = 1'000'000'000;

// One rank by hand: 60 GB of weights for the whole iteration and activations
// of two micro-batches, 40 GB each, saved at [1, 6) and [6, 9) (so at most one
// is alive at a time, where the ledger counts `ledgerMicrobatches`), a 30 GB
// backward working set at [5, 5.5) and 5 GB of loss temporaries at [4.9, 5.2).
Timeline handTimeline(int ledgerMicrobatches)
{
    Timeline tl;
    RankLedger r;
    r.pipeline_rank = 0;
    r.entries.push_back(
        {Category::Weights, Placement::Device, "Transformer layers", 60 * GB, "", "", ParamGroup::Layers});
    r.entries.push_back({Category::Activations, Placement::Device, "Saved activations", ledgerMicrobatches * 40 * GB,
                         "", "", ParamGroup::None});
    r.device[static_cast<std::size_t>(Category::Weights)] = 60 * GB;
    r.device[static_cast<std::size_t>(Category::Activations)] = ledgerMicrobatches * 40 * GB;
    r.device_total_bytes = 60 * GB + ledgerMicrobatches * 40 * GB;
    tl.ledger.ranks.push_back(r);
    tl.ledger.peak_rank = 0;
    tl.ledger.peak_bytes = r.device_total_bytes;

    RankTimeline rt;
    rt.pipeline_rank = 0;
    Lifetime weights{0, 10, 60 * GB, Category::Weights, LifetimeKind::Persistent};
    weights.entry = 0;
    rt.lifetimes.push_back(weights);
    rt.lifetimes.push_back({1, 6, 40 * GB, Category::Activations, LifetimeKind::Activations, 0, 0, -1});
    rt.lifetimes.push_back({6, 9, 40 * GB, Category::Activations, LifetimeKind::Activations, 1, 0, -1});
    rt.lifetimes.push_back({5, 5.5, 30 * GB, Category::Activations, LifetimeKind::BackwardWorkingSet, 0, 0, 3});
    rt.lifetimes.push_back({4.9, 5.2, 5 * GB, Category::Activations, LifetimeKind::LossTemporaries, 0, 0, -1});
    // At t = 5: 60 + 40 + 30 + 5 = 135 GB, the most at any instant.
    rt.peak_bytes = 135 * GB;
    rt.peak_time = 5;
    tl.ranks.push_back(rt);
    tl.peak_rank = 0;
    return tl;
}

} // namespace

TEST_CASE("peaks: the timeline above the ledger by the transients it alone holds", "[peaks]")
{
    const PeakComparison c = comparePeaks(handTimeline(1)); // ledger: 60 + 40 = 100 GB
    CHECK(c.ledger_bytes == 100 * GB);
    CHECK(c.timeline_bytes == 135 * GB);
    CHECK(c.difference() == 35 * GB);
    REQUIRE(c.transients.size() == 2);
    CHECK(c.transients[0].bytes == 30 * GB); // largest first
    CHECK(c.transients[0].label.find("Backward working set of layer 3") == 0);
    CHECK(c.transients[1].bytes == 5 * GB);
    CHECK(c.transient_bytes == 35 * GB);
    CHECK(c.ledger_rows_not_alive_bytes == 0);
    const std::string text = peakComparisonText(c);
    INFO(text);
    CHECK(text.find("100.0 GB") != std::string::npos);
    CHECK(text.find("135.0 GB") != std::string::npos);
    CHECK(text.find("35.00 GB more") != std::string::npos);
    CHECK(text.find("Backward working set of layer 3") != std::string::npos);
    CHECK(text.find("no ledger row counts") != std::string::npos);
}

TEST_CASE("peaks: the timeline below the ledger by the rows not alive at its peak", "[peaks]")
{
    // The ledger counts both micro-batches' activations at once: 60 + 80 = 140 GB;
    // at the timeline's peak only one is alive: 135 GB, 5 GB less, though a
    // 30 GB working set and 5 GB of loss temporaries are alive then; 40 GB of
    // activations the ledger counts are not.
    const PeakComparison c = comparePeaks(handTimeline(2));
    CHECK(c.difference() == -5 * GB);
    CHECK(c.transient_bytes == 35 * GB);
    CHECK(c.ledger_rows_not_alive_bytes == 40 * GB);
    CHECK(c.largest_absent_category == Category::Activations);
    const std::string text = peakComparisonText(c);
    INFO(text);
    CHECK(text.find("5.000 GB less") != std::string::npos);
    CHECK(text.find("40.00 GB are not alive") != std::string::npos);
}

TEST_CASE("peaks: every byte alive at a simulated peak is a ledger row or a named transient", "[peaks]")
{
    for (const char *name : {"llama-3-70b-128xh100", "seed-000-7b-b-checkpointing"}) {
        INFO(name);
        const Timeline tl = simulateIteration(test::scenario(name));
        const PeakComparison c = comparePeaks(tl);
        CHECK(c.ledger_bytes == tl.ledger.peak_bytes);
        CHECK(c.timeline_bytes == tl.ranks[static_cast<std::size_t>(tl.peak_rank)].peak_bytes);
        const RankLedger &r = tl.ledger.ranks[static_cast<std::size_t>(c.timeline_rank)];
        // Conservation: the timeline's total at its peak = the rank's ledger
        // rows alive then + the transients, with nothing counted twice.
        CHECK(c.timeline_bytes == r.device_total_bytes - c.ledger_rows_not_alive_bytes + c.transient_bytes);
        Bytes sum = 0;
        for (const AliveItem &t : c.transients)
            sum += t.bytes;
        CHECK(sum == c.transient_bytes);
    }
}
