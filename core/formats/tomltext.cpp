// SPDX-License-Identifier: MIT
#include "core/formats/tomltext.h"

#include <cstdint>

namespace memledger {

namespace {

// The code points toml++ 3.3's is_non_ascii_horizontal_whitespace leaves to
// its unreachable default: in U+00A0..U+FEFF, split into 1,018-wide slices
// from U+00A0, those of a slice its bit mask lets through that neither its
// early test (U+00A0, U+3000, U+FEFF) nor a case of its switch (slices 5 and
// 7) answers: slices 0, 11 and 63.
bool hazard(std::uint32_t c)
{
    if (c < 0xA0 || c > 0xFEFF)
        return false;
    constexpr std::uint64_t kMask = 0x7FFFFFFFFFFFF75Eull; // toml++ 3.3's: a set bit returns false at once
    const std::uint32_t slice = (c - 0xA0) / 0x3FA;
    if ((kMask >> slice) & 1u)
        return false;
    if (c == 0xA0 || c == 0x3000 || c == 0xFEFF)
        return false;
    return slice != 5 && slice != 7;
}

} // namespace

std::string tomlSafeText(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto byte = static_cast<unsigned char>(text[i]);
        // A well-formed two- or three-byte sequence (every hazard is one); anything else as it is.
        std::size_t n = 1;
        std::uint32_t c = byte;
        if ((byte & 0xE0) == 0xC0 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
            n = 2;
            c = (byte & 0x1Fu) << 6 | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
        } else if ((byte & 0xF0) == 0xE0 && i + 2 < text.size()
                   && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80
                   && (static_cast<unsigned char>(text[i + 2]) & 0xC0) == 0x80) {
            n = 3;
            c = (byte & 0x0Fu) << 12 | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6
                | (static_cast<unsigned char>(text[i + 2]) & 0x3Fu);
        }
        if (n > 1 && hazard(c))
            out += "\xEF\xBF\xBD"; // U+FFFD
        else
            out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

} // namespace memledger
