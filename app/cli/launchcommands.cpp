// SPDX-License-Identifier: MIT
// import and export: a framework's launch configuration in, a preset out, and back (issue 33).
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"
#include "core/formats/preset.h"

#include <ostream>

namespace memledger::cli {

namespace {

void printUnused(const std::vector<UnusedSetting> &unused, std::ostream &err)
{
    for (const UnusedSetting &u : unused)
        err << "unused: " << unusedSettingText(u) << "\n";
}

} // namespace

// import FILE: every problem, note and unused argument on stderr; the preset
// on stdout only when there is no error.
int importLaunch(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: import needs a FILE (a Megatron-LM launch script or argument list, a torchtitan TOML "
               "job config, or a DeepSpeed JSON config)\n"
            << kUsage;
        return kExitUsage;
    }
    if (o.format != "table") {
        err << "--format: import prints a preset (JSON) and takes no --format\n";
        return kExitUsage;
    }
    LaunchOptions options;
    if (!o.gpus.empty()) {
        const std::optional<long long> gpus = integerOf(o.gpus);
        if (!gpus || *gpus < 1 || *gpus > (1LL << 24)) {
            err << "--gpus: expected a number of GPUs (1 to 16777216), got \"" << o.gpus << "\"\n";
            return kExitUsage;
        }
        options.gpus = *gpus;
    }
    options.model = o.model;
    const LaunchImport imported = importLaunchFile(o.preset, options, o.sets);
    for (const Problem &p : imported.problems)
        err << (p.isError() ? "" : "warning: ") << p.toString() << "\n";
    for (const std::string &note : imported.notes)
        err << "note: " << note << "\n";
    printUnused(imported.unused, err);
    if (!imported.config)
        return kExitBadInput;
    out << presetToText(*imported.config);
    return kExitOk;
}

int exportLaunch(const Options &o, std::ostream &out, std::ostream &err)
{
    if (o.preset.empty()) {
        err << "memledger-cli: export needs a PRESET\n" << kUsage;
        return kExitUsage;
    }
    if (o.to != "megatron" && o.to != "deepspeed" && o.to != "torchtitan") {
        err << "--to: expected megatron, torchtitan or deepspeed, got \"" << o.to << "\""
            << (o.to.empty() ? " (--to is required)" : "") << "\n";
        return kExitUsage;
    }
    const std::optional<Config> config = load(o, err);
    if (!config)
        return kExitBadInput;
    const LaunchFormat format = o.to == "deepspeed"    ? LaunchFormat::DeepSpeed
                                : o.to == "torchtitan" ? LaunchFormat::Torchtitan
                                                       : LaunchFormat::Megatron;
    const LaunchExport exported = memledger::exportLaunch(*config, format);
    bool bad = false;
    for (const Problem &p : exported.problems) {
        err << (p.isError() ? "" : "warning: ") << p.toString() << "\n";
        bad = bad || p.isError();
    }
    if (bad)
        return kExitBadInput;
    out << exported.text;
    return kExitOk;
}

} // namespace memledger::cli
