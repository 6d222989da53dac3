// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"
#include "core/formats/launchimport.h"

#include <string>

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

} // namespace memledger
