// SPDX-License-Identifier: MIT
#pragma once

#include <QFile>
#include <QString>
#include <QTemporaryDir>

#include <catch2/catch.hpp>
#include <string>

// Helpers of the GUI tests. Failures print QStrings as text, not as "{?}".
namespace Catch {
template<>
struct StringMaker<QString>
{
    static std::string convert(const QString &s) { return '"' + s.toStdString() + '"'; }
};
} // namespace Catch

namespace memledger::test {

// Writes `contents` to `name` in `dir` and returns the path.
inline QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &contents)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    REQUIRE(file.open(QIODevice::WriteOnly));
    REQUIRE(file.write(contents) == contents.size());
    return path;
}

} // namespace memledger::test
