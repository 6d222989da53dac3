// SPDX-License-Identifier: MIT
#include "core/timeline/timeline.h"

#include "core/ledger/balance.h"
#include "core/ledger/scheduledledger.h"
#include "core/model/activations.h"
#include "core/model/backwardbuffers.h"
#include "core/model/modelstates.h"
#include "core/model/muon.h"
#include "core/model/parameters.h"
#include "core/schedule/stagelayers.h"
#include "core/time/costmodel.h"
#include "core/time/muonstep.h"
#include "core/time/offload.h"
#include "core/time/passtimes.h"
#include "core/time/steptime.h"
#include "core/timeline/curve.h"
#include "core/timeline/lifetimelabels.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

namespace memledger {

double CopyStats::overlap() const
{
    const double copies = copyOutSeconds + copyInSeconds;
    return copies > 0 ? std::clamp(1.0 - stallSeconds / copies, 0.0, 1.0) : 1.0;
}

namespace {

struct ChunkPlan
{
    ChunkActivations acts;
    Bytes groupBytes = 0; // saved per micro-batch, stage extras included
    Bytes lastExtra = 0; // last stage: final norm, output-layer input, loss softmax
    double forward = 0; // seconds
    double backward = 0; // seconds, recompute included
    double recompute = 0;
    double outputForward = 0; // last stage: the logits and loss at the end of the forward
    std::vector<double> layerForward; // per layer
    std::vector<double> layerForwardStart; // per layer and one past the last: offsets into the forward
    std::vector<double> layerBackward; // per layer, recompute included
    double weight = 0; // seconds: the weight-gradient part of `backward`, a W op's time when split
    Bytes weightPass = 0; // what a deferred W keeps from its B to its end
    // Exposed communication inside `forward` and `backward` (recompute's
    // included), all of it and the expert all-to-alls of it: what a DualPipe
    // pair can hide under the other pass's computation.
    double forwardComm = 0, backwardComm = 0;
    double forwardExpert = 0, backwardExpert = 0;
    bool lastStage = false;
    std::int64_t firstLayer = 0;
    std::int64_t layers = 0;
};

struct Sim
{
    const Config &config;
    std::int64_t p, v, m;
    std::vector<StageLayers> stages;
    CostModel cost;
    LayerActivations dense, moe;
    StageActivations stage;
    BackwardBuffers buffers; // sizes of the transient working sets, weight gradients and gradient copies
    double lossBackwardSeconds = 0; // the cross entropy's share of the output backward
    bool muon = false;
};

std::vector<ChunkPlan> planChunks(const Sim &x, std::int64_t r)
{
    std::vector<ChunkPlan> plans(static_cast<std::size_t>(x.v));
    Bytes firstExtra = 0, lastExtra = 0;
    for (const SavedTensor &s : x.stage.first)
        firstExtra += s.bytes;
    for (const SavedTensor &s : x.stage.last)
        lastExtra += s.bytes;
    const ParallelismConfig &par = x.config.parallelism;
    for (std::int64_t k = 0; k < x.v; ++k) {
        ChunkPlan &cp = plans[static_cast<std::size_t>(k)];
        const std::int64_t stage = k * x.p + r;
        cp.firstLayer = x.stages[static_cast<std::size_t>(stage)].first;
        cp.layers = x.stages[static_cast<std::size_t>(stage)].count;
        cp.lastStage = isLastStage(par, r, k);
        cp.acts = chunkActivations(x.config, x.dense, x.moe, cp.firstLayer, cp.layers);
        cp.lastExtra = cp.lastStage ? lastExtra : 0;
        cp.groupBytes = cp.acts.stored + (isFirstStage(par, r, k) ? firstExtra : 0) + cp.lastExtra;
        cp.weightPass = cp.acts.weightPass;
        for (std::int64_t i = 0; i < cp.layers; ++i) {
            const LayerCost &lc = x.config.model.isMoeLayer(cp.firstLayer + i) ? x.cost.moe : x.cost.dense;
            // Full recompute by the block method re-runs only the chunk's first layers.
            const bool rerun = recomputesLayer(x.config.strategy, i);
            const double recompute = rerun ? lc.recompute.seconds : 0.0;
            cp.forward += lc.forward.seconds;
            cp.layerForward.push_back(lc.forward.seconds);
            cp.layerBackward.push_back(lc.backward.seconds + recompute);
            cp.backward += lc.backward.seconds + recompute;
            cp.recompute += recompute;
            cp.weight += lc.weightGrad.seconds;
            cp.forwardComm += lc.forwardComm.total();
            cp.backwardComm += lc.backwardComm.total() + (rerun ? lc.recomputeComm.total() : 0.0);
            cp.forwardExpert += lc.forwardComm.expert;
            cp.backwardExpert += lc.backwardComm.expert + (rerun ? lc.recomputeComm.expert : 0.0);
        }
        cp.layerForwardStart.assign(1, 0.0);
        for (const double f : cp.layerForward)
            cp.layerForwardStart.push_back(cp.layerForwardStart.back() + f);
        if (cp.lastStage) {
            cp.outputForward = x.cost.outputForward.seconds;
            cp.forward += x.cost.outputForward.seconds;
            cp.backward += x.cost.outputBackward.seconds;
            cp.weight += x.cost.outputWeightGrad.seconds;
        }
    }
    return plans;
}

// The same chunk when its backward runs B alone: every layer's backward
// shortened by the weight-gradient share a later W op runs.
ChunkPlan inputGradientPlan(const ChunkPlan &whole)
{
    ChunkPlan b = whole;
    const double share
        = whole.backward > 0 ? std::clamp((whole.backward - whole.weight) / whole.backward, 0.0, 1.0) : 1.0;
    for (double &d : b.layerBackward)
        d *= share;
    b.backward = whole.backward - whole.weight;
    return b;
}

struct RankState
{
    std::vector<PipelineOp> ops;
    std::vector<ChunkPlan> chunks;
    std::vector<ChunkPlan> inputChunks; // the chunks' B-only plans (schedules that defer W)
    std::size_t next = 0;
    double free = 0;
    double previousStart = 0;
    ActivationOffload offload;
    std::vector<double> copyOutEnd; // per (chunk, micro-batch); < 0 when kept on the device
    std::vector<double> copyInStart;
    std::int64_t expertParams = 0; // routed-expert parameters on this rank (before ZeRO)
    // Activation balance (core/ledger/balance.h): the share of each group this rank
    // parks, the copy stream's rate, and when each group's copy back lands.
    double parkedShare = 0;
    double parkLink = 0;
    std::vector<double> copyInEnd;
    double gradFree = 0; // grad_offload: when the gradient copy stream is next free
    double pairCut = 0; // DualPipe: what the open pair's backward hides of its all-to-alls
};

// DualPipe's overlapped pair (a forward and the other direction's whole
// backward, dualpipe.py's _forward_backward_chunk): each pass's all-to-alls
// run under the other's computation, so the pair takes the longer of its
// computation and its all-to-alls (DeepSeek-V3 report §3.2.1, Figure 4).
// Returns how much shorter the forward and the backward run.
std::pair<double, double> pairCuts(const ChunkPlan &f, const ChunkPlan &b)
{
    const double comm = f.forwardExpert + b.backwardExpert;
    if (comm <= 0)
        return {0.0, 0.0};
    const double compute = std::max(0.0, f.forward - f.forwardComm) + std::max(0.0, b.backward - b.backwardComm);
    const double hidden = std::min(comm, compute);
    return {hidden * f.forwardExpert / comm, hidden * b.backwardExpert / comm};
}

// grad_offload: the weight gradients an op makes stream to the host while it
// runs; it may lead the copy by the two buckets of the double buffer, and
// ends later (a stall) when it would lead by more. Returns the stall.
double streamGradients(const Sim &x, RankState &rs, RankTimeline &rt, const ChunkPlan &cp, TimedOp &timed)
{
    if (x.buffers.gradBytesPerLayer <= 0)
        return 0.0;
    const double bytes = x.buffers.gradBytesPerLayer * double(cp.layers);
    const double link = x.config.hardware.host_link_bytes_per_s;
    const double copyEnd = std::max(timed.start, rs.gradFree) + bytes / link;
    const double stall = std::max(0.0, copyEnd - std::min(bytes, 2.0 * x.buffers.gradBucketBytes) / link - timed.end);
    timed.end += stall;
    timed.stall += stall;
    rs.gradFree = copyEnd;
    rt.grad_copies.copyOutSeconds += bytes / link;
    rt.grad_copies.stallSeconds += stall;
    return stall;
}

// The global indices of the layers a rank holds, all its chunks.
std::vector<std::int64_t> rankLayerIndices(const Sim &x, std::int64_t r)
{
    std::vector<std::int64_t> layers;
    for (std::int64_t k = 0; k < x.v; ++k) {
        const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
        for (std::int64_t i = 0; i < sl.count; ++i)
            layers.push_back(sl.first + i);
    }
    return layers;
}

// A layer's backward runs its MLP half first, then its attention half; each
// half takes half the layer's time here (a split the roofline does not time).
double halfway(double start, double duration)
{
    return start + duration / 2;
}

// A transient activation lifetime of `op`'s micro-batch and chunk. Times summed
// layer by layer may overshoot the op's end by a rounding error; nothing
// outlives its op.
void pushOpTransient(RankTimeline &rt, const TimedOp &op, double start, double end, Bytes bytes, LifetimeKind kind,
                     std::int32_t layer, SavedPiece piece = SavedPiece::Whole)
{
    if (bytes > 0)
        rt.lifetimes.push_back({.start = std::min(start, op.end),
                                .end = std::min(end, op.end),
                                .bytes = bytes,
                                .category = Category::Activations,
                                .kind = kind,
                                .microbatch = op.op.microbatch,
                                .chunk = op.op.chunk,
                                .layer = layer,
                                .piece = piece});
}

void addTransients(const Sim &x, RankTimeline &rt, const ChunkPlan &cp, const TimedOp &op)
{
    const StrategyConfig &st = x.config.strategy;
    const bool full = st.recompute_granularity == RecomputeGranularity::Full;
    const bool uniform = st.recompute_method == RecomputeMethod::Uniform;
    const std::int64_t n = std::max<std::int64_t>(1, st.recompute_num_layers);
    const bool selective = st.recompute_granularity == RecomputeGranularity::Selective && !st.flash_attention;
    // Per-tensor fates (tensor_policies, or torchtitan's per-op policy): the
    // layer's recomputed tensors are rebuilt as its backward begins (a
    // non-reentrant checkpoint re-runs the block at the first saved tensor it needs).
    const bool policies
        = (!st.tensor_policies.empty() || st.recompute_granularity == RecomputeGranularity::SelectiveOp) && !full;
    const auto push
        = [&](double start, double end, Bytes bytes, LifetimeKind kind, std::int32_t layer,
              SavedPiece piece = SavedPiece::Whole) { pushOpTransient(rt, op, start, end, bytes, kind, layer, piece); };
    // The loss's backward runs first, then the output layer's, then the layers in reverse.
    if (cp.lastStage)
        push(op.start, op.start + x.lossBackwardSeconds, x.buffers.activations.lossBackward, LifetimeKind::LossBackward,
             -1);
    double t = op.start + (cp.lastStage ? x.cost.outputBackward.seconds : 0.0);
    // A weight gradient made before its accumulation: one tensor at a time, the largest at worst.
    if (materializesWeightGradient(x.config.strategy, op.op.microbatch == 0))
        push(op.start + x.lossBackwardSeconds, op.end,
             x.buffers.weightGradient[static_cast<std::size_t>(rt.pipeline_rank)], LifetimeKind::WeightGradient, -1);
    double groupStart = op.end; // uniform full recompute: when the current group was rebuilt
    for (std::int64_t i = cp.layers - 1; i >= 0; --i) {
        const std::size_t li = static_cast<std::size_t>(i);
        const double d = cp.layerBackward[li];
        const double mid = halfway(t, d);
        const std::int32_t layer = static_cast<std::int32_t>(cp.firstLayer + i);
        push(t, mid, x.buffers.activations.mlpBackward, LifetimeKind::BackwardWorkingSet, layer, SavedPiece::Mlp);
        push(mid, t + d, x.buffers.activations.attentionBackward, LifetimeKind::BackwardWorkingSet, layer,
             SavedPiece::Attention);
        // Selective recompute rebuilds the attention core when its backward is reached.
        if (policies) {
            // Rebuilt as the layer's backward begins (a non-reentrant
            // checkpoint re-runs the block at its first unpack), each freed
            // as the node that saved it runs: the MLP half's by the middle
            // of the layer's backward; offloaded tensors were prefetched
            // during the previous layer's backward.
            const Bytes mlpRebuilt = cp.acts.layerCoreMlp[li];
            push(t, mid, mlpRebuilt, LifetimeKind::TensorRecompute, layer, SavedPiece::Mlp);
            push(t, t + d, cp.acts.layerCore[li] - mlpRebuilt, LifetimeKind::TensorRecompute, layer,
                 SavedPiece::Attention);
            push(std::max(op.start, t - d), t + d, cp.acts.layerOffloaded[li], LifetimeKind::TensorOffloadTransit,
                 layer);
        } else if (selective) {
            push(mid, t + d, cp.acts.layerCore[li], LifetimeKind::AttentionRecompute, layer);
        }
        // Full recompute rebuilds a layer (uniform: a group of n layers) when
        // its backward begins; each half of a layer is freed as its backward ends.
        const bool rebuilt = full && (uniform || i < n);
        if (rebuilt) {
            if (!uniform || groupStart > t)
                groupStart = t;
            push(groupStart, mid, cp.acts.layerFullMlp[li], LifetimeKind::RecomputeWorkingSet, layer, SavedPiece::Mlp);
            push(groupStart, t + d, cp.acts.layerFull[li] - cp.acts.layerFullMlp[li], LifetimeKind::RecomputeWorkingSet,
                 layer, SavedPiece::Attention);
            if (uniform && i % n == 0)
                groupStart = op.end; // the next group starts afresh
        }
        t += d;
    }
}

// PyTorch creates a parameter's .grad when autograd's AccumulateGrad first
// runs for it, in the first micro-batch's backward, and
// zero_grad(set_to_none=True) frees it after the step: the gradients appear
// layer by layer as that backward reaches them. The output layer's come right
// after the loss's backward; the embedding's at the end of the first stage's
// backward, except a tied embedding on one stage, whose output-layer share is
// held by autograd from the output layer's backward on.
void addOnDemandGradients(const Sim &x, RankTimeline &rt, const RankState &rs, const LedgerEntry &entry,
                          std::int32_t index)
{
    std::vector<const TimedOp *> firstBackward(rs.chunks.size(), nullptr);
    for (const TimedOp &op : rt.ops)
        if (op.op.kind == OpKind::Backward && !firstBackward[static_cast<std::size_t>(op.op.chunk)])
            firstBackward[static_cast<std::size_t>(op.op.chunk)] = &op;
    const auto push
        = [&](double start, Bytes bytes, std::int32_t chunk, std::int32_t layer, SavedPiece piece = SavedPiece::Whole) {
              start = std::min(start, rt.pipeline_end); // a rounding error never delays a gradient past the backward
              if (bytes > 0)
                  rt.lifetimes.push_back({.start = start,
                                          .end = rt.optimizer_end,
                                          .bytes = bytes,
                                          .category = entry.category,
                                          .kind = LifetimeKind::Gradients,
                                          .microbatch = -1,
                                          .chunk = chunk,
                                          .layer = layer,
                                          .entry = index,
                                          .piece = piece});
          };
    const ParallelismConfig &par = x.config.parallelism;
    const bool tiedOnOneStage = !x.config.model.untie_embeddings_and_output_weights && x.p == 1;
    for (std::size_t k = 0; k < rs.chunks.size(); ++k) {
        const ChunkPlan &cp = rs.chunks[k];
        const TimedOp *op = firstBackward[k];
        const std::int32_t chunk = static_cast<std::int32_t>(k);
        if (!op)
            continue;
        const bool firstStage = k == 0 && rt.pipeline_rank == 0;
        if (entry.group == ParamGroup::OutputLayer && cp.lastStage)
            return push(op->start + x.lossBackwardSeconds, entry.bytes, chunk, -1);
        if (entry.group == ParamGroup::Embeddings && tiedOnOneStage && cp.lastStage)
            return push(op->start + x.lossBackwardSeconds, entry.bytes, chunk, -1);
        if (entry.group == ParamGroup::Embeddings && firstStage)
            return push(op->end, entry.bytes, chunk, -1);
    }
    if (entry.group != ParamGroup::Layers && entry.group != ParamGroup::Experts)
        return push(rt.ops.empty() ? 0.0 : rt.ops.front().start, entry.bytes, -1, -1);

    // Transformer layers: the entry's bytes shared by the layers' parameters,
    // each half's gradients once that half's backward has run (autograd frees
    // the half's saved tensors as it creates them).
    const auto paramsOf = [&](bool moe) {
        return layerParams(x.config.model, moe, par.tensor_model_parallel_size, par.expert_model_parallel_size,
                           par.expertTensorParallel());
    };
    const LayerParams dense = paramsOf(false), moe = x.config.model.isMoe() ? paramsOf(true) : dense;
    const auto halvesOf = [&](std::int64_t layer) -> std::pair<std::int64_t, std::int64_t> {
        const LayerParams &lp = x.config.model.isMoeLayer(layer) ? moe : dense;
        if (entry.group == ParamGroup::Experts)
            return {lp.expert.params, 0};
        return {lp.mlpDense, lp.dense.params - lp.mlpDense};
    };
    std::int64_t total = 0;
    for (const ChunkPlan &cp : rs.chunks)
        for (std::int64_t i = 0; i < cp.layers; ++i) {
            const auto [mlp, attention] = halvesOf(cp.firstLayer + i);
            total += mlp + attention;
        }
    if (total <= 0)
        return;
    Bytes given = 0;
    std::int64_t counted = 0;
    // Cumulative shares, so that the pieces add up to the entry exactly.
    const auto pushUpTo
        = [&](double start, std::int64_t params, std::int32_t chunk, std::int32_t layer, SavedPiece half) {
              counted += params;
              const Bytes upTo = static_cast<Bytes>(static_cast<long double>(entry.bytes) * counted / total);
              push(start, upTo - given, chunk, layer, half);
              given = upTo;
          };
    for (std::size_t k = 0; k < rs.chunks.size(); ++k) {
        const ChunkPlan &cp = rs.chunks[k];
        const TimedOp *op = firstBackward[k];
        double t = op ? op->start + (cp.lastStage ? x.cost.outputBackward.seconds : 0.0) : 0.0;
        for (std::int64_t i = cp.layers - 1; i >= 0; --i) {
            const double d = cp.layerBackward[static_cast<std::size_t>(i)];
            const auto [mlp, attention] = halvesOf(cp.firstLayer + i);
            const std::int32_t layer = static_cast<std::int32_t>(cp.firstLayer + i);
            pushUpTo(halfway(t, d), mlp, static_cast<std::int32_t>(k), layer, SavedPiece::Mlp);
            pushUpTo(t + d, attention, static_cast<std::int32_t>(k), layer, SavedPiece::Attention);
            t += d;
        }
    }
}

// A row alive only in part of each backward (LedgerEntry::window): in each
// backward op (and deferred weight pass), from the end of the loss's and the
// output layer's backward (last stage) to its end; from the start of the
// output layer's backward; or during the first layer's backward, the last.
void addBackwardWindowRow(const Sim &x, const RankState &rs, RankTimeline &rt, const LedgerEntry &entry,
                          std::int32_t index)
{
    for (const TimedOp &op : rt.ops) {
        if (op.op.kind == OpKind::Forward)
            continue;
        const std::size_t k = static_cast<std::size_t>(op.op.chunk);
        const bool backward = op.op.kind == OpKind::Backward && k < rs.chunks.size();
        const bool last = backward && rs.chunks[k].lastStage;
        double start = std::min(op.start + (last ? x.cost.outputBackward.seconds : 0.0), op.end);
        if (entry.window == BackwardWindow::FromOutputLayer)
            start = std::min(op.start + (last ? x.lossBackwardSeconds : 0.0), op.end);
        else if (entry.window == BackwardWindow::End)
            start = backward && !rs.chunks[k].layerBackward.empty()
                        ? std::max(start, op.end - rs.chunks[k].layerBackward.front())
                        : op.end;
        if (op.end > start)
            rt.lifetimes.push_back({.start = start,
                                    .end = op.end,
                                    .bytes = entry.bytes,
                                    .category = entry.category,
                                    .kind = LifetimeKind::CollectiveBuffers,
                                    .microbatch = op.op.microbatch,
                                    .chunk = op.op.chunk,
                                    .layer = -1,
                                    .entry = index});
    }
}

// The bytes of a group stored in FP8, over its layers.
Bytes storedFp8(const ChunkActivations &acts)
{
    Bytes sum = 0;
    for (const Bytes b : acts.layerStoredFp8)
        sum += b;
    return sum;
}

// Where a group's stay on the device begins: at its forward (`forwardEnd`
// set: the pieces appear as their layers' forwards save them), or at a copy
// back that brings the whole stay at once.
struct GroupStart
{
    double from = 0;
    double forwardEnd = 0; // the forward's end; 0 when the stay begins with a copy back
};

// A group's last stay on the device, until its backward. Autograd frees what
// an op saved once that op's backward has run, so the group leaves piece by
// piece: the last stage's loss and output-layer inputs after the output
// layer's backward, each layer's MLP half and attention half after their
// own, the first stage's embedding mask at the end.
//
// With activation balance only a slice of the group stays: [lo, hi) of its
// bytes counted from the bottom, the earliest saved (and last freed) first.
void addGroupStay(const Sim &x, RankTimeline &rt, const ChunkPlan &cp, const TimedOp &op, const GroupStart &start,
                  bool offloaded, Bytes lo = 0, Bytes hi = std::numeric_limits<Bytes>::max(), std::int32_t peer = -1)
{
    const std::size_t first = rt.lifetimes.size();
    Bytes above = 0; // bytes of the pieces freed before this one
    // `fp8`: the part of the piece stored in FP8, kept in proportion when the slice cuts it.
    const auto push
        = [&](double end, Bytes bytes, std::int32_t layer, SavedPiece piece, Bytes fp8 = 0, double from = 0) {
              if (bytes <= 0)
                  return;
              const Bytes top = cp.groupBytes - above;
              above += bytes;
              const Bytes whole = bytes;
              bytes = std::min(top, hi) - std::max(top - bytes, lo);
              if (bytes <= 0)
                  return;
              if (bytes < whole)
                  fp8 = static_cast<Bytes>(double(fp8) * double(bytes) / double(whole));
              from = std::max(from, start.from);
              Lifetime l{.start = from,
                         .end = std::clamp(end, from, std::max(from, op.end)),
                         .bytes = bytes,
                         .category = Category::Activations,
                         .kind = LifetimeKind::Activations,
                         .microbatch = op.op.microbatch,
                         .chunk = op.op.chunk,
                         .layer = layer,
                         .offloaded = offloaded,
                         .peer = peer,
                         .fp8Bytes = std::min(fp8, bytes),
                         .piece = bytes < whole ? SavedPiece::Whole : piece};
              rt.lifetimes.push_back(l);
          };
    // When each piece was saved: as its layer's forward ran (each half in its
    // half of the layer's time), the last stage's extras as the output layer's
    // forward begins, the first stage's at the start; or all at once when the
    // stay begins with a copy back.
    const auto savedAt = [&](double offset) {
        return start.forwardEnd > start.from && cp.forward > 0
                   ? start.from + (start.forwardEnd - start.from) * std::min(1.0, offset / cp.forward)
                   : start.from;
    };
    const std::vector<double> &layerStart = cp.layerForwardStart;
    double t = op.start;
    Bytes given = 0;
    if (cp.lastStage) {
        t += x.cost.outputBackward.seconds;
        push(t, cp.lastExtra, -1, SavedPiece::LastStage, 0, savedAt(layerStart.back()));
        given += cp.lastExtra;
    }
    for (std::int64_t i = cp.layers - 1; i >= 0; --i) {
        const std::size_t li = static_cast<std::size_t>(i);
        const std::int32_t layer = static_cast<std::int32_t>(cp.firstLayer + i);
        const double d = cp.layerBackward[li];
        push(halfway(t, d), cp.acts.layerStoredMlp[li], layer, SavedPiece::Mlp, cp.acts.layerStoredFp8Mlp[li],
             savedAt(layerStart[li] + cp.layerForward[li] / 2));
        push(t + d, cp.acts.layerStored[li] - cp.acts.layerStoredMlp[li], layer, SavedPiece::Attention,
             cp.acts.layerStoredFp8[li] - cp.acts.layerStoredFp8Mlp[li], savedAt(layerStart[li]));
        given += cp.acts.layerStored[li];
        t += d;
    }
    push(op.end, cp.groupBytes - given, -1, SavedPiece::FirstStage, 0, start.from);
    // The pieces share one gantt row, each inside the one saved before it
    // (saved later, freed sooner): the longest first, so that each shorter one
    // is drawn, and hit, above it.
    std::reverse(rt.lifetimes.begin() + static_cast<std::ptrdiff_t>(first), rt.lifetimes.end());
}

// The rank a donor parks on first (the ledger's largest share comes first in
// rank order); -1 when it parks nothing.
std::int32_t firstReceiver(const Ledger &ledger, int donor)
{
    for (const ParkedActivations &pa : ledger.parked)
        if (pa.from == donor)
            return pa.to;
    return -1;
}

// ---- Set-up: the costs, activations and buffer sizes every rank shares.

// `dense`, `moe`: what a layer of each kind saves (layerActivations, totals
// only). The buffers, sized from the ledger, come with withBuffers.
Sim simulationOf(const Config &config, const LayerActivations &dense, const LayerActivations &moe)
{
    const ParallelismConfig &par = config.parallelism;
    Sim x{.config = config,
          .p = par.pipeline_model_parallel_size,
          .v = par.virtual_pipeline_model_parallel_size,
          .m = config.microBatches(),
          .stages = stageLayers(config),
          .cost = costModel(config),
          .dense = dense,
          .moe = moe,
          .stage = stageActivations(config),
          .buffers = {},
          .lossBackwardSeconds = 0,
          .muon
          = config.training.optimizer == Optimizer::Muon && config.strategy.optimizer_offload == OffloadTarget::None};
    return x;
}

// The transient buffers' sizes, which take the ledger's largest parameter tensors.
void withBuffers(Sim &x, const Ledger &ledger)
{
    x.buffers = backwardBuffers(x.config, ledger.largestParameterTensors());
    // The loss backward is memory-bound: it reads the saved fp32 softmax and
    // writes its gradients, a small part of the output layer's backward.
    x.lossBackwardSeconds = std::min(x.cost.outputBackward.seconds, 3.0 * double(x.buffers.activations.lossForward)
                                                                        / x.config.hardware.hbm_bytes_per_s);
}

// Each rank's ops (`allOps`, in schedule order), its chunks and its copy
// streams; sizes the rank's timeline rows.
std::vector<RankState> rankStates(const Sim &x, Timeline &tl, std::vector<std::vector<PipelineOp>> allOps)
{
    const Config &config = x.config;
    const ParallelismConfig &par = config.parallelism;
    std::vector<RankState> states;
    states.reserve(static_cast<std::size_t>(x.p));
    tl.ranks.resize(static_cast<std::size_t>(x.p));
    const bool balance = !tl.ledger.parked.empty();
    const std::size_t groups = static_cast<std::size_t>(x.v * x.m);
    for (std::int64_t r = 0; r < x.p; ++r) {
        std::vector<ChunkPlan> chunks = planChunks(x, r);
        // A donor's copies go to its receivers over NVLink or the network,
        // straight from the saved tensors: no staging buffer holds a forward back.
        const double parkLink = balance ? donorLinkBytesPerS(tl.ledger, static_cast<int>(r)) : 0.0;
        std::vector<ChunkPlan> inputChunks;
        if (splitsBackward(par.schedule()))
            for (const ChunkPlan &cp : chunks)
                inputChunks.push_back(inputGradientPlan(cp));
        states.push_back(RankState{
            .ops = std::move(allOps[static_cast<std::size_t>(r)]),
            .chunks = std::move(chunks),
            .inputChunks = std::move(inputChunks),
            .offload = parkLink > 0 ? ActivationOffload(parkLink, int(x.v * x.m) + 1)
                                    : ActivationOffload(config.hardware.host_link_bytes_per_s,
                                                        int(config.strategy.activation_offload_buffers)),
            .copyOutEnd = std::vector<double>(groups, -1.0),
            .copyInStart = std::vector<double>(groups, 0.0),
            .parkedShare = parkLink > 0 ? parkedShare(tl.ledger, static_cast<int>(r)) : 0.0,
            .parkLink = parkLink,
            .copyInEnd = std::vector<double>(groups, 0.0),
        });
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        rt.pipeline_rank = static_cast<int>(r);
        rt.ops.reserve(states.back().ops.size());
        std::int64_t mostLayers = 0;
        for (const ChunkPlan &cp : states.back().chunks)
            mostLayers = std::max(mostLayers, cp.layers);
        // Per backward op: each layer's two saved halves, two working sets and what recompute rebuilds.
        rt.lifetimes.reserve(states.back().ops.size() * static_cast<std::size_t>(2 + 3 * mostLayers) + 32);
    }
    return states;
}

// ---- The per-rank op loop: every rank's ops in order, each as soon as its inputs have arrived.

class OpLoop
{
public:
    OpLoop(const Sim &x, std::vector<RankState> &states, Timeline &tl)
        : x(x)
        , par(x.config.parallelism)
        , states(states)
        , tl(tl)
        , positions(par.pipelineStages())
        , fEnd(static_cast<std::size_t>(pipelineDirections(par) * positions * x.m), -1.0)
        , bEnd(fEnd.size(), -1.0)
        , weightFrom(static_cast<std::size_t>(x.p * x.v * x.m), -1.0)
        , offload(x.config.strategy.activation_offload != OffloadTarget::None)
    { }

    void run()
    {
        std::vector<std::int64_t> work;
        std::vector<char> queued(static_cast<std::size_t>(x.p), 1);
        for (std::int64_t r = x.p - 1; r >= 0; --r)
            work.push_back(r);
        while (!work.empty()) {
            const std::int64_t r = work.back();
            work.pop_back();
            queued[static_cast<std::size_t>(r)] = 0;
            RankState &rs = states[static_cast<std::size_t>(r)];
            while (rs.next < rs.ops.size()) {
                const PipelineOp op = rs.ops[rs.next];
                const StagePlace at = stagePlace(par, r, op.chunk);
                std::optional<double> ready = readyAt(op, at);
                // DualPipe's overlapped pair starts once both its inputs are
                // in (dualpipe.py's _forward_backward_chunk receives both,
                // then computes): the wait that makes the README's bubble.
                if (ready && opensOverlappedPair(par.schedule(), rs.ops, rs.next)) {
                    const PipelineOp &b = rs.ops[rs.next + 1];
                    const std::optional<double> other = readyAt(b, stagePlace(par, r, b.chunk));
                    ready = other ? std::optional<double>(std::max(*ready, *other)) : std::nullopt;
                }
                if (!ready)
                    break;
                runOp(r, rs, op, at, *ready);
                // The neighbour that consumes this op's output may now proceed.
                const std::int64_t consumer = op.kind == OpKind::Forward ? at.position + 1 : at.position - 1;
                if (op.kind != OpKind::Weight && consumer >= 0 && consumer < positions) {
                    const std::int64_t cr = rankChunkAt(par, at.direction, consumer).rank;
                    if (cr != r && !queued[static_cast<std::size_t>(cr)]) {
                        queued[static_cast<std::size_t>(cr)] = 1;
                        work.push_back(cr);
                    }
                }
            }
        }
        // Every schedule generated here is deadlock-free; a rank left waiting would
        // be a bug in scheduleOps, and a silent partial timeline would hide it.
        for (const RankState &rs : states)
            if (rs.next != rs.ops.size())
                throw std::logic_error("pipeline schedule deadlocked");
    }

private:
    // Dependencies run along positions of a direction (DualPipe has two).
    std::size_t slot(StagePlace at, std::int64_t mb) const
    {
        return static_cast<std::size_t>((at.direction * positions + at.position) * x.m + mb);
    }

    // When the op's input has arrived; none while its producer has not run.
    std::optional<double> readyAt(const PipelineOp &op, const StagePlace &at) const
    {
        if (op.kind == OpKind::Forward) {
            if (at.position == 0)
                return 0.0;
            const double dep = fEnd[slot({at.direction, at.position - 1}, op.microbatch)];
            return dep < 0 ? std::nullopt : std::optional<double>(dep + x.cost.p2pSeconds);
        }
        if (op.kind == OpKind::Weight)
            return 0.0; // its own B ran earlier on this rank
        if (at.position == positions - 1)
            return fEnd[slot(at, op.microbatch)];
        const double dep = bEnd[slot({at.direction, at.position + 1}, op.microbatch)];
        return dep < 0 ? std::nullopt : std::optional<double>(dep + x.cost.p2pSeconds);
    }

    void runOp(std::int64_t r, RankState &rs, const PipelineOp &op, const StagePlace &at, double ready)
    {
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        const bool inputOnly = op.kind == OpKind::Backward && op.deferredWeight;
        const ChunkPlan &cp = (inputOnly ? rs.inputChunks : rs.chunks)[static_cast<std::size_t>(op.chunk)];
        const std::size_t group = static_cast<std::size_t>(op.chunk * x.m + op.microbatch);
        TimedOp timed{op, std::max(rs.free, ready), 0, 0};
        double gradStall = 0; // grad_offload: the backward held by a full double buffer
        // DualPipe's pairs: the forward opens one, the backward right after closes it.
        double cut = 0;
        if (opensOverlappedPair(par.schedule(), rs.ops, rs.next)) {
            const PipelineOp &b = rs.ops[rs.next + 1];
            const auto [forwardCut, backwardCut] = pairCuts(cp, rs.chunks[static_cast<std::size_t>(b.chunk)]);
            cut = forwardCut;
            rs.pairCut = backwardCut;
        } else if (op.kind == OpKind::Backward) {
            cut = std::exchange(rs.pairCut, 0.0);
        }
        if (op.kind == OpKind::Weight) {
            timed.end = timed.start + cp.weight;
            gradStall = streamGradients(x, rs, rt, cp, timed);
            const double from = weightFrom[static_cast<std::size_t>(r * x.v * x.m) + group];
            if (cp.weightPass > 0 && from >= 0)
                rt.lifetimes.push_back({.start = from,
                                        .end = timed.end,
                                        .bytes = cp.weightPass,
                                        .category = Category::Activations,
                                        .kind = LifetimeKind::WeightPassInputs,
                                        .microbatch = op.microbatch,
                                        .chunk = op.chunk,
                                        .layer = -1});
        } else if (op.kind == OpKind::Forward) {
            runForward(rs, rt, cp, timed, group, cut);
            fEnd[slot(at, op.microbatch)] = timed.end;
        } else {
            gradStall = runBackward(rs, rt, cp, timed, group, inputOnly, cut);
            bEnd[slot(at, op.microbatch)] = timed.end;
            if (inputOnly)
                weightFrom[static_cast<std::size_t>(r * x.v * x.m) + group] = timed.end;
            addTransients(x, rt, cp, timed);
        }
        rt.busy_s += timed.end - timed.start;
        rt.copies.stallSeconds += timed.stall - gradStall;
        rs.previousStart = timed.start;
        rs.free = timed.end;
        rt.ops.push_back(timed);
        ++rs.next;
    }

    // `cut`: what an overlapped pair hides of the pass (pairCuts).
    void runForward(RankState &rs, RankTimeline &rt, const ChunkPlan &cp, TimedOp &timed, std::size_t group, double cut)
    {
        const PipelineOp &op = timed.op;
        const StrategyConfig &st = x.config.strategy;
        if (offload) {
            const double s = rs.offload.forwardStart(timed.start);
            timed.stall = s - timed.start;
            timed.start = s;
        }
        timed.end = timed.start + cp.forward - cut;
        // Offload unless this group's backward is the very next op.
        const bool nextIsOwnBackward = rs.next + 1 < rs.ops.size() && rs.ops[rs.next + 1].kind == OpKind::Backward
                                       && rs.ops[rs.next + 1].chunk == op.chunk
                                       && rs.ops[rs.next + 1].microbatch == op.microbatch;
        if (offload && !nextIsOwnBackward)
            rs.copyOutEnd[group] = rs.offload.copyOut(timed.end, double(cp.groupBytes));
        // Activation balance: the parked share, the layers saved first,
        // leaves as soon as those layers' forwards have run.
        if (rs.parkLink > 0 && cp.acts.stored > 0)
            rs.copyOutEnd[group] = rs.offload.copyOut(timed.start + rs.parkedShare * (cp.forward - cp.outputForward),
                                                      rs.parkedShare * double(cp.acts.stored));
        const TransientActivations &transients = x.buffers.activations;
        if (st.recompute_granularity == RecomputeGranularity::Full && cp.layers > 0 && transients.recomputedForward > 0)
            rt.lifetimes.push_back({.start = timed.start,
                                    .end = timed.end - cp.outputForward,
                                    .bytes = transients.recomputedForward,
                                    .category = Category::Activations,
                                    .kind = LifetimeKind::ForwardWorkingSet,
                                    .microbatch = op.microbatch,
                                    .chunk = op.chunk,
                                    .layer = -1});
        addUnsavedForward(rt, cp, timed);
        if (!st.tensor_policies.empty() && cp.acts.offloaded > 0 && cp.layers > 0) {
            // Each layer's offloaded tensors stay until the next layer's forward has copied them out.
            const double layerEnd = timed.end - cp.outputForward;
            const double dl = (layerEnd - timed.start) / double(cp.layers);
            for (std::int64_t i = 0; i < cp.layers; ++i) {
                const Bytes b = cp.acts.layerOffloaded[static_cast<std::size_t>(i)];
                const double from = timed.start + double(i) * dl;
                if (b > 0)
                    rt.lifetimes.push_back({.start = from,
                                            .end = std::min(timed.end, from + 2 * dl),
                                            .bytes = b,
                                            .category = Category::Activations,
                                            .kind = LifetimeKind::TensorOffloadTransit,
                                            .microbatch = op.microbatch,
                                            .chunk = op.chunk,
                                            .layer = static_cast<std::int32_t>(cp.firstLayer + i)});
            }
        }
        if (cp.lastStage && transients.lossForward > 0)
            rt.lifetimes.push_back({.start = timed.end - cp.outputForward,
                                    .end = timed.end,
                                    .bytes = transients.lossForward,
                                    .category = Category::Activations,
                                    .kind = LifetimeKind::LossTemporaries,
                                    .microbatch = op.microbatch,
                                    .chunk = op.chunk,
                                    .layer = -1});
    }

    // Per-tensor fates (tensor_policies, or torchtitan's per-op policy) and
    // Megatron's selective recompute of an unfused attention core: a layer's
    // forward makes the tensors its backward will rebuild as well as those it
    // keeps, and frees them as it goes (the checkpoint packs a holder, not
    // the tensor; Megatron runs the core under no_grad). Each half's are
    // alive while that half runs, and the allocator's stream makes them in
    // forward order among what the half keeps (LifetimeTensors::forwardPositions).
    void addUnsavedForward(RankTimeline &rt, const ChunkPlan &cp, const TimedOp &timed) const
    {
        const StrategyConfig &st = x.config.strategy;
        const bool policies
            = (!st.tensor_policies.empty() || st.recompute_granularity == RecomputeGranularity::SelectiveOp
               || (st.recompute_granularity == RecomputeGranularity::Selective && !st.flash_attention))
              && st.recompute_granularity != RecomputeGranularity::Full;
        if (!policies || cp.layers <= 0 || cp.forward <= 0)
            return;
        const auto at = [&](double offset) {
            return timed.start + (timed.end - timed.start) * std::min(1.0, offset / cp.forward);
        };
        constexpr LifetimeKind kind = LifetimeKind::ForwardWorkingSet;
        for (std::int64_t i = 0; i < cp.layers; ++i) {
            const std::size_t li = static_cast<std::size_t>(i);
            const std::int32_t layer = static_cast<std::int32_t>(cp.firstLayer + i);
            const double from = cp.layerForwardStart[li], half = cp.layerForward[li] / 2;
            const Bytes mlp = cp.acts.layerCoreMlp[li];
            pushOpTransient(rt, timed, at(from), at(from + half), cp.acts.layerCore[li] - mlp, kind, layer,
                            SavedPiece::Attention);
            pushOpTransient(rt, timed, at(from + half), at(from + 2 * half), mlp, kind, layer, SavedPiece::Mlp);
        }
    }

    // Returns the stall of the gradient copies (grad_offload).
    double runBackward(RankState &rs, RankTimeline &rt, const ChunkPlan &cp, TimedOp &timed, std::size_t group,
                       bool inputOnly, double cut)
    {
        if (rs.copyOutEnd[group] >= 0 && rs.parkLink > 0) {
            // Activation balance: the copy back runs under the backward of
            // the rest of the group and must land when it reaches the
            // parked layers; what does not fit stalls the backward.
            const double bytes = rs.parkedShare * double(cp.acts.stored);
            const double copy = bytes / rs.parkLink;
            const double need = timed.start + (1.0 - rs.parkedShare) * cp.backward;
            const double back = rs.offload.copyIn(std::max({need - copy, timed.start, rs.copyOutEnd[group]}), bytes);
            rs.copyInStart[group] = back - copy;
            rs.copyInEnd[group] = back;
            if (back > need) {
                timed.stall = back - need;
                timed.start += timed.stall;
            }
        } else if (rs.copyOutEnd[group] >= 0) {
            const double issue = std::max(rs.previousStart, rs.copyOutEnd[group]);
            rs.copyInStart[group] = issue;
            const double back = rs.offload.copyIn(issue, double(cp.groupBytes));
            if (back > timed.start) {
                timed.stall = back - timed.start;
                timed.start = back;
            }
        }
        timed.end = timed.start + cp.backward - cut;
        if (inputOnly) // a B alone makes no weight gradients; its W sends them
            return 0.0;
        return streamGradients(x, rs, rt, cp, timed);
    }

    const Sim &x;
    const ParallelismConfig &par;
    std::vector<RankState> &states;
    Timeline &tl;
    const std::int64_t positions;
    std::vector<double> fEnd, bEnd; // per (direction, position, micro-batch): when its forward, backward ended
    std::vector<double> weightFrom; // per rank's (chunk, micro-batch): its B's end, when W is deferred
    const bool offload;
};

// ---- After the pipeline: optimizer steps, then every lifetime the ops did not make.

// Times each rank's gradient reduction and optimizer step; returns the
// recompute time of the busiest rank.
double timeOptimizerSteps(const Sim &x, std::vector<RankState> &states, Timeline &tl)
{
    const Config &config = x.config;
    const ParallelismConfig &par = config.parallelism;
    double recompute = 0;
    StepInputs stepInputs = stepInputsOf(config);
    for (std::int64_t r = 0; r < x.p; ++r) {
        RankState &rs = states[static_cast<std::size_t>(r)];
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        rt.pipeline_end = rs.free;
        std::int64_t expertParams = 0;
        double rankRecompute = 0;
        for (const ChunkPlan &cp : rs.chunks) {
            for (std::int64_t i = 0; i < cp.layers; ++i)
                if (config.model.isMoeLayer(cp.firstLayer + i))
                    expertParams += layerParams(config.model, true, par.tensor_model_parallel_size,
                                                par.expert_model_parallel_size, par.expertTensorParallel())
                                        .expert.params;
            rankRecompute += cp.recompute * double(x.m);
        }
        recompute = std::max(recompute, rankRecompute);
        const RankLedger &ledger = tl.ledger.ranks[static_cast<std::size_t>(r)];
        // The data-parallel reduction of this rank's gradients (what of it the
        // last backward does not hide) comes before the optimizer step.
        stepInputs.paramsOnRank = double(ledger.parameters);
        rt.optimizer_start = rt.pipeline_end + stepTime(stepInputs, config.hardware).dataComm;
        rs.expertParams = expertParams;
        OptimizerCost oc = optimizerCost(config, ledger.parameters, expertParams);
        if (x.buffers.gradBytesPerLayer > 0) // the gradients left during backward; the buffered buckets drain first
            oc.copyOutSeconds = std::max(0.0, rs.gradFree - rt.pipeline_end);
        if (x.muon)
            oc.deviceSeconds += muonStep(config.hardware, muonFullMatrices(config, x.stages, r),
                                         muonLocalMatrixElements(config, rankLayerIndices(x, r)),
                                         stepInputs.dataOnNvlink, muonSharers(config))
                                    .seconds();
        rt.optimizer_device_s = oc.deviceSeconds;
        rt.optimizer_copy_out_s = oc.copyOutSeconds;
        rt.optimizer_cpu_s = oc.cpuSeconds;
        rt.optimizer_copy_in_s = oc.copyInSeconds;
        rt.optimizer_end = rt.optimizer_start + oc.total();
        tl.pipeline_time = std::max(tl.pipeline_time, rt.pipeline_end);
        tl.step_time = std::max(tl.step_time, rt.optimizer_end);
        rt.copies.copyOutSeconds = rs.offload.copyOutSeconds();
        rt.copies.copyInSeconds = rs.offload.copyInSeconds();
    }
    return recompute;
}

// Activation balance: each donor's parked slices in its receivers' memory,
// from the copy out's start to the copy back's end, split as the ledger splits them.
void addParkedSlices(const Sim &x, const std::vector<RankState> &states, Timeline &tl)
{
    if (tl.ledger.parked.empty())
        return;
    for (std::int64_t r = 0; r < x.p; ++r) {
        const RankState &rs = states[static_cast<std::size_t>(r)];
        const RankLedger &donor = tl.ledger.ranks[static_cast<std::size_t>(r)];
        if (rs.parkLink <= 0 || donor.parked_out_bytes <= 0)
            continue;
        for (const TimedOp &op : tl.ranks[static_cast<std::size_t>(r)].ops) {
            const std::size_t group = static_cast<std::size_t>(op.op.chunk * x.m + op.op.microbatch);
            if (op.op.kind != OpKind::Backward || rs.copyOutEnd[group] < 0)
                continue;
            const double bytes = rs.parkedShare * double(rs.chunks[static_cast<std::size_t>(op.op.chunk)].acts.stored);
            const double from = rs.copyOutEnd[group] - bytes / rs.parkLink;
            for (const ParkedActivations &pa : tl.ledger.parked) {
                if (pa.from != static_cast<int>(r))
                    continue;
                Lifetime l{.start = from,
                           .end = rs.copyInEnd[group],
                           .bytes = static_cast<Bytes>(bytes * double(pa.bytes) / double(donor.parked_out_bytes)),
                           .category = Category::Activations,
                           .kind = LifetimeKind::ParkedActivations,
                           .microbatch = op.op.microbatch,
                           .chunk = op.op.chunk,
                           .layer = -1,
                           .peer = static_cast<std::int32_t>(r)};
                tl.ranks[static_cast<std::size_t>(pa.to)].lifetimes.push_back(l);
            }
        }
    }
}

// The ledger's device rows other than activations: whole-iteration, the
// optimizer step's, or (on-demand gradients) from the first backward.
void addLedgerRows(const Sim &x, const RankState &rs, RankTimeline &rt, const RankLedger &ledger, double stepEnd)
{
    for (std::size_t e = 0; e < ledger.entries.size(); ++e) {
        const LedgerEntry &entry = ledger.entries[e];
        if (entry.placement != Placement::Device || entry.category == Category::Activations)
            continue;
        const bool gradients = entry.category == Category::Gradients;
        if (entry.transient) { // Muon's Newton–Schulz working set: the optimizer step's alone
            rt.lifetimes.push_back({.start = rt.optimizer_start,
                                    .end = rt.optimizer_end,
                                    .bytes = entry.bytes,
                                    .category = entry.category,
                                    .kind = LifetimeKind::OptimizerTemporaries,
                                    .microbatch = -1,
                                    .chunk = -1,
                                    .layer = -1,
                                    .entry = static_cast<std::int32_t>(e)});
            continue;
        }
        if (entry.window != BackwardWindow::None) {
            addBackwardWindowRow(x, rs, rt, entry, static_cast<std::int32_t>(e));
            continue;
        }
        if (gradients && x.config.strategy.grad_buffer == GradBuffer::OnDemand && entry.group != ParamGroup::None) {
            addOnDemandGradients(x, rt, rs, entry, static_cast<std::int32_t>(e));
            continue;
        }
        rt.lifetimes.push_back({.start = 0.0,
                                .end = stepEnd,
                                .bytes = entry.bytes,
                                .category = entry.category,
                                .kind = gradients ? LifetimeKind::Gradients : LifetimeKind::Persistent,
                                .microbatch = -1,
                                .chunk = -1,
                                .layer = -1,
                                .entry = static_cast<std::int32_t>(e)});
    }
}

// Activation groups from their forward to their backward; the staircase is
// the most of them alive at once.
void addActivationGroups(const Sim &x, const RankState &rs, RankTimeline &rt, const Ledger &ledger)
{
    const std::int64_t r = rt.pipeline_rank;
    std::vector<double> forwardStart(static_cast<std::size_t>(x.v * x.m), 0.0);
    std::vector<double> forwardEnd(forwardStart.size(), 0.0);
    std::int64_t alive = 0;
    for (const TimedOp &op : rt.ops) {
        const std::size_t group = static_cast<std::size_t>(op.op.chunk * x.m + op.op.microbatch);
        const ChunkPlan &cp
            = (op.op.deferredWeight ? rs.inputChunks : rs.chunks)[static_cast<std::size_t>(op.op.chunk)];
        if (op.op.kind == OpKind::Forward) {
            forwardStart[group] = op.start;
            forwardEnd[group] = op.end;
            rt.max_alive_chunks = std::max(rt.max_alive_chunks, ++alive);
            continue;
        }
        if (op.op.kind == OpKind::Weight)
            continue;
        --alive;
        if (cp.groupBytes <= 0)
            continue;
        if (rs.copyOutEnd[group] >= 0 && rs.parkLink > 0) {
            // Balance: the parked slice until it has left, the rest until its
            // backward, the parked slice again from its copy back.
            const Bytes parked = static_cast<Bytes>(rs.parkedShare * double(cp.acts.stored));
            const std::int32_t to = firstReceiver(ledger, static_cast<int>(r));
            const Bytes fp8 = storedFp8(cp.acts);
            Lifetime leaving{.start = forwardStart[group],
                             .end = rs.copyOutEnd[group],
                             .bytes = parked,
                             .category = Category::Activations,
                             .kind = LifetimeKind::Activations,
                             .microbatch = op.op.microbatch,
                             .chunk = op.op.chunk,
                             .layer = -1,
                             .peer = to,
                             .fp8Bytes = static_cast<Bytes>(rs.parkedShare * double(fp8))};
            rt.lifetimes.push_back(leaving);
            addGroupStay(x, rt, cp, op, {forwardStart[group], forwardEnd[group]}, false, parked);
            addGroupStay(x, rt, cp, op, {rs.copyInStart[group]}, true, 0, parked, to);
        } else if (rs.copyOutEnd[group] >= 0) {
            rt.lifetimes.push_back({.start = forwardStart[group],
                                    .end = rs.copyOutEnd[group],
                                    .bytes = cp.groupBytes,
                                    .category = Category::Activations,
                                    .kind = LifetimeKind::Activations,
                                    .microbatch = op.op.microbatch,
                                    .chunk = op.op.chunk,
                                    .layer = -1,
                                    .fp8Bytes = storedFp8(cp.acts)});
            addGroupStay(x, rt, cp, op, {rs.copyInStart[group]}, true);
        } else {
            addGroupStay(x, rt, cp, op, {forwardStart[group], forwardEnd[group]}, false);
        }
    }
    // In stage-micro-batches, as the ledger counts them: v chunks make a stage, but each of DualPipe's two is a
    // whole stage (one per direction).
    rt.max_alive_microbatches = double(rt.max_alive_chunks) / double(x.v / pipelineDirections(x.config.parallelism));
}

// What the optimizer step allocates while it runs (optimizer_kernel).
void addOptimizerScratch(const Sim &x, const RankState &rs, RankTimeline &rt, const RankLedger &ledger)
{
    const Bytes scratch = optimizerStepTemporaries(
        x.config, optimizerShard(x.config, ledger.parameters, rs.expertParams), ledger.largest_parameter_tensor);
    if (scratch > 0)
        rt.lifetimes.push_back({.start = rt.optimizer_start,
                                .end = rt.optimizer_end,
                                .bytes = scratch,
                                .category = Category::OptimizerStates,
                                .kind = LifetimeKind::OptimizerTemporaries,
                                .microbatch = -1,
                                .chunk = -1,
                                .layer = -1});
}

} // namespace

Timeline simulateIteration(const Config &config, const TimelineOptions &options)
{
    Timeline tl;
    // Every rank's op order, scheduled once for the ledger and the simulation;
    // ZB-V's depends on how much of a group its W keeps.
    const LayerActivations dense = layerActivations(config, false, false);
    const LayerActivations moe = config.model.isMoe() ? layerActivations(config, true, false) : dense;
    Sim x = simulationOf(config, dense, moe);
    // ZB-V's order is chosen with the passes' own times (core/time/passtimes.h).
    std::vector<std::vector<PipelineOp>> ops = scheduledOps(config, x.cost, weightPassShare(config, dense, moe));
    tl.ledger = computeLedger(config, ops);
    tl.schedule = config.parallelism.schedule();
    withBuffers(x, tl.ledger);
    std::vector<RankState> states = rankStates(x, tl, std::move(ops));
    OpLoop(x, states, tl).run();
    tl.recompute_s = timeOptimizerSteps(x, states, tl);
    addParkedSlices(x, states, tl);
    CurveBuilder curves;
    for (std::int64_t r = 0; r < x.p; ++r) {
        const RankState &rs = states[static_cast<std::size_t>(r)];
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        const RankLedger &ledger = tl.ledger.ranks[static_cast<std::size_t>(r)];
        addLedgerRows(x, rs, rt, ledger, tl.step_time);
        addActivationGroups(x, rs, rt, tl.ledger);
        addOptimizerScratch(x, rs, rt, ledger);
        // Events to the memory curve, its peak and what is alive then.
        curves.build(rt, options.curve_points);
        rt.alive_at_peak = aliveAtPeak(tl, rt, x.v);
        if (rt.peak_bytes > tl.ranks[static_cast<std::size_t>(tl.peak_rank)].peak_bytes)
            tl.peak_rank = rt.pipeline_rank;
    }
    double bubble = 0;
    for (const RankTimeline &rt : tl.ranks)
        bubble += tl.pipeline_time > 0 ? 1.0 - rt.busy_s / tl.pipeline_time : 0.0;
    tl.bubble_fraction = bubble / double(x.p);
    return tl;
}

bool peakFits(const Timeline &timeline, const RankTimeline &rank)
{
    return rank.peak_bytes <= timeline.ledger.capacity_bytes;
}

} // namespace memledger
