// SPDX-License-Identifier: MIT
#include "core/schedule.h"

#include <algorithm>

namespace memledger {

std::int64_t inFlightChunks(const ParallelismConfig &par, std::int64_t m, std::int64_t rank)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    switch (par.schedule()) {
    case PipelineSchedule::GPipe:
        return m * par.virtual_pipeline_model_parallel_size;
    case PipelineSchedule::OneFOneB:
        return std::min(p - rank, m);
    case PipelineSchedule::Interleaved: {
        const std::int64_t v = par.virtual_pipeline_model_parallel_size;
        const std::int64_t warmup = (p - rank - 1) * 2 + (v - 1) * p;
        return std::min(warmup + 1, m * v);
    }
    }
    return m;
}

std::int64_t inFlightOfChunk(const ParallelismConfig &par, std::int64_t m, std::int64_t rank, std::int64_t chunk)
{
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    if (par.schedule() != PipelineSchedule::Interleaved || v <= 1)
        return v <= 1 ? inFlightChunks(par, m, rank) : m;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t total = inFlightChunks(par, m, rank);
    // Forwards 0..total-1 in groups of p per chunk, cycling through the chunks.
    const std::int64_t cycle = p * v;
    const std::int64_t full = total / cycle;
    const std::int64_t rest = total % cycle;
    return full * p + std::clamp<std::int64_t>(rest - chunk * p, 0, p);
}

} // namespace memledger
