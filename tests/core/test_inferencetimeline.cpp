// SPDX-License-Identifier: MIT
// The serving forward as a timeline: seed 001's picture with the user's own
// model. A served layer's activations live only while that layer runs; the
// training iteration keeps them from forward to backward.
#include "core/serving/inference.h"
#include "core/serving/inferencetimeline.h"
#include "core/timeline/timeline.h"
#include "core/view/gantt.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

double longestWorkingSet(const RankTimeline &rank)
{
    double longest = 0;
    for (const Lifetime &l : rank.lifetimes)
        if (l.kind == LifetimeKind::InferenceWorkingSet && l.layer >= 0)
            longest = std::max(longest, l.end - l.start);
    return longest;
}

} // namespace

TEST_CASE("A served prefill peaks at the inference ledger's total, with one layer's activations alive",
          "[inference][timeline]")
{
    const Config c = served("llama-2-7b", {"training.seq_length=4096", "inference.batch_size=4"});
    const InferenceLedger ledger = computeInference(c);
    const Timeline tl = simulateInferenceForward(c);
    REQUIRE(tl.ranks.size() == 1);
    const RankTimeline &rank = tl.ranks[0];
    REQUIRE(ledger.ranks[0].prefill.total >= ledger.ranks[0].decode.total);
    // Every KV layer written, the widest half-layer running: exactly the ledger's rows.
    CHECK(rank.peak_bytes == ledger.ranks[0].device_total_bytes);
    CHECK(tl.step_time > 0);
    REQUIRE(rank.ops.size() == 1);
    for (const Lifetime &l : rank.lifetimes) {
        CHECK(l.start >= 0);
        CHECK(l.end <= tl.step_time);
        CHECK(l.start <= l.end);
    }
    // 32 layers: a layer's working set lives half of one layer's time (attention, then MLP).
    CHECK(longestWorkingSet(rank) * 2 * 32 <= rank.busy_s * 1.000001);
    std::int64_t kvLayers = 0;
    for (const Lifetime &l : rank.lifetimes)
        kvLayers += l.kind == LifetimeKind::KvCache;
    CHECK(kvLayers == 32);
    CHECK_FALSE(rank.alive_at_peak.empty());

    // The training iteration of the same preset keeps each micro-batch's
    // activations from its forward to its backward: longer than any served
    // layer's working set is alive, relative to its own step.
    const Timeline training = simulateIteration(c);
    double longestSaved = 0;
    for (const Lifetime &l : training.ranks[0].lifetimes)
        if (l.kind == LifetimeKind::Activations)
            longestSaved = std::max(longestSaved, l.end - l.start);
    CHECK(longestSaved / training.step_time > 0.25);
    CHECK(longestWorkingSet(rank) / tl.step_time < 1.0 / 32);

    // The gantt lays it out like a training timeline.
    const GanttRows rows = ganttRows(tl, rank, RowMode::Groups);
    CHECK(rows.rowOf.size() == rank.lifetimes.size());
    CHECK(rows.rows.front().label.find("Weights") != std::string::npos);
}

TEST_CASE("A decode step finds the KV cache in place — pipeline ranks run one after another", "[inference][timeline]")
{
    const Config c = served("llama-3-70b",
                            {"inference.batch_size=8", "inference.context_length=8192",
                             "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=4"});
    const InferenceLedger ledger = computeInference(c);
    const Timeline decode = simulateInferenceForward(c, ServingPass::Decode);
    REQUIRE(decode.ranks.size() == 4);
    for (std::size_t r = 0; r < 4; ++r) {
        const RankTimeline &rank = decode.ranks[r];
        const InferenceRank &ir = ledger.ranks[r];
        // Everything but the activation row, plus the decode step's working set.
        CHECK(rank.peak_bytes == ir.device_total_bytes - ir.device[2] + ir.decode.total);
        for (const Lifetime &l : rank.lifetimes)
            if (l.kind == LifetimeKind::KvCache)
                CHECK(l.start == 0);
        if (r > 0)
            CHECK(rank.ops[0].start == Approx(decode.ranks[r - 1].ops[0].end));
    }
    const Timeline prefill = simulateInferenceForward(c);
    CHECK(prefill.step_time > decode.step_time);
}

TEST_CASE("The gantt gives a served forward one row per layer: its KV cache and its short working sets",
          "[inference][timeline][gantt]")
{
    // Llama-2-7B has 32 layers (Touvron et al. 2023, Table 1), all on one rank here.
    const Config c = served("llama-2-7b", {"training.seq_length=4096", "inference.batch_size=4"});
    for (const ServingPass pass : {ServingPass::Prefill, ServingPass::Decode}) {
        const Timeline tl = simulateInferenceForward(c, pass);
        const RankTimeline &rank = tl.ranks[0];
        const GanttRows rows = ganttRows(tl, rank, RowMode::Groups);
        std::vector<std::string> layerRows;
        for (const GanttRow &row : rows.rows)
            if (row.section == RowSection::Activations)
                layerRows.push_back(row.label);
        REQUIRE(layerRows.size() == 32);
        CHECK(layerRows.front() == "layer 0");
        CHECK(layerRows.back() == "layer 31");
        // Each layer row: one KV cache, alive to the end of the forward, and the
        // attention and MLP working sets, each alive for half of one layer's time.
        std::map<int, std::vector<const Lifetime *>> members;
        for (std::size_t i = 0; i < rank.lifetimes.size(); ++i)
            if (rows.rows[std::size_t(rows.rowOf[i])].section == RowSection::Activations)
                members[rows.rowOf[i]].push_back(&rank.lifetimes[i]);
        REQUIRE(members.size() == 32);
        for (const auto &[row, lives] : members) {
            REQUIRE(lives.size() == 3);
            int kv = 0;
            for (const Lifetime *l : lives) {
                CHECK(l->layer == lives.front()->layer);
                if (l->kind == LifetimeKind::KvCache) {
                    ++kv;
                    CHECK(l->end == Approx(tl.step_time));
                } else {
                    CHECK(l->kind == LifetimeKind::InferenceWorkingSet);
                    CHECK((l->end - l->start) * 2 * 32 <= rank.busy_s * 1.000001);
                }
            }
            CHECK(kv == 1);
        }
    }
    // A training iteration keeps its rows per micro-batch: no layer rows there.
    const Timeline training = simulateIteration(c);
    for (const GanttRow &row : ganttRows(training, training.ranks[0], RowMode::Groups).rows)
        CHECK(row.label.rfind("layer ", 0) != 0);
}

TEST_CASE("A served forward's phase names no micro-batch — a training iteration's names each one",
          "[inference][timeline][gantt]")
{
    const Config c = served("llama-3-70b",
                            {"inference.batch_size=8", "inference.context_length=8192",
                             "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=4"});
    const Timeline prefill = simulateInferenceForward(c, ServingPass::Prefill);
    const Timeline decode = simulateInferenceForward(c, ServingPass::Decode);
    CHECK(prefill.kind == TimelineKind::Prefill);
    CHECK(decode.kind == TimelineKind::Decode);
    // One pass per rank: one phase, tagged and titled by the pass.
    const std::vector<Phase> phases = phasesOf(prefill.ranks[1]);
    REQUIRE(phases.size() == 1);
    CHECK(phaseTag(prefill, phases[0]) == "Prefill");
    CHECK(phaseTag(decode, phasesOf(decode.ranks[1])[0]) == "Decode");
    CHECK(phaseTitle(prefill, phases[0]).find("micro-batch") == std::string::npos);
    CHECK(phaseTitle(decode, phasesOf(decode.ranks[1])[0]).find("micro-batch") == std::string::npos);

    // Training under interleaved 1F1B (p = 4, v = 2; 80 layers make 8 chunks of 10):
    // rank 0 opens with micro-batches 0-3 of its chunk 0, then 0-3 of its chunk 1
    // (Narayanan et al. 2021, Figure 4's order for p = 4).
    const Config t = served("llama-3-70b",
                            {"parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=4",
                             "parallelism.virtual_pipeline_model_parallel_size=2"});
    const Timeline iteration = simulateIteration(t);
    CHECK(iteration.kind == TimelineKind::Iteration);
    const std::vector<Phase> train = phasesOf(iteration.ranks[0]);
    REQUIRE(train.size() > 5);
    CHECK(phaseTag(iteration, train[0]) == "F0");
    CHECK(phaseTag(iteration, train[4]) == "F0.1");
    CHECK(phaseTitle(iteration, train[4]) == "Forward, micro-batch 0, chunk 1");
    CHECK(phaseTag(iteration, train.back()) == "Opt");
}
