// SPDX-License-Identifier: MIT
// What else an edit of p, v or the schedule changes (core/config/editrules.h):
// the rules the control panel applies, so that an edited plan stays one the
// frameworks run. Megatron-LM runs its interleaved schedule exactly when a
// virtual pipeline size is set (schedules.get_forward_backward_func); ZB-V
// (Qi et al. 2024, "Pipeline Parallelism with Controllable Memory") and
// DualPipe / DualPipeV (DeepSeek's dualpipe.py) place two chunks on every rank.
#include "core/config/editrules.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

using namespace memledger;

namespace {

ParallelismConfig editedPipeline(std::int64_t p, std::int64_t v, std::optional<PipelineSchedule> s = std::nullopt)
{
    ParallelismConfig par;
    par.pipeline_model_parallel_size = p;
    par.virtual_pipeline_model_parallel_size = v;
    par.pipeline_schedule = s;
    return par;
}

} // namespace

TEST_CASE("Chunks per rank each schedule runs", "[editrules]")
{
    CHECK(chunksPerRankFor(PipelineSchedule::GPipe, 4) == 1);
    CHECK(chunksPerRankFor(PipelineSchedule::OneFOneB, 4) == 1);
    CHECK(chunksPerRankFor(PipelineSchedule::ZbH1, 4) == 1);
    CHECK(chunksPerRankFor(PipelineSchedule::ZbH2, 4) == 1);
    CHECK(chunksPerRankFor(PipelineSchedule::ZbV, 4) == 2);
    CHECK(chunksPerRankFor(PipelineSchedule::DualPipe, 1) == 2);
    CHECK(chunksPerRankFor(PipelineSchedule::DualPipeV, 3) == 2);
    // Interleaving keeps the user's v, and needs at least two chunks.
    CHECK(chunksPerRankFor(PipelineSchedule::Interleaved, 4) == 4);
    CHECK(chunksPerRankFor(PipelineSchedule::Interleaved, 1) == 2);
}

TEST_CASE("A new v interleaves 1F1B, and keeps a two-chunk schedule only at two", "[editrules]")
{
    ParallelismConfig par = editedPipeline(4, 1);
    CHECK(par.schedule() == PipelineSchedule::OneFOneB);
    setVirtualStages(par, 2);
    CHECK(par.virtual_pipeline_model_parallel_size == 2);
    CHECK(par.schedule() == PipelineSchedule::Interleaved);
    setVirtualStages(par, 1);
    CHECK(par.schedule() == PipelineSchedule::OneFOneB);

    ParallelismConfig zbv = editedPipeline(4, 2, PipelineSchedule::ZbV);
    setVirtualStages(zbv, 2);
    CHECK(zbv.schedule() == PipelineSchedule::ZbV);
    setVirtualStages(zbv, 3); // ZB-V runs two chunks: three is interleaved 1F1B
    CHECK_FALSE(zbv.pipeline_schedule.has_value());
    CHECK(zbv.schedule() == PipelineSchedule::Interleaved);

    // GPipe runs one chunk per rank: a second chunk makes the plan interleaved.
    ParallelismConfig gpipe = editedPipeline(4, 1, PipelineSchedule::GPipe);
    setVirtualStages(gpipe, 2);
    CHECK(gpipe.schedule() == PipelineSchedule::Interleaved);
}

TEST_CASE("A schedule brings its chunks per rank, and a layout for the old v goes", "[editrules]")
{
    ParallelismConfig par = editedPipeline(2, 4);
    par.pipeline_layout = {1, 1, 1, 1, 1, 1, 1, 1}; // p·v = 8 stages
    setSchedule(par, PipelineSchedule::ZbV);
    CHECK(par.virtual_pipeline_model_parallel_size == 2);
    CHECK(par.schedule() == PipelineSchedule::ZbV);
    CHECK(par.pipeline_layout.empty());

    setSchedule(par, PipelineSchedule::OneFOneB);
    CHECK(par.virtual_pipeline_model_parallel_size == 1);
    CHECK(par.schedule() == PipelineSchedule::OneFOneB);

    setSchedule(par, PipelineSchedule::Interleaved);
    CHECK(par.virtual_pipeline_model_parallel_size == 2);
    CHECK(par.schedule() == PipelineSchedule::Interleaved);

    // The same number of chunks: a layout that still fits stays.
    ParallelismConfig kept = editedPipeline(2, 2, PipelineSchedule::ZbV);
    kept.pipeline_layout = {2, 2, 2, 2};
    setSchedule(kept, PipelineSchedule::DualPipeV);
    CHECK(kept.virtual_pipeline_model_parallel_size == 2);
    CHECK(kept.pipeline_layout.size() == 4);
}

TEST_CASE("A new p drops a layout for the old p", "[editrules]")
{
    ParallelismConfig par = editedPipeline(4, 1);
    par.pipeline_layout = {2, 2, 2, 2};
    setPipelineSize(par, 4);
    CHECK(par.pipeline_layout.size() == 4);
    setPipelineSize(par, 2);
    CHECK(par.pipeline_model_parallel_size == 2);
    CHECK(par.pipeline_layout.empty());
}

TEST_CASE("The balanced layout is Megatron's split with the embedding and the loss counted as layers",
          "[editrules][pipeline_layout]")
{
    // Llama 3 405B's 126 layers on 16 stages: 7, fourteen times 8, 7 (Llama 3 report §3.3.2).
    std::vector<std::int64_t> llama405b(16, 8);
    llama405b.front() = 7;
    llama405b.back() = 7;
    CHECK(balancedLayout(126, 16) == llama405b);
    // 80 layers over 3 stages: 26 each and two left over, the inner stage's first, then the first stage's.
    CHECK(balancedLayout(80, 3) == std::vector<std::int64_t>{27, 27, 26});
    // Layers that divide: the even split.
    CHECK(balancedLayout(80, 4) == std::vector<std::int64_t>{20, 20, 20, 20});
    CHECK(balancedLayout(7, 2) == std::vector<std::int64_t>{4, 3});
    CHECK(balancedLayout(5, 0).empty());
}

TEST_CASE("A layout reads as it is written, runs of equal counts as count times run", "[editrules][pipeline_layout]")
{
    // DeepSeek-V3 on 16 stages of 4 chunks: only the embedding first, 61 stages of one layer, two empty stages.
    std::vector<std::int64_t> deepseek(64, 1);
    deepseek[0] = 0;
    deepseek[62] = 0;
    deepseek[63] = 0;
    CHECK(layoutText(deepseek) == "0, 1×61, 0, 0");
    CHECK(layoutFromText("0, 1×61, 0, 0") == deepseek);
    CHECK(layoutText({27, 27, 26}) == "27, 27, 26");
    CHECK(layoutText({}).empty());
    // Typed by hand: a JSON list, spaces, other run markers.
    CHECK(layoutFromText("[7, 8, 8, 7]") == std::vector<std::int64_t>{7, 8, 8, 7});
    CHECK(layoutFromText(" 7 8*2  7 ") == std::vector<std::int64_t>{7, 8, 8, 7});
    CHECK(layoutFromText("7, 8 × 2, 7") == std::vector<std::int64_t>{7, 8, 8, 7});
    CHECK(layoutFromText("3x3") == std::vector<std::int64_t>{3, 3, 3});
    CHECK(layoutFromText("") == std::vector<std::int64_t>{});
    CHECK(layoutFromText("  ") == std::vector<std::int64_t>{});
    // Not lists of counts.
    CHECK_FALSE(layoutFromText("12a").has_value());
    CHECK_FALSE(layoutFromText("3 ×").has_value());
    CHECK_FALSE(layoutFromText("3×0").has_value());
    CHECK_FALSE(layoutFromText("-1, 2").has_value());
    CHECK_FALSE(layoutFromText("1×1000000").has_value());
}

TEST_CASE("Keeping the GPU count moves d when t, p or c changes, or says why it cannot", "[editrules]")
{
    ParallelismConfig before;
    before.tensor_model_parallel_size = 2;
    before.pipeline_model_parallel_size = 2;
    before.data_parallel_size = 16; // 64 GPUs
    ParallelismConfig after = before;
    after.tensor_model_parallel_size = 4;
    CHECK(keepGpuCount(before, after, 64).empty());
    CHECK(after.data_parallel_size == 8); // 4 · 2 · 8 = 64

    after = before;
    after.pipeline_model_parallel_size = 8;
    after.context_parallel_size = 1;
    CHECK(keepGpuCount(before, after, 64).empty());
    CHECK(after.data_parallel_size == 4); // 2 · 8 · 4 = 64

    // t = 3: no whole d gives 64 GPUs; d stays, and the reason names the t values that would keep 64.
    after = before;
    after.tensor_model_parallel_size = 3;
    const std::string why = keepGpuCount(before, after, 64);
    INFO(why);
    CHECK(after.data_parallel_size == 16);
    CHECK(why.find("t·p·c = 3·2·1 = 6") != std::string::npos);
    CHECK(why.find("runs on 96 GPUs") != std::string::npos);
    CHECK(why.find("t = 2 or 4 keeps 64") != std::string::npos);

    // An edit of d is a new count, the user's: nothing to keep.
    after = before;
    after.data_parallel_size = 32;
    CHECK(keepGpuCount(before, after, 64).empty());
    CHECK(after.data_parallel_size == 32);
}
