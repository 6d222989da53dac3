// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"

#include <cstdint>

namespace memledger {

// Which rules of strategy.tensor_policies match at least one tensor a layer
// of this kind saves: bit k for rule k (the first 64 rules; later ones are
// not reported). One totals-only pass over the layer, the same that sums its
// bytes, so validation checks the rules without listing the tensors' names
// (it runs on every ledger evaluation).
std::uint64_t matchedPolicies(const Config &config, bool moeLayer);

} // namespace memledger
