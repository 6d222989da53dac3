// SPDX-License-Identifier: MIT
// search: the fastest plans that fit a number of GPUs.
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "core/planner/search.h"
#include "core/reports/searchreport.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace memledger::cli {

// The preset gives the model, hardware, sequence and global batch; its
// parallelism and strategy are what the search replaces.
int search(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: search needs a PRESET\n" << kUsage;
        return kExitUsage;
    }
    if (o.format != "table" && o.format != "json") {
        err << "--format: search prints table or json, got \"" << o.format << "\"\n";
        return kExitUsage;
    }
    SearchOptions opt;
    bool bad = false;
    if (o.gpus.empty()) {
        err << "--gpus: search needs the number of GPUs (--gpus N)\n";
        bad = true;
    } else if (const auto g = integerOf(o.gpus)) {
        opt.gpus = *g;
    } else {
        err << "--gpus: expected a whole number of GPUs, got \"" << o.gpus << "\"\n";
        bad = true;
    }
    if (!o.top.empty()) {
        if (const auto k = integerOf(o.top); k && *k <= 1000000)
            opt.top = static_cast<int>(*k);
        else {
            err << "--top: expected a whole number of plans, got \"" << o.top << "\"\n";
            bad = true;
        }
    }
    if (!o.margin.empty()) {
        if (const auto f = numberOf(o.margin))
            opt.margin = *f;
        else {
            err << "--margin: expected a fraction such as 0.8, got \"" << o.margin << "\"\n";
            bad = true;
        }
    }
    if (!bad)
        for (const Problem &p : checkSearchOptions(opt)) {
            err << p.toString() << "\n";
            bad = true;
        }
    if (bad)
        return kExitUsage;
    // The preset's own split may be invalid (80 layers over p = 3): the search chooses the split itself.
    const std::optional<Config> config = load(o, err, LoadCheck::SearchBase);
    if (!config)
        return kExitBadInput;
    const SearchResult result = searchPlans(*config, opt);
    if (o.format == "json")
        out << searchToJson(result, opt).dump(1) << "\n";
    else
        out << searchToTable(result, opt);
    return kExitOk;
}

} // namespace memledger::cli
