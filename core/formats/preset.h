// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace memledger {

// Reading and writing the preset format (presets/README.md). Loading never throws:
// every problem found (syntax, unknown keys, wrong types, bad values) is
// returned at once, and no Config comes back unless there were none.
struct LoadResult
{
    std::optional<Config> config;
    Problems problems;
};

LoadResult presetFromJson(const nlohmann::json &doc);
LoadResult presetFromText(std::string_view text, std::string_view origin = "preset");
LoadResult presetFromFile(const std::string &path);

// The built-in preset `name` of `kind` ("models", "hardware", "scenarios")
// as loaded, read once for the process (the built-ins never change); null for
// one that is not there or does not load.
const Config *builtinConfig(std::string_view kind, std::string_view name);

nlohmann::json presetToJson(const Config &config);
std::string presetToText(const Config &config);

// `--set section.key=value`: value is parsed as JSON when it parses
// ("8", "true", "\"bf16\"", "[0,1]"), otherwise taken as a string ("bf16").
// `--set hardware=H200-141GB` replaces a whole section by a built-in's name.
// Applies to the document before it is read, so the same checks run.
Problems applyOverride(nlohmann::json &doc, std::string_view assignment);

// Writes to a temporary file beside `path`, flushes it to the device and
// renames it over, so a failed save leaves the old file intact and no
// temporary behind. Returns an empty string or the reason (core/formats/atomicfile.cpp).
std::string writeFileAtomically(const std::string &path, std::string_view contents);

} // namespace memledger
