// SPDX-License-Identifier: MIT
#define CATCH_CONFIG_RUNNER
#include <QApplication>
#include <QByteArray>

#include <catch2/catch.hpp>

int main(int argc, char *argv[])
{
    // Headless everywhere (CI, ctest, a developer's desktop): Qt Charts needs
    // a QApplication, and offscreen still renders fonts.
    qputenv("QT_QPA_PLATFORM", QByteArrayLiteral("offscreen"));
    QApplication app(argc, argv);
    return Catch::Session().run(argc, argv);
}
