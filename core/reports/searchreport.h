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
// The plans found, one CSV row each, best first (the Find plans view's
// export): rank, the parallel degrees, micro-batch, ZeRO stage, recompute,
// offload, peak bytes, step time in seconds, MFU and whether the plan fits
// under the search's limit, then (appended later) its pipeline schedule and
// the strategies tried on the answer (pipeline_activation_balance,
// grad_offload, fp8_recipe, as the preset names them). RFC 4180: a field with
// a comma or quote is quoted.
std::string searchToCsv(const SearchResult &result);

} // namespace memledger
