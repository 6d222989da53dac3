// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/planner/search.h"

#include <vector>

namespace memledger {

// The strategies that move ledger rows instead of re-splitting the GPUs, tried
// on the search's answer after the splits: cross-rank activation balancing
// (pipeline_activation_balance "auto"), ZeRO-Offload's gradient offload
// (grad_offload "cpu", the optimizer step with it) and every FP8 recipe
// (training.fp8_recipe; only on FP8 hardware with bf16 training). Each is
// tried on the answer's two fastest plans, its leanest, and on `overLimit`, plans the search
// found over the limit (nearest first). Each strategy's fastest variant that
// is valid, stays under `limit` and is faster than the answer's slowest plan
// (or finds room in an answer shorter than options.top) joins the answer,
// which stays sorted by step time and at most options.top long: one plan per
// strategy, so three FP8 recipes of one layout do not crowd out the layouts.
//
// Returns the verdicts of the ActivationBalance, GradOffload and Fp8Recipe
// dimensions, in kSearchDimensions order, against the final answer: listed,
// never applicable (why), over the limit on every plan tried (the least peak),
// or fits but slower; and adds one note per strategy.
std::vector<DimensionVerdicts> tryStrategies(SearchResult &result, const Config &base, const SearchOptions &options,
                                             Bytes limit, const std::vector<Config> &overLimit);

// The dimensions tryStrategies decides (the others come from the enumeration).
bool isStrategyDimension(SearchDimension dimension);

} // namespace memledger
