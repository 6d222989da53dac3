// SPDX-License-Identifier: MIT
#include "core/formats/launchimport.h"

#include "core/check/validate.h"
#include "core/formats/deepspeedconfig.h"
#include "core/formats/jsontext.h"
#include "core/formats/megatronargs.h"
#include "core/formats/preset.h"
#include "core/formats/torchtitanconfig.h"

#include <nlohmann/json.hpp>

namespace memledger {

std::string_view launchFormatName(LaunchFormat format)
{
    switch (format) {
    case LaunchFormat::Megatron:
        return "megatron";
    case LaunchFormat::DeepSpeed:
        return "deepspeed";
    case LaunchFormat::Torchtitan:
        return "torchtitan";
    }
    return "megatron";
}

std::string annotationAssignment(std::string_view annotation)
{
    // What follows "  # " is the export's reason; JSON values have no two spaces in a row.
    const std::size_t why = annotation.find("  #");
    std::string_view a = annotation.substr(0, why);
    while (!a.empty() && (a.back() == ' ' || a.back() == '\t'))
        a.remove_suffix(1);
    return std::string(a);
}

std::string unusedSettingText(const UnusedSetting &u)
{
    std::string text = u.name + (u.value.empty() ? "" : " " + u.value) + " (";
    if (u.line > 0)
        text += "line " + std::to_string(u.line) + "; ";
    text += u.noMemoryEffect ? "no effect on memory" : "not understood: check whether it changes memory";
    return text + (u.why.empty() ? "" : ": " + u.why) + ")";
}

const KeyReason *keyReasonOf(std::span<const KeyReason> table, std::string_view key)
{
    for (const KeyReason &r : table) {
        const bool prefix = !r.key.empty() && r.key.back() == '.';
        if (prefix ? key.substr(0, r.key.size()) == r.key : key == r.key)
            return &r;
    }
    return nullptr;
}

namespace {

// A validation problem's field, named by the argument or key that set it.
std::string sourced(const LaunchImport &imported, const std::string &path)
{
    const auto it = imported.sourceOf.find(path);
    return it == imported.sourceOf.end() ? path : it->second + " (" + path + ")";
}

} // namespace

void finishLaunchImport(LaunchImport &imported, const std::vector<std::string> &sets)
{
    if (!imported.config)
        return;
    nlohmann::json doc = presetToJson(*imported.config);
    bool bad = false;
    for (const auto &[assignment, where] : imported.assignments) {
        for (Problem p : applyOverride(doc, assignment)) {
            p.path = "# memledger: " + assignment + " (" + where + "): " + p.path;
            imported.problems.push_back(std::move(p));
            bad = true;
        }
    }
    for (const std::string &s : sets) {
        for (Problem p : applyOverride(doc, s)) {
            p.path = "--set " + p.path;
            imported.problems.push_back(std::move(p));
            bad = true;
        }
    }
    imported.config.reset();
    if (bad)
        return;
    LoadResult loaded = presetFromJson(doc);
    for (Problem &p : loaded.problems) {
        p.path = sourced(imported, p.path);
        imported.problems.push_back(std::move(p));
    }
    if (!loaded.config)
        return;
    for (Problem &p : validate(*loaded.config)) {
        p.path = sourced(imported, p.path);
        bad = bad || p.isError();
        imported.problems.push_back(std::move(p));
    }
    if (!bad)
        imported.config = std::move(loaded.config);
}

LaunchFormat detectLaunchFormat(std::string_view path, std::string_view text)
{
    const auto endsWith = [&](std::string_view suffix) {
        return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
    };
    if (endsWith(".toml"))
        return LaunchFormat::Torchtitan;
    if (endsWith(".json"))
        return LaunchFormat::DeepSpeed;
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{')
        return LaunchFormat::DeepSpeed;
    // TOML with a torchtitan table: a shell script does not parse as TOML.
    if (isTorchtitanConfigText(text))
        return LaunchFormat::Torchtitan;
    return LaunchFormat::Megatron;
}

LaunchImport importLaunchFile(const std::string &path, const LaunchOptions &options,
                              const std::vector<std::string> &sets)
{
    LaunchImport r;
    const std::optional<std::string> text = readTextFile(path, r.problems);
    if (!text)
        return r;
    return importLaunchText(*text, path, options, sets);
}

LaunchImport importLaunchText(std::string_view text, const std::string &path, const LaunchOptions &options,
                              const std::vector<std::string> &sets)
{
    LaunchImport r;
    const LaunchFormat format = detectLaunchFormat(path, text);
    if (format == LaunchFormat::Megatron && !options.model.empty()) {
        r.problems.push_back({"--model", "a Megatron-LM launch describes its model itself",
                              "leave out --model, or change the model with --set model.FIELD=VALUE"});
        return r;
    }
    r = format == LaunchFormat::DeepSpeed    ? importDeepSpeedConfig(text, options)
        : format == LaunchFormat::Torchtitan ? importTorchtitanConfig(text, options)
                                             : importMegatronLaunch(text, options);
    if (r.config && !path.empty()) {
        // The file's name, without folders and extension, names the plan.
        std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
        if (const auto dot = name.find_last_of('.'); dot != std::string::npos && dot > 0)
            name = name.substr(0, dot);
        r.config->name = name;
    }
    finishLaunchImport(r, sets);
    return r;
}

bool isDeepSpeedConfigText(std::string_view text)
{
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    // A preset says "format": "memledger-preset"; a Chrome trace has traceEvents.
    if (!doc.is_object() || doc.contains("format") || doc.contains("traceEvents"))
        return false;
    // deepspeed/runtime/constants.py: the keys a training config sets at its top level.
    for (const char *key : {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                            "zero_optimization", "fp16", "bf16", "bfloat16", "optimizer", "activation_checkpointing"})
        if (doc.contains(key))
            return true;
    return false;
}

} // namespace memledger
