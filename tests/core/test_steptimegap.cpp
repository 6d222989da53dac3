// SPDX-License-Identifier: MIT
// The step-time model (estimateStepTime) and the simulated iteration
// (simulateIteration) of one plan: where they model the same thing they must
// agree, and stepTimeGap says why they still differ. The counts are done by
// hand from the shipped DeepSeek-V3 scenarios' layouts, dualpipe.py's step
// counts and the DualPipe README's bubble formula.
#include "core/formats/builtins.h"
#include "core/model/parameters.h"
#include "core/schedule/schedule.h"
#include "core/time/costmodel.h"
#include "core/time/steptime.h"
#include "core/timeline/steptimegap.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

using namespace memledger;
using test::scenario;

TEST_CASE("DualPipe's bubble is the README's (PP/2 - 1)(F&B + B - 3W) with B a full backward chunk",
          "[steptime][dualpipe]")
{
    // deepseek-ai/DualPipe README: "B denotes the execution time of a full
    // backward chunk, W ... a 'backward for weights' chunk, F&B ... two
    // mutually overlapped forward and backward chunks". Per chunk F = 1,
    // input-gradient backward 1 and W = 1, so B = 2; with nothing hidden
    // F&B = F + B = 3. PP = 8: (8/2 - 1)(3 + 2 - 3) = 6. The function takes the
    // rank's two chunks together (twice each) and the input-gradient part.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipe, 8, 2, 2, 2, 2) == Approx(6.0));
    // W = 0.5 per chunk: B = 1.5, F&B = 2.5: 3 (2.5 + 1.5 - 1.5) = 7.5.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipe, 8, 2, 2, 2, 1) == Approx(7.5));
    // An overlapped pair that hides 0.5 of all-to-all per chunk: F&B = 2.5, and
    // 3 (2.5 + 2 - 3) = 4.5.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipe, 8, 2, 2, 2, 2, 1) == Approx(4.5));
    // DualPipeV: DualPipe's on 2p ranks cut in half, PP = 2p stages: (4 - 1)(3 + 2 - 3) = 6 for p = 4.
    CHECK(pipelineBubbleSeconds(PipelineSchedule::DualPipeV, 4, 2, 2, 2, 2) == Approx(6.0));
}

TEST_CASE("The busiest rank runs the output layer only when it holds the last stage", "[steptime][layout]")
{
    // deepseek-v3-2048xh100-p16-v4: 61 layers over 64 virtual stages
    // (E|(t|)*61|m|L): rank r holds stages r, r+16, r+32, r+48. Layers 0-2
    // (dense) sit on stages 1-3 (ranks 1-3); ranks 4-13 hold four MoE layers
    // each; rank 15 three MoE layers and the output layer (stage 63); rank 0
    // and rank 14 three. An MoE layer's forward, backward and full recompute
    // outweigh the output layer's, so ranks 4-13 are the busiest, and they
    // run no output layer. Without the multi-token prediction module, which
    // would add an MoE layer to the last stage.
    Config c = scenario("deepseek-v3-2048xh100-p16-v4");
    c.model.mtp_num_layers = 0;
    const CostModel cm = costModel(c);
    const double m = 64; // global batch 8192 over d = 128
    REQUIRE(double(c.microBatches()) == m);
    const LayerCost &moe = cm.moe;
    const double layer = moe.forward.seconds + moe.backward.seconds + moe.recompute.seconds;
    const double outputLayer = cm.outputForward.seconds + cm.outputBackward.seconds;
    REQUIRE(4 * layer > 3 * layer + outputLayer);
    const StepTime st = estimateStepTime(c);
    // Every pass of the rank's four layers, their all-to-alls included (t = 1, c = 1: no TP or CP).
    CHECK(st.compute + st.recompute + st.expertComm == Approx(m * 4 * layer).epsilon(1e-9));
    // The simulation's busiest rank is one of them, and it is as busy.
    const Timeline tl = simulateIteration(c);
    double busiest = 0;
    for (const RankTimeline &r : tl.ranks)
        busiest = std::max(busiest, r.busy_s);
    CHECK(busiest == Approx(m * 4 * layer).epsilon(1e-6));
}

TEST_CASE("DualPipe's overlapped pairs hide their all-to-alls in the simulation as in the step-time model",
          "[steptime][timeline][dualpipe]")
{
    // deepseek-v3-2048xh100-dualpipe: p = 16 (H = 8 half ranks), 32
    // micro-batches per direction; rank 1 (h = 1) holds stage 1 of the forward
    // direction and stage 14 of the reverse one, four MoE layers each
    // (pipeline_layout 3, 4 x 14, 2; layers 0-2 dense). dualpipe.py pairs a
    // forward with the other direction's backward in its step 4,
    // 2 (m' - 2H + h + 1) = 2 (32 - 16 + 2) = 36 pairs, and step 5,
    // H - h - 1 = 6: 42 pairs. A pair takes the longer of its computation
    // and its all-to-alls.
    const Config c = scenario("deepseek-v3-2048xh100-dualpipe");
    const CostModel cm = costModel(c);
    const LayerCost &l = cm.moe;
    const double F = 4 * l.forward.seconds, B = 4 * (l.backward.seconds + l.recompute.seconds);
    const double xF = 4 * l.forwardComm.expert, xB = 4 * (l.backwardComm.expert + l.recomputeComm.expert);
    REQUIRE(xF > 0);
    const double hidden = std::min(xF + xB, (F - xF) + (B - xB));
    const double pairs = 2 * (32 - 16 + 1 + 1) + (8 - 1 - 1);
    REQUIRE(pairs == 42);
    const double busy = 64 * (F + B) - pairs * hidden; // 32 micro-batches x 2 directions
    const Timeline tl = simulateIteration(c);
    CHECK(tl.ranks[1].busy_s == Approx(busy).epsilon(1e-6));
    CHECK(tl.ranks[14].busy_s == Approx(busy).epsilon(1e-6)); // its mirror
    // The step-time model's busiest rank is rank 1 (the first of the
    // fourteen with eight MoE layers), with the same pairs.
    const StepTime st = estimateStepTime(c);
    CHECK(st.compute + st.recompute + st.expertComm == Approx(busy).epsilon(1e-6));
    CHECK(overlappedChunkShare(c.parallelism, c.microBatches(), 1) == Approx(2 * pairs / (4 * 32)));
    CHECK(overlappedChunkShare(c.parallelism, c.microBatches(), 14) == Approx(2 * pairs / (4 * 32)));
}

TEST_CASE("On equal stages the simulated DualPipe waits the README's bubble", "[timeline][dualpipe]")
{
    // Llama-3-70B, t = 8, DualPipe on p = 8 ranks: each direction runs the
    // whole model in 8 stages of ten layers, and every rank holds one stage of
    // each. A 256-word vocabulary keeps the embedding and the output layer
    // (ranks 0 and 7) from making those ranks much slower than the rest:
    // equal stages, as the README's formula assumes. Each pair waits for both
    // its inputs, as dualpipe.py receives both before it computes. What the
    // pipeline adds to its busiest rank's work, against the README's bubble
    // from one chunk's F, B (full) and W, F&B = F + B (a dense model hides
    // nothing). Done by hand with these times (F 0.052, input gradients
    // 0.058, W 0.033 s a chunk) along dualpipe.py's step order, each rank
    // idles 0.40 s: the README's figure.
    const Config c
        = scenario("llama-3-70b-128xh100",
                   {"parallelism.pipeline_schedule=dualpipe", "parallelism.virtual_pipeline_model_parallel_size=2",
                    "parallelism.pipeline_model_parallel_size=8", "parallelism.data_parallel_size=2",
                    "training.global_batch_size=128", "model.vocab_size=256"});
    const CostModel cm = costModel(c);
    const LayerCost &l = cm.dense;
    const double F = 10 * l.forward.seconds, B = 10 * (l.backward.seconds + l.recompute.seconds),
                 W = 10 * l.weightGrad.seconds;
    const double readme = (8.0 / 2 - 1) * ((F + B) + B - 3 * W);
    const Timeline tl = simulateIteration(c);
    double busiest = 0;
    for (const RankTimeline &rt : tl.ranks)
        busiest = std::max(busiest, rt.busy_s);
    const double wait = tl.pipeline_time - busiest;
    INFO("simulated wait " << wait << " s, README " << readme << " s");
    // The sends' latency (one per hop on the critical path) comes on top of the README's count.
    CHECK(wait >= readme * 0.97);
    CHECK(wait <= readme * 1.10);
    // The step-time model's bubble is the README's.
    CHECK(estimateStepTime(c).bubble == Approx(readme).epsilon(0.02));
}

TEST_CASE("Every shipped scenario: the simulated iteration differs from the step-time model by at most its "
          "bubble formula, and the gap is explained",
          "[steptime][timeline][scenarios]")
{
    // Both price each pass alike and reduce each rank's own parameters, so
    // the busiest rank's work and the reduction and optimizer step agree
    // (within 1 % of the iteration: the simulation lays a layer's halves end
    // to end, and may end on another rank with as many parameters). The one
    // part the model takes from a formula rather than along the op order is
    // what the pipeline adds (the bubble on an average rank, the sends); the
    // simulation waits for each rank's real neighbours instead, so the two
    // totals may differ by up to that part, and no more. On the shipped
    // scenarios the largest gap is DeepSeek-V3 with DualPipe, -4.7 %.
    for (const std::string &name : builtinNames("scenarios")) {
        INFO(name);
        const Config c = scenario(name);
        const StepTime st = estimateStepTime(c);
        const Timeline tl = simulateIteration(c);
        const StepTimeGap gap = stepTimeGap(c, st, tl);
        INFO(gap.explanation);
        double model = 0, simulated = 0;
        for (const StepTimeGapPart &p : gap.parts) {
            model += p.model_s;
            simulated += p.simulated_s;
        }
        CHECK(model == Approx(st.total));
        CHECK(simulated == Approx(tl.step_time));
        const StepTimeGapPart &work = gap.parts[0], &wait = gap.parts[1], &after = gap.parts[2];
        CHECK(std::abs(work.simulated_s - work.model_s) <= 0.01 * st.total);
        CHECK(std::abs(after.simulated_s - after.model_s) <= 0.01 * st.total);
        CHECK(std::abs(tl.step_time - st.total) <= wait.model_s + 0.01 * st.total);
        // The caption names both figures and, when they differ, the part that differs most.
        char both[64];
        std::snprintf(both, sizeof both, "%.2f s", tl.step_time);
        CHECK(gap.explanation.find(both) != std::string::npos);
        std::snprintf(both, sizeof both, "step-time model %.2f s: ", st.total);
        CHECK(gap.caption.rfind(both, 0) == 0);
        if (std::abs(gap.relative()) < 0.01)
            CHECK(gap.caption.find("within 1 %") != std::string::npos);
        if (std::abs(gap.relative()) >= 0.01) {
            const StepTimeGapPart *most = &gap.parts[0];
            for (const StepTimeGapPart &p : gap.parts)
                if (std::abs(p.simulated_s - p.model_s) > std::abs(most->simulated_s - most->model_s))
                    most = &p;
            const std::string words = most->name == "pipeline_wait" ? "the pipeline's waits"
                                      : most->name == "work"        ? "the busiest rank's work"
                                                                    : "the gradient reduction and optimizer step";
            CHECK(gap.explanation.find(words) != std::string::npos);
        }
    }
}

TEST_CASE("The DeepSeek-V3 DualPipe gap is the pipeline's waits, and the caption says so", "[steptime][dualpipe]")
{
    const Config c = scenario("deepseek-v3-2048xh100-dualpipe");
    // DualPipe's last rank, 15, holds stage 15 of the forward direction (two
    // MoE layers, the multi-token prediction module's MoE layer, projection
    // and norms, the final norm and the output layer) and stage 0 of the
    // reverse one (the three dense layers and the embedding, which the module
    // shares: no copy): the parameters its gradient reduction and optimizer
    // step cover (t = 1, e = 64).
    const ParallelismConfig &par = c.parallelism;
    const LayerParams dense = layerParams(c.model, false, 1, 64, par.expertTensorParallel());
    const LayerParams moe = layerParams(c.model, true, 1, 64, par.expertTensorParallel());
    const EmbeddingParams emb = embeddingParams(c.model, c.training.seq_length, 1, 16);
    const double hand = 3.0 * double(moe.dense.params + moe.expert.params)
                        + 3.0 * double(dense.dense.params + dense.expert.params) + double(emb.output.params)
                        + double(emb.finalNorm.params) + double(emb.mtp.params) + double(emb.word.params)
                        + double(emb.position.params);
    CHECK(stepInputsOf(c).paramsOnRank == Approx(hand));
    const StepTimeGap gap = stepTimeGap(c, estimateStepTime(c), simulateIteration(c));
    INFO(gap.explanation);
    // Ranks 0 and 15 hold the same: the reduction the simulation ends on is the model's.
    CHECK(gap.parts[2].simulated_s == Approx(gap.parts[2].model_s).epsilon(0.01));
    CHECK(gap.relative() < -0.01);
    CHECK(gap.parts[1].simulated_s < gap.parts[1].model_s);
    CHECK(gap.explanation.find("is ") != std::string::npos);
    CHECK(gap.explanation.find("shorter") != std::string::npos);
    CHECK(gap.explanation.find("uneven stages") != std::string::npos);
    // The caption: the model's figure, how much longer than the simulated one, and where.
    char model[96];
    std::snprintf(model, sizeof model, "step-time model %.2f s: %.1f %% longer, in the pipeline's waits", gap.model_s,
                  (gap.model_s / gap.simulated_s - 1) * 100);
    CHECK(gap.caption == model);
}
