// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/time/costmodel.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace memledger {

// Estimated time of one training iteration, seconds, by part, on the busiest
// pipeline rank (the last: it also holds the output layer). Kernel and
// collective costs come from core/time/costmodel.h; this adds the schedule:
// micro-batches one after another, the pipeline bubble of (p−1)/v stage
// micro-batch times (an average rank's) (Narayanan et al. 2021, §2.2), pipeline sends, the
// data-parallel reduction (exposed, or bucket by bucket under the last
// backward with overlap_grad_reduce; ZeRO's weight all-gather after the
// optimizer step, or under the next first forward with overlap_param_gather),
// the optimizer step, and activation
// offload stalls where a micro-batch's saved activations take longer to cross
// the host link than the stage's forward (out) or backward (in) lasts.
struct StepTime
{
    double compute = 0; // forward + backward kernels of all micro-batches on the busiest stage
    double recompute = 0;
    double bubble = 0;
    double tensorComm = 0; // exposed TP / SP collectives
    double contextComm = 0; // exposed CP ring exchange
    double expertComm = 0; // EP all-to-all
    double dataComm = 0; // exposed gradient reduction and parameter gathers
    // Of dataComm, ZeRO's all-gather of the updated weights (ZeRO 1–2; ZeRO-3:
    // also its per-micro-batch gathers): what overlap_param_gather leaves exposed.
    double paramGather = 0;
    double pipelineComm = 0;
    double optimizer = 0;
    double activationOffload = 0; // stalls
    double activationBalance = 0; // stalls: parked activations back later than their backward needs them
    double gradOffload = 0; // gradient copies to the host that backward does not hide (grad_offload)
    double total = 0;
    // strategy.pipeline_activation_balance, the busiest donor: the rate that
    // hides its copies (parked bytes of a group over the backward time before
    // they are needed) against the link's.
    double balanceNeededBytesPerS = 0;
    double balanceLinkBytesPerS = 0;
    // Model FLOPs of the iteration per GPU (forward and backward, no recompute;
    // attention over the whole square, as Megatron counts it) and their share
    // of the device's peak over `total`: MFU.
    double modelFlopsPerGpu = 0;
    double mfu = 0;
};

// The parts of a StepTime by name ("compute", "bubble", ...), in the order above.
struct StepTimePart
{
    std::string_view name;
    double seconds = 0;
};
std::array<StepTimePart, 12> stepTimeParts(const StepTime &time);
// The part that takes longest (the first such on ties).
StepTimePart largestStepTimePart(const StepTime &time);

// What stepTime needs, named; the plan search fills one per candidate from
// costs it computed once per shape, estimateStepTime from a whole config.
struct StepInputs
{
    double layersOnRank = 0; // transformer layers of the busiest rank
    double microBatches = 1; // per iteration and data-parallel rank
    double p = 1, v = 1;
    PipelineSchedule schedule = PipelineSchedule::OneFOneB; // the bubble's formula
    double overlappedShare = 0; // DualPipe: chunk passes paired so that their all-to-alls hide (overlappedChunkShare)
    double dataParallel = 1; // d·c: the group that reduces dense gradients
    bool dataOnNvlink = false; // that group inside one node
    LayerCost layer; // one layer, averaged over the layer kinds the rank holds
    OpCost outputForward, outputBackward;
    double p2pSeconds = 0;
    // overlap_p2p_comm in force (the interleaved schedule, p > 1): the sends
    // hide under the next chunk's compute but for the fill and drain chains.
    bool overlapP2p = false;
    // One micro-batch through an average rank, what the bubble is made of when
    // ranks differ (uneven layouts, dense and MoE layers); < 0: the busiest rank's.
    double bubbleStageSeconds = -1;
    double paramsOnRank = 0; // before ZeRO: what the data-parallel group reduces
    double gradBytes = 4, weightBytes = 2, optimizerBytesPerParam = 12; // per parameter
    // Bytes per parameter ZeRO's weight all-gathers move: the weights' own, or
    // 1 (FP8) plus the scales with fp8_param_gather; < 0: weightBytes.
    double gatherBytes = -1;
    int zeroStage = 0;
    // PyTorch FSDP per block (core/config/framework.h): each block gathered
    // `fsdpGathersPerMicroBatch` times per micro-batch (2 resharding after
    // forward, 1 keeping it for backward; under pipeline parallelism once per
    // iteration, so 1/m), nothing gathered after the step, and each block's
    // gradients (`fsdpBlockParams`) reduce-scattered under the next block's backward.
    bool fsdpPerBlock = false;
    double fsdpGathersPerMicroBatch = 2;
    double fsdpBlockParams = 0;
    // HSDP: the sharded gradients are all-reduced across this many replicas
    // (d / data_parallel_shard_size) after the reduce-scatter inside a group.
    double replicas = 1;
    bool replicasOnNvlink = false;
    bool overlapGradReduce = false;
    bool overlapParamGather = false; // ZeRO's weight all-gather under the next iteration's first forward
    double bucketParams = 4e7; // DDP bucket, elements
    double optimizerOffloadLink = 0; // bytes/s the offloaded step's copies cross; 0: on the device
    bool activationOffload = false;
    double offloadBytes = 0; // saved activations of one micro-batch on the rank
    double policyOffloadBytes = 0; // per layer and micro-batch, strategy.tensor_policies' offloaded tensors
    // Activation balance, the donor whose copies hide worst (core/ledger/balance.h):
    // each of its `balanceGroups` chunk-micro-batches parks `balanceBytes`, the
    // share `balanceShare` of its group saved first; the copy back runs under
    // the backward of the rest, (1 − share) · balanceBackwardSeconds.
    double balanceGroups = 0;
    double balanceBytes = 0;
    double balanceShare = 0;
    double balanceBackwardSeconds = 0;
    double balanceLinkBytesPerS = 0;
    bool gradsOnHost = false; // grad_offload: the offloaded step need not copy them out
    double muonSeconds = 0; // Muon: Newton–Schulz GEMMs and full-matrix gathers (core/model/muon.h)
    double gradOffloadBytes = 0; // grad_offload: gradient bytes one micro-batch's backward sends to the host
    double gradOffloadBucketBytes = 0; // one of the two device staging buckets
};
StepTime stepTime(const StepInputs &in, const HardwareConfig &hw);

// The pipeline sends the busiest (last) rank waits for in one iteration,
// seconds: two per micro-batch and model chunk (its output forward, its input
// gradient backward), `p2pSeconds` each. With overlap_p2p_comm in force
// (Megatron-LM's interleaved schedule, schedules.py) the steady 1F1B phase
// issues them asynchronously and waits only before the pass that needs them,
// so each hides under the chunk pass that runs meanwhile (exposed: what
// outlasts `chunkPassSeconds`); the warm-up forwards and cool-down backwards,
// (v − 1)·p of each on the last rank (Megatron's num_warmup_microbatches;
// all m·v when m ≤ p), still send blocking.
// strategy.overlap_p2p_comm in force: on, and the interleaved schedule with
// v > 1 and p > 1 (Megatron-LM's argument parser turns it off otherwise).
bool overlapP2pInForce(const Config &config);
double pipelineSendSeconds(double p2pSeconds, double p, double v, double microBatches, bool overlapP2p,
                           double chunkPassSeconds);

// A layer of kind `a` or `b` in proportion: (1 − shareOfB)·a + shareOfB·b.
LayerCost mixedLayerCost(const LayerCost &a, const LayerCost &b, double shareOfB);

// Where a slower plan loses its time against a faster one, for the search's
// verdicts: "most of it in bubble (+1.20 s)", the part that grew the most.
std::string stepTimeDifference(const StepTime &slower, const StepTime &faster);

// Model FLOPs of one iteration of the whole model (all GPUs): 6 per
// parameter-token of every layer's linear layers (MoE: the experts a token is
// routed to) and the output layer, plus attention's 12·s·(a·d) per token and
// layer. For a GPT this is Korthikanti et al.'s 72·B·s·l·h²(1 + s/6h + V/12lh).
double modelFlopsPerIteration(const Config &config);

// The inputs of the busiest (last) rank from a whole configuration; the
// timeline reuses them to time each rank's gradient reduction.
// gpusPerNode 0: the hardware's gpus_per_node.
StepInputs stepInputsOf(const Config &config, std::int64_t gpusPerNode = 0);
StepTime estimateStepTime(const Config &config, std::int64_t gpusPerNode = 0);

// What recompute adds to one micro-batch on the busiest rank, as
// StepTime::recompute counts it (its collectives are in the communication
// parts): estimateStepTime(config).recompute over the micro-batches. The
// figure a planner quotes for a recompute setting, so that the plan it
// applies reproduces it.
double recomputeSecondsPerMicroBatch(const Config &config);

} // namespace memledger
