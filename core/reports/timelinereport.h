// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/timeline/timeline.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace memledger {

// "Activations, chunk 0, micro-batch 3", "Weights: Transformer layers", ...
std::string lifetimeLabel(const Timeline &tl, const RankTimeline &rank, const Lifetime &l);

// What is alive at the rank's peak (rt.peak_time), largest first, in
// words: the saved activation groups of a chunk gathered in one line, the
// gradients made layer by layer in one line per ledger row, the activations
// parked from each donor in one line. `chunksPerRank` is v (chunks are named
// when it is above 1).
std::vector<AliveItem> aliveAtPeak(const Timeline &tl, const RankTimeline &rt, std::int64_t chunksPerRank);

// `memledger-cli timeline` output (README.md, Using the CLI): per rank the
// peak, when it happens, what is alive then, the memory curve and the
// lifetimes. `rankFilter` < 0 means every rank.
nlohmann::json timelineToJson(const Config &config, const Timeline &tl, int rankFilter = -1);
// One row per lifetime: rank, start, end, category, label, bytes.
std::string timelineToCsv(const Timeline &tl, int rankFilter = -1);

} // namespace memledger
