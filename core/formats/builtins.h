// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// The presets shipped in presets/, compiled into the core library so that
// the CLI and the GUI resolve "model": "llama-2-7b" without files or Qt.
struct BuiltinPreset
{
    std::string_view kind; // "models", "hardware", "scenarios"
    std::string_view name; // file name without .json
    std::string_view text; // the JSON document
};

const std::vector<BuiltinPreset> &builtinPresets();
const BuiltinPreset *findBuiltin(std::string_view kind, std::string_view name);
std::vector<std::string> builtinNames(std::string_view kind);

// The scenario the GUI opens when no preset is given.
constexpr std::string_view kDefaultScenario = "llama-3-70b-128xh100";

} // namespace memledger
