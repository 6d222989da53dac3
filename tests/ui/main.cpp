// SPDX-License-Identifier: MIT
#define CATCH_CONFIG_RUNNER
#include <QApplication>
#include <QByteArray>
#include <QFile>
#include <QTemporaryDir>

#include <catch2/catch.hpp>

int main(int argc, char *argv[])
{
    // Headless everywhere (CI, ctest, a developer's desktop): Qt Charts needs
    // a QApplication, and offscreen still renders fonts.
    qputenv("QT_QPA_PLATFORM", QByteArrayLiteral("offscreen"));
    // Settings (dark palette, recent files) of this process alone: ctest runs
    // test cases in parallel processes, and one that turns the dark palette on
    // must not repaint another's charts, nor touch the developer's own settings.
    QTemporaryDir home;
    if (!home.isValid())
        return 1;
    const QByteArray root = QFile::encodeName(home.path());
    qputenv("XDG_CONFIG_HOME", root + "/config");
    qputenv("XDG_DATA_HOME", root + "/data");
    qputenv("XDG_CACHE_HOME", root + "/cache");
    QApplication app(argc, argv);
    return Catch::Session().run(argc, argv);
}
