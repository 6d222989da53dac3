// SPDX-License-Identifier: MIT
#include "core/timeline.h"

#include "core/activations.h"
#include "core/costmodel.h"
#include "core/offload.h"
#include "core/parameters.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

namespace memledger {

double CopyStats::overlap() const
{
    const double copies = copyOutSeconds + copyInSeconds;
    return copies > 0 ? std::clamp(1.0 - stallSeconds / copies, 0.0, 1.0) : 1.0;
}

std::vector<CurvePoint> downsampleKeepingMax(const std::vector<CurvePoint> &curve, std::size_t points)
{
    if (curve.size() <= points || points < 2)
        return curve;
    const double t0 = curve.front().time;
    const double span = curve.back().time - t0;
    std::vector<CurvePoint> out;
    out.reserve(points + 1);
    std::size_t i = 0;
    Bytes carried = curve.front().bytes; // the value entering a bucket lasts into it
    for (std::size_t b = 0; b < points && i < curve.size(); ++b) {
        const double bucketEnd = b + 1 == points ? curve.back().time : t0 + span * double(b + 1) / double(points);
        CurvePoint best{t0 + span * double(b) / double(points), carried};
        for (; i < curve.size() && (curve[i].time < bucketEnd || b + 1 == points); ++i) {
            if (curve[i].bytes > best.bytes)
                best = curve[i];
            carried = curve[i].bytes;
        }
        out.push_back(best);
    }
    out.push_back(curve.back());
    return out;
}

namespace {

struct ChunkPlan {
    ChunkActivations acts;
    Bytes groupBytes = 0;           // saved per micro-batch, stage extras included
    double forward = 0;             // seconds
    double backward = 0;            // seconds, recompute included
    double recompute = 0;
    double outputForward = 0;       // last stage: the logits and loss at the end of the forward
    std::vector<double> layerBackward; // per layer, recompute included
    bool lastStage = false;
    std::int64_t firstLayer = 0;
    std::int64_t layers = 0;
};

struct Sim {
    const Config &c;
    std::int64_t p, v, m;
    std::vector<StageLayers> stages;
    CostModel cost;
    LayerActivations dense, moe;
    StageActivations stage;
    Bytes backwardWorkingSet = 0;
    Bytes lossTemporaries = 0;
};

std::vector<ChunkPlan> planChunks(const Sim &x, std::int64_t r)
{
    std::vector<ChunkPlan> plans(static_cast<std::size_t>(x.v));
    Bytes firstExtra = 0, lastExtra = 0;
    for (const SavedTensor &s : x.stage.first)
        firstExtra += s.bytes;
    for (const SavedTensor &s : x.stage.last)
        lastExtra += s.bytes;
    for (std::int64_t k = 0; k < x.v; ++k) {
        ChunkPlan &cp = plans[static_cast<std::size_t>(k)];
        const std::int64_t stage = k * x.p + r;
        cp.firstLayer = x.stages[static_cast<std::size_t>(stage)].first;
        cp.layers = x.stages[static_cast<std::size_t>(stage)].count;
        cp.lastStage = stage == x.p * x.v - 1;
        cp.acts = chunkActivations(x.c, x.dense, x.moe, cp.firstLayer, cp.layers);
        cp.groupBytes = cp.acts.stored + (stage == 0 ? firstExtra : 0) + (cp.lastStage ? lastExtra : 0);
        for (std::int64_t i = 0; i < cp.layers; ++i) {
            const LayerCost &lc = x.c.model.isMoeLayer(cp.firstLayer + i) ? x.cost.moe : x.cost.dense;
            cp.forward += lc.forward.seconds;
            cp.layerBackward.push_back(lc.backward.seconds + lc.recompute.seconds);
            cp.backward += lc.backward.seconds + lc.recompute.seconds;
            cp.recompute += lc.recompute.seconds;
        }
        if (cp.lastStage) {
            cp.outputForward = x.cost.outputForward.seconds;
            cp.forward += x.cost.outputForward.seconds;
            cp.backward += x.cost.outputBackward.seconds;
        }
    }
    return plans;
}

struct RankState {
    std::vector<PipelineOp> ops;
    std::vector<ChunkPlan> chunks;
    std::size_t next = 0;
    double free = 0;
    double previousStart = 0;
    ActivationOffload offload;
    std::vector<double> copyOutEnd; // per (chunk, micro-batch); < 0 when kept on the device
    std::vector<double> copyInStart;
};

void addTransients(const Sim &x, RankTimeline &rt, const ChunkPlan &cp, const TimedOp &op)
{
    const StrategyConfig &st = x.c.strategy;
    const bool full = st.recompute_granularity == RecomputeGranularity::Full;
    const bool uniform = st.recompute_method == RecomputeMethod::Uniform;
    const std::int64_t n = std::max<std::int64_t>(1, st.recompute_num_layers);
    const bool selective = st.recompute_granularity == RecomputeGranularity::Selective && !st.flash_attention;
    // The output layer's backward runs first, then the layers in reverse. One
    // layer's working set is alive at a time, the same size for every layer:
    // one lifetime over the whole op draws the same curve with fewer events.
    double t = op.start + (cp.lastStage ? x.cost.outputBackward.seconds : 0.0);
    if (x.backwardWorkingSet > 0 && cp.layers > 0)
        rt.lifetimes.push_back({t, op.end, x.backwardWorkingSet, Category::Activations, LifetimeKind::BackwardWorkingSet,
                                op.op.microbatch, op.op.chunk, static_cast<std::int32_t>(cp.firstLayer + cp.layers - 1)});
    double groupEnd = op.end;
    Bytes groupBytes = 0;
    for (std::int64_t i = cp.layers - 1; i >= 0; --i) {
        const std::size_t li = static_cast<std::size_t>(i);
        const double d = cp.layerBackward[li];
        const std::int32_t layer = static_cast<std::int32_t>(cp.firstLayer + i);
        if (selective && cp.acts.layerCore[li] > 0)
            rt.lifetimes.push_back({t, t + d, cp.acts.layerCore[li], Category::Activations, LifetimeKind::AttentionRecompute,
                                    op.op.microbatch, op.op.chunk, layer});
        if (full && !uniform && i < n)
            rt.lifetimes.push_back({t, t + d, cp.acts.layerFull[li], Category::Activations, LifetimeKind::RecomputeWorkingSet,
                                    op.op.microbatch, op.op.chunk, layer});
        if (full && uniform) {
            // Backward walks a group from its last layer to its first; the
            // group is rebuilt when its backward begins and freed at its end.
            if (groupBytes == 0)
                groupEnd = t;
            groupBytes += cp.acts.layerFull[li];
            if (i % n == 0) {
                rt.lifetimes.push_back({groupEnd, t + d, groupBytes, Category::Activations, LifetimeKind::RecomputeWorkingSet,
                                        op.op.microbatch, op.op.chunk, layer});
                groupBytes = 0;
            }
        }
        t += d;
    }
}

struct Event {
    double time;
    Bytes delta;
};

// Orders events by time, frees before allocations at the same instant (the
// allocator reuses them). An LSD radix sort on the bits of the non-negative
// times: the timeline sorts tens of thousands of events per slider move, and
// this is several times faster than a comparison sort there.
void sortEvents(std::vector<Event> &events)
{
    const std::size_t n = events.size();
    std::vector<std::uint64_t> keys(n), keysTmp(n);
    std::vector<Event> tmp(n);
    // Stable partition by the tie-break first: frees (negative deltas) ahead.
    std::size_t frees = 0;
    for (const Event &e : events)
        frees += e.delta < 0;
    std::size_t f = 0, a = frees;
    for (const Event &e : events)
        tmp[e.delta < 0 ? f++ : a++] = e;
    events.swap(tmp);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = events[i].time > 0 ? events[i].time : 0.0; // -0.0 and 0.0 alike
        std::memcpy(&keys[i], &t, sizeof t);
    }
    for (int shift = 0; shift < 64; shift += 8) {
        std::size_t count[257] = {};
        for (std::size_t i = 0; i < n; ++i)
            ++count[((keys[i] >> shift) & 0xff) + 1];
        if (count[((keys[0] >> shift) & 0xff) + 1] == n)
            continue; // every key shares this byte
        for (int d = 0; d < 256; ++d)
            count[d + 1] += count[d];
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t to = count[(keys[i] >> shift) & 0xff]++;
            tmp[to] = events[i];
            keysTmp[to] = keys[i];
        }
        events.swap(tmp);
        keys.swap(keysTmp);
    }
}

void computeCurve(RankTimeline &rt, std::size_t points)
{
    std::vector<Event> events;
    events.reserve(rt.lifetimes.size() * 2);
    for (const Lifetime &l : rt.lifetimes)
        events.push_back({l.start, l.bytes});
    for (const Lifetime &l : rt.lifetimes)
        events.push_back({l.end, -l.bytes});
    sortEvents(events);
    std::vector<CurvePoint> curve;
    curve.reserve(events.size() / 2 + 2);
    Bytes now = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        now += events[i].delta;
        if (i + 1 < events.size() && events[i + 1].time == events[i].time)
            continue;
        curve.push_back({events[i].time, now});
        if (now > rt.peak_bytes) {
            rt.peak_bytes = now;
            rt.peak_time = events[i].time;
        }
    }
    rt.curve = downsampleKeepingMax(curve, points);
}

} // namespace

Timeline simulateIteration(const Config &c, const TimelineOptions &options)
{
    Timeline tl;
    tl.ledger = computeLedger(c);
    const ParallelismConfig &par = c.parallelism;
    Sim x{c,
          par.pipeline_model_parallel_size,
          par.virtual_pipeline_model_parallel_size,
          c.microBatches(),
          stageLayers(c),
          costModel(c),
          layerActivations(c, false, false),
          {},
          stageActivations(c)};
    x.moe = c.model.isMoe() ? layerActivations(c, true, false) : x.dense;
    {
        const std::int64_t A = activationBytes(c);
        const std::int64_t t = par.tensor_model_parallel_size;
        const bool sp = par.sequence_parallel && t > 1;
        const std::int64_t tokens = c.training.seq_length / par.context_parallel_size * c.training.micro_batch_size;
        // Gradients of the layer's output and input; unfused attention also
        // materialises the gradient of its score matrix.
        x.backwardWorkingSet = 2 * A * tokens * c.model.hidden_size / (sp ? t : 1);
        if (!c.strategy.flash_attention)
            x.backwardWorkingSet += A * c.model.num_attention_heads / t * tokens * c.training.seq_length;
        x.lossTemporaries = tokens * paddedVocab(c.model, t) / t * (A + 4);
    }

    const std::int64_t stages = x.p * x.v;
    const auto slot = [&](std::int64_t stage, std::int64_t mb) { return static_cast<std::size_t>(stage * x.m + mb); };
    std::vector<double> fEnd(static_cast<std::size_t>(stages * x.m), -1.0), bEnd(fEnd.size(), -1.0);
    const bool offload = c.strategy.activation_offload != OffloadTarget::None;

    std::vector<RankState> states;
    states.reserve(static_cast<std::size_t>(x.p));
    tl.ranks.resize(static_cast<std::size_t>(x.p));
    for (std::int64_t r = 0; r < x.p; ++r) {
        states.push_back({scheduleOps(par, x.m, r), planChunks(x, r), 0, 0, 0,
                          ActivationOffload(c.hardware.host_link_bytes_per_s, int(c.strategy.activation_offload_buffers)),
                          std::vector<double>(static_cast<std::size_t>(x.v * x.m), -1.0),
                          std::vector<double>(static_cast<std::size_t>(x.v * x.m), 0.0)});
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        rt.pipeline_rank = static_cast<int>(r);
        rt.ops.reserve(states.back().ops.size());
        std::int64_t mostLayers = 0;
        for (const ChunkPlan &cp : states.back().chunks)
            mostLayers = std::max(mostLayers, cp.layers);
        rt.lifetimes.reserve(states.back().ops.size() * static_cast<std::size_t>(1 + mostLayers) + 32);
    }

    // Run every rank's ops in order as soon as their inputs have arrived.
    std::vector<std::int64_t> work;
    std::vector<char> queued(static_cast<std::size_t>(x.p), 1);
    for (std::int64_t r = x.p - 1; r >= 0; --r)
        work.push_back(r);
    while (!work.empty()) {
        const std::int64_t r = work.back();
        work.pop_back();
        queued[static_cast<std::size_t>(r)] = 0;
        RankState &rs = states[static_cast<std::size_t>(r)];
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        while (rs.next < rs.ops.size()) {
            const PipelineOp op = rs.ops[rs.next];
            const std::int64_t stage = op.chunk * x.p + r;
            double ready = 0;
            if (op.kind == OpKind::Forward) {
                if (stage > 0) {
                    const double dep = fEnd[slot(stage - 1, op.microbatch)];
                    if (dep < 0)
                        break;
                    ready = dep + x.cost.p2pSeconds;
                }
            } else if (stage == stages - 1) {
                ready = fEnd[slot(stage, op.microbatch)];
            } else {
                const double dep = bEnd[slot(stage + 1, op.microbatch)];
                if (dep < 0)
                    break;
                ready = dep + x.cost.p2pSeconds;
            }
            const ChunkPlan &cp = rs.chunks[static_cast<std::size_t>(op.chunk)];
            const std::size_t group = static_cast<std::size_t>(op.chunk * x.m + op.microbatch);
            TimedOp timed{op, std::max(rs.free, ready), 0, 0};
            if (op.kind == OpKind::Forward) {
                if (offload) {
                    const double s = rs.offload.forwardStart(timed.start);
                    timed.stall = s - timed.start;
                    timed.start = s;
                }
                timed.end = timed.start + cp.forward;
                fEnd[slot(stage, op.microbatch)] = timed.end;
                // Offload unless this group's backward is the very next op.
                const bool nextIsOwnBackward = rs.next + 1 < rs.ops.size() && rs.ops[rs.next + 1].kind == OpKind::Backward
                    && rs.ops[rs.next + 1].chunk == op.chunk && rs.ops[rs.next + 1].microbatch == op.microbatch;
                if (offload && !nextIsOwnBackward)
                    rs.copyOutEnd[group] = rs.offload.copyOut(timed.end, double(cp.groupBytes));
                if (cp.lastStage && x.lossTemporaries > 0)
                    rt.lifetimes.push_back({timed.end - cp.outputForward, timed.end, x.lossTemporaries, Category::Activations,
                                            LifetimeKind::LossTemporaries, op.microbatch, op.chunk, -1});
            } else {
                if (rs.copyOutEnd[group] >= 0) {
                    const double issue = std::max(rs.previousStart, rs.copyOutEnd[group]);
                    rs.copyInStart[group] = issue;
                    const double back = rs.offload.copyIn(issue, double(cp.groupBytes));
                    if (back > timed.start) {
                        timed.stall = back - timed.start;
                        timed.start = back;
                    }
                }
                timed.end = timed.start + cp.backward;
                bEnd[slot(stage, op.microbatch)] = timed.end;
                addTransients(x, rt, cp, timed);
            }
            rt.busy_seconds += timed.end - timed.start;
            rt.copies.stallSeconds += timed.stall;
            rs.previousStart = timed.start;
            rs.free = timed.end;
            rt.ops.push_back(timed);
            ++rs.next;
            // The neighbour that consumes this op's output may now proceed.
            const std::int64_t consumer = op.kind == OpKind::Forward ? stage + 1 : stage - 1;
            if (consumer >= 0 && consumer < stages) {
                const std::int64_t cr = consumer % x.p;
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

    // Optimizer steps, then the whole-iteration rows and the activation groups.
    double recompute = 0;
    for (std::int64_t r = 0; r < x.p; ++r) {
        RankState &rs = states[static_cast<std::size_t>(r)];
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        rt.pipeline_end = rs.free;
        std::int64_t expertParams = 0;
        double rankRecompute = 0;
        for (const ChunkPlan &cp : rs.chunks) {
            for (std::int64_t i = 0; i < cp.layers; ++i)
                if (c.model.isMoeLayer(cp.firstLayer + i))
                    expertParams += layerParams(c.model, true, par.tensor_model_parallel_size, par.expert_model_parallel_size,
                                                par.expertTensorParallel())
                                        .expert.params;
            rankRecompute += cp.recompute * double(x.m);
        }
        recompute = std::max(recompute, rankRecompute);
        const RankLedger &ledger = tl.ledger.ranks[static_cast<std::size_t>(r)];
        rt.optimizer_start = rt.pipeline_end;
        const OptimizerCost oc = optimizerCost(c, ledger.parameters, expertParams);
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
    tl.recompute_seconds = recompute;

    for (std::int64_t r = 0; r < x.p; ++r) {
        RankState &rs = states[static_cast<std::size_t>(r)];
        RankTimeline &rt = tl.ranks[static_cast<std::size_t>(r)];
        const RankLedger &ledger = tl.ledger.ranks[static_cast<std::size_t>(r)];
        double firstBackward = rt.pipeline_end;
        for (const TimedOp &op : rt.ops)
            if (op.op.kind == OpKind::Backward) {
                firstBackward = op.start;
                break;
            }
        for (std::size_t e = 0; e < ledger.entries.size(); ++e) {
            const LedgerEntry &entry = ledger.entries[e];
            if (entry.placement != Placement::Device || entry.category == Category::Activations)
                continue;
            const bool gradients = entry.category == Category::Gradients;
            const bool onDemand = gradients && c.strategy.grad_buffer == GradBuffer::OnDemand;
            rt.lifetimes.push_back({onDemand ? firstBackward : 0.0, onDemand ? rt.optimizer_end : tl.step_time, entry.bytes,
                                    entry.category, gradients ? LifetimeKind::Gradients : LifetimeKind::Persistent, -1, -1, -1,
                                    static_cast<std::int32_t>(e)});
        }
        // Activation groups from their forward to their backward; the staircase
        // is the most of them alive at once.
        std::vector<double> forwardStart(static_cast<std::size_t>(x.v * x.m), 0.0);
        std::int64_t alive = 0;
        for (const TimedOp &op : rt.ops) {
            const std::size_t group = static_cast<std::size_t>(op.op.chunk * x.m + op.op.microbatch);
            const ChunkPlan &cp = rs.chunks[static_cast<std::size_t>(op.op.chunk)];
            if (op.op.kind == OpKind::Forward) {
                forwardStart[group] = op.start;
                rt.max_alive_chunks = std::max(rt.max_alive_chunks, ++alive);
                continue;
            }
            --alive;
            if (cp.groupBytes <= 0)
                continue;
            if (rs.copyOutEnd[group] >= 0) {
                rt.lifetimes.push_back({forwardStart[group], rs.copyOutEnd[group], cp.groupBytes, Category::Activations,
                                        LifetimeKind::Activations, op.op.microbatch, op.op.chunk, -1});
                Lifetime back{rs.copyInStart[group], op.end, cp.groupBytes, Category::Activations, LifetimeKind::Activations,
                              op.op.microbatch, op.op.chunk, -1};
                back.offloaded = true;
                rt.lifetimes.push_back(back);
            } else {
                rt.lifetimes.push_back({forwardStart[group], op.end, cp.groupBytes, Category::Activations, LifetimeKind::Activations,
                                        op.op.microbatch, op.op.chunk, -1});
            }
        }
        rt.max_alive_microbatches = double(rt.max_alive_chunks) / double(x.v);
        // The optimizer step's scratch: one bucket's worth of fp32 temporaries.
        const Bytes scratch = std::min<Bytes>(c.strategy.ddp_bucket_size, ledger.parameters) * 4;
        rt.lifetimes.push_back({rt.optimizer_start, rt.optimizer_end, scratch, Category::OptimizerStates,
                                LifetimeKind::OptimizerTemporaries, -1, -1, -1});

        computeCurve(rt, options.curve_points);

        // What is alive at the peak, groups of a chunk gathered in one line.
        std::map<std::int32_t, std::vector<const Lifetime *>> groupsByChunk;
        for (const Lifetime &l : rt.lifetimes) {
            if (!(l.start <= rt.peak_time && rt.peak_time < l.end) || l.bytes == 0)
                continue;
            if (l.kind == LifetimeKind::Activations) {
                groupsByChunk[l.chunk].push_back(&l);
                continue;
            }
            rt.alive_at_peak.push_back({lifetimeLabel(tl, rt, l), l.category, l.bytes});
        }
        for (const auto &[chunk, groups] : groupsByChunk) {
            Bytes bytes = 0;
            std::int32_t lo = groups.front()->microbatch, hi = lo;
            for (const Lifetime *g : groups) {
                bytes += g->bytes;
                lo = std::min(lo, g->microbatch);
                hi = std::max(hi, g->microbatch);
            }
            std::string label = "Saved activations of " + countOf(double(groups.size()), "micro-batch", "micro-batches")
                + (groups.size() == 1 ? " (" + std::to_string(lo) + ")" : " (" + std::to_string(lo) + "–" + std::to_string(hi) + ")");
            if (x.v > 1)
                label += ", chunk " + std::to_string(chunk);
            rt.alive_at_peak.push_back({std::move(label), Category::Activations, bytes});
        }
        std::stable_sort(rt.alive_at_peak.begin(), rt.alive_at_peak.end(),
                         [](const AliveItem &a, const AliveItem &b) { return a.bytes > b.bytes; });
        if (rt.peak_bytes > tl.ranks[static_cast<std::size_t>(tl.peak_rank)].peak_bytes)
            tl.peak_rank = rt.pipeline_rank;
    }

    double bubble = 0;
    for (const RankTimeline &rt : tl.ranks)
        bubble += tl.pipeline_time > 0 ? 1.0 - rt.busy_seconds / tl.pipeline_time : 0.0;
    tl.bubble_fraction = bubble / double(x.p);
    return tl;
}

std::string lifetimeLabel(const Timeline &tl, const RankTimeline &rank, const Lifetime &l)
{
    const auto where = [&] {
        std::string s = "micro-batch " + std::to_string(l.microbatch);
        if (l.chunk > 0)
            s += ", chunk " + std::to_string(l.chunk);
        return s;
    };
    switch (l.kind) {
    case LifetimeKind::Persistent:
    case LifetimeKind::Gradients: {
        const RankLedger &r = tl.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)];
        if (l.entry >= 0 && static_cast<std::size_t>(l.entry) < r.entries.size()) {
            const LedgerEntry &e = r.entries[static_cast<std::size_t>(l.entry)];
            return std::string(categoryLabel(e.category)) + ": " + e.label;
        }
        return std::string(categoryLabel(l.category));
    }
    case LifetimeKind::Activations:
        return std::string(l.offloaded ? "Activations back from the host, " : "Saved activations, ") + where();
    case LifetimeKind::RecomputeWorkingSet:
        return "Recomputed activations up to layer " + std::to_string(l.layer) + ", " + where();
    case LifetimeKind::AttentionRecompute:
        return "Recomputed attention core of layer " + std::to_string(l.layer) + ", " + where();
    case LifetimeKind::BackwardWorkingSet:
        return "Backward working set (activation gradients, one layer at a time), " + where();
    case LifetimeKind::LossTemporaries:
        return "Logits and fp32 loss temporaries, " + where();
    case LifetimeKind::OptimizerTemporaries:
        return "Optimizer step temporaries";
    }
    return "";
}

} // namespace memledger
