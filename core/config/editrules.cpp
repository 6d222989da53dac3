// SPDX-License-Identifier: MIT
#include "core/config/editrules.h"

#include <algorithm>

namespace memledger {

std::int64_t chunksPerRankFor(PipelineSchedule s, std::int64_t v)
{
    switch (s) {
    case PipelineSchedule::Interleaved:
        return std::max<std::int64_t>(2, v);
    case PipelineSchedule::ZbV:
    case PipelineSchedule::DualPipe:
    case PipelineSchedule::DualPipeV:
        return 2;
    default:
        return 1;
    }
}

bool dropStaleLayout(ParallelismConfig &parallelism)
{
    if (parallelism.pipeline_layout.empty()
        || static_cast<std::int64_t>(parallelism.pipeline_layout.size())
               == parallelism.pipeline_model_parallel_size * parallelism.virtual_pipeline_model_parallel_size)
        return false;
    parallelism.pipeline_layout.clear();
    return true;
}

void setPipelineSize(ParallelismConfig &parallelism, std::int64_t p)
{
    parallelism.pipeline_model_parallel_size = p;
    dropStaleLayout(parallelism);
}

void setVirtualStages(ParallelismConfig &parallelism, std::int64_t v)
{
    parallelism.virtual_pipeline_model_parallel_size = v;
    if (chunksPerRankFor(parallelism.schedule(), v) != v)
        parallelism.pipeline_schedule.reset();
    dropStaleLayout(parallelism);
}

void setSchedule(ParallelismConfig &parallelism, PipelineSchedule schedule)
{
    const std::int64_t chunks = chunksPerRankFor(schedule, parallelism.virtual_pipeline_model_parallel_size);
    if (chunks != parallelism.virtual_pipeline_model_parallel_size) {
        parallelism.virtual_pipeline_model_parallel_size = chunks;
        dropStaleLayout(parallelism);
    }
    parallelism.pipeline_schedule = schedule;
}

} // namespace memledger
