// SPDX-License-Identifier: MIT
#include "core/base/stats.h"

#include <algorithm>
#include <cmath>

namespace memledger {

double percentile(std::vector<double> samples, double q)
{
    if (samples.empty())
        return 0.0;
    std::sort(samples.begin(), samples.end());
    // Nearest rank: the smallest sample with at least q of the samples at or below it.
    const double rank = std::ceil(std::clamp(q, 0.0, 1.0) * double(samples.size()));
    const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
    return samples[std::min(index, samples.size() - 1)];
}

} // namespace memledger
