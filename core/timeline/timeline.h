// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/schedule/schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// One steady-state iteration simulated per pipeline rank: the schedule's ops
// timed by the roofline cost model with point-to-point dependencies between
// stages, and every allocation as a lifetime. Memory is a timeline, not a
// number, as PyTorch's memory snapshot viewer draws it: the peak, when it
// happens and what is alive then come out of it.

enum class LifetimeKind : std::uint8_t {
    Persistent, // a device row of the ledger (weights, optimizer states, buffers, reserve)
    Gradients, // the gradient rows, whole-iteration or from the first backward
    Activations, // what one chunk saves for one micro-batch, forward to backward
    RecomputeWorkingSet, // full recompute: a group rebuilt during its backward
    // Full recompute: what a layer's forward holds while it saves only its
    // input. With a layer half's piece (per-tensor fates, Megatron's
    // selective core): the tensors the half makes and does not keep, while it runs.
    ForwardWorkingSet,
    AttentionRecompute, // selective recompute: the attention core rebuilt during its layer's backward
    BackwardWorkingSet, // activation gradients (and score gradients) of the layer in backward
    LossTemporaries, // bf16 logits and their fp32 copy around the loss
    LossBackward, // the cross entropy's gradients at the start of the last stage's backward
    WeightGradient, // a weight gradient before it is added to the gradient buffer
    WeightPassInputs, // a deferred W's operands (linear inputs, output gradients), from its B to its end
    OptimizerTemporaries, // the optimizer step's scratch
    // A communication row alive only while its collectives run
    // (LedgerEntry::window: FSDP's per-block reduce-scatter buffers during
    // the layers' backward, the root unit's gradients and reduce-scatter).
    CollectiveBuffers,
    TensorRecompute, // strategy.tensor_policies: a layer's recomputed tensors, rebuilt for its backward
    TensorOffloadTransit, // strategy.tensor_policies: a layer's offloaded tensors on their way to or from the host
    KvCache, // serving (core/serving/inferencetimeline.h): one layer's KV cache
    InferenceWorkingSet, // serving: a layer's attention (chunk 0) or MLP (chunk 1) working set, the residual
                         // stream (layer -1) or the logits (chunk 2), alive only while computed
    ParkedActivations // another rank's saved activations parked here (strategy.pipeline_activation_balance)
};

// Which part of a saved-activation group a lifetime is (LifetimeKind::Activations;
// a layer's half for its recompute and backward working sets too): what
// core/timeline/allocationstream.h splits into the tensors it holds.
enum class SavedPiece : std::uint8_t {
    Whole, // a group, or a slice of one, saved or copied as a whole
    Attention, // a layer's attention half (input norm to attention output)
    Mlp, // its MLP half (pre-MLP norm to the MLP's output)
    FirstStage, // the first stage's extras (the embedding's dropout mask)
    LastStage // the last stage's (final norm, output layer input, the loss's logits)
};

struct Lifetime
{
    double start = 0;
    double end = 0;
    Bytes bytes = 0;
    Category category = Category::Activations;
    LifetimeKind kind = LifetimeKind::Activations;
    std::int32_t microbatch = -1;
    std::int32_t chunk = -1;
    std::int32_t layer = -1; // global layer index, for per-layer transients
    std::int32_t entry = -1; // index into the rank's ledger entries, for persistent rows
    bool offloaded = false; // an activation group's second stay, after its copy back
    std::int32_t peer = -1; // activation balance: the rank parked on (donor) or parked from (receiver)
    // Activations: the part of `bytes` stored in FP8 (quantize_fp8 policies,
    // an fp8_recipe's saved linear inputs), the gantt's hatched share.
    Bytes fp8Bytes = 0;
    SavedPiece piece = SavedPiece::Whole;
};

struct TimedOp
{
    PipelineOp op;
    double start = 0;
    double end = 0;
    double stall = 0; // waiting for the copy stream (activation offload)
};

struct CurvePoint
{
    double time = 0;
    Bytes bytes = 0;
};

struct AliveItem
{
    std::string label;
    Category category = Category::Activations;
    Bytes bytes = 0;
};

struct CopyStats
{
    double copyOutSeconds = 0;
    double copyInSeconds = 0;
    double stallSeconds = 0; // compute waiting on copies
    double overlap() const; // share of the copy time hidden under compute
};

struct RankTimeline
{
    int pipeline_rank = 0;
    std::vector<TimedOp> ops;
    std::vector<Lifetime> lifetimes;
    std::vector<CurvePoint> curve; // downsampled keeping each bucket's maximum
    Bytes peak_bytes = 0;
    double peak_time = 0;
    std::vector<AliveItem> alive_at_peak; // largest first
    std::int64_t max_alive_chunks = 0; // activation groups alive at once: the staircase
    double max_alive_microbatches = 0; // the same in stage-micro-batches (chunks / v; DualPipe's are stages)
    double busy_s = 0; // compute time of the rank's ops
    double pipeline_end = 0; // end of the rank's last backward
    double optimizer_start = 0;
    double optimizer_end = 0;
    double optimizer_device_s = 0; // the update on the device
    double optimizer_copy_out_s = 0; // optimizer offload: gradients to the host
    double optimizer_cpu_s = 0; //                    the CPU update
    double optimizer_copy_in_s = 0; //                    updated weights back
    CopyStats copies; // activation offload
    CopyStats grad_copies; // gradient offload: copy-out during backward, stalls when the double buffer is full
};

// What a timeline simulates: a training iteration (simulateIteration), or one
// serving forward (simulateInferenceForward: a single pass per rank, with no
// micro-batches and no backward, which the gantt's phase labels say).
enum class TimelineKind { Iteration, Prefill, Decode };

struct Timeline
{
    TimelineKind kind = TimelineKind::Iteration;
    Ledger ledger; // the same configuration's ledger (persistent rows, labels)
    PipelineSchedule schedule = PipelineSchedule::OneFOneB; // how its chunks are named
    std::vector<RankTimeline> ranks;
    double step_time = 0; // seconds: the slowest rank's last op plus its optimizer step
    double pipeline_time = 0; // seconds until the last backward ends
    double bubble_fraction = 0; // idle share of the pipeline section, averaged over ranks
    double recompute_s = 0; // recompute time on the busiest rank
    int peak_rank = 0;
};

struct TimelineOptions
{
    std::size_t curve_points = 2000; // per rank, after downsampling
};

// Precondition: validate(config) has no errors.
Timeline simulateIteration(const Config &config, const TimelineOptions &options = {});

// Whether a rank's simulated peak stays within the device's capacity: the
// peak holds the runtime reserve (a ledger row alive the whole iteration), so
// it is held against the whole HBM, as the ledger's verdict is; the verdict
// the lifetimes view marks at the peak.
bool peakFits(const Timeline &timeline, const RankTimeline &rank);

} // namespace memledger
