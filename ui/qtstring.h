// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

#include "core/base/units.h"

#include <cstdint>
#include <string_view>

namespace memledger::ui {

// Core speaks UTF-8 std::string(_view); QT_NO_CAST_FROM_ASCII forbids implicit conversion.
inline QString toQString(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// The one byte formatter on screen: core's formatGB ("12.35 GB", decimal, as
// the CLI writes it), so a figure reads the same in every view and in a report.
inline QString bytesText(Bytes bytes)
{
    return toQString(formatGB(static_cast<double>(bytes)));
}

// The one short parameter count on screen: core's formatParameterCount
// ("70.55 B"); exact counts use formatThousands.
inline QString parameterCountText(std::int64_t parameters)
{
    return toQString(formatParameterCount(parameters));
}

// A phrase kept on one line where rich text wraps ("rank 0", "of 85.90 GB",
// "H100-SXM-80GB"): its spaces become non-breaking, and a word joiner follows
// each hyphen (Unicode line breaking allows a break after one).
// QTextDocument::toPlainText gives the spaces back; stripWordJoiners the rest.
inline QString unbroken(QString phrase)
{
    phrase.replace(QLatin1Char(' '), QChar(QChar::Nbsp));
    phrase.replace(QLatin1Char('-'), QStringLiteral(u"-\u2060"));
    return phrase;
}

inline QString stripWordJoiners(QString text)
{
    return text.remove(QChar(0x2060));
}

} // namespace memledger::ui
