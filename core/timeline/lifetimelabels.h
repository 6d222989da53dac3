// SPDX-License-Identifier: MIT
#pragma once

#include "core/timeline/timeline.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// The words for a simulated lifetime, shared by the timeline's peak summary,
// the gantt's rows, the GUI's hover text and the reports.

// "Activations, chunk 0, micro-batch 3", "Weights: Transformer layers", ...
std::string lifetimeLabel(const Timeline &tl, const RankTimeline &rank, const Lifetime &l);

// What is alive at the rank's peak (rt.peak_time), largest first, in
// words: the saved activation groups of a chunk gathered in one line, the
// gradients made layer by layer in one line per ledger row, the activations
// parked from each donor in one line. `chunksPerRank` is v (chunks are named
// when it is above 1).
std::vector<AliveItem> aliveAtPeak(const Timeline &tl, const RankTimeline &rt, std::int64_t chunksPerRank);

} // namespace memledger
