// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace memledger {

// `memledger-cli timeline` output (README.md, Using the CLI): per rank the
// peak, when it happens, what is alive then, the memory curve and the
// lifetimes; with `reserved` (simulateReserved of it), what PyTorch's caching
// allocator reserves and its curve. `rankFilter` < 0 means every rank.
nlohmann::json timelineToJson(const Config &config, const Timeline &tl, int rankFilter = -1,
                              const PlanReserved *reserved = nullptr);
// One row per lifetime: rank, start, end, category, label, bytes.
std::string timelineToCsv(const Timeline &tl, int rankFilter = -1);

} // namespace memledger
