// SPDX-License-Identifier: MIT
// eval, check, presets and import-hf: the preset and its ledger.
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "core/base/units.h"
#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/hfimport.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "core/reports/report.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/reserved.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace memledger::cli {

int evalOrCheck(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: " << o.command << " needs a PRESET\n" << kUsage;
        return kExitUsage;
    }
    const bool check = o.command == "check";
    if (o.format != "table" && o.format != "json" && o.format != "csv" && o.format != "markdown") {
        err << "--format: expected table, json, csv or markdown, got \"" << o.format << "\"\n";
        return kExitUsage;
    }
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    // One peak: each rank's total is its simulated iteration's peak (core/timeline/peakledger.h).
    const PlanPeak plan = planPeak(*config);
    const Ledger &ledger = plan.ledger;
    for (const Problem &p : ledger.warnings)
        err << "warning: " << p.toString() << "\n";
    // What runs out: each rank's iteration through PyTorch's caching allocator, plus its runtime reserve.
    const PlanReserved reserved = simulateReserved(*config, plan.timeline);

    if (o.format == "json")
        out << ledgerToJson(*config, ledger, &reserved).dump(2) << "\n";
    else if (o.format == "csv")
        out << ledgerToCsv(ledger, &reserved);
    else if (o.format == "markdown")
        out << ledgerToMarkdown(*config, ledger, &reserved);
    else if (!check)
        out << ledgerToTable(*config, ledger, &reserved);

    if (check) {
        // What runs out decides: reserved memory plus the runtime reserve (docs/accounting.md, "What decides");
        // the simulated peak beside it.
        const RankLedger &worst = ledger.ranks[static_cast<std::size_t>(ledger.peak_rank)];
        (o.format == "table" ? out : err)
            << "worst rank " << reserved.peak_rank << ": " << formatGB(double(reserved.peak_bytes)) << " of "
            << formatGB(static_cast<double>(ledger.capacity_bytes)) << " reserved by PyTorch's allocator with the "
            << "runtime reserve — " << (reserved.fits() ? "fits" : "does not fit") << "; allocated at the simulated "
            << "peak, rank " << worst.pipeline_rank << " needs "
            << formatGB(static_cast<double>(worst.device_total_bytes)) << "\n";
        return reserved.fits() ? kExitOk : kExitDoesNotFit;
    }
    return kExitOk;
}

int listPresets(std::ostream &out)
{
    for (const char *kind : {"models", "hardware", "scenarios", "decks"}) {
        out << kind << ":\n";
        for (const std::string &n : builtinNames(kind))
            out << "  " << n << "\n";
    }
    return kExitOk;
}

// import-hf: the config is mapped, --set applied to the resulting preset,
// and the preset validated before it is printed, so `eval` accepts it.
int importHf(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: import-hf needs a CONFIG.json\n" << kUsage;
        return kExitUsage;
    }
    if (o.format != "table") {
        err << "--format: import-hf prints a preset (JSON) and takes no --format\n";
        return kExitUsage;
    }
    const ImportResult imported = importHfConfigFile(o.preset);
    for (const Problem &p : imported.problems)
        err << (p.isError() ? "" : "warning: ") << p.toString() << "\n";
    if (!imported.config)
        return kExitBadInput;
    for (const std::string &note : imported.notes)
        err << "note: " << note << "\n";

    nlohmann::json doc = presetToJson(*imported.config);
    bool bad = false;
    for (const std::string &s : o.sets) {
        for (const Problem &p : applyOverride(doc, s)) {
            err << "--set " << p.toString() << "\n";
            bad = true;
        }
    }
    if (bad)
        return kExitBadInput;
    const LoadResult loaded = presetFromJson(doc);
    for (const Problem &p : loaded.problems)
        err << p.toString() << "\n";
    if (!loaded.config)
        return kExitBadInput;
    for (const Problem &p : validate(*loaded.config)) {
        err << (p.isError() ? "" : "warning: ") << p.toString() << "\n";
        bad = bad || p.isError();
    }
    if (bad)
        return kExitBadInput;
    // The model section whole, as read from the config (a file saved by the GUI names a matching built-in instead).
    out << presetToJson(*loaded.config).dump(2) << "\n";
    return kExitOk;
}

} // namespace memledger::cli
