// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"
#include "core/model/activations.h"

#include <cstdint>

namespace memledger {

// Which rules of strategy.tensor_policies match at least one tensor a layer
// of this kind saves: bit k for rule k (the first 64 rules; later ones are
// not reported). One totals-only pass over the layer, the same that sums its
// bytes, so validation checks the rules without listing the tensors' names
// (it runs on every ledger evaluation).
std::uint64_t matchedPolicies(const Config &config, bool moeLayer);

// layerActivations(config, moeLayer, TensorList::None) and, in `matched`, the
// rules matchedPolicies would report: the ledger's own totals pass gives the
// bits, so validating its configuration does not match the rules again.
LayerActivations layerActivationsMatched(const Config &config, bool moeLayer, std::uint64_t &matched);

// validate(config) for a configuration whose rules' match bits (the dense
// layer's, or'ed with the MoE layer's for an MoE model) are already known.
Problems validateMatched(const Config &config, std::uint64_t matched);

} // namespace memledger
