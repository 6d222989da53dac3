// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace memledger {

// Concatenates its parts into one string allocated once: the ledger's
// explanation text is built on every evaluation (every slider move), and a
// chain of `+` reallocates and copies as the string grows.
template<class... Parts>
std::string cat(const Parts &...parts)
{
    const std::string_view views[] = {std::string_view(parts)...}; // each C string's length measured once
    std::size_t size = 0;
    for (std::string_view v : views)
        size += v.size();
    std::string out;
    out.reserve(size);
    for (std::string_view v : views)
        out.append(v);
    return out;
}

// The same, appended to an existing string (no part may view `out` itself).
template<class... Parts>
void append(std::string &out, const Parts &...parts)
{
    const std::string_view views[] = {std::string_view(parts)...};
    std::size_t size = out.size();
    for (std::string_view v : views)
        size += v.size();
    out.reserve(size);
    for (std::string_view v : views)
        out.append(v);
}

} // namespace memledger
