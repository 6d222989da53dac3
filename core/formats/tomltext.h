// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace memledger {

// TOML text made safe for toml++ 3.3 (Debian 12's libtomlplusplus): its
// whitespace test reaches an unreachable branch (undefined behaviour) for
// some non-ASCII code points it is asked about, where a key, a value or the
// text after a multi-line string's line-ending backslash holds one
// (marzer/tomlplusplus issues #190 and #295, fixed after 3.3 by pull request
// #305). Each such code point (most of U+00A0..U+0499, U+2C5E..U+3057 and
// U+FB26..U+FEFE) becomes U+FFFD: one code point for another, so lines and
// columns in its error messages stay, and a key or value holding one is no
// key or value MemLedger reads. Invalid UTF-8 is left for toml++ to refuse.
std::string tomlSafeText(std::string_view text);

} // namespace memledger
