// SPDX-License-Identifier: MIT
// DualPipe's and DualPipeV's memory, counted by hand from the step formulas
// of deepseek-ai/DualPipe's step() (dualpipe/dualpipe.py; dualpipe/dualpipev.py
// has the same eight steps with the full rank count along the V), and held
// to the README's table: "DualPipe: 2× parameters, PP + 1 activations".
//
// dualpipe.py, with H = PP/2 half ranks, h = min(rank, PP − 1 − rank) and m'
// micro-batches per direction (half_num_chunks):
//   step 1 nF0       (H − h − 1)·2 forwards of phase 0
//   step 2 nF0F1     h + 1 pairs F0 F1
//   step 3 nB1W1F1   H − h − 1 × (B1 with enable_zb=True, W at once, F1)
//   step 4 nF0B1F1B0 m' − PP + h + 1 × (F0 & B1, F1 & B0), no zero bubble
//   step 5 nB1F1B0   H − h − 1 × (B1, F1 & B0), no zero bubble
//   step 6 nB1B0     h + 1 × (B1, B0), enable_zb from the middle iteration on
//   step 7 nWB0      H − h − 1 × (W, B0 with enable_zb=True)
//   step 8 nW        h + 1 × W
// WeightGradStore queues one entry per enable_zb backward and W pops the oldest.
#include "core/ledger/ledger.h"
#include "core/model/activations.h"
#include "core/schedule/schedule.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace memledger;
using test::scenario;

namespace {

struct Counted
{
    std::int64_t mostAlive = 0; // chunk-micro-batches whose forward ran and whose backward has not
    std::int64_t mostPending = 0; // deferred weight passes queued at once
    std::int64_t aliveAtMostPending = -1; // chunk-micro-batches alive when the queue first reaches its most
};

Counted countAlong(const std::vector<PipelineOp> &ops)
{
    Counted c;
    std::int64_t alive = 0, pending = 0;
    for (const PipelineOp &op : ops) {
        if (op.kind == OpKind::Forward)
            ++alive;
        if (op.kind == OpKind::Backward) {
            --alive;
            pending += op.deferredWeight ? 1 : 0;
        }
        if (op.kind == OpKind::Weight)
            --pending;
        c.mostAlive = std::max(c.mostAlive, alive);
        if (pending > c.mostPending) {
            c.mostPending = pending;
            c.aliveAtMostPending = alive;
        }
    }
    return c;
}

// Llama-3-70B (80 layers) on p = 4 under DualPipe: 4 stages of 20 layers, each
// rank one stage of each direction; 128 micro-batches, 64 each way.
Config dualPipePlan(std::vector<std::string> more)
{
    more.push_back("parallelism.pipeline_schedule=dualpipe");
    more.push_back("parallelism.virtual_pipeline_model_parallel_size=2");
    return scenario("llama-3-70b-128xh100", more);
}

} // namespace

TEST_CASE("DualPipe: in-flight chunks and deferred Ws per rank as dualpipe.py's steps give them",
          "[schedule][dualpipe]")
{
    for (std::int64_t p : {2, 4, 8, 16}) {
        const std::int64_t H = p / 2;
        for (std::int64_t perDirection : {p, p + 3, std::int64_t(32)}) {
            const ParallelismConfig par = test::pipelineOf(p, 2, PipelineSchedule::DualPipe);
            for (std::int64_t r = 0; r < p; ++r) {
                INFO("p=" << p << " m'=" << perDirection << " rank " << r);
                const std::int64_t h = std::min(r, p - 1 - r);
                const Counted c = countAlong(scheduleOps(par, 2 * perDirection, r));
                // Steps 1 and 2 run 2(H − h − 1) + 2(h + 1) = 2H = p forwards before
                // any backward; step 3 (B1 W F1) keeps p; step 4's first F0 runs
                // before its B1 frees one (m' ≥ PP makes step 4 at least h + 1 ≥ 1
                // long): p + 1, on every rank. Steps 5–8 add no forward beyond a backward.
                CHECK(c.mostAlive == p + 1);
                // Step 3 queues one W and pops it at once: 1. Step 6 defers its
                // second half: h odd, both Bs of iterations (h+1)/2 .. h: h + 1;
                // h even, B0 of iteration h/2 and both Bs after: 1 + 2·(h/2) = h + 1.
                // Step 7 pops one and queues one: still h + 1; step 8 drains h + 1.
                CHECK(c.mostPending == std::max<std::int64_t>(1, h + 1));
                // The queue is longest after step 6, when p − (H − h − 1) − 2(h + 1)
                // = H − h − 1 chunk-micro-batches are left (step 4 ends at p, step 5
                // frees one per iteration, step 6 two): none on the middle ranks.
                if (h + 1 > 1)
                    CHECK(c.aliveAtMostPending == H - h - 1);
            }
        }
    }
}

TEST_CASE("DualPipeV: the same steps along a V of 2p stages (dualpipev.py)", "[schedule][dualpipe]")
{
    // dualpipev.py runs the eight steps with num_ranks = p ranks and num_chunks
    // = m micro-batches in place of H and m': step 1 is 2(p − r − 1) forwards,
    // step 4 m − 2p + r + 1 main steps. The count above with H = p: 2p + 1
    // chunk-micro-batches ("PP + 1" with PP = 2p stages), r + 1 deferred Ws.
    for (std::int64_t p : {2, 4, 8}) {
        for (std::int64_t m : {2 * p, 2 * p + 3, std::int64_t(40)}) {
            const ParallelismConfig par = test::pipelineOf(p, 2, PipelineSchedule::DualPipeV);
            for (std::int64_t r = 0; r < p; ++r) {
                INFO("p=" << p << " m=" << m << " rank " << r);
                const Counted c = countAlong(scheduleOps(par, m, r));
                CHECK(c.mostAlive == 2 * p + 1);
                CHECK(c.mostPending == std::max<std::int64_t>(1, r + 1));
                if (r + 1 > 1)
                    CHECK(c.aliveAtMostPending == p - r - 1);
            }
        }
    }
}

TEST_CASE("DualPipe with every activation stored holds the README's PP + 1 stage-micro-batches on every rank",
          "[ledger][dualpipe]")
{
    // The README's table counts stored activations. With nothing recomputed a
    // deferred W keeps less than its chunk's group (the linear inputs and their
    // output gradients), so the queue's h + 1 Ws over H − h − 1 groups never
    // outweigh p + 1 groups: each rank's layer activations are (p + 1) stages ×
    // 20 layers × one layer's saved bytes, and no deferred-W row is at the peak.
    const Config c = dualPipePlan({"strategy.recompute_granularity=none"});
    const Ledger l = computeLedger(c);
    const LayerActivations layer = layerActivations(c, false, false);
    const std::int64_t p = 4, layers = 80 / p;
    REQUIRE(double(layer.weightPass) < double(layer.kept)); // the premise, not the result
    for (const RankLedger &r : l.ranks) {
        INFO("rank " << r.pipeline_rank);
        CHECK(r.in_flight_chunks == p + 1);
        CHECK(test::entryBytes(r, Category::Activations, "Transformer layers") == (p + 1) * layers * layer.kept);
        CHECK(test::entryBytes(r, Category::Activations, "Inputs of deferred weight passes") == 0);
    }
}

TEST_CASE("DualPipe under full recompute: the middle ranks peak on step 6's deferred Ws, not on PP + 1",
          "[ledger][dualpipe]")
{
    // Full recompute keeps one layer input per layer, but a deferred W keeps
    // the recomputed linear inputs and output gradients of its whole chunk. On
    // the middle ranks (h = H − 1 = 1 at p = 4) step 6 leaves h + 1 = 2 Ws
    // queued and no group alive (H − h − 1 = 0): the peak is 2 chunks × 20
    // layers × one layer's W operands, far above (p + 1) checkpoints. This is
    // why the DeepSeek-V3 DualPipe scenario does not run full recompute.
    const Config c = dualPipePlan({"strategy.recompute_granularity=full", "strategy.recompute_method=uniform",
                                   "strategy.recompute_num_layers=1"});
    const Ledger l = computeLedger(c);
    const LayerActivations layer = layerActivations(c, false, false);
    const std::int64_t layers = 20;
    for (int r : {1, 2}) {
        INFO("rank " << r);
        CHECK(test::entryBytes(l.ranks[std::size_t(r)], Category::Activations, "Inputs of deferred weight passes")
              == 2 * layers * layer.weightPass);
        CHECK(l.ranks[std::size_t(r)].in_flight_chunks == 0);
    }
    // The end ranks (h = 0) queue one W at a time; their peak is the p + 1 checkpoints' side.
    CHECK(test::entryBytes(l.ranks[0], Category::Activations, "Inputs of deferred weight passes")
          <= layers * layer.weightPass);
}

TEST_CASE("The DeepSeek-V3 DualPipe scenario holds PP + 1 = 17 stage-micro-batches on every rank and fits",
          "[ledger][dualpipe][scenario]")
{
    // FP8 linear inputs, recomputed RMSNorm outputs and MLA up-projections,
    // FP8 SwiGLU inputs, the E5M6 attention output (report §3.2.3, §3.3.3),
    // and deferred weight passes that keep FP8 output gradients: no W queue
    // outweighs the p + 1 groups, so ranks 1 to 14 (two MoE stages of 4
    // layers each) hold 17 × 4 layers × one MoE layer's kept bytes, the
    // description's 43.6 GB, as the DualPipe README's "PP + 1" says.
    const Config c = scenario("deepseek-v3-2048xh100-dualpipe");
    const Ledger l = computeLedger(c);
    const LayerActivations moe = layerActivations(c, true, false);
    for (std::size_t r = 1; r <= 14; ++r) {
        INFO("rank " << r);
        CHECK(l.ranks[r].in_flight_chunks == 16 + 1);
        CHECK(test::entryBytes(l.ranks[r], Category::Activations, "Transformer layers") == 17 * 4 * moe.kept);
        CHECK(test::entryBytes(l.ranks[r], Category::Activations, "Inputs of deferred weight passes") == 0);
    }
    CHECK(double(17 * 4 * moe.kept) == Approx(43.6e9).epsilon(0.001));
    CHECK(l.fits());
    // Transformer Engine's delayed wgrad keeps its quantised output gradient
    // in both usages, about the 16-bit size: then the middle ranks (h = 7)
    // peak at the start of step 8 on h + 1 = 8 queued weight passes.
    Config te = c;
    te.strategy.deferred_wgrad_grad = DeferredWgradGrad::Activation;
    const Ledger lt = computeLedger(te);
    const LayerActivations moeTe = layerActivations(te, true, false);
    for (std::size_t r : {7, 8}) {
        INFO("rank " << r);
        CHECK(lt.ranks[r].in_flight_chunks == 0);
        CHECK(test::entryBytes(lt.ranks[r], Category::Activations, "Inputs of deferred weight passes")
              == 8 * 4 * moeTe.weightPass);
    }
    CHECK_FALSE(lt.fits());
}

TEST_CASE("A deferred weight pass keeps FP8 output gradients where the framework quantises them once for W",
          "[activations][dualpipe][fp8]")
{
    // DeepSeek-V3's MoE layer, per token: output gradients of the MLA
    // down-projections (1,536 + 512 + 64), up-projections (128 × 192 and
    // 128 × (128 + 128)) and output projection (7,168); of the 8 routed copies'
    // fc1 (2 × 2,048) and fc2 (7,168); of the shared expert's fc1 and fc2:
    // 2,112 + 24,576 + 32,768 + 7,168 + 8 × 11,264 + 11,264 = 168,000
    // elements, × 4,096 tokens. 16-bit: 2 B each; FP8 with 1×128 tiles:
    // 1 B + 4 B / 128 = 1.03125 B.
    const Config c = scenario("deepseek-v3-2048xh100-dualpipe");
    Config bf16 = c;
    bf16.strategy.deferred_wgrad_grad = DeferredWgradGrad::Activation;
    const Bytes fp8 = layerActivations(c, true, false).weightPass;
    const Bytes wide = layerActivations(bf16, true, false).weightPass;
    const double elements = 168000.0 * 4096;
    CHECK(double(wide - fp8) == Approx(elements * (2 - 1.03125)));
}
