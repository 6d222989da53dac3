// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/compare.h"

#include <nlohmann/json.hpp>
#include <string>

namespace memledger {

// memledger-cli compare's three outputs (docs/measured-runs.md): a JSON
// object with trace, measured, modelled, peak_error, phases and unexplained;
// a plain-text table; a markdown report.
nlohmann::json comparisonToJson(const TraceComparison &comparison);
std::string comparisonToTable(const TraceComparison &comparison, const std::string &traceName);
std::string comparisonToMarkdown(const TraceComparison &comparison, const std::string &traceName);

} // namespace memledger
