// SPDX-License-Identifier: MIT
// One peak (core/timeline/peakledger.h): the ledger every verdict reads holds
// each rank's simulated peak, and the row that raises the rows' sum to it
// holds what a framework really has alive at that moment.
#include "core/base/units.h"
#include "core/formats/builtins.h"
#include "core/ledger/ledger.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/timeline.h"
#include "randomconfig.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>

using namespace memledger;

namespace {

const LedgerEntry *atPeakRow(const RankLedger &rank)
{
    for (const LedgerEntry &e : rank.entries)
        if (e.atPeak)
            return &e;
    return nullptr;
}

// Every rank's total is its simulated peak, each category what is allocated then.
void checkOnePeak(const Config &config)
{
    const PlanPeak plan = planPeak(config);
    REQUIRE(plan.ledger.ranks.size() == plan.timeline.ranks.size());
    for (std::size_t r = 0; r < plan.ledger.ranks.size(); ++r) {
        CAPTURE(r);
        const RankLedger &rank = plan.ledger.ranks[r];
        const Bytes simulated = plan.timeline.ranks[r].peak_bytes;
        CHECK(rank.device_total_bytes == simulated);
        CHECK(rank.fits == (rank.device_total_bytes <= config.hardware.hbm_bytes));
        CHECK(rank.fits == peakFits(plan.timeline, plan.timeline.ranks[r]));
        Bytes sum = 0;
        for (const LedgerEntry &e : rank.entries)
            if (e.placement == Placement::Device)
                sum += e.bytes;
        CHECK(sum == rank.device_total_bytes); // the row is in the table as in the total
    }
    CHECK(plan.ledger.peak_bytes == plan.ledger.ranks[std::size_t(plan.ledger.peak_rank)].device_total_bytes);
}

} // namespace

TEST_CASE("One peak: every shipped scenario's ranks total their simulated peak", "[onepeak]")
{
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        checkOnePeak(test::scenario(name));
    }
}

TEST_CASE("One peak: random plans of every schedule total their simulated peak", "[onepeak][properties]")
{
    test::RandomConfigs draws(20261204);
    for (int i = 0; i < 200; ++i) {
        const Config config = draws.next();
        CAPTURE(i, config.name, std::string(scheduleName(config.parallelism.schedule())));
        checkOnePeak(config);
    }
}

TEST_CASE("One peak: the last stage's peak holds the logits and their fp32 copy for the loss", "[onepeak]")
{
    // Llama 3.1 405B at 8,192 tokens, t = 8, p = 14: the last rank peaks as
    // its loss runs for the first micro-batch, on top of one micro-batch's
    // saved activations. Megatron pads the vocabulary to a multiple of
    // 128 · t (128,256 → 129,024), each tensor-parallel rank holds 16,128
    // columns, and the loss keeps the bf16 logits and logits.float() together:
    // 8,192 · 16,128 · (2 + 4) bytes.
    const Config config = test::scenario("llama-3.1-405b-16k-h100");
    REQUIRE(config.training.seq_length * config.training.micro_batch_size == 8192);
    const Ledger ledger = peakLedger(config);
    const RankLedger &last = ledger.ranks.back();
    const LedgerEntry *row = atPeakRow(last);
    REQUIRE(row != nullptr);
    CHECK(row->bytes == Bytes(8192) * 16128 * (2 + 4));
    CHECK(row->category == Category::Activations);
    CHECK(row->note.find("Logits and fp32 loss temporaries") != std::string::npos);
    CHECK(last.fits);
}

TEST_CASE("One peak: a first rank peaks in its first backward, with one MLP's gradients alive", "[onepeak]")
{
    // The same plan's rank 0 peaks as the first micro-batch's backward reaches
    // the MLP of its last layer with all 14 micro-batches saved: autograd holds
    // the gradient arriving at the layer's output and the one it produces (two
    // sequence-parallel shards, 2 · s · h / t bytes each) and the SwiGLU's
    // input gradient (gate and up, 2 · ffn / t wide) with its output's (ffn / t).
    const Config config = test::scenario("llama-3.1-405b-16k-h100");
    const std::int64_t s = 8192, h = 16384, ffn = 53248, t = 8;
    const Ledger ledger = peakLedger(config);
    const RankLedger &first = ledger.ranks.front();
    const LedgerEntry *row = atPeakRow(first);
    REQUIRE(row != nullptr);
    CHECK(row->bytes == 2 * (2 * s * h / t) + 2 * s * 3 * ffn / t);
    CHECK(row->note.find("Backward working set") != std::string::npos);
}

TEST_CASE("One peak: a category holds what is allocated at the peak, above or below its rows", "[onepeak]")
{
    // By hand: a rank with a 10 GB weight row, a 4 GB optimizer scratch row
    // alive only during the step, 20 GB of saved activations, and a 1 GB
    // activation gradient alive at the peak, during the backward.
    Ledger ledger;
    ledger.capacity_bytes = 80'000'000'000;
    RankLedger rank;
    const auto row = [&](Category c, std::string label, Bytes bytes) {
        LedgerEntry e;
        e.category = c;
        e.label = std::move(label);
        e.bytes = bytes;
        rank.entries.push_back(e);
        rank.device[std::size_t(c)] += bytes;
        rank.device_total_bytes += bytes;
    };
    row(Category::Weights, "Transformer layers", 10'000'000'000);
    row(Category::OptimizerStates, "Step scratch", 4'000'000'000);
    row(Category::Activations, "Transformer layers", 20'000'000'000);
    ledger.ranks.push_back(rank);
    Timeline tl;
    tl.ledger = ledger;
    RankTimeline rt;
    rt.peak_time = 1.0;
    rt.peak_bytes = 31'000'000'000;
    rt.lifetimes = {{.start = 0,
                     .end = 3,
                     .bytes = 10'000'000'000,
                     .category = Category::Weights,
                     .kind = LifetimeKind::Persistent,
                     .entry = 0},
                    {.start = 2,
                     .end = 3,
                     .bytes = 4'000'000'000,
                     .category = Category::OptimizerStates,
                     .kind = LifetimeKind::OptimizerTemporaries,
                     .entry = 1},
                    {.start = 0,
                     .end = 1.5,
                     .bytes = 20'000'000'000,
                     .category = Category::Activations,
                     .kind = LifetimeKind::Activations},
                    {.start = 0.9,
                     .end = 1.1,
                     .bytes = 1'000'000'000,
                     .category = Category::Activations,
                     .kind = LifetimeKind::BackwardWorkingSet,
                     .microbatch = 0,
                     .layer = 7}};
    tl.ranks.push_back(rt);
    carrySimulatedPeak(ledger, tl);
    const RankLedger &out = ledger.ranks[0];
    CHECK(out.device_total_bytes == 31'000'000'000);
    CHECK(ledger.peak_bytes == 31'000'000'000);
    CHECK(out.device[std::size_t(Category::Activations)] == 21'000'000'000);
    CHECK(out.device[std::size_t(Category::OptimizerStates)] == 0);
    REQUIRE(out.entries.size() == 5);
    CHECK(out.entries[3].category == Category::OptimizerStates);
    CHECK(out.entries[3].bytes == -4'000'000'000);
    CHECK(out.entries[3].label == "Not allocated at the simulated peak");
    CHECK(out.entries[3].note.find("Step scratch (0 B of 4.000 GB allocated then)") != std::string::npos);
    CHECK(out.entries[4].category == Category::Activations);
    CHECK(out.entries[4].bytes == 1'000'000'000);
    CHECK(out.entries[4].note.find("Backward working set of layer 7") != std::string::npos);

    // A rank whose rows are what is allocated at its peak gains no row.
    Ledger same = computeLedger(test::scenario("seed-000-7b-d-both"));
    Timeline flat;
    flat.ranks.resize(1);
    flat.ranks[0].peak_bytes = same.ranks[0].device_total_bytes;
    const std::size_t rows = same.ranks[0].entries.size();
    carrySimulatedPeak(same, flat);
    CHECK(same.ranks[0].entries.size() == rows);
}
