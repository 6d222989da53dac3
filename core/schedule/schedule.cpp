// SPDX-License-Identifier: MIT
#include "core/schedule/schedule.h"

#include "core/schedule/splitbackwardorders.h"

#include <algorithm>
#include <utility>

namespace memledger {

namespace {

// Counted along the op order: what the closed forms below cannot give.
InFlightAtPeak countedInFlight(const ParallelismConfig &par, std::int64_t m, std::int64_t rank)
{
    const std::vector<double> one(static_cast<std::size_t>(par.virtual_pipeline_model_parallel_size), 1.0);
    return inFlightAtPeak(par, m, rank, one, one); // a pending W weighed as its whole group (scheduleOps' default)
}

} // namespace

std::int64_t inFlightChunks(const ParallelismConfig &par, std::int64_t m, std::int64_t rank)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    if (splitsBackward(par.schedule())) {
        const InFlightAtPeak at = countedInFlight(par, m, rank);
        std::int64_t n = 0;
        for (std::int64_t g : at.groups)
            n += g;
        return n;
    }
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
    default:
        break;
    }
    return m;
}

std::int64_t inFlightOfChunk(const ParallelismConfig &par, std::int64_t m, std::int64_t rank, std::int64_t chunk)
{
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    if (splitsBackward(par.schedule()))
        return countedInFlight(par, m, rank)
            .groups[static_cast<std::size_t>(std::clamp<std::int64_t>(chunk, 0, v - 1))];
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

std::vector<PipelineOp> scheduleOps(const ParallelismConfig &par, std::int64_t m, std::int64_t rank, double weightShare)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    std::vector<PipelineOp> ops;
    ops.reserve(static_cast<std::size_t>(3 * m * v));
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
    case PipelineSchedule::ZbH1:
        return zbH1Ops(p, m, rank);
    case PipelineSchedule::ZbH2:
        return zbH2Ops(p, m, rank);
    case PipelineSchedule::ZbV:
        return std::move(zbVOps(p, m, weightShare)[static_cast<std::size_t>(rank)]);
    case PipelineSchedule::DualPipeV:
        return dualPipeVOps(p, m, rank);
    case PipelineSchedule::DualPipe:
        return dualPipeOps(p, microBatchesPerDirection(par, m), rank);
    }
    return ops;
}

std::vector<std::vector<PipelineOp>> scheduleAllOps(const ParallelismConfig &par, std::int64_t m, double weightShare,
                                                    const PassTimes &times)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    if (par.schedule() == PipelineSchedule::ZbV)
        return zbVOps(p, m, weightShare, times);
    std::vector<std::vector<PipelineOp>> all;
    all.reserve(static_cast<std::size_t>(p));
    for (std::int64_t r = 0; r < p; ++r)
        all.push_back(scheduleOps(par, m, r, weightShare));
    return all;
}

StagePlace stagePlace(const ParallelismConfig &par, std::int64_t rank, std::int64_t chunk)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    switch (par.schedule()) {
    case PipelineSchedule::ZbV:
    case PipelineSchedule::DualPipeV:
        return {0, chunk == 0 ? rank : 2 * p - 1 - rank};
    case PipelineSchedule::DualPipe:
        return {chunk, chunk == 0 ? rank : p - 1 - rank};
    default:
        return {0, chunk * p + rank};
    }
}

RankChunk rankChunkAt(const ParallelismConfig &par, std::int64_t direction, std::int64_t position)
{
    const std::int64_t p = par.pipeline_model_parallel_size;
    switch (par.schedule()) {
    case PipelineSchedule::ZbV:
    case PipelineSchedule::DualPipeV:
        return position < p ? RankChunk{position, 0} : RankChunk{2 * p - 1 - position, 1};
    case PipelineSchedule::DualPipe:
        return direction == 0 ? RankChunk{position, 0} : RankChunk{p - 1 - position, 1};
    default:
        return {position % p, position / p};
    }
}

double pipelineBubbleSeconds(PipelineSchedule s, double p, double v, double F, double B, double W, double pairSaving)
{
    if (p <= 1)
        return 0.0;
    double bubble = 0;
    switch (s) {
    case PipelineSchedule::GPipe:
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::Interleaved:
        bubble = (p - 1) / std::max(1.0, v) * (F + B + W);
        break;
    case PipelineSchedule::ZbH1:
        bubble = (p - 1) * (F + B - W);
        break;
    case PipelineSchedule::ZbH2:
        bubble = (p - 1) * (F + B - 2 * W);
        break;
    case PipelineSchedule::ZbV:
        bubble = (p - 1) * (F + B - 2 * W) / 2;
        break;
    // The README's B is a full backward chunk, B + W here, and F&B the
    // overlapped pair, F + B + W − pairSaving: F&B + B' − 3W = F + 2B − W − pairSaving.
    case PipelineSchedule::DualPipe:
        bubble = (p / 2 - 1) * (F + 2 * B - W - pairSaving) / 2;
        break;
    case PipelineSchedule::DualPipeV:
        bubble = (p - 1) * (F + 2 * B - W - pairSaving) / 2;
        break;
    }
    return std::max(0.0, bubble);
}

double overlappedChunkShare(const ParallelismConfig &par, std::int64_t m, std::int64_t rank)
{
    const PipelineSchedule s = par.schedule();
    if (s != PipelineSchedule::DualPipe && s != PipelineSchedule::DualPipeV)
        return 0.0;
    // Along the V: `ranks` ranks, `perPhase` micro-batches in each phase; rank
    // r runs 2(perPhase − 2·ranks + r + 1) pairs in step 4 and ranks − r − 1 in
    // step 5, out of 4·perPhase chunk passes. Rank 0 has the fewest.
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t ranks = s == PipelineSchedule::DualPipe ? p / 2 : p;
    const std::int64_t perPhase = microBatchesPerDirection(par, m);
    if (perPhase <= 0)
        return 0.0;
    // DualPipe's second half of ranks mirrors the first: rank r runs as p − 1 − r.
    const std::int64_t r = rank < 0 ? 0 : std::min(rank, s == PipelineSchedule::DualPipe ? p - 1 - rank : rank);
    const std::int64_t pairs
        = 2 * std::max<std::int64_t>(0, perPhase - 2 * ranks + r + 1) + std::max<std::int64_t>(0, ranks - r - 1);
    return std::clamp(2.0 * double(pairs) / (4.0 * double(perPhase)), 0.0, 1.0);
}

bool opensOverlappedPair(PipelineSchedule s, const std::vector<PipelineOp> &ops, std::size_t i)
{
    if ((s != PipelineSchedule::DualPipe && s != PipelineSchedule::DualPipeV) || i + 1 >= ops.size())
        return false;
    const PipelineOp &a = ops[i], &b = ops[i + 1];
    return a.kind == OpKind::Forward && b.kind == OpKind::Backward && !b.deferredWeight && a.chunk != b.chunk;
}

bool splitsBackward(PipelineSchedule s)
{
    return s != PipelineSchedule::GPipe && s != PipelineSchedule::OneFOneB && s != PipelineSchedule::Interleaved;
}

std::string chunkName(PipelineSchedule schedule, std::int64_t chunk)
{
    if (schedule == PipelineSchedule::DualPipe)
        return chunk == 0 ? "forward direction" : "reverse direction";
    return "chunk " + std::to_string(chunk);
}

std::int64_t pipelineDirections(const ParallelismConfig &par)
{
    return par.schedule() == PipelineSchedule::DualPipe ? 2 : 1;
}

std::int64_t microBatchesPerDirection(const ParallelismConfig &par, std::int64_t m)
{
    return m / pipelineDirections(par);
}

bool isFirstStage(const ParallelismConfig &par, std::int64_t rank, std::int64_t chunk)
{
    return stagePlace(par, rank, chunk).position == 0;
}

bool isLastStage(const ParallelismConfig &par, std::int64_t rank, std::int64_t chunk)
{
    return stagePlace(par, rank, chunk).position == par.pipelineStages() - 1;
}

InFlightAtPeak inFlightAtPeak(const ParallelismConfig &par, std::int64_t m, std::int64_t rank,
                              const std::vector<double> &groupBytes, const std::vector<double> &weightBytes,
                              double backwardBytes)
{
    const double omega = !groupBytes.empty() && groupBytes[0] > 0 ? weightBytes[0] / groupBytes[0] : 1.0;
    return inFlightAlong(scheduleOps(par, m, rank, omega), groupBytes, weightBytes, backwardBytes);
}

InFlightAtPeak inFlightAlong(const std::vector<PipelineOp> &ops, const std::vector<double> &groupBytes,
                             const std::vector<double> &weightBytes, double backwardBytes)
{
    const std::size_t v = groupBytes.size();
    InFlightAtPeak now{std::vector<std::int64_t>(v, 0), std::vector<std::int64_t>(v, 0)};
    InFlightAtPeak best = now;
    double bytes = 0, most = 0;
    for (const PipelineOp &op : ops) {
        const std::size_t k = std::min(static_cast<std::size_t>(op.chunk), v - 1);
        switch (op.kind) {
        case OpKind::Forward:
            ++now.groups[k];
            bytes += groupBytes[k];
            break;
        case OpKind::Backward:
            if (backwardBytes > 0 && bytes + backwardBytes > most) {
                most = bytes + backwardBytes;
                best = now;
                best.duringBackward = true;
            }
            --now.groups[k];
            bytes -= groupBytes[k];
            if (op.deferredWeight) {
                ++now.weightPending[k];
                bytes += weightBytes[k];
            }
            break;
        case OpKind::Weight:
            --now.weightPending[k];
            bytes -= weightBytes[k];
            break;
        }
        if (bytes > most) {
            most = bytes;
            best = now;
            best.duringBackward = false;
        }
    }
    return best;
}

} // namespace memledger
