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

namespace {

PipelineOp interleavedOp(OpKind kind, std::int64_t k, std::int64_t p, std::int64_t v)
{
    const std::int64_t inGroup = k % (p * v);
    std::int64_t chunk = inGroup / p;
    if (kind == OpKind::Backward)
        chunk = v - 1 - chunk;
    const std::int64_t mb = k / (p * v) * p + k % p;
    return {kind, static_cast<std::int32_t>(mb), static_cast<std::int32_t>(chunk)};
}

} // namespace

std::vector<PipelineOp> scheduleOps(const ParallelismConfig &par, std::int64_t m, std::int64_t rank)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    std::vector<PipelineOp> ops;
    ops.reserve(static_cast<std::size_t>(2 * m * v));
    const auto op = [](OpKind kind, std::int64_t mb, std::int64_t chunk) {
        return PipelineOp{kind, static_cast<std::int32_t>(mb), static_cast<std::int32_t>(chunk)};
    };
    switch (par.schedule()) {
    case PipelineSchedule::GPipe:
        for (std::int64_t c = 0; c < v; ++c)
            for (std::int64_t j = 0; j < m; ++j)
                ops.push_back(op(OpKind::Forward, j, c));
        for (std::int64_t c = v - 1; c >= 0; --c)
            for (std::int64_t j = m - 1; j >= 0; --j)
                ops.push_back(op(OpKind::Backward, j, c));
        break;
    case PipelineSchedule::OneFOneB: {
        const std::int64_t warmup = std::min(p - rank - 1, m);
        for (std::int64_t j = 0; j < warmup; ++j)
            ops.push_back(op(OpKind::Forward, j, 0));
        for (std::int64_t j = 0; j < m - warmup; ++j) {
            ops.push_back(op(OpKind::Forward, warmup + j, 0));
            ops.push_back(op(OpKind::Backward, j, 0));
        }
        for (std::int64_t j = m - warmup; j < m; ++j)
            ops.push_back(op(OpKind::Backward, j, 0));
        break;
    }
    case PipelineSchedule::Interleaved: {
        const std::int64_t total = m * v;
        const std::int64_t warmup = std::min((p - rank - 1) * 2 + (v - 1) * p, total);
        for (std::int64_t k = 0; k < warmup; ++k)
            ops.push_back(interleavedOp(OpKind::Forward, k, p, v));
        for (std::int64_t k = 0; k < total - warmup; ++k) {
            ops.push_back(interleavedOp(OpKind::Forward, warmup + k, p, v));
            ops.push_back(interleavedOp(OpKind::Backward, k, p, v));
        }
        for (std::int64_t k = total - warmup; k < total; ++k)
            ops.push_back(interleavedOp(OpKind::Backward, k, p, v));
        break;
    }
    }
    return ops;
}

} // namespace memledger
