// SPDX-License-Identifier: MIT
#pragma once

#include "core/planner/search.h"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace memledger {

// `memledger-cli search --format json` (README.md, "Using the CLI"): {"plans": [...],
// "candidates": N, "seconds": S}, best first; each plan carries its complete
// preset, peak_bytes, step_time_s, fits, the step-time parts and its ledger.
nlohmann::json searchToJson(const SearchResult &result, const SearchOptions &options);
std::string searchToTable(const SearchResult &result, const SearchOptions &options);

} // namespace memledger
