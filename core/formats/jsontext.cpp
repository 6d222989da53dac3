// SPDX-License-Identifier: MIT
#include "core/formats/jsontext.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace memledger {

using nlohmann::json;

std::string describeJson(const json &v)
{
    switch (v.type()) {
    case json::value_t::string:
        return "string \"" + v.get<std::string>() + "\"";
    case json::value_t::boolean:
        return v.get<bool>() ? "true" : "false";
    case json::value_t::null:
        return "null";
    case json::value_t::object:
        return "an object";
    case json::value_t::array:
        return "a list";
    default:
        return "number " + v.dump();
    }
}

std::optional<json> parseJsonText(std::string_view text, std::string_view origin, Problems &problems)
{
    try {
        return json::parse(text.begin(), text.end());
    } catch (const json::exception &e) {
        // Not only parse_error: a number literal beyond double's range
        // ("1e999999") throws out_of_range (found by fuzz_preset).
        // nlohmann's message carries line and column; strip its "[json.exception...]" prefix.
        std::string what = e.what();
        const auto pos = what.find("] ");
        if (pos != std::string::npos)
            what = what.substr(pos + 2);
        problems.push_back({std::string(origin), "not valid JSON: " + what});
        return std::nullopt;
    }
}

std::optional<std::string> readTextFile(const std::string &path, Problems &problems)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        problems.push_back({path, "cannot read the file"});
        return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace memledger
