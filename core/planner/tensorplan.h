// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/time/layergraph.h"

#include <vector>

namespace memledger {

// The per-tensor planner (seed 002 §3.3, §4.3): the exact frontiers
// of store / recompute / offload / fp8 plans over the saved tensors of one
// layer, each tensor priced on the layer graph (core/time/layergraph.h).

// The Pareto frontier of device bytes against overhead, fewest bytes first.
// Store/recompute alone: the 2^k plans of seed 002 §3.3, enumerated (each
// point the first plan found in enumeration order). With offload or quantise
// (3^12 to 5^12 plans): the dynamic programme of tensorFrontierOf.
std::vector<TensorPlan> tensorFrontier(const LayerGraph &graph, TensorCost cost, bool allowOffload,
                                       bool allowQuantize = false);

// Every plan enumerated: 2^k store/recompute plans, 3^k with offload. The
// reference the dynamic programme is tested against; tensorFrontier uses it
// for store/recompute alone (4096 plans).
std::vector<TensorPlan> tensorFrontierEnumerated(const LayerGraph &graph, TensorCost cost, bool allowOffload);

// The same exact frontier over any set of fates, by dynamic programming
// over the nodes: a partial plan is (device bytes, recompute and quantise
// seconds, offloaded bytes), all three additive, and the overhead rises with
// each, so a partial plan no better in all three than another is dropped.
std::vector<TensorPlan> tensorFrontierOf(const LayerGraph &graph, TensorCost cost, const std::vector<Fate> &fates);

// A plan as strategy.tensor_policies: one rule per saved tensor not stored,
// under recompute_granularity none (what `eval` accepts).
std::vector<TensorPolicy> policiesOf(const LayerGraph &graph, const std::vector<Fate> &fates);
Config withTensorPlan(const Config &config, const LayerGraph &graph, const std::vector<Fate> &fates);

// Megatron's selective recompute as a plan: the attention core recomputed, the rest stored.
std::vector<Fate> selectivePlan(const LayerGraph &graph);

} // namespace memledger
