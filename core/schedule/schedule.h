// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// How many chunk-micro-batches a pipeline rank holds at its activation peak,
// from the op order of each schedule (one chunk per rank unless interleaved):
//  - GPipe runs every forward before any backward: all m.
//  - 1F1B warms up with p-r-1 forwards and then alternates: min(p-r, m).
//  - Megatron's interleaved 1F1B warms up with 2(p-r-1) + (v-1)p chunk
//    forwards (get_forward_backward_func, schedules.py) and holds one more in
//    steady state: min(2(p-r-1) + (v-1)p + 1, m v).
std::int64_t inFlightChunks(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank);

// Of those, how many belong to virtual chunk `chunk` (0..v-1). Forward i of
// the interleaved warm-up runs chunk (i mod pv) / p.
std::int64_t inFlightOfChunk(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank,
                             std::int64_t chunk);

// Forward; Backward: the whole backward of a chunk, or only its input
// gradients (B) when `deferredWeight` is set; Weight: a deferred backward's
// weight gradients (W), run later by the zero-bubble schedules and DualPipe.
enum class OpKind : std::uint8_t { Forward, Backward, Weight };

// One compute op of a pipeline rank: the forward or backward of one chunk of
// the rank for one micro-batch. Under DualPipe the micro-batch counts within
// its direction (chunk 0: the forward direction, chunk 1: the reverse one).
struct PipelineOp
{
    OpKind kind = OpKind::Forward;
    std::int32_t microbatch = 0;
    std::int32_t chunk = 0;
    bool deferredWeight = false; // a Backward whose weight gradients run as a later Weight op
    bool operator==(const PipelineOp &) const = default;
};

// The exact op order of one rank:
//  - GPipe: every forward in micro-batch order, then every backward in reverse;
//  - 1F1B: min(p-r-1, m) warm-up forwards, m - warm-up forward/backward pairs,
//    then the cool-down backwards;
//  - interleaved 1F1B as Megatron's forward_backward_pipelining_with_interleaving:
//    forward k runs chunk (k mod pv)/p on micro-batch (k / pv) p + k mod p, and
//    backward k the mirrored chunk v-1-(k mod pv)/p;
//  - ZB-H1 (Qi et al. 2023, Figure 3): 1F1B's order with rank r holding back
//    its first r weight passes, which fill the cool-down bubble at the end;
//  - ZB-H2 (ibid.): 2(p-r)-1 warm-up forwards, then B W F triples: the warm-up
//    bubble filled with forwards, twice 1F1B's first-rank activations (2p-1);
//  - ZB-V (Qi et al. 2024): a V-shaped placement filled greedily, as the
//    authors' scheduler does: a ready B first, a forward while fewer than 2p
//    chunk-micro-batches are alive (1F1B's peak), else a pending W; here with
//    unit F = B = W times (scheduleAllOps takes the real ones); `weightShare`
//    is the share of a chunk's saved bytes its W still needs after B
//    (LayerActivations::weightPass over what it saves);
//  - DualPipe and DualPipeV: the eight steps of deepseek-ai/DualPipe's step()
//    (nF0, nF0F1, nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0, nWB0, nW).
std::vector<PipelineOp> scheduleOps(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank,
                                    double weightShare = 1.0);

// One micro-batch's passes through one chunk of a rank, in seconds: its
// forward, its input gradients (B, recompute included) and its deferred
// weight gradients (W).
struct PassSeconds
{
    double forward = 1;
    double inputGradient = 1;
    double weight = 1;
};

// What ZB-V's greedy fill weighs its choices by, as the authors' scheduler
// takes the profiled F, B, W and communication costs (Qi et al. 2024, §3;
// sail-sg/zero-bubble-pipeline-parallelism, scheduler/zbv.py): each rank's
// chunks' passes (`passes[rank][chunk]`) and the send between neighbouring
// positions. Empty `passes`: unit times and free sends, the handcrafted
// schedule's T_F = T_B = T_W.
struct PassTimes
{
    std::vector<std::vector<PassSeconds>> passes;
    double sendSeconds = 0;
};

// Every rank's order at once (ZB-V's greedy fill runs once, not per rank,
// timed by `times`; the other schedules' orders do not depend on times).
std::vector<std::vector<PipelineOp>> scheduleAllOps(const ParallelismConfig &parallelism, std::int64_t microBatches,
                                                    double weightShare = 1.0, const PassTimes &times = {});

// Where chunk k of rank r sits in the data flow. Slot k·p + r is how a rank's
// chunks are indexed everywhere; its position along the pipeline depends on
// the schedule: k·p + r for the looped ones, r and 2p−1−r for the V-shaped
// ones (ZB-V, DualPipeV), and for DualPipe position r of the forward direction
// (k = 0) and position p−1−r of the reverse direction (k = 1).
struct StagePlace
{
    std::int64_t direction = 0;
    std::int64_t position = 0; // 0 .. pipelineStages() - 1 within the direction
};
StagePlace stagePlace(const ParallelismConfig &parallelism, std::int64_t rank, std::int64_t chunk);

// The rank and chunk at a position of a direction (stagePlace's inverse).
struct RankChunk
{
    std::int64_t rank = 0;
    std::int64_t chunk = 0;
};
RankChunk rankChunkAt(const ParallelismConfig &parallelism, std::int64_t direction, std::int64_t position);

// The zero-bubble schedules and DualPipe split backwards into B and W; their
// in-flight counts come from the op order, not a closed form.
bool splitsBackward(PipelineSchedule schedule);

// How the ledger and the timeline name chunk k of a rank: "chunk k", but
// DualPipe's two are its directions ("forward direction", "reverse direction").
std::string chunkName(PipelineSchedule schedule, std::int64_t chunk);

// 2 for DualPipe (two pipelines in opposite directions), else 1.
std::int64_t pipelineDirections(const ParallelismConfig &parallelism);

// Micro-batches each direction carries: DualPipe splits them in halves.
std::int64_t microBatchesPerDirection(const ParallelismConfig &parallelism, std::int64_t microBatches);

// Whether chunk k of rank r is a first (embedding) or last (loss) stage.
bool isFirstStage(const ParallelismConfig &parallelism, std::int64_t rank, std::int64_t chunk);
bool isLastStage(const ParallelismConfig &parallelism, std::int64_t rank, std::int64_t chunk);

// The pipeline bubble of one iteration, in seconds, from one micro-batch's
// forward F, input-gradient B (recompute included) and weight-gradient W on
// an average rank (all its chunks):
//  - GPipe, 1F1B, interleaved: (p−1)/v · (F + B + W) (Narayanan et al. 2021);
//  - ZB-H1: (p−1)(F + B − W), ZB-H2: (p−1)(F + B − 2W) (Qi et al. 2023, Table 1);
//  - ZB-V: ZB-H2's count on its half-size chunks (Qi et al. 2024: none when F = B = W);
//  - DualPipe: (p/2 − 1)(F&B + B' − 3W) per chunk, one stage each (deepseek-ai/DualPipe
//    README), where the README's B' is a *full* backward chunk, B + W here (its
//    1F1B row, (PP−1)(F + B'), is Qi et al.'s (p−1)(F + B + W)) and F&B the
//    time of an overlapped pair, F + B' less the all-to-alls it hides
//    (`pairSaving`, the rank's both chunks like F, B and W). Per chunk:
//    (p/2 − 1)(F + 2B − W − pairSaving)/2 in this function's terms;
//  - DualPipeV: DualPipe's on 2p ranks cut in half, (p − 1) of its half-size chunks.
// Never below zero.
double pipelineBubbleSeconds(PipelineSchedule s, double p, double v, double F, double B, double W,
                             double pairSaving = 0);

// DualPipe's point: a forward chunk of one direction and a backward chunk of
// the other run as one overlapped pair, each one's all-to-all hidden under the
// other's computation (DeepSeek-V3 report §3.2.1, Figure 4). The share of a
// rank's forward and backward chunks that run in such pairs (its steps 4 and
// 5), on `rank`, or on the rank with the fewest (rank 0) when rank < 0: 0 for
// every other schedule.
double overlappedChunkShare(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank = -1);

// Whether ops[i] opens such a pair in a DualPipe or DualPipeV op order: a
// forward of one chunk followed at once by a whole (not split) backward of the
// other, as dualpipe.py's _forward_backward_chunk runs them in its steps 4
// and 5. The pair is ops[i] and ops[i + 1].
bool opensOverlappedPair(PipelineSchedule schedule, const std::vector<PipelineOp> &ops, std::size_t i);

// What a rank holds at its activation peak, counted along its op order: per
// chunk, the micro-batches whose forward ran and whose backward has not
// (`groups`), and those whose deferred W has not run yet (`weightPending`).
// The peak weighs each by its bytes (groupBytes, weightBytes per chunk); a
// backward in progress adds `backwardBytes` (full recompute's working set)
// to what is alive as it starts.
struct InFlightAtPeak
{
    std::vector<std::int64_t> groups;
    std::vector<std::int64_t> weightPending;
    bool duringBackward = false; // the peak is inside a backward (its working set counts)
};
InFlightAtPeak inFlightAtPeak(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank,
                              const std::vector<double> &groupBytes, const std::vector<double> &weightBytes,
                              double backwardBytes = 0);
// The same along a given op order (one of scheduleAllOps').
InFlightAtPeak inFlightAlong(const std::vector<PipelineOp> &ops, const std::vector<double> &groupBytes,
                             const std::vector<double> &weightBytes, double backwardBytes = 0);

} // namespace memledger
