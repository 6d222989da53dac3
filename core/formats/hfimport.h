// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// Reading a Hugging Face model config (the `config.json` of a model
// repository) into a Config whose model section is filled and whose other
// sections keep their defaults. Every field of the config is either mapped,
// known not to change memory, or reported: an unsupported architecture or a
// malformed field is an error (no Config comes back), a field that changes
// memory but cannot be carried over is a warning. Problem paths read
// "hf.<field>" ("hf.num_key_value_heads", "hf.sliding_window").
struct ImportResult
{
    std::optional<Config> config;
    Problems problems;
    // What was read but is not part of a training plan (the checkpoint
    // dtype) or is too small to count; also written into the description.
    std::vector<std::string> notes;
};

ImportResult importHfConfig(const nlohmann::json &hf);
ImportResult importHfConfigText(std::string_view text, std::string_view origin = "config.json");
ImportResult importHfConfigFile(const std::string &path);

// The `architectures` entries the importer maps, in the order it lists them.
const std::vector<std::string_view> &supportedHfArchitectures();

} // namespace memledger
