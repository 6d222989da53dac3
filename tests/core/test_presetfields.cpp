// SPDX-License-Identifier: MIT
// Every field of every preset section walked through the paths a knob must
// reach (docs/architecture.md, "Adding a strategy knob"): documented in
// presets/README.md with the default the code really uses, written by
// presetToJson, changed by --set (applyOverride) and read back changed. A
// field added to a section's visit() but forgotten in one of these fails here.
#include "core/formats/preset.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

using namespace memledger;
using nlohmann::json;

namespace {

const char *const kSections[] = {"model", "training", "parallelism", "strategy", "hardware", "inference"};

// presets/README.md's tables: section → field → the default column as written.
std::map<std::string, std::map<std::string, std::string>> documentedFields()
{
    std::ifstream in(std::string(MEMLEDGER_PRESET_DIR) + "/README.md");
    REQUIRE(in);
    std::map<std::string, std::map<std::string, std::string>> out;
    const std::regex heading(R"(^## `([a-z]+)`)");
    const std::regex row(R"(^\| `([a-z0-9_]+)` \| ([^|]*) \|)");
    std::string line, section;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, heading))
            section = m[1];
        else if (line.rfind("## ", 0) == 0)
            section.clear();
        else if (!section.empty() && std::regex_search(line, m, row))
            out[section][m[1]] = m[2].str().substr(0, m[2].str().find_last_not_of(' ') + 1);
    }
    return out;
}

// The README writes a default as JSON, strings in backquotes ("`"none"`", "true", "128").
std::string documentedAsJson(std::string text)
{
    if (text.size() >= 2 && text.front() == '`' && text.back() == '`')
        text = text.substr(1, text.size() - 2);
    return text;
}

// A value of `field` other than `current` that the loader accepts: a choice's
// other name (from the loader's own "expected one of" message), a flipped
// bool, a number one step up, another name, a table scaled.
json otherValue(const json &doc, const std::string &section, const std::string &field, const json &current)
{
    if (current.is_boolean())
        return !current.get<bool>();
    if (current.is_number_integer())
        return current.get<std::int64_t>() + 1;
    if (current.is_number_float())
        return current.get<double>() + 0.5;
    if (current.is_string()) {
        json probe = doc;
        probe[section][field] = "not a choice";
        const LoadResult r = presetFromJson(probe);
        for (const Problem &p : r.problems) {
            if (p.path != section + "." + field)
                continue;
            const std::regex quoted("\"([^\"]*)\"");
            for (std::sregex_iterator it(p.message.begin(), p.message.end(), quoted), end; it != end; ++it)
                if ((*it)[1] != current.get<std::string>() && (*it)[1] != "not a choice")
                    return (*it)[1].str();
        }
        return current.get<std::string>() + " (edited)"; // a free-form string: a name
    }
    if (current.is_object()) { // a nested object ("strategy.allocator"): its first flag flipped
        json edited = current;
        for (auto &[key, value] : edited.items())
            if (value.is_boolean()) {
                value = !value.get<bool>();
                return edited;
            }
        return nullptr;
    }
    if (current.is_array() && !current.empty() && current[0].is_array()) {
        json scaled = current; // an efficiency table's [size, fraction] pairs: every fraction a tenth lower
        for (json &pair : scaled)
            pair[1] = pair[1].get<double>() * 0.9;
        return scaled;
    }
    return nullptr;
}

} // namespace

TEST_CASE("Every preset field is documented with its real default, written, and reached by --set", "[preset]")
{
    Config defaults;
    defaults.inference = InferenceConfig{};
    const json doc = presetToJson(defaults);
    const auto documented = documentedFields();
    int walked = 0;
    std::vector<std::string> skipped;
    for (const char *section : kSections) {
        REQUIRE(doc.contains(section));
        for (const auto &[field, value] : doc[section].items()) {
            INFO(std::string(section) + "." + field + " = " + value.dump());
            // Documented, with the default written as the code has it.
            const auto s = documented.find(section);
            REQUIRE(s != documented.end());
            const auto d = s->second.find(field);
            CHECK(d != s->second.end());
            if (d != s->second.end() && !value.is_object() && !value.is_null()) {
                const std::string written = documentedAsJson(d->second);
                const json parsed = json::parse(written, nullptr, false);
                INFO("presets/README.md says the default is " + d->second);
                if (value.is_array())
                    CHECK(parsed.dump() == json::parse(value.dump()).dump());
                else if (!parsed.is_discarded() && value.is_number() && parsed.is_number())
                    CHECK(parsed.get<double>() == Approx(value.get<double>()));
                else
                    CHECK(parsed == value);
            }
            // --set reaches it and the preset is written back with the new value.
            json changed = otherValue(doc, section, field, value);
            if (changed.is_null()) {
                skipped.push_back(std::string(section) + "." + field);
                continue;
            }
            json edited = doc;
            const Problems set = applyOverride(edited, std::string(section) + "." + field + "=" + changed.dump());
            REQUIRE(set.empty());
            const LoadResult r = presetFromJson(edited);
            for (const Problem &p : r.problems)
                UNSCOPED_INFO(p.toString());
            REQUIRE(r.config.has_value());
            CHECK_FALSE(*r.config == defaults);
            CHECK(presetToJson(*r.config)[section][field] == changed);
            ++walked;
        }
    }
    CHECK(walked > 0);
    CHECK(skipped == std::vector<std::string>{}); // a field the walk cannot change: give otherValue a way
}

TEST_CASE("Every documented preset field is one the loader knows", "[preset]")
{
    // Optional fields (pipeline_schedule, pipeline_layout, tensor_policies, ...) are not written at their
    // defaults: the loader must still know them rather than call them unknown.
    Config defaults;
    defaults.inference = InferenceConfig{};
    const json doc = presetToJson(defaults);
    for (const auto &[section, fields] : documentedFields())
        for (const auto &[field, _] : fields) {
            INFO(section + "." + field);
            if (doc[section].contains(field))
                continue;
            json probe = doc;
            probe[section][field] = nullptr;
            for (const Problem &p : presetFromJson(probe).problems)
                if (p.path == section + "." + field)
                    CHECK(p.message.find("unknown field") == std::string::npos);
        }
}
