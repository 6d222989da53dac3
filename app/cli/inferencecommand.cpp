// SPDX-License-Identifier: MIT
// inference: the same preset's model served, beside its training peak.
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "core/check/validate.h"
#include "core/reports/inferencereport.h"
#include "core/serving/inference.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace memledger::cli {

int inference(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: inference needs a PRESET\n" << kUsage;
        return kExitUsage;
    }
    if (o.format != "table" && o.format != "json") {
        err << "--format: expected table or json, got \"" << o.format << "\"\n";
        return kExitUsage;
    }
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    // load() prints the errors; the serving section's warnings (a context
    // longer than the model's positions) are this command's to show.
    for (const Problem &p : validate(*config))
        if (!p.isError() && p.path.rfind("inference.", 0) == 0)
            err << "warning: " << p.toString() << "\n";
    const InferenceLedger ledger = computeInference(*config);
    if (o.format == "json")
        out << inferenceToJson(*config, ledger).dump(2) << "\n";
    else
        out << inferenceToTable(*config, ledger);
    return kExitOk;
}

} // namespace memledger::cli
