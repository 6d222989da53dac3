// SPDX-License-Identifier: MIT
// One iteration simulated: the staircase as an output, peaks against the
// ledger, recompute changing lifetimes, step time and the pipeline bubble.
#include "core/formats/builtins.h"
#include "core/model/activations.h"
#include "core/time/costmodel.h"
#include "core/timeline/curve.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

Config pipelineConfig(const std::string &schedule, std::int64_t p, std::int64_t v, std::int64_t m,
                      std::int64_t vocab = 32000)
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 48}, {"hidden_size", 2048}, {"num_attention_heads", 16}, {"vocab_size", vocab}};
    doc["training"] = {{"seq_length", 2048}, {"micro_batch_size", 1}, {"global_batch_size", m}};
    doc["parallelism"] = {{"pipeline_model_parallel_size", p},
                          {"virtual_pipeline_model_parallel_size", v},
                          {"pipeline_schedule", schedule}};
    return configFrom(doc);
}

Bytes persistentOf(const RankLedger &r)
{
    Bytes b = 0;
    for (Category c : kCategories)
        if (c != Category::Activations)
            b += r.device[int(c)];
    return b;
}

} // namespace

TEST_CASE("The staircase is an output of the simulation and the ledger uses the same numbers", "[timeline][schedule]")
{
    // Every schedule (docs/extending.md: a new one joins this loop), each with what it needs: interleaving v >= 2
    // chunks per rank, ZB-V and the DualPipes two, DualPipe and DualPipeV at least 2p micro-batches (DualPipe an
    // even number, which 2p, 3p and 4p are for these even p).
    for (const std::string schedule :
         {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-v", "dualpipe", "dualpipev"}) {
        const bool twoChunks = schedule == "zb-v" || schedule == "dualpipe" || schedule == "dualpipev";
        const bool dual = schedule == "dualpipe" || schedule == "dualpipev";
        for (std::int64_t p : {2, 4, 8}) {
            const std::int64_t v = schedule == "interleaved" ? (p == 8 ? 2 : 3) : twoChunks ? 2 : 1;
            for (std::int64_t m :
                 dual ? std::vector<std::int64_t>{2 * p, 3 * p, 4 * p} : std::vector<std::int64_t>{p, 2 * p, 3 * p}) {
                if (48 % (p * v) != 0)
                    continue;
                CAPTURE(schedule, p, v, m);
                const Timeline tl = simulateIteration(pipelineConfig(schedule, p, v, m));
                for (const RankTimeline &rt : tl.ranks) {
                    const RankLedger &lr = tl.ledger.ranks[std::size_t(rt.pipeline_rank)];
                    CHECK(rt.max_alive_chunks == lr.in_flight_chunks);
                    CHECK(rt.max_alive_microbatches == Approx(lr.in_flight_microbatches));
                }
            }
        }
    }
    // The reference figures: 1F1B p = 8 -> [8..1]; interleaved v = 2 -> 11.5 on rank 0; GPipe -> m.
    const Timeline f = simulateIteration(pipelineConfig("1f1b", 8, 1, 16));
    for (const RankTimeline &rt : f.ranks)
        CHECK(rt.max_alive_microbatches == 8 - rt.pipeline_rank);
    CHECK(simulateIteration(pipelineConfig("interleaved", 8, 2, 16)).ranks[0].max_alive_microbatches == Approx(11.5));
    for (const RankTimeline &rt : simulateIteration(pipelineConfig("gpipe", 4, 1, 12)).ranks)
        CHECK(rt.max_alive_microbatches == 12);
}

TEST_CASE("The timeline's peak bounds: at least the ledger's total, at most it plus the transients",
          "[timeline][ledger]")
{
    // Relation: ledger total <= timeline peak <= ledger total + backward working set
    // + loss temporaries + optimizer scratch, for every built-in scenario and rank.
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const Config c = scenario(name);
        const Timeline tl = simulateIteration(c);
        for (const RankTimeline &rt : tl.ranks) {
            CAPTURE(rt.pipeline_rank);
            const RankLedger &lr = tl.ledger.ranks[std::size_t(rt.pipeline_rank)];
            Bytes transients = 0;
            for (const Lifetime &l : rt.lifetimes)
                if (l.kind == LifetimeKind::BackwardWorkingSet || l.kind == LifetimeKind::LossTemporaries
                    || l.kind == LifetimeKind::OptimizerTemporaries)
                    transients = std::max(transients, l.bytes);
            // Two rows of the last stage never coexist under full recompute: the
            // output layer's backward frees the loss's saved tensors before the
            // last layer is rebuilt (BLOOM's unfused 2.1 GB working set against
            // its 1.3 GB loss rows); the peak holds the larger of the two.
            const Bytes apart = std::min(entryBytes(lr, Category::Activations, "Recompute working set"),
                                         entryBytes(lr, Category::Activations, "Output layer and loss"));
            CHECK(rt.peak_bytes >= lr.device_total_bytes - apart);
            CHECK(rt.peak_bytes <= lr.device_total_bytes + 3 * transients);
            CHECK(rt.peak_bytes >= persistentOf(lr));
            // The curve is downsampled keeping maxima: its top is the peak.
            Bytes top = 0;
            for (const CurvePoint &pt : rt.curve)
                top = std::max(top, pt.bytes);
            CHECK(top == rt.peak_bytes);
            CHECK(rt.curve.size() <= 2001);
            // What is alive at the peak adds up to the peak.
            Bytes alive = 0;
            for (const AliveItem &a : rt.alive_at_peak)
                alive += a.bytes;
            CHECK(alive == rt.peak_bytes);
        }
    }
}

TEST_CASE("GPT-3 on p = 8: rank 0 holds the most and peaks when its warm-up ends", "[timeline]")
{
    const Timeline tl = simulateIteration(scenario("gpt-3-175b-64gpus-tp-only"));
    CHECK(tl.peak_rank == 0);
    const RankTimeline &r0 = tl.ranks[0];
    // The warm-up is 7 forwards, then the 8th; the peak is at the first backward.
    const TimedOp &firstBackward = r0.ops[8];
    REQUIRE(firstBackward.op.kind == OpKind::Backward);
    CHECK(r0.peak_time >= r0.ops[7].start);
    CHECK(r0.peak_time <= firstBackward.end);
    REQUIRE_FALSE(r0.alive_at_peak.empty());
    CHECK(r0.alive_at_peak[0].label == "Saved activations of 8 micro-batches (0–7)");
}

TEST_CASE("Full recompute: the backward peak is the checkpoints, one layer rebuilt and its working set",
          "[timeline][recompute]")
{
    const Config c = scenario("seed-000-7b-b-checkpointing");
    const Timeline tl = simulateIteration(c);
    const RankTimeline &r = tl.ranks[0];
    const RankLedger &lr = tl.ledger.ranks[0];
    const LayerActivations la = layerActivations(c, false);
    const StageActivations stage = stageActivations(c);
    const TransientActivations tr = transientActivations(c);
    Bytes first = 0, last = 0;
    for (const SavedTensor &t : stage.first)
        first += t.bytes;
    for (const SavedTensor &t : stage.last)
        last += t.bytes;
    // Seed 000's plan B keeps each layer's input (32 × 2sbh) through the
    // backward. The backward's highest moment is either the loss's backward
    // (the loss's saved fp32 softmax and its gradient still there) or a layer
    // rebuilt by recompute with the working set of its MLP half, or of its
    // attention half once the MLP's rebuilt tensors are freed.
    const Bytes checkpoints = c.model.num_layers * la.checkpoint;
    const Bytes expected
        = persistentOf(lr) + checkpoints + first
          + std::max({last + tr.lossBackward, la.total + tr.mlpBackward, la.total - la.mlp + tr.attentionBackward});
    CHECK(r.peak_bytes == expected);
    const TimedOp &backward = r.ops.back();
    CHECK(backward.op.kind == OpKind::Backward);
    CHECK(r.peak_time >= backward.start);
    CHECK(r.peak_time < backward.end);
    // Each layer is rebuilt once, its two halves freed one after the other.
    std::set<std::int32_t> rebuilt;
    for (const Lifetime &l : r.lifetimes)
        if (l.kind == LifetimeKind::RecomputeWorkingSet)
            rebuilt.insert(l.layer);
    CHECK(rebuilt.size() == 32);
}

TEST_CASE("Selective recompute: the attention core reappears during its layer's backward", "[timeline][recompute]")
{
    const Config c = scenario("gpt-3-175b-64gpus-tp-sp-selective");
    const Timeline tl = simulateIteration(c);
    const RankTimeline &r = tl.ranks[3];
    const LayerActivations la = layerActivations(c, false);
    std::size_t cores = 0;
    for (const Lifetime &l : r.lifetimes) {
        if (l.kind != LifetimeKind::AttentionRecompute)
            continue;
        ++cores;
        CHECK(l.bytes == la.attentionCore);
        // Inside the backward of the same micro-batch.
        bool inside = false;
        for (const TimedOp &op : r.ops)
            inside |= op.op.kind == OpKind::Backward && op.op.microbatch == l.microbatch && op.start <= l.start
                      && l.end <= op.end + 1e-12;
        CHECK(inside);
    }
    CHECK(cores == std::size_t(12 * 64)); // 12 layers x 64 micro-batches
}

TEST_CASE("Recompute adds its FLOPs to the step: full recompute is about one more forward", "[timeline][cost]")
{
    const auto step = [](const std::string &g) {
        return simulateIteration(
            scenario("gpt-3-175b-64gpus-tp-sp-selective", {"strategy.recompute_granularity=" + g}));
    };
    const Timeline none = step("none"), sel = step("selective"), full = step("full");
    // Seeds 000/001: forward F, backward 2F, full recompute one more F: about +33 %.
    CHECK(full.step_time / none.step_time == Approx(4.0 / 3.0).epsilon(0.05));
    CHECK(sel.step_time > none.step_time);
    CHECK(sel.step_time / none.step_time < 1.10);
    // The difference is the recomputed time, spent inside the backwards.
    CHECK(full.recompute_s > 0);
    CHECK(full.pipeline_time - none.pipeline_time == Approx(full.recompute_s).epsilon(0.15));
}

TEST_CASE("1F1B bubble: (p - 1) / (m + p - 1) of the pipeline (Narayanan et al. 2021)", "[timeline][cost]")
{
    // Balanced stages: a small vocabulary keeps the output layer off the last stage's time.
    for (std::int64_t m : {8, 16, 32}) {
        const Timeline tl = simulateIteration(pipelineConfig("1f1b", 4, 1, m, 128));
        CHECK(tl.bubble_fraction == Approx(3.0 / double(m + 3)).margin(0.02));
    }
    // GPipe idles the same, interleaving shrinks it by about v.
    const double f = simulateIteration(pipelineConfig("1f1b", 4, 1, 8)).bubble_fraction;
    const double i = simulateIteration(pipelineConfig("interleaved", 4, 2, 8)).bubble_fraction;
    CHECK(i < f);
}

TEST_CASE("Gradients from the first backward when the preset says so", "[timeline]")
{
    const Timeline contiguous = simulateIteration(scenario("seed-000-7b-a-plain"));
    const Timeline onDemand = simulateIteration(scenario("seed-000-7b-a-plain", {"strategy.grad_buffer=on_demand"}));
    const auto gradientsAt = [](const RankTimeline &r, double t) {
        Bytes b = 0;
        for (const Lifetime &l : r.lifetimes)
            if (l.kind == LifetimeKind::Gradients && l.start <= t && t < l.end)
                b += l.bytes;
        return b;
    };
    const RankTimeline &c = contiguous.ranks[0], &d = onDemand.ranks[0];
    const double inForward = c.ops[0].end / 2, inBackward = (c.ops[1].start + c.ops[1].end) / 2;
    CHECK(gradientsAt(c, inForward) == contiguous.ledger.ranks[0].device[int(Category::Gradients)]);
    CHECK(gradientsAt(d, inForward) == 0);
    // PyTorch creates each .grad as the backward reaches its layer: part of
    // them exist halfway, all of them once the backward is over.
    CHECK(gradientsAt(d, inBackward) > 0);
    CHECK(gradientsAt(d, inBackward) < gradientsAt(c, inBackward));
    CHECK(gradientsAt(d, d.optimizer_start) == gradientsAt(c, c.optimizer_start));
    // They grow as the backward goes on, and never shrink before the step.
    Bytes before = 0;
    for (int i = 0; i <= 20; ++i) {
        const double t = d.ops[1].start + (d.ops[1].end - d.ops[1].start) * i / 20.0;
        const Bytes now = gradientsAt(d, t);
        CHECK(now >= before);
        before = now;
    }
    CHECK(d.peak_bytes <= c.peak_bytes);
}

TEST_CASE("Downsampling keeps each bucket's maximum", "[timeline]")
{
    std::vector<CurvePoint> curve;
    for (int i = 0; i < 10000; ++i)
        curve.push_back({double(i), Bytes(i % 100)});
    curve[7777].bytes = 1000000; // a one-sample spike
    const std::vector<CurvePoint> small = downsampleKeepingMax(curve, 100);
    CHECK(small.size() <= 101);
    Bytes top = 0;
    double when = 0;
    for (const CurvePoint &p : small)
        if (p.bytes > top) {
            top = p.bytes;
            when = p.time;
        }
    CHECK(top == 1000000);
    CHECK(when == 7777);
    CHECK(downsampleKeepingMax(curve, 20000).size() == curve.size());
}

TEST_CASE("The lifetimes view's verdict: a rank's simulated peak, runtime reserve included, against the capacity",
          "[timeline][fit]")
{
    // The peak holds the runtime reserve (a ledger row alive all iteration), so
    // it is held against the whole HBM, as the ledger's verdict is: exactly the
    // capacity still fits, a byte over does not (the reserve is not taken off twice).
    Timeline hand;
    hand.ledger.capacity_bytes = 80'000'000'000;
    hand.ledger.usable_bytes = 78'000'000'000; // an 80 GB GPU less a 2 GB reserve
    RankTimeline rank;
    rank.peak_bytes = hand.ledger.capacity_bytes;
    CHECK(peakFits(hand, rank));
    rank.peak_bytes += 1;
    CHECK_FALSE(peakFits(hand, rank));

    // The 7B plans on one 80 GB GPU: plain training needs about 141 GB (107.8 GB of
    // model states and 31.3 GB of activations), so its peak does not fit; with
    // the optimizer offloaded and checkpointing it does.
    const Timeline plain = simulateIteration(test::scenario("seed-000-7b-a-plain"));
    CHECK_FALSE(peakFits(plain, plain.ranks[0]));
    const Timeline both = simulateIteration(test::scenario("seed-000-7b-d-both"));
    CHECK(peakFits(both, both.ranks[0]));
    // The simulated peak counts the reserve among its tensors.
    bool reserve = false;
    for (const AliveItem &a : both.ranks[0].alive_at_peak)
        reserve = reserve || a.category == Category::Runtime;
    CHECK(reserve);
}
