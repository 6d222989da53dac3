// SPDX-License-Identifier: MIT
// The schedules that split the backward into B and W: zero-bubble ZB-H1,
// ZB-H2 and ZB-V (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", and
// the sail-sg/zero-bubble-pipeline-parallelism README; ZB-V: Qi et al. 2024)
// and DualPipe / DualPipeV (DeepSeek-V3 report §3.2.1, deepseek-ai/DualPipe
// README and dualpipe.py). Figures are the papers' and the README's tables.
#include "core/check/validate.h"
#include "core/config/editrules.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/ledger/scheduledledger.h"
#include "core/model/activations.h"
#include "core/planner/search.h"
#include "core/schedule/schedule.h"
#include "core/time/costmodel.h"
#include "core/time/passtimes.h"
#include "core/time/steptime.h"
#include "core/timeline/timeline.h"
#include "core/view/gantt.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace memledger;
using test::scenario;

namespace {

// Llama-3-70B on 128 H100s: t = 8, p = 4, d = 4, 128 micro-batches, selective recompute.
Config plan(const std::string &schedule, std::vector<std::string> more = {})
{
    more.push_back("parallelism.pipeline_schedule=" + schedule);
    const bool twoChunks = schedule == "zb-v" || schedule == "dualpipe" || schedule == "dualpipev";
    if (twoChunks)
        more.push_back("parallelism.virtual_pipeline_model_parallel_size=2");
    return scenario("llama-3-70b-128xh100", more);
}

Bytes mostActivations(const Ledger &l)
{
    Bytes most = 0;
    for (const RankLedger &r : l.ranks)
        most = std::max(most, r.device[static_cast<std::size_t>(Category::Activations)]);
    return most;
}

std::string render(const std::vector<PipelineOp> &ops)
{
    std::string s;
    for (const PipelineOp &op : ops) {
        const char *kind = op.kind == OpKind::Forward ? "F" : op.kind == OpKind::Weight ? "W" : "B";
        s += (s.empty() ? "" : " ") + std::string(kind) + std::to_string(op.microbatch);
    }
    return s;
}

} // namespace

TEST_CASE("ZB-H1 defers rank r's first r weight passes to the cool-down (Qi et al. 2023, Figure 3)", "[schedule][zb]")
{
    const ParallelismConfig par = test::pipelineOf(4, 1, PipelineSchedule::ZbH1);
    // The first rank runs each W right after its B, as 1F1B does; the last
    // holds three back and ends on them while the earlier ranks cool down.
    CHECK(render(scheduleOps(par, 6, 0)) == "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 B3 W3 B4 W4 B5 W5");
    CHECK(render(scheduleOps(par, 6, 3)) == "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 W3 W4 W5");
}

TEST_CASE("ZB-H2 fills the warm-up with 2(p - r) - 1 forwards, then B W F", "[schedule][zb]")
{
    const ParallelismConfig par = test::pipelineOf(3, 1, PipelineSchedule::ZbH2);
    CHECK(render(scheduleOps(par, 6, 0)) == "F0 F1 F2 F3 F4 B0 W0 F5 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5");
    CHECK(render(scheduleOps(par, 6, 2)) == "F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5");
}

TEST_CASE("DualPipeV follows deepseek-ai/DualPipe's eight steps", "[schedule][dualpipe]")
{
    // dualpipev.py, p = 4 ranks, 8 micro-batches: rank 0 runs (p - r - 1)·2 = 6
    // chunk-0 forwards (step 1), then r + 1 = 1 pair F0 F1 (step 2), then
    // p - r - 1 = 3 B1 W1 F1 (step 3, its W deferred), m - 2p + r + 1 = 1 main
    // step F0 B1 F1 B0, ...
    const ParallelismConfig par = test::pipelineOf(4, 2, PipelineSchedule::DualPipeV);
    const std::vector<PipelineOp> ops = scheduleOps(par, 8, 0);
    REQUIRE(ops.size() >= 8);
    for (std::size_t i = 0; i < 6; ++i)
        CHECK((ops[i].kind == OpKind::Forward && ops[i].chunk == 0 && ops[i].microbatch == std::int32_t(i)));
    CHECK((ops[6].kind == OpKind::Forward && ops[6].chunk == 0));
    CHECK((ops[7].kind == OpKind::Forward && ops[7].chunk == 1 && ops[7].microbatch == 0));
    CHECK((ops[8].kind == OpKind::Backward && ops[8].chunk == 1 && ops[8].deferredWeight));
    CHECK((ops[9].kind == OpKind::Weight && ops[9].chunk == 1 && ops[9].microbatch == 0));
    // The last rank starts at the bottom of the V: F0 then F1 at once.
    const std::vector<PipelineOp> last = scheduleOps(par, 8, 3);
    CHECK((last[0].kind == OpKind::Forward && last[0].chunk == 0));
    CHECK((last[1].kind == OpKind::Forward && last[1].chunk == 1));
}

TEST_CASE("Every split schedule runs each F, B and W once, W after its B, B after its F", "[schedule][zb]")
{
    for (PipelineSchedule s : {PipelineSchedule::ZbH1, PipelineSchedule::ZbH2, PipelineSchedule::ZbV,
                               PipelineSchedule::DualPipe, PipelineSchedule::DualPipeV}) {
        const bool two
            = s == PipelineSchedule::ZbV || s == PipelineSchedule::DualPipe || s == PipelineSchedule::DualPipeV;
        for (std::int64_t p : {2, 4, 8}) {
            for (std::int64_t m : {2 * p, 3 * p, 8 * p}) {
                if (s == PipelineSchedule::DualPipe && m % 2 != 0)
                    continue;
                const ParallelismConfig par = test::pipelineOf(p, two ? 2 : 1, s);
                const std::int64_t perChunk = microBatchesPerDirection(par, m);
                INFO(scheduleName(s) << " p=" << p << " m=" << m);
                for (std::int64_t r = 0; r < p; ++r) {
                    std::map<std::tuple<int, int, int>, int> at; // (kind, chunk, mb) -> index
                    const std::vector<PipelineOp> ops = scheduleOps(par, m, r);
                    for (std::size_t i = 0; i < ops.size(); ++i) {
                        const auto key = std::tuple{int(ops[i].kind), int(ops[i].chunk), int(ops[i].microbatch)};
                        CHECK(at.count(key) == 0);
                        at[key] = int(i);
                    }
                    for (int k = 0; k < (two ? 2 : 1); ++k)
                        for (int j = 0; j < perChunk; ++j) {
                            const auto f = at.find({int(OpKind::Forward), k, j});
                            const auto b = at.find({int(OpKind::Backward), k, j});
                            REQUIRE(f != at.end());
                            REQUIRE(b != at.end());
                            CHECK(f->second < b->second);
                            const auto w = at.find({int(OpKind::Weight), k, j});
                            if (ops[std::size_t(b->second)].deferredWeight) {
                                REQUIRE(w != at.end());
                                CHECK(b->second < w->second);
                            } else {
                                CHECK(w == at.end());
                            }
                        }
                }
            }
        }
    }
}

TEST_CASE("ZB-V's fill timed by unequal passes and sends finishes, each op once, in dependency order", "[schedule][zb]")
{
    // The authors' scheduler takes the profiled F, B, W and send times (Qi et
    // al. 2024; scheduler/zbv.py). A W about half of B, a last stage a tenth
    // longer, and a send a tenth of a pass: a fill that let shallow forwards
    // take every slot before the deeper chunk's first forward arrived would
    // never finish.
    for (std::int64_t p : {2, 4, 8}) {
        for (std::int64_t m : {2 * p, 8 * p}) {
            INFO("p=" << p << " m=" << m);
            PassTimes times{.passes = {}, .sendSeconds = 0.1};
            for (std::int64_t r = 0; r < p; ++r)
                times.passes.push_back({{.forward = 1.0, .inputGradient = 1.1, .weight = 0.6},
                                        {.forward = r == 0 ? 1.1 : 1.0, .inputGradient = 1.1, .weight = 0.6}});
            const std::vector<std::vector<PipelineOp>> all
                = scheduleAllOps(test::pipelineOf(p, 2, PipelineSchedule::ZbV), m, 0.5, times);
            REQUIRE(all.size() == std::size_t(p));
            for (const std::vector<PipelineOp> &ops : all) {
                std::map<std::tuple<int, int, int>, std::size_t> at;
                for (std::size_t i = 0; i < ops.size(); ++i)
                    CHECK(
                        at.emplace(std::tuple{int(ops[i].kind), int(ops[i].chunk), int(ops[i].microbatch)}, i).second);
                CHECK(ops.size() == std::size_t(6 * m));
                for (int k = 0; k < 2; ++k)
                    for (int j = 0; j < m; ++j) {
                        const auto f = at.find({int(OpKind::Forward), k, j});
                        const auto b = at.find({int(OpKind::Backward), k, j});
                        const auto w = at.find({int(OpKind::Weight), k, j});
                        REQUIRE((f != at.end() && b != at.end() && w != at.end()));
                        CHECK(f->second < b->second);
                        CHECK(b->second < w->second);
                    }
            }
        }
    }
}

TEST_CASE("ZB-V's fill with passes of equal seconds is the handcrafted unit-time schedule", "[schedule][zb]")
{
    // Only the ratios of the times matter: three seconds a pass and no send
    // make the same choices as one unit a pass.
    const ParallelismConfig par = test::pipelineOf(4, 2, PipelineSchedule::ZbV);
    PassTimes times;
    times.passes.assign(4, {{3.0, 3.0, 3.0}, {3.0, 3.0, 3.0}});
    CHECK(scheduleAllOps(par, 16, 0.5, times) == scheduleAllOps(par, 16, 0.5));
}

TEST_CASE("On every shipped scenario a zero-bubble schedule waits no longer than 1F1B", "[timeline][zb][scenarios]")
{
    // Qi et al. 2023 and 2024: ZB-H1, ZB-H2 and ZB-V fill 1F1B's bubble with
    // deferred weight passes; none adds one. Each scenario switched to each
    // schedule as the control panel switches it (setSchedule: its chunks per
    // rank come along), where the plan stays valid. What the pipeline adds to
    // the busiest rank's work (its waits) and the ranks' idle share are at
    // most 1F1B's. The default Llama plan with ZB-V had waited 6.82 s against
    // 1F1B's 0.86 s: its order had been chosen for equal F, B and W times.
    const auto switched = [](Config c, PipelineSchedule s) -> std::optional<Config> {
        setSchedule(c.parallelism, s);
        if (hasErrors(validate(c)))
            return std::nullopt;
        return c;
    };
    const auto waits = [](const Timeline &tl) {
        double busiest = 0;
        for (const RankTimeline &r : tl.ranks)
            busiest = std::max(busiest, r.busy_s);
        return tl.pipeline_time - busiest;
    };
    int compared = 0;
    for (const std::string &name : builtinNames("scenarios")) {
        const std::optional<Config> oneF = switched(scenario(name), PipelineSchedule::OneFOneB);
        if (!oneF || oneF->parallelism.pipeline_model_parallel_size < 2)
            continue;
        const Timeline base = simulateIteration(*oneF);
        for (PipelineSchedule s : {PipelineSchedule::ZbH1, PipelineSchedule::ZbH2, PipelineSchedule::ZbV}) {
            const std::optional<Config> zb = switched(scenario(name), s);
            if (!zb)
                continue;
            INFO(name << " " << scheduleName(s));
            const Timeline tl = simulateIteration(*zb);
            CHECK(waits(tl) <= waits(base));
            CHECK(tl.bubble_fraction <= base.bubble_fraction);
            ++compared;
        }
    }
    // Llama-3-70B, GPT-3 twice and Mixtral run all three; the other pipelines ZB-H1 and ZB-H2.
    CHECK(compared >= 16);
}

TEST_CASE("ZB-H1 holds 1F1B's peak activations, ZB-H2 (2p - 1)/p of them (Qi et al. 2023, Table 1)", "[ledger][zb]")
{
    const Ledger oneF = computeLedger(plan("1f1b"));
    const Ledger h1 = computeLedger(plan("zb-h1"));
    const Ledger h2 = computeLedger(plan("zb-h2"));
    const std::int64_t p = 4;
    // Rank r: p - r groups either way; ZB-H1's later ranks hold their deferred
    // Ws' operands too, never more than the first rank's peak (pM_B).
    for (std::int64_t r = 0; r < p; ++r)
        CHECK(h1.ranks[std::size_t(r)].in_flight_chunks == p - r);
    const Bytes peak1F1B = oneF.ranks[0].device[static_cast<std::size_t>(Category::Activations)];
    CHECK(double(mostActivations(h1)) <= 1.03 * double(peak1F1B));
    CHECK(double(mostActivations(h1)) >= double(peak1F1B));
    // ZB-H2: 2p - 1 on the first rank, 2(p - r) - 1 on rank r.
    for (std::int64_t r = 0; r < p; ++r)
        CHECK(h2.ranks[std::size_t(r)].in_flight_chunks == 2 * (p - r) - 1);
    const Bytes layers1F1B = test::entryBytes(oneF.ranks[0], Category::Activations, "Transformer layers");
    const Bytes layersH2 = test::entryBytes(h2.ranks[0], Category::Activations, "Transformer layers");
    CHECK(double(layersH2) == Approx(double(layers1F1B) * double(2 * p - 1) / double(p)));
    // The explanation names the deferred W's operands where they are held.
    CHECK(test::entryBytes(h1.ranks[3], Category::Activations, "Inputs of deferred weight passes") > 0);
}

TEST_CASE("ZB-V spreads 1F1B's first-rank activations over every rank (Qi et al. 2024: 1x, balanced)", "[ledger][zb]")
{
    const Ledger oneF = computeLedger(plan("1f1b"));
    const Ledger v = computeLedger(plan("zb-v"));
    const double peak1F1B = double(oneF.ranks[0].device[static_cast<std::size_t>(Category::Activations)]);
    for (const RankLedger &r : v.ranks) {
        INFO("rank " << r.pipeline_rank);
        const double acts = double(r.device[static_cast<std::size_t>(Category::Activations)]);
        // Within 1F1B's first rank (its output-layer extras on rank 0 aside) and
        // far above 1F1B's last rank: the V evens the staircase out.
        CHECK(acts <= 1.03 * peak1F1B);
        CHECK(acts >= 0.9 * peak1F1B);
        CHECK(r.in_flight_chunks <= 2 * 4);
    }
}

TEST_CASE("The ledger given the timeline's op order is the ledger that schedules its own", "[ledger][zb]")
{
    // The timeline schedules once and hands the order over (scheduledledger.h);
    // the step time and the search order the plan as the timeline does
    // (scheduledOps), so their ledgers are the simulated iteration's.
    for (const char *schedule : {"1f1b", "zb-h1", "zb-h2", "zb-v", "dualpipev"}) {
        CAPTURE(schedule);
        const Config c = plan(schedule);
        const Ledger given = computeLedger(c, scheduledOps(c, costModel(c)));
        const Ledger simulated = simulateIteration(c).ledger;
        REQUIRE(given.ranks.size() == simulated.ranks.size());
        for (std::size_t r = 0; r < simulated.ranks.size(); ++r) {
            CHECK(given.ranks[r].device_total_bytes == simulated.ranks[r].device_total_bytes);
            CHECK(given.ranks[r].in_flight_chunks == simulated.ranks[r].in_flight_chunks);
        }
        // The schedules whose order does not depend on times schedule the same by themselves.
        if (std::string(schedule) != "zb-v") {
            const Ledger own = computeLedger(c);
            for (std::size_t r = 0; r < own.ranks.size(); ++r)
                CHECK(own.ranks[r].device_total_bytes == simulated.ranks[r].device_total_bytes);
        }
    }
}

TEST_CASE("DualPipe: 2x parameters and PP + 1 stage-micro-batches per rank (deepseek-ai/DualPipe README)",
          "[ledger][dualpipe]")
{
    const Ledger oneF = computeLedger(plan("1f1b"));
    const Ledger dual = computeLedger(plan("dualpipe"));
    const std::int64_t p = 4;
    // Rank 1 holds no embedding in either plan: two stages' copies against one.
    CHECK(test::entryBytes(dual.ranks[1], Category::Weights, "Transformer layers")
          == 2 * test::entryBytes(oneF.ranks[1], Category::Weights, "Transformer layers"));
    std::int64_t most = 0;
    for (const RankLedger &r : dual.ranks) {
        most = std::max(most, r.in_flight_chunks);
        CHECK(r.in_flight_microbatches == double(r.in_flight_chunks)); // each chunk is a whole stage
    }
    CHECK(most == p + 1);
    // Both ends of the pipe hold an embedding and an output layer: one of each direction.
    for (int r : {0, 3}) {
        INFO("rank " << r);
        CHECK(test::entryBytes(dual.ranks[std::size_t(r)], Category::Weights, "Embeddings") > 0);
        CHECK(test::entryBytes(dual.ranks[std::size_t(r)], Category::Weights, "Output layer and final norm") > 0);
    }
}

TEST_CASE("DualPipeV on p ranks holds what DualPipe holds on 2p ('the same on half the devices')", "[ledger][dualpipe]")
{
    const Ledger dualV = computeLedger(plan("dualpipev"));
    const Ledger dual8 = computeLedger(plan("dualpipe", {"parallelism.pipeline_model_parallel_size=8"}));
    CHECK(test::entryBytes(dualV.ranks[1], Category::Weights, "Transformer layers")
          == test::entryBytes(dual8.ranks[1], Category::Weights, "Transformer layers"));
    std::int64_t mostV = 0, most8 = 0;
    for (const RankLedger &r : dualV.ranks)
        mostV = std::max(mostV, r.in_flight_chunks);
    for (const RankLedger &r : dual8.ranks)
        most8 = std::max(most8, r.in_flight_chunks);
    CHECK(mostV == 2 * 4 + 1); // PP + 1 with PP = 2p
    CHECK(most8 == 8 + 1);
}

TEST_CASE("Bubbles: the README's rates with T_F = T_B = T_W, and the papers' formulas otherwise", "[steptime][zb]")
{
    const double p = 8;
    // One unit per pass and stage (per chunk for the two-chunk schedules, whose rank totals are twice).
    CHECK(pipelineBubbleSeconds(PipelineSchedule::OneFOneB, p, 1, 1, 1, 1) == Approx((p - 1) * 3));
    CHECK(pipelineBubbleSeconds(PipelineSchedule::ZbH1, p, 1, 1, 1, 1) == Approx(p - 1)); // (p-1)/3m of 3m
    CHECK(pipelineBubbleSeconds(PipelineSchedule::ZbH2, p, 1, 1, 1, 1) == 0.0);
    CHECK(pipelineBubbleSeconds(PipelineSchedule::ZbV, p, 2, 2, 2, 2) == 0.0);
    // DualPipe's B is a full backward (B + W): (p/2 - 1)(F&B + B - 3W) = 3 (3 + 2 - 3) per chunk.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipe, p, 2, 2, 2, 2) == Approx((p / 2 - 1) * 2));
    // Qi et al. Table 1: ZB-H1 (p-1)(T_F + T_B - T_W), ZB-H2 (p-1)(T_F + T_B - 2T_W).
    CHECK(pipelineBubbleSeconds(PipelineSchedule::ZbH1, p, 1, 1, 2, 0.5) == Approx((p - 1) * 2.5));
    CHECK(pipelineBubbleSeconds(PipelineSchedule::ZbH2, p, 1, 1, 2, 0.5) == Approx((p - 1) * 2.0));
    // DualPipe README: (PP/2 - 1)(F&B + B - 3W) per chunk, B a full backward chunk; F = 1,
    // input gradients 1 and W = 0.5 per chunk: B = 1.5, F&B = F + B = 2.5, 2.5 + 1.5 - 1.5 = 2.5.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipe, p, 2, 2, 2, 1) == Approx((p / 2 - 1) * 2.5));
    // DualPipeV is DualPipe on 2p ranks cut in half.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipeV, p, 2, 2, 2, 1)
          == Approx(pipelineBubbleSeconds(PipelineSchedule::DualPipe, 2 * p, 2, 2, 2, 1)));
}

TEST_CASE("The step time shrinks with the bubble: 1F1B > ZB-H1 > ZB-H2", "[steptime][zb]")
{
    const StepTime a = estimateStepTime(plan("1f1b"));
    const StepTime b = estimateStepTime(plan("zb-h1"));
    const StepTime c = estimateStepTime(plan("zb-h2"));
    CHECK(a.bubble > b.bubble);
    CHECK(b.bubble > c.bubble);
    CHECK(a.total > b.total);
    CHECK(b.total > c.total);
    CHECK(a.compute == Approx(b.compute));
}

TEST_CASE("The timeline runs every split schedule — a deferred W keeps its operands from its B to its end",
          "[timeline][zb]")
{
    for (const std::string s : {"zb-h1", "zb-h2", "zb-v", "dualpipe", "dualpipev"}) {
        INFO(s);
        const Config c = plan(s, {"training.global_batch_size=64"});
        const Timeline tl = simulateIteration(c);
        REQUIRE(tl.ranks.size() == 4);
        std::size_t weights = 0, operands = 0;
        for (const RankTimeline &r : tl.ranks) {
            for (const TimedOp &op : r.ops) {
                weights += op.op.kind == OpKind::Weight;
                CHECK(op.end >= op.start);
            }
            for (const Lifetime &l : r.lifetimes)
                if (l.kind == LifetimeKind::WeightPassInputs) {
                    ++operands;
                    CHECK(l.end > l.start);
                }
            // The simulated peak agrees with the ledger's within a few per cent.
            const RankLedger &lr = tl.ledger.ranks[std::size_t(r.pipeline_rank)];
            CHECK(double(r.peak_bytes) == Approx(double(lr.device_total_bytes)).epsilon(0.06));
        }
        CHECK(weights > 0);
        CHECK(operands > 0);
    }
}

TEST_CASE("Invalid zero-bubble and DualPipe plans name the field and the valid values", "[validate][zb]")
{
    const auto errorsOf = [](const std::vector<std::string> &sets) {
        nlohmann::json doc = test::scenarioDoc("llama-3-70b-128xh100");
        for (const std::string &s : sets)
            REQUIRE(applyOverride(doc, s).empty());
        LoadResult r = presetFromJson(doc);
        REQUIRE(r.config.has_value());
        std::vector<std::string> out;
        for (const Problem &p : validate(*r.config))
            if (p.isError())
                out.push_back(p.toString());
        return out;
    };
    const auto mentions = [](const std::vector<std::string> &errors, const std::string &what) {
        return std::any_of(errors.begin(), errors.end(),
                           [&](const std::string &e) { return e.find(what) != std::string::npos; });
    };
    // ZB-V needs exactly two chunks per rank.
    CHECK(
        mentions(errorsOf({"parallelism.pipeline_schedule=zb-v"}), "parallelism.virtual_pipeline_model_parallel_size"));
    CHECK(mentions(errorsOf({"parallelism.pipeline_schedule=zb-v"}), "set virtual_pipeline_model_parallel_size to 2"));
    // ... and an even split of the layers into 2p chunks: 80 layers over 2·3 do not divide.
    CHECK(mentions(errorsOf({"parallelism.pipeline_schedule=zb-v", "parallelism.virtual_pipeline_model_parallel_size=2",
                             "parallelism.pipeline_model_parallel_size=3"}),
                   "model.num_layers"));
    // ... and the nearest valid values are pipeline sizes: 2p | 80 means p | 40, so 2 or 4 around p = 3.
    CHECK(mentions(errorsOf({"parallelism.pipeline_schedule=zb-v", "parallelism.virtual_pipeline_model_parallel_size=2",
                             "parallelism.pipeline_model_parallel_size=3"}),
                   "pipeline_model_parallel_size 2 or 4"));
    // DualPipe pairs rank r with p - 1 - r: an odd p is refused with its neighbours offered.
    const auto odd
        = errorsOf({"parallelism.pipeline_schedule=dualpipe", "parallelism.virtual_pipeline_model_parallel_size=2",
                    "parallelism.pipeline_model_parallel_size=5"});
    CHECK(mentions(odd, "parallelism.pipeline_model_parallel_size"));
    CHECK(mentions(odd, "4 or 6"));
    // Too few micro-batches: DualPipe needs at least 2p, an even number.
    const auto few = errorsOf({"parallelism.pipeline_schedule=dualpipe",
                               "parallelism.virtual_pipeline_model_parallel_size=2", "training.global_batch_size=24"});
    CHECK(mentions(few, "training.global_batch_size"));
    CHECK(mentions(few, "at least 2p = 8"));
    // ZB-H1 with interleaving's chunks is not a schedule.
    CHECK(mentions(
        errorsOf({"parallelism.pipeline_schedule=zb-h1", "parallelism.virtual_pipeline_model_parallel_size=2"}),
        "parallelism.pipeline_schedule"));
}

TEST_CASE("DualPipe's chunks are named by direction in the timeline and the gantt", "[timeline][dualpipe]")
{
    const Timeline tl = simulateIteration(plan("dualpipe", {"training.global_batch_size=64"}));
    const GanttRows rows = ganttRows(tl, tl.ranks[0], RowMode::Groups);
    bool forward = false, reverse = false;
    for (const GanttRow &row : rows.rows) {
        forward |= row.label.find(" fwd") != std::string::npos;
        reverse |= row.label.find(" rev") != std::string::npos;
    }
    CHECK(forward);
    CHECK(reverse);
    bool named = false;
    for (const AliveItem &a : tl.ranks[0].alive_at_peak)
        named |= a.label.find("direction") != std::string::npos;
    CHECK(named);
}

TEST_CASE("The search tries the split schedules on its fastest plans and says what became of each", "[search][zb]")
{
    SearchOptions options;
    options.gpus = 128;
    options.top = 5;
    options.maxVirtual = 4; // interleaving as deep as Narayanan et al. (2021) measured it (test_searchschedules.cpp)
    options.margin = 0.8; // the limit and the allocator of test_searchschedules.cpp's cases, as there
    const SearchResult r
        = searchPlans(scenario("llama-3-70b-128xh100", {"strategy.allocator.expandable_segments=true"}), options);
    REQUIRE_FALSE(r.plans.empty());
    for (PipelineSchedule s : {PipelineSchedule::ZbH1, PipelineSchedule::ZbH2, PipelineSchedule::ZbV,
                               PipelineSchedule::DualPipe, PipelineSchedule::DualPipeV}) {
        const std::string name = "Schedule " + std::string(scheduleName(s)) + ": ";
        CHECK(std::count_if(r.notes.begin(), r.notes.end(), [&](const std::string &n) { return n.rfind(name, 0) == 0; })
              == 1);
    }
    // Best first by step time, every plan valid, under the margin, and its schedule's bubble in its time.
    bool split = false;
    for (std::size_t i = 0; i < r.plans.size(); ++i) {
        const SearchPlan &p = r.plans[i];
        CHECK_FALSE(hasErrors(validate(p.config)));
        CHECK(double(p.ledger.peak_bytes) <= options.margin * double(p.config.hardware.hbm_bytes));
        CHECK(p.time.total == Approx(estimateStepTime(p.config).total));
        if (i > 0)
            CHECK(r.plans[i - 1].time.total <= p.time.total);
        split |= splitsBackward(p.config.parallelism.schedule());
    }
    // With equal layer work and a ZB-V bubble near zero, some split schedule beats interleaving here.
    CHECK(split);
}

TEST_CASE("The gantt's phase strip draws a deferred W apart from its B", "[gantt][zb]")
{
    // Llama-3-70B, p = 4, d = 4 over a global batch of 512 with micro-batch 1:
    // 512 / 4 = 128 micro-batches per replica. ZB-H1 splits every backward, so
    // each rank runs 128 F, 128 B and 128 W; 1F1B runs no W at all.
    const Timeline zb = simulateIteration(plan("zb-h1"));
    REQUIRE(zb.ranks.size() == 4);
    const auto count = [](const std::vector<Phase> &phases, PhaseKind kind) {
        return std::count_if(phases.begin(), phases.end(), [&](const Phase &p) { return p.kind == kind; });
    };
    for (const RankTimeline &rank : zb.ranks) {
        const std::vector<Phase> phases = phasesOf(rank);
        CHECK(count(phases, PhaseKind::Forward) == 128);
        CHECK(count(phases, PhaseKind::Backward) == 128);
        CHECK(count(phases, PhaseKind::Weight) == 128);
    }
    CHECK(phaseLabel(PhaseKind::Weight) == "Weight gradients");
    const Timeline oneF = simulateIteration(plan("1f1b"));
    CHECK(count(phasesOf(oneF.ranks[0]), PhaseKind::Weight) == 0);
}
