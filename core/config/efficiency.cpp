// SPDX-License-Identifier: MIT
#include "core/config/efficiency.h"

#include <cmath>
#include <cstdio>

namespace memledger {

double efficiencyAt(const EfficiencyTable &table, double size)
{
    if (table.empty())
        return 1.0;
    if (!(size > table.front().size))
        return table.front().fraction;
    for (std::size_t i = 1; i < table.size(); ++i) {
        const EfficiencyPoint &a = table[i - 1], &b = table[i];
        if (size <= b.size) {
            const double f = std::log(size / a.size) / std::log(b.size / a.size);
            return a.fraction + (b.fraction - a.fraction) * f;
        }
    }
    return table.back().fraction;
}

void checkEfficiencyTable(const EfficiencyTable &table, const std::string &field, Problems &problems)
{
    const auto number = [](double x) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", x);
        return std::string(buf);
    };
    if (table.empty()) {
        problems.push_back(
            {field, "needs at least one [size, fraction] pair", "for example [[1e9, 0.5], [1e12, 0.8]]"});
        return;
    }
    for (std::size_t i = 0; i < table.size(); ++i) {
        const EfficiencyPoint &p = table[i];
        // The path only when there is something to say (validation runs on every evaluation).
        const auto at = [&] { return field + "[" + std::to_string(i) + "]"; };
        if (!(p.size > 0) || !std::isfinite(p.size))
            problems.push_back({at(), "the size must be a positive number, got " + number(p.size)});
        if (!(p.fraction > 0 && p.fraction <= 1))
            problems.push_back({at(), "the fraction of peak must be in (0, 1], got " + number(p.fraction),
                                "an efficiency is achieved / peak, never above 1"});
        if (i == 0)
            continue;
        const EfficiencyPoint &q = table[i - 1];
        if (!(p.size > q.size))
            problems.push_back(
                {at(), "sizes must be strictly ascending: " + number(p.size) + " follows " + number(q.size)});
        else if (p.fraction < q.fraction)
            problems.push_back({at(),
                                "the fraction must not fall as the size grows: " + number(p.fraction) + " at "
                                    + number(p.size) + " after " + number(q.fraction) + " at " + number(q.size),
                                "larger operations use the device at least as well as smaller ones"});
    }
}

} // namespace memledger
