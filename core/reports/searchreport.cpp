// SPDX-License-Identifier: MIT
#include "core/reports/searchreport.h"

#include "core/base/units.h"
#include "core/formats/preset.h"
#include "core/planner/trystrategies.h"
#include "core/reports/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace memledger {

namespace {

nlohmann::json timeToJson(const StepTime &t)
{
    // The parts' names are stepTimeParts' (the panel's "largest part" uses the same).
    nlohmann::json out = nlohmann::json::object();
    for (const StepTimePart &part : stepTimeParts(t))
        out[std::string(part.name)] = part.seconds;
    out["total"] = t.total;
    out["mfu"] = t.mfu;
    return out;
}

std::string offloadText(const StrategyConfig &s)
{
    const bool o = s.optimizer_offload != OffloadTarget::None, a = s.activation_offload != OffloadTarget::None;
    return o && a ? "opt+act" : o ? "optimizer" : a ? "acts" : "none";
}

// The strategies tryStrategies added to a plan, as the preset names them:
// "balance auto", "grad cpu", "fp8 tensorwise"; "none" without any.
std::string strategiesText(const Config &c)
{
    std::string out;
    auto add = [&](const std::string &word) { out += (out.empty() ? "" : " ") + word; };
    if (c.strategy.pipeline_activation_balance != ActivationBalance::None)
        add("balance-" + std::string(activationBalanceName(c.strategy.pipeline_activation_balance)));
    if (c.strategy.grad_offload != OffloadTarget::None)
        add("grad-" + std::string(offloadName(c.strategy.grad_offload)));
    if (c.training.fp8_recipe != Fp8Recipe::None)
        add("fp8-" + std::string(fp8RecipeName(c.training.fp8_recipe)));
    return out.empty() ? "none" : out;
}

nlohmann::json dimensionsToJson(const SearchResult &r)
{
    nlohmann::json out = nlohmann::json::object();
    for (const DimensionVerdicts &dv : r.dimensions) {
        // Named values ("selective", "zb-v", "auto", "tensorwise") as the preset writes them; numbers for the degrees.
        const bool named = dv.dimension == SearchDimension::Recompute || dv.dimension == SearchDimension::Offload
                           || dv.dimension == SearchDimension::Schedule || isStrategyDimension(dv.dimension);
        nlohmann::json values = nlohmann::json::array();
        for (const ValueVerdict &v : dv.values) {
            nlohmann::json j = {{"value", named ? nlohmann::json(v.label) : nlohmann::json(v.value)},
                                {"verdict", verdictKindName(v.kind)},
                                {"reason", v.reason}};
            if (!v.tried)
                j["tried"] = false; // a structural verdict on a value the search never tried (GPipe)
            if (v.kind == VerdictKind::Memory) {
                j["least_peak_bytes"] = v.leastPeakBytes;
                j["limit_bytes"] = r.limitBytes;
            }
            if (v.kind == VerdictKind::Slower) {
                j["step_time_s"] = v.stepTimeSeconds;
                j["slower_percent"] = v.slowerPercent;
            }
            values.push_back(std::move(j));
        }
        out[std::string(dimensionName(dv.dimension))] = std::move(values);
    }
    return out;
}

// RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled.
std::string csvField(const std::string &text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char ch : text)
        out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
}

} // namespace

nlohmann::json searchToJson(const SearchResult &r, const SearchOptions &o)
{
    nlohmann::json plans = nlohmann::json::array();
    for (const SearchPlan &p : r.plans) {
        plans.push_back({{"preset", presetToJson(p.config)},
                         {"peak_bytes", p.ledger.peak_bytes},
                         {"step_time_s", p.time.total},
                         {"reserved_bytes", p.reservedBytes},
                         {"fits", p.ledger.fits() && p.ledger.peak_bytes <= r.limitBytes},
                         {"step_time", timeToJson(p.time)},
                         {"ledger", ledgerToJson(p.config, p.ledger)}});
    }
    nlohmann::json doc = {{"plans", plans},
                          {"candidates", r.candidates},
                          {"seconds", r.seconds},
                          {"gpus", o.gpus},
                          {"margin", o.margin},
                          {"limit_bytes", r.limitBytes},
                          {"pruned_by_bound", r.prunedByBound},
                          {"ledgers_run", r.ledgersRun},
                          {"notes", r.notes},
                          {"dimensions", dimensionsToJson(r)}};
    if (!r.nearestGlobalBatches.empty()) // no split cuts the global batch: the nearest ones that one does
        doc["nearest_global_batches"] = r.nearestGlobalBatches;
    return doc;
}

std::string searchToTable(const SearchResult &r, const SearchOptions &o)
{
    std::string out;
    char line[320];
    out += std::to_string(r.candidates) + " candidate plans on " + std::to_string(o.gpus) + " GPUs in "
           + formatSeconds(r.seconds, 3) + "; limit " + formatGB(static_cast<double>(r.limitBytes)) + " ("
           + formatPercentCompact(o.margin) + " of HBM)\n";
    std::snprintf(line, sizeof line, "%-4s %4s %4s %3s %5s %3s %3s %4s %5s %-10s %-9s %-11s %10s %10s %10s  %s\n", "#",
                  "t", "p", "v", "d", "c", "e", "mbs", "zero", "recompute", "offload", "schedule", "peak", "reserved",
                  "step (s)", "strategies");
    out += line;
    int k = 0;
    for (const SearchPlan &p : r.plans) {
        const ParallelismConfig &par = p.config.parallelism;
        std::snprintf(line, sizeof line,
                      "%-4d %4lld %4lld %3lld %5lld %3lld %3lld %4lld %5d %-10s %-9s %-11s %10s %10s %10.3f  %s\n", ++k,
                      static_cast<long long>(par.tensor_model_parallel_size),
                      static_cast<long long>(par.pipeline_model_parallel_size),
                      static_cast<long long>(par.virtual_pipeline_model_parallel_size),
                      static_cast<long long>(par.data_parallel_size), static_cast<long long>(par.context_parallel_size),
                      static_cast<long long>(par.expert_model_parallel_size),
                      static_cast<long long>(p.config.training.micro_batch_size), par.zero_stage,
                      std::string(granularityName(p.config.strategy.recompute_granularity)).c_str(),
                      offloadText(p.config.strategy).c_str(), std::string(scheduleName(par.schedule())).c_str(),
                      formatGB(static_cast<double>(p.ledger.peak_bytes)).c_str(),
                      formatGB(static_cast<double>(p.reservedBytes)).c_str(), p.time.total,
                      strategiesText(p.config).c_str());
        out += line;
    }
    for (const std::string &n : r.notes)
        out += "note: " + n + "\n";
    // Why not: every value of every dimension that no listed plan has.
    std::string whyNot;
    for (const DimensionVerdicts &dv : r.dimensions)
        for (const ValueVerdict &v : dv.values)
            if (v.kind != VerdictKind::InTop)
                whyNot += "  " + std::string(dimensionName(dv.dimension)) + " " + v.label + ": " + v.reason + "\n";
    if (!whyNot.empty())
        out += "\nWhy not (values no listed plan has):\n" + whyNot;
    return out;
}

std::string searchToCsv(const SearchResult &r)
{
    // Plain numbers (bytes, seconds), so a spreadsheet computes with them;
    // the column names follow the CLI's JSON keys where there is one.
    std::string out = "rank,t,p,v,d,c,e,micro_batch_size,zero_stage,recompute,offload,peak_bytes,step_time_s,mfu,fits,"
                      "pipeline_schedule,pipeline_activation_balance,grad_offload,fp8_recipe\n";
    int k = 0;
    char numbers[160];
    for (const SearchPlan &p : r.plans) {
        const ParallelismConfig &par = p.config.parallelism;
        std::snprintf(numbers, sizeof numbers, "%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%d,", ++k,
                      static_cast<long long>(par.tensor_model_parallel_size),
                      static_cast<long long>(par.pipeline_model_parallel_size),
                      static_cast<long long>(par.virtual_pipeline_model_parallel_size),
                      static_cast<long long>(par.data_parallel_size), static_cast<long long>(par.context_parallel_size),
                      static_cast<long long>(par.expert_model_parallel_size),
                      static_cast<long long>(p.config.training.micro_batch_size), par.zero_stage);
        out += numbers;
        out += csvField(std::string(granularityName(p.config.strategy.recompute_granularity))) + ",";
        out += csvField(offloadText(p.config.strategy)) + ",";
        std::snprintf(numbers, sizeof numbers, "%lld,%.6g,%.4f,%s,", static_cast<long long>(p.ledger.peak_bytes),
                      p.time.total, p.time.mfu,
                      p.ledger.fits() && p.ledger.peak_bytes <= r.limitBytes ? "true" : "false");
        out += numbers;
        // Appended columns (older ones keep their places): the schedule, then the
        // strategies tried on the answer (core/planner/trystrategies.h), as the preset names them.
        const StrategyConfig &st = p.config.strategy;
        out += csvField(std::string(scheduleName(p.config.parallelism.schedule()))) + ","
               + std::string(activationBalanceName(st.pipeline_activation_balance)) + ","
               + std::string(offloadName(st.grad_offload)) + ","
               + std::string(fp8RecipeName(p.config.training.fp8_recipe)) + "\n";
    }
    return out;
}

} // namespace memledger
