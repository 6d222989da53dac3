// SPDX-License-Identifier: MIT
#include "core/reports/timelinereport.h"

#include "core/time/steptime.h"
#include "core/timeline/steptimegap.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace memledger {

using nlohmann::json;

namespace {

std::string csvField(const std::string &s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char ch : s)
        q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

} // namespace

std::string lifetimeLabel(const Timeline &tl, const RankTimeline &rank, const Lifetime &l)
{
    const auto where = [&] {
        std::string s = "micro-batch " + std::to_string(l.microbatch);
        if (l.chunk > 0 || (tl.schedule == PipelineSchedule::DualPipe && l.chunk == 0))
            s += ", " + chunkName(tl.schedule, l.chunk);
        return s;
    };
    switch (l.kind) {
    case LifetimeKind::Persistent:
    case LifetimeKind::Gradients: {
        const RankLedger &r = tl.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)];
        if (l.entry >= 0 && static_cast<std::size_t>(l.entry) < r.entries.size()) {
            const LedgerEntry &e = r.entries[static_cast<std::size_t>(l.entry)];
            return std::string(categoryLabel(e.category)) + ": " + e.label
                   + (l.layer >= 0 ? ", layer " + std::to_string(l.layer) : std::string());
        }
        return std::string(categoryLabel(l.category));
    }
    case LifetimeKind::Activations:
        if (l.peer >= 0)
            return std::string(l.offloaded ? "Parked activations back from rank " + std::to_string(l.peer) + ", "
                                           : "Saved activations, leaving for rank " + std::to_string(l.peer) + ", ")
                   + (l.layer >= 0 ? "layer " + std::to_string(l.layer) + ", " : std::string()) + where();
        return std::string(l.offloaded ? "Activations back from the host, " : "Saved activations, ")
               + (l.layer >= 0 ? "layer " + std::to_string(l.layer) + ", " : std::string()) + where();
    case LifetimeKind::RecomputeWorkingSet:
        return "Recomputed activations up to layer " + std::to_string(l.layer) + ", " + where();
    case LifetimeKind::AttentionRecompute:
        return "Recomputed attention core of layer " + std::to_string(l.layer) + ", " + where();
    case LifetimeKind::BackwardWorkingSet:
        return "Backward working set of layer " + std::to_string(l.layer) + " (activation gradients), " + where();
    case LifetimeKind::LossTemporaries:
        return "Logits and fp32 loss temporaries, " + where();
    case LifetimeKind::LossBackward:
        return "Cross-entropy gradients (loss backward), " + where();
    case LifetimeKind::ForwardWorkingSet:
        return "Forward working set of a layer that saves only its input (full recompute), " + where();
    case LifetimeKind::WeightGradient:
        return "Weight gradient before its accumulation into the gradient buffer, " + where();
    case LifetimeKind::WeightPassInputs:
        return "Inputs of a deferred weight pass (linear inputs and output gradients, B to W), " + where();
    case LifetimeKind::OptimizerTemporaries: {
        const RankLedger &r = tl.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)];
        if (l.entry >= 0 && static_cast<std::size_t>(l.entry) < r.entries.size()) // a transient ledger row
            return "Optimizer step: " + r.entries[static_cast<std::size_t>(l.entry)].label;
        return "Optimizer step temporaries";
    }
    case LifetimeKind::TensorRecompute:
        return "Tensors of layer " + std::to_string(l.layer) + " recomputed for its backward (tensor_policies), "
               + where();
    case LifetimeKind::TensorOffloadTransit:
        return "Offloaded tensors of layer " + std::to_string(l.layer) + " in transit to or from the host "
               + "(tensor_policies), " + where();
    case LifetimeKind::ParkedActivations:
        return "Activations parked from rank " + std::to_string(l.peer) + ", " + where();
    case LifetimeKind::KvCache:
        return "KV cache of layer " + std::to_string(l.layer);
    case LifetimeKind::InferenceWorkingSet:
        if (l.chunk == 2)
            return "Logits of each sequence's last position (fp32, for the sampler)";
        if (l.layer < 0)
            return "Residual stream of the serving forward";
        return std::string(l.chunk == 0 ? "Attention" : "MLP") + " working set of layer " + std::to_string(l.layer)
               + " (serving: freed when the layer has run)";
    }
    return "";
}

std::vector<AliveItem> aliveAtPeak(const Timeline &tl, const RankTimeline &rt, std::int64_t chunksPerRank)
{
    std::vector<AliveItem> out;
    std::map<std::int32_t, std::vector<const Lifetime *>> groupsByChunk;
    std::map<std::int32_t, std::vector<const Lifetime *>> gradientsByEntry; // created layer by layer
    std::map<std::int32_t, std::pair<Bytes, std::size_t>> parkedByDonor; // activation balance
    for (const Lifetime &l : rt.lifetimes) {
        if (!(l.start <= rt.peak_time && rt.peak_time < l.end) || l.bytes == 0)
            continue;
        if (l.kind == LifetimeKind::Activations) {
            groupsByChunk[l.chunk].push_back(&l);
            continue;
        }
        if (l.kind == LifetimeKind::Gradients && l.layer >= 0) {
            gradientsByEntry[l.entry].push_back(&l);
            continue;
        }
        if (l.kind == LifetimeKind::ParkedActivations) {
            parkedByDonor[l.peer].first += l.bytes;
            ++parkedByDonor[l.peer].second;
            continue;
        }
        out.push_back({lifetimeLabel(tl, rt, l), l.category, l.bytes});
    }
    for (const auto &[entry, pieces] : gradientsByEntry) {
        Bytes bytes = 0;
        for (const Lifetime *g : pieces)
            bytes += g->bytes;
        Lifetime whole = *pieces.front();
        whole.layer = -1;
        out.push_back(
            {lifetimeLabel(tl, rt, whole) + " (" + countOf(double(pieces.size()), "layer", "layers") + " so far)",
             Category::Gradients, bytes});
    }
    for (const auto &[donor, parked] : parkedByDonor)
        out.push_back({"Activations parked from rank " + std::to_string(donor) + " ("
                           + countOf(double(parked.second), "micro-batch", "micro-batches") + ")",
                       Category::Activations, parked.first});
    for (const auto &[chunk, groups] : groupsByChunk) {
        Bytes bytes = 0;
        std::int32_t lo = groups.front()->microbatch, hi = lo;
        std::set<std::int32_t> microbatches; // a group leaves layer by layer: pieces of one count once
        for (const Lifetime *g : groups) {
            bytes += g->bytes;
            lo = std::min(lo, g->microbatch);
            hi = std::max(hi, g->microbatch);
            microbatches.insert(g->microbatch);
        }
        const std::size_t count = microbatches.size();
        std::string label = "Saved activations of " + countOf(double(count), "micro-batch", "micro-batches")
                            + (count == 1 ? " (" + std::to_string(lo) + ")"
                                          : " (" + std::to_string(lo) + "–" + std::to_string(hi) + ")");
        if (chunksPerRank > 1)
            label += ", " + chunkName(tl.schedule, chunk);
        out.push_back({std::move(label), Category::Activations, bytes});
    }
    std::stable_sort(out.begin(), out.end(), [](const AliveItem &a, const AliveItem &b) { return a.bytes > b.bytes; });
    return out;
}

json timelineToJson(const Config &config, const Timeline &tl, int rankFilter)
{
    json doc = json::object();
    doc["name"] = config.name;
    doc["schedule"] = std::string(scheduleName(config.parallelism.schedule()));
    doc["micro_batches"] = tl.ledger.micro_batches;
    doc["step_time_s"] = tl.step_time;
    doc["pipeline_time_s"] = tl.pipeline_time;
    doc["bubble_fraction"] = tl.bubble_fraction;
    doc["recompute_s"] = tl.recompute_s;
    // The step-time model's figure for the same plan and why the two differ
    // (core/timeline/steptimegap.h): what the GUI's caption beside "training iteration" says.
    const StepTimeGap gap = stepTimeGap(config, estimateStepTime(config), tl);
    json parts = json::object();
    for (const StepTimeGapPart &p : gap.parts)
        parts[std::string(p.name)] = {{"model_s", p.model_s}, {"simulated_s", p.simulated_s}};
    doc["step_time_gap"]
        = {{"model_s", gap.model_s},           {"simulated_s", gap.simulated_s}, {"relative", gap.relative()},
           {"busiest_rank", gap.busiest_rank}, {"last_rank", gap.last_rank},     {"parts", std::move(parts)},
           {"explanation", gap.explanation},   {"caption", gap.caption}};
    doc["peak_rank"] = tl.peak_rank;
    doc["capacity_bytes"] = tl.ledger.capacity_bytes;
    json ranks = json::array();
    for (const RankTimeline &rt : tl.ranks) {
        if (rankFilter >= 0 && rt.pipeline_rank != rankFilter)
            continue;
        json r = json::object();
        r["pipeline_rank"] = rt.pipeline_rank;
        r["peak_bytes"] = rt.peak_bytes;
        r["peak_time"] = rt.peak_time;
        r["ledger_device_total_bytes"] = tl.ledger.ranks[static_cast<std::size_t>(rt.pipeline_rank)].device_total_bytes;
        r["max_alive_microbatches"] = rt.max_alive_microbatches;
        r["busy_s"] = rt.busy_s;
        r["pipeline_end_s"] = rt.pipeline_end;
        r["optimizer"] = {{"start", rt.optimizer_start},       {"end", rt.optimizer_end},
                          {"device_s", rt.optimizer_device_s}, {"copy_out_s", rt.optimizer_copy_out_s},
                          {"cpu_s", rt.optimizer_cpu_s},       {"copy_in_s", rt.optimizer_copy_in_s}};
        r["copies"] = {{"copy_out_s", rt.copies.copyOutSeconds},
                       {"copy_in_s", rt.copies.copyInSeconds},
                       {"stall_s", rt.copies.stallSeconds},
                       {"overlap", rt.copies.overlap()}};
        if (rt.grad_copies.copyOutSeconds > 0) // grad_offload: gradients to the host during backward
            r["grad_copies"] = {{"copy_out_s", rt.grad_copies.copyOutSeconds},
                                {"stall_s", rt.grad_copies.stallSeconds},
                                {"overlap", rt.grad_copies.overlap()}};
        json alive = json::array();
        for (const AliveItem &a : rt.alive_at_peak)
            alive.push_back({{"label", a.label}, {"category", categoryKey(a.category)}, {"bytes", a.bytes}});
        r["alive_at_peak"] = std::move(alive);
        json curve = json::array();
        for (const CurvePoint &p : rt.curve)
            curve.push_back({p.time, p.bytes});
        r["curve"] = std::move(curve);
        json ops = json::array();
        for (const TimedOp &op : rt.ops)
            ops.push_back({{"kind", op.op.kind == OpKind::Forward  ? "forward"
                                    : op.op.kind == OpKind::Weight ? "weight"
                                                                   : "backward"},
                           {"microbatch", op.op.microbatch},
                           {"chunk", op.op.chunk},
                           {"start", op.start},
                           {"end", op.end},
                           {"stall", op.stall}});
        r["ops"] = std::move(ops);
        json lifetimes = json::array();
        for (const Lifetime &l : rt.lifetimes)
            lifetimes.push_back({{"start", l.start},
                                 {"end", l.end},
                                 {"rank", rt.pipeline_rank},
                                 {"category", categoryKey(l.category)},
                                 {"label", lifetimeLabel(tl, rt, l)},
                                 {"bytes", l.bytes},
                                 {"microbatch", l.microbatch},
                                 {"chunk", l.chunk}});
        r["lifetimes"] = std::move(lifetimes);
        ranks.push_back(std::move(r));
    }
    doc["ranks"] = std::move(ranks);
    return doc;
}

std::string timelineToCsv(const Timeline &tl, int rankFilter)
{
    std::ostringstream out;
    out.precision(9);
    out << "rank,start,end,category,label,bytes\n";
    for (const RankTimeline &rt : tl.ranks) {
        if (rankFilter >= 0 && rt.pipeline_rank != rankFilter)
            continue;
        for (const Lifetime &l : rt.lifetimes)
            out << rt.pipeline_rank << "," << l.start << "," << l.end << "," << categoryKey(l.category) << ","
                << csvField(lifetimeLabel(tl, rt, l)) << "," << l.bytes << "\n";
    }
    return out.str();
}

} // namespace memledger
