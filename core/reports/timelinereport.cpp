// SPDX-License-Identifier: MIT
#include "core/reports/timelinereport.h"

#include "core/reports/report.h"
#include "core/time/steptime.h"
#include "core/timeline/lifetimelabels.h"
#include "core/timeline/steptimegap.h"

#include <algorithm>
#include <nlohmann/json.hpp>
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

json timelineToJson(const Config &config, const Timeline &tl, int rankFilter, const PlanReserved *reserved)
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
        if (reserved && static_cast<std::size_t>(rt.pipeline_rank) < reserved->ranks.size()) {
            // What the caching allocator reserves for the same lifetimes (no runtime reserve), a step per segment.
            const RankReserved &rr = reserved->ranks[static_cast<std::size_t>(rt.pipeline_rank)];
            r.update(reservedToJson(rr));
            json steps = json::array();
            for (const CurvePoint &p : rr.curve)
                steps.push_back({p.time, p.bytes});
            r["reserved_curve"] = std::move(steps);
        }
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
