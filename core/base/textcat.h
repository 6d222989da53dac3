// SPDX-License-Identifier: MIT
#pragma once

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

namespace memledger {

namespace detail {

// Copies the parts one after another from `at`, which has room for them all.
inline void copyParts(char *at, std::initializer_list<std::string_view> parts)
{
    for (std::string_view v : parts) {
        if (!v.empty())
            std::memcpy(at, v.data(), v.size());
        at += v.size();
    }
}

inline std::size_t sizeOf(std::initializer_list<std::string_view> parts)
{
    std::size_t size = 0;
    for (std::string_view v : parts)
        size += v.size();
    return size;
}

} // namespace detail

// Concatenates its parts into one string allocated once: the ledger's
// explanation text is built on every evaluation (every slider move), and a
// chain of `+` reallocates and copies as the string grows. The string is
// sized once and the parts copied straight in: `append` per part checks the
// capacity each time, which on a 96-layer ledger was a tenth of the work.
template<class... Parts>
std::string cat(const Parts &...parts)
{
    const std::initializer_list<std::string_view> views = {std::string_view(parts)...}; // C strings measured once
    std::string out(detail::sizeOf(views), '\0');
    detail::copyParts(out.data(), views);
    return out;
}

// The same, appended to an existing string (no part may view `out` itself).
template<class... Parts>
void append(std::string &out, const Parts &...parts)
{
    const std::initializer_list<std::string_view> views = {std::string_view(parts)...};
    const std::size_t at = out.size();
    out.resize(at + detail::sizeOf(views));
    detail::copyParts(out.data() + at, views);
}

} // namespace memledger
