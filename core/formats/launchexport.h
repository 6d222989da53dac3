// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"
#include "core/formats/launchimport.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memledger {

// A plan out as a framework's launch configuration (issue 33): what the
// framework's arguments or keys can express, and for every other value a
// "# memledger: section.key=value  # why" comment line, which import reads
// back, so that importing an export gives the same plan (canonicalPlan-equal).
struct LaunchExport
{
    std::string text;
    Problems problems; // an error: no text; a warning: the round trip does not hold for the named field
};

LaunchExport exportLaunch(const Config &config, LaunchFormat format);

// The round-trip check every export runs: when importing its own text back
// failed, that import's errors become the export's warnings and it says so
// (true); else false, and the caller compares the plans.
bool importFailedWarnings(const LaunchImport &back, LaunchExport &out);

// The plan with every "0 means derived" field resolved (query groups, head
// dimension, FFN widths, position table, global batch, expert TP, schedule),
// an even pipeline_layout dropped, the MoE layers in their rule form where
// one fits, and no name or description: two configurations describe the same
// plan when their canonical plans are equal.
Config canonicalPlan(Config config);

// A value of the plan that a framework's arguments or keys do not carry: its
// dotted field ("strategy.gqa_kv", or "hardware" with a built-in's name) and
// its JSON value; null unsets a field the import sets and the plan does not.
struct UnexpressedField
{
    std::string field;
    nlohmann::json value;
};

// Every field of `want` that `got` (the import of the export's own arguments
// or keys) lacks, section by section; the device as a built-in's name where
// one gives the same plan. With `unsetExtra`, also the fields `got` sets that
// `want` leaves unset (a framework's default of an optional knob), as null.
std::vector<UnexpressedField> unexpressedFields(const Config &want, const Config &got, bool unsetExtra);

// The built-in preset of `kind` ("models", "hardware") whose section gives the
// same plan as `config`'s, or "".
std::string builtinSection(const Config &config, const char *kind);

} // namespace memledger
