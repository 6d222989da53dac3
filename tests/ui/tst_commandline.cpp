// SPDX-License-Identifier: MIT
// The memledger binary run as a user runs it, with no display: issue 34, items
// 18 (--help, --version and --screenshot aborted without one; --light) and 21
// (settings under "Unknown Organization").
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include "catchqt.h"

namespace {

struct GuiRun
{
    bool exited = false; ///< false: it crashed (an abort) or did not end
    int code = -1;
    QString out;
    QString err;
};

// The environment of a server or a CI job: no display, no platform chosen, and settings of this test alone.
QProcessEnvironment headless(const QTemporaryDir &home)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(QString::fromLatin1(name));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    return env;
}

GuiRun runGui(const QTemporaryDir &home, const QStringList &arguments)
{
    QProcess process;
    process.setProcessEnvironment(headless(home));
    process.start(QStringLiteral(MEMLEDGER_GUI), arguments);
    GuiRun r;
    if (!process.waitForFinished(120000))
        return r;
    r.exited = process.exitStatus() == QProcess::NormalExit;
    r.code = process.exitCode();
    r.out = QString::fromLocal8Bit(process.readAllStandardOutput());
    r.err = QString::fromLocal8Bit(process.readAllStandardError());
    return r;
}

// The mean grey level of a screenshot, 0 (black) to 255: the dark palette's windows are dark.
double meanGrey(const QString &path)
{
    const QImage image(path);
    REQUIRE_FALSE(image.isNull());
    double sum = 0;
    std::int64_t count = 0;
    for (int y = 0; y < image.height(); y += 4)
        for (int x = 0; x < image.width(); x += 4, ++count)
            sum += qGray(image.pixel(x, y));
    return sum / double(count);
}

} // namespace

TEST_CASE("memledger --help and --version print and exit 0 without a display", "[ui][commandline]")
{
    const QTemporaryDir home;
    REQUIRE(home.isValid());
    const GuiRun help = runGui(home, {QStringLiteral("--help")});
    CAPTURE(help.err);
    REQUIRE(help.exited);
    CHECK(help.code == 0);
    CHECK(help.out.contains(QStringLiteral("Usage:")));
    CHECK(help.out.contains(QStringLiteral("--screenshot <FILE>")));
    CHECK(help.out.contains(QStringLiteral("--light")));
    const GuiRun version = runGui(home, {QStringLiteral("--version")});
    CAPTURE(version.err);
    REQUIRE(version.exited);
    CHECK(version.code == 0);
    CHECK(version.out.trimmed() == QStringLiteral("memledger " MEMLEDGER_VERSION));
}

TEST_CASE("memledger --screenshot renders offscreen without a display, in the saved or the chosen palette",
          "[ui][commandline]")
{
    const QTemporaryDir home;
    REQUIRE(home.isValid());
    // The dark palette kept from an earlier run (View > Dark palette), where QSettings keeps the organization's.
    REQUIRE(QDir().mkpath(home.filePath(QStringLiteral("config/MemLedger"))));
    QFile settings(home.filePath(QStringLiteral("config/MemLedger/memledger.conf")));
    REQUIRE(settings.open(QIODevice::WriteOnly));
    settings.write("[General]\ndarkPalette=true\n");
    settings.close();

    const auto shoot = [&home](const QString &name, const QStringList &more) {
        const QString path = home.filePath(name);
        const GuiRun r = runGui(
            home, QStringList{QStringLiteral("--screenshot"), path, QStringLiteral("--size"), QStringLiteral("800x600")}
                      + more);
        CAPTURE(name, r.err);
        REQUIRE(r.exited);
        REQUIRE(r.code == 0);
        return meanGrey(path);
    };
    const double saved = shoot(QStringLiteral("saved.png"), {});
    const double light = shoot(QStringLiteral("light.png"), {QStringLiteral("--light")});
    CAPTURE(saved, light);
    CHECK(saved < 128); // the saved dark palette was found
    CHECK(light > 128); // and --light overrides it

    const GuiRun both = runGui(home, {QStringLiteral("--screenshot"), home.filePath(QStringLiteral("both.png")),
                                      QStringLiteral("--dark"), QStringLiteral("--light")});
    CHECK(both.exited);
    CHECK(both.code == 2);
    CHECK(both.err.contains(QStringLiteral("--dark and --light")));
}
