// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

namespace memledger {

// The q-quantile (0..1) of `samples` by the nearest-rank method; 0 when empty.
double percentile(std::vector<double> samples, double q);

} // namespace memledger
