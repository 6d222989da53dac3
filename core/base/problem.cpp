// SPDX-License-Identifier: MIT
#include "core/base/problem.h"

#include <algorithm>

namespace memledger {

std::string Problem::toString() const
{
    std::string s = path.empty() ? message : path + ": " + message;
    if (!suggestion.empty())
        s += " (" + suggestion + ")";
    return s;
}

bool hasErrors(const Problems &problems)
{
    return std::any_of(problems.begin(), problems.end(), [](const Problem &p) { return p.isError(); });
}

} // namespace memledger
