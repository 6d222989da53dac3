// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace memledger {

// Small helpers shared by the readers of JSON documents other than presets
// (Hugging Face configs, decks), so their messages read like the preset's.

// "string \"x\"", "a list", "number 4.5": a value as an error message names it.
std::string describeJson(const nlohmann::json &value);

// Parses `text`; on a syntax error adds one problem at `origin` ("not valid
// JSON: ... at line 3, column 7") and returns nullopt.
std::optional<nlohmann::json> parseJsonText(std::string_view text, std::string_view origin, Problems &problems);

// The whole file, or nullopt with a problem naming `path`.
std::optional<std::string> readTextFile(const std::string &path, Problems &problems);

} // namespace memledger
