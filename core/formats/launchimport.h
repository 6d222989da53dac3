// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// A training framework's launch configuration in, a plan out (issue 33): a
// Megatron-LM launch script or argument list (core/formats/megatronargs.h),
// a DeepSpeed JSON config with a model (core/formats/deepspeedconfig.h), a
// torchtitan TOML job config (core/formats/torchtitanconfig.h).
// Every argument or key is either mapped, or listed as unused; a bad value or
// a contradiction is an error whose path names the argument ("--num-layers")
// or key ("zero_optimization.stage"), and then no Config comes back.

enum class LaunchFormat { Megatron, DeepSpeed, Torchtitan };
std::string_view launchFormatName(LaunchFormat format);

// An argument or key the plan does not use, with what it was set to.
struct UnusedSetting
{
    std::string name; // "--lr", "torchrun --master_addr", "optimizer.params.lr"
    std::string value; // as written; empty for a flag
    int line = 0; // 0 when the format has no lines (JSON)
    // Known not to change memory (a learning rate, a path, a log interval);
    // otherwise MemLedger does not know it, and the user should check.
    bool noMemoryEffect = false;
    std::string why; // what the setting is for, where the format's reader knows; may be empty
};

// "--lr 6.0e-5 (line 41; no effect on memory: the learning rate)": what
// memledger-cli import prints after "unused: " and the GUI's dialog lists.
std::string unusedSettingText(const UnusedSetting &unused);

// Why a key of a config file MemLedger does not map is left, by the key's
// path or by a prefix of it ending in '.' (the DeepSpeed and torchtitan readers' tables).
struct KeyReason
{
    std::string_view key;
    bool noMemoryEffect;
    std::string_view why;
};
// The first of `table`'s entries that names `key` or a prefix of it, or null.
const KeyReason *keyReasonOf(std::span<const KeyReason> table, std::string_view key);

struct LaunchOptions
{
    std::optional<std::int64_t> gpus; // --gpus N: the world size, when the file does not say it or to replace it
    // DeepSpeed: the model (a built-in model preset's name, or a Hugging Face config.json's path).
    std::string model;
    // What the GUI's import starts from (the current plan): the world size when
    // the file does not give it and `gpus` is unset, and DeepSpeed's model when
    // neither `model` nor the file names one. Each use is said in a note.
    std::optional<std::int64_t> defaultGpus;
    std::optional<ModelConfig> defaultModel;
};

struct LaunchImport
{
    std::optional<Config> config;
    Problems problems;
    std::vector<std::string> notes; // what was derived or defaulted, in words
    std::vector<UnusedSetting> unused;
    // "section.key=value" assignments the file carries as "# memledger:"
    // comments (what an export writes for values the framework cannot express),
    // applied before --set; `where` says where each came from ("line 7").
    std::vector<std::pair<std::string, std::string>> assignments;
    // Preset field path -> the argument or key it came from, so that a
    // validation problem names what the user wrote.
    std::map<std::string, std::string> sourceOf;
};

// Applies the file's own assignments and then `sets` (--set section.key=value)
// to the imported Config, and validates it: problems of either kind are added
// (a validation problem's path names its argument when one set the field)
// and `config` is reset on errors.
void finishLaunchImport(LaunchImport &imported, const std::vector<std::string> &sets);

// Which framework a file is for: by its extension (.toml torchtitan, .json
// DeepSpeed), else by its first character ('{' is JSON), else by parsing as
// TOML with a torchtitan table ([job], [model], [training], ...), else Megatron-LM.
LaunchFormat detectLaunchFormat(std::string_view path, std::string_view text);

// Reads, detects, imports and finishes: what `memledger-cli import` runs.
LaunchImport importLaunchFile(const std::string &path, const LaunchOptions &options,
                              const std::vector<std::string> &sets);
// The same for text already read (or pasted: `path` empty, detected by content);
// `path` names the plan and decides the format as in detectLaunchFormat.
LaunchImport importLaunchText(std::string_view text, const std::string &path, const LaunchOptions &options,
                              const std::vector<std::string> &sets);

// True for a JSON object with a DeepSpeed key at its top level
// (train_batch_size, zero_optimization, …) that is neither a MemLedger preset
// nor a profiler trace: what a dropped .json is taken as a launch config by.
bool isDeepSpeedConfigText(std::string_view text);

// "section.key=value  # why" from a "# memledger:" line: the assignment part.
std::string annotationAssignment(std::string_view annotation);

} // namespace memledger
