// SPDX-License-Identifier: MIT
#include "core/cli.h"

#include "core/builtins.h"
#include "core/hfimport.h"
#include "core/ledger.h"
#include "core/planner/search.h"
#include "core/planner/searchreport.h"
#include "core/preset.h"
#include "core/report.h"
#include "core/timeline.h"
#include "core/timelinereport.h"
#include "core/trace/compare.h"
#include "core/trace/comparereport.h"
#include "core/trace/traceimport.h"
#include "core/validate.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace memledger {

namespace {

const char *kUsage = "usage: memledger-cli COMMAND ...\n"
                     "\n"
                     "  eval PRESET [--set section.key=value]... [--format table|json|csv|markdown]\n"
                     "      the per-rank memory ledger of a preset\n"
                     "  check PRESET [--set section.key=value]... [--format table|json]\n"
                     "      exit 0 if every pipeline rank fits the device, 3 if one does not\n"
                     "  timeline PRESET [--set section.key=value]... [--rank R] [--format json|csv]\n"
                     "      one iteration simulated per pipeline rank: peak, when, what is alive,\n"
                     "      the memory curve and every lifetime (csv: the lifetimes)\n"
                     "  search PRESET --gpus N [--top K] [--margin F] [--set ...] [--format table|json]\n"
                     "      the fastest plans (t, p, v, d, c, e, micro-batch, ZeRO, recompute,\n"
                     "      optimizer offload) for N GPUs whose peak stays under F × HBM (0.8)\n"
                     "  compare PRESET TRACE [--set ...] [--rank R] [--device N] [--format table|json|markdown]\n"
                     "      a measured run held against the model: TRACE is a PyTorch memory snapshot\n"
                     "      (torch.cuda.memory._dump_snapshot) or a profiler Chrome trace with\n"
                     "      [memory] events, gzip-compressed or not\n"
                     "  import-hf CONFIG.json [--set section.key=value]...\n"
                     "      print a preset built from a Hugging Face model config: the model\n"
                     "      section from the config, the rest defaulted; warnings on stderr\n"
                     "  presets\n"
                     "      list the built-in presets (models, hardware, scenarios, decks)\n"
                     "\n"
                     "PRESET is a preset file, or the name of a built-in scenario.\n"
                     "Exit codes: 0 fits / done, 3 does not fit (check), 2 bad input.\n";

struct Options
{
    std::string command;
    std::string preset;
    std::vector<std::string> sets;
    std::string format = "table";
    bool formatGiven = false;
    std::string rank; // timeline and compare --rank
    std::string device; // compare --device
    std::string trace; // compare TRACE
    std::string gpus, top, margin; // search
};

bool parse(const std::vector<std::string> &args, Options &o, std::ostream &err)
{
    if (args.empty()) {
        err << kUsage;
        return false;
    }
    o.command = args[0];
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        const auto value = [&](const std::string &flag, std::string &dst) {
            if (a.rfind(flag + "=", 0) == 0) {
                dst = a.substr(flag.size() + 1);
                return true;
            }
            if (a == flag) {
                if (i + 1 >= args.size()) {
                    err << "memledger-cli: " << flag << " needs a value\n";
                    return false;
                }
                dst = args[++i];
                return true;
            }
            return false;
        };
        std::string v;
        if (a == "--set" || a.rfind("--set=", 0) == 0) {
            if (!value("--set", v))
                return false;
            o.sets.push_back(v);
        } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
            if (!value("--format", o.format))
                return false;
            o.formatGiven = true;
        } else if ((o.command == "timeline" || o.command == "compare")
                   && (a == "--rank" || a.rfind("--rank=", 0) == 0)) {
            if (!value("--rank", o.rank))
                return false;
        } else if (o.command == "compare" && (a == "--device" || a.rfind("--device=", 0) == 0)) {
            if (!value("--device", o.device))
                return false;
        } else if (o.command == "search" && (a == "--gpus" || a.rfind("--gpus=", 0) == 0)) {
            if (!value("--gpus", o.gpus))
                return false;
        } else if (o.command == "search" && (a == "--top" || a.rfind("--top=", 0) == 0)) {
            if (!value("--top", o.top))
                return false;
        } else if (o.command == "search" && (a == "--margin" || a.rfind("--margin=", 0) == 0)) {
            if (!value("--margin", o.margin))
                return false;
        } else if (!a.empty() && a[0] == '-') {
            err << "memledger-cli: unknown option " << a << "\n" << kUsage;
            return false;
        } else if (o.preset.empty()) {
            o.preset = a;
        } else if (o.command == "compare" && o.trace.empty()) {
            o.trace = a;
        } else {
            err << "memledger-cli: unexpected argument " << a << "\n";
            return false;
        }
    }
    return true;
}

bool readText(const std::string &preset, std::string &text, std::ostream &err)
{
    std::ifstream in(preset, std::ios::binary);
    if (in) {
        std::ostringstream ss;
        ss << in.rdbuf();
        text = ss.str();
        return true;
    }
    if (const BuiltinPreset *b = findBuiltin("scenarios", preset)) {
        text = std::string(b->text);
        return true;
    }
    err << preset << ": cannot read the file (and no built-in scenario has that name)\n";
    return false;
}

// Loads, applies --set, validates. Prints every problem; returns nullopt on errors.
std::optional<Config> load(const Options &o, std::ostream &err)
{
    std::string text;
    if (!readText(o.preset, text, err))
        return std::nullopt;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
        // Re-run through the loader for its line/column message.
        const LoadResult failed = presetFromText(text, o.preset);
        for (const Problem &p : failed.problems)
            err << p.toString() << "\n";
        return std::nullopt;
    }
    Problems problems;
    for (const std::string &s : o.sets) {
        Problems p = applyOverride(doc, s);
        problems.insert(problems.end(), p.begin(), p.end());
    }
    if (!problems.empty()) {
        for (const Problem &p : problems)
            err << "--set " << p.toString() << "\n";
        return std::nullopt;
    }
    LoadResult loaded = presetFromJson(doc);
    if (!loaded.config) {
        for (const Problem &p : loaded.problems)
            err << p.toString() << "\n";
        return std::nullopt;
    }
    const Problems issues = validate(*loaded.config);
    bool bad = false;
    for (const Problem &p : issues) {
        if (p.isError()) {
            err << p.toString() << "\n";
            bad = true;
        }
    }
    if (bad)
        return std::nullopt;
    return loaded.config;
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
    out << presetToText(*loaded.config);
    return kExitOk;
}

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
        std::size_t used = 0;
        try {
            rank = std::stoi(o.rank, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != o.rank.size() || rank < 0) {
            err << "--rank: expected a pipeline rank (0, 1, ...), got \"" << o.rank << "\"\n";
            return kExitUsage;
        }
    }
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    if (rank >= config->parallelism.pipeline_model_parallel_size) {
        err << "--rank: the plan has pipeline ranks 0 to " << config->parallelism.pipeline_model_parallel_size - 1
            << ", got " << rank << "\n";
        return kExitUsage;
    }
    const Timeline tl = simulateIteration(*config);
    for (const Problem &p : tl.ledger.warnings)
        err << "warning: " << p.toString() << "\n";
    if (format == "json")
        out << timelineToJson(*config, tl, rank).dump(1) << "\n";
    else
        out << timelineToCsv(tl, rank);
    return kExitOk;
}

// A whole-string integer or number, or nullopt.
std::optional<long long> integerOf(const std::string &text)
{
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
        return std::nullopt;
    }
    return used == text.size() ? std::optional<long long>(v) : std::nullopt;
}

std::optional<double> numberOf(const std::string &text)
{
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception &) {
        return std::nullopt;
    }
    return used == text.size() ? std::optional<double>(v) : std::nullopt;
}

// search: the preset gives the model, hardware, sequence and global batch;
// its parallelism and strategy are what the search replaces.
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
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    const SearchResult result = searchPlans(*config, opt);
    if (o.format == "json")
        out << searchToJson(result, opt).dump(1) << "\n";
    else
        out << searchToTable(result, opt);
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
        if (const auto r = integerOf(o.rank); r && *r >= 0 && *r < 1000000)
            options.pipeline_rank = static_cast<int>(*r);
        else {
            err << "--rank: expected a pipeline rank (0, 1, ...), got \"" << o.rank << "\"\n";
            bad = true;
        }
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
    if (options.pipeline_rank && *options.pipeline_rank >= config->parallelism.pipeline_model_parallel_size) {
        err << "--rank: the plan has pipeline ranks 0 to " << config->parallelism.pipeline_model_parallel_size - 1
            << ", got " << *options.pipeline_rank << "\n";
        return kExitUsage;
    }
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

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
        out << kUsage;
        return kExitOk;
    }
    Options o;
    if (!parse(args, o, err))
        return kExitUsage;
    if (o.command == "presets")
        return listPresets(out);
    if (o.command == "import-hf")
        return importHf(o, out, err);
    if (o.command == "timeline")
        return timeline(o, out, err);
    if (o.command == "search")
        return search(o, out, err);
    if (o.command == "compare")
        return compare(o, out, err);
    if (o.command != "eval" && o.command != "check") {
        err << "memledger-cli: unknown command \"" << o.command << "\"\n" << kUsage;
        return kExitUsage;
    }
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
    const Ledger ledger = computeLedger(*config);
    for (const Problem &p : ledger.warnings)
        err << "warning: " << p.toString() << "\n";

    if (o.format == "json")
        out << ledgerToJson(*config, ledger).dump(2) << "\n";
    else if (o.format == "csv")
        out << ledgerToCsv(ledger);
    else if (o.format == "markdown")
        out << ledgerToMarkdown(*config, ledger);
    else if (!check)
        out << ledgerToTable(*config, ledger);

    if (check) {
        const RankLedger &worst = ledger.ranks[static_cast<std::size_t>(ledger.peak_rank)];
        (o.format == "table" ? out : err)
            << "worst rank " << worst.pipeline_rank << ": " << formatGB(static_cast<double>(worst.device_total_bytes))
            << " of " << formatGB(static_cast<double>(ledger.capacity_bytes)) << " — "
            << (ledger.fits() ? "fits" : "does not fit") << "\n";
        return ledger.fits() ? kExitOk : kExitDoesNotFit;
    }
    return kExitOk;
}

} // namespace

int runCli(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    try {
        return run(args, out, err);
    } catch (const std::exception &e) {
        err << "memledger-cli: internal error: " << e.what() << "\n";
    } catch (...) {
        err << "memledger-cli: internal error\n";
    }
    return kExitBadInput;
}

} // namespace memledger
