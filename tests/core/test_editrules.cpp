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
