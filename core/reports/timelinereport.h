// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"
#include "core/timeline.h"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace memledger {

// `memledger-cli timeline` output (README.md, Using the CLI): per rank the
// peak, when it happens, what is alive then, the memory curve and the
// lifetimes. `rank` < 0 means every rank.
nlohmann::json timelineToJson(const Config &config, const Timeline &timeline, int rank = -1);
// One row per lifetime: rank, start, end, category, label, bytes.
std::string timelineToCsv(const Timeline &timeline, int rank = -1);

} // namespace memledger
