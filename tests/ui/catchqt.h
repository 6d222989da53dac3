// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

#include <catch2/catch.hpp>
#include <string>

// Failures print QStrings as text, not as "{?}".
namespace Catch {
template<>
struct StringMaker<QString>
{
    static std::string convert(const QString &s) { return '"' + s.toStdString() + '"'; }
};
} // namespace Catch
