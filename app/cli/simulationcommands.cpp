// SPDX-License-Identifier: MIT
// timeline and compare: one simulated iteration, alone or against a measured trace.
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "core/reports/timelinereport.h"
#include "core/serving/inferencetimeline.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "core/trace/compare.h"
#include "core/trace/comparereport.h"
#include "core/trace/traceimport.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace memledger::cli {

// timeline: the same loading and exit codes as eval; json by default.
int timeline(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: timeline needs a PRESET\n" << kUsage;
        return kExitUsage;
    }
    const std::string format = o.formatGiven ? o.format : "json";
    if (format != "json" && format != "csv") {
        err << "--format: timeline prints json or csv, got \"" << format << "\"\n";
        return kExitUsage;
    }
    int rank = -1;
    if (!o.rank.empty()) {
        const std::optional<int> r = pipelineRankOf(o.rank, err);
        if (!r)
            return kExitUsage;
        rank = *r;
    }
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    if (rank >= 0 && !rankInPlan(rank, *config, err))
        return kExitUsage;
    if (!o.serve.empty() && o.serve != "prefill" && o.serve != "decode") {
        err << "--inference: expected prefill or decode, got \"" << o.serve << "\"\n";
        return kExitUsage;
    }
    const Timeline tl = o.serve.empty() ? simulateIteration(*config)
                                        : simulateInferenceForward(*config, o.serve == "decode" ? ServingPass::Decode
                                                                                                : ServingPass::Prefill);
    for (const Problem &p : tl.ledger.warnings)
        err << "warning: " << p.toString() << "\n";
    if (format == "json") {
        // A training iteration's reserved memory: its requests through PyTorch's caching allocator.
        const std::optional<PlanReserved> reserved
            = o.serve.empty() ? std::optional<PlanReserved>(simulateReserved(*config, tl)) : std::nullopt;
        nlohmann::json doc = timelineToJson(*config, tl, rank, reserved ? &*reserved : nullptr);
        if (!o.serve.empty())
            doc["serving_pass"] = o.serve;
        out << doc.dump(1) << "\n";
    } else {
        out << timelineToCsv(tl, rank);
    }
    return kExitOk;
}

// compare: the preset's simulated iteration against a measured trace. The
// trace is read only after the preset is known good, and nothing is written.
int compare(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty() || o.trace.empty()) {
        err << "memledger-cli: compare needs a PRESET and a TRACE\n" << kUsage;
        return kExitUsage;
    }
    if (o.format != "table" && o.format != "json" && o.format != "markdown") {
        err << "--format: compare prints table, json or markdown, got \"" << o.format << "\"\n";
        return kExitUsage;
    }
    CompareOptions options;
    TraceImportOptions importOptions;
    bool bad = false;
    if (!o.rank.empty()) {
        options.pipeline_rank = pipelineRankOf(o.rank, err);
        bad = !options.pipeline_rank;
    }
    if (!o.device.empty()) {
        if (const auto d = integerOf(o.device); d && *d >= -1 && *d < 1000000)
            importOptions.device = static_cast<int>(*d);
        else {
            err << "--device: expected a device index (0, 1, ...), got \"" << o.device << "\"\n";
            bad = true;
        }
    }
    if (bad)
        return kExitUsage;
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    if (options.pipeline_rank && !rankInPlan(*options.pipeline_rank, *config, err))
        return kExitUsage;
    const TraceLoadResult loaded = loadTraceFile(o.trace, importOptions);
    for (const Problem &p : loaded.problems)
        err << (p.isError() ? "" : "warning: ") << p.toString() << "\n";
    if (!loaded.trace)
        return kExitBadInput;
    const TraceComparison comparison = compareTrace(*config, *loaded.trace, options);
    if (o.format == "json")
        out << comparisonToJson(comparison).dump(1) << "\n";
    else if (o.format == "markdown")
        out << comparisonToMarkdown(comparison, o.trace);
    else
        out << comparisonToTable(comparison, o.trace);
    return kExitOk;
}

} // namespace memledger::cli
