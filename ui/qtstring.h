// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

#include <string_view>

namespace memledger::ui {

// Core speaks UTF-8 std::string(_view); QT_NO_CAST_FROM_ASCII forbids implicit conversion.
inline QString toQString(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace memledger::ui
