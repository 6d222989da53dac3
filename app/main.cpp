// SPDX-License-Identifier: MIT
// memledger: the GUI. Thin: arguments, QApplication, Document, MainWindow.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QImageWriter>
#include <QTabWidget>
#include <QPixmap>

#include "core/builtins.h"
#include "ui/benchui.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

#include <cstdio>

namespace {

constexpr int kExitBadInput = 2;
constexpr int kScreenshotWidth = 1600;
constexpr int kScreenshotHeight = 1000;

void printError(const QString &message)
{
    std::fprintf(stderr, "memledger: %s\n", qPrintable(message));
}

} // namespace

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("memledger"));
    QApplication::setApplicationDisplayName(QStringLiteral("MemLedger"));
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/memledger/memledger.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Shows where every byte of GPU memory goes when a large model is trained."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption presetOption(QStringLiteral("preset"),
                                          QStringLiteral("Open the preset FILE instead of the default scenario."),
                                          QStringLiteral("FILE"));
    const QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
                                              QStringLiteral("Save a PNG of the main window to FILE and exit."),
                                              QStringLiteral("FILE"));
    const QCommandLineOption benchOption(QStringLiteral("bench-ui"),
                                         QStringLiteral("Move every control N times offscreen, print the "
                                                        "slider-to-repaint p50 and p99, and exit."),
                                         QStringLiteral("N"));
    const QCommandLineOption viewOption(QStringLiteral("view"),
                                        QStringLiteral("Open on the view numbered N in tab order, from 1 (Memory): "
                                                       "2 Lifetimes, 3 Ledger, 4 Planners, 5 Find plans."),
                                        QStringLiteral("N"));
    parser.addOption(presetOption);
    parser.addOption(screenshotOption);
    parser.addOption(viewOption);
    parser.addOption(benchOption);
    parser.process(app);
    if (!parser.positionalArguments().isEmpty()) {
        printError(QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().constFirst()));
        std::fputs(qPrintable(parser.helpText()), stderr);
        return kExitBadInput;
    }

    memledger::ui::Document document;
    QString error;
    const bool loaded = parser.isSet(presetOption) ? document.loadFile(parser.value(presetOption), &error)
                                                   : document.loadBuiltinScenario(memledger::kDefaultScenario, &error);
    if (!loaded) {
        printError(parser.isSet(presetOption)
                       ? QStringLiteral("cannot load %1:\n%2").arg(parser.value(presetOption), error)
                       : error);
        return kExitBadInput;
    }

    memledger::ui::MainWindow window(&document);
    if (parser.isSet(viewOption)) {
        bool ok = false;
        const int view = parser.value(viewOption).toInt(&ok);
        if (!ok || view < 1 || view > window.views()->count()) {
            printError(QStringLiteral("--view needs a view number from 1 to %1").arg(window.views()->count()));
            return kExitBadInput;
        }
        window.views()->setCurrentIndex(view - 1);
    }
    if (parser.isSet(benchOption)) {
        bool ok = false;
        const int moves = parser.value(benchOption).toInt(&ok);
        if (!ok || moves < 1) {
            printError(QStringLiteral("--bench-ui needs a positive number of moves"));
            return kExitBadInput;
        }
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(kScreenshotWidth, kScreenshotHeight);
        window.show();
        QApplication::processEvents();
        std::printf("%s\n", qPrintable(memledger::ui::benchSliders(window, moves)));
        return 0;
    }
    if (parser.isSet(screenshotOption)) {
        const QString path = parser.value(screenshotOption);
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(kScreenshotWidth, kScreenshotHeight);
        window.show();
        QApplication::processEvents();
        QImageWriter writer(path, "png");
        if (!writer.write(window.grab().toImage())) {
            printError(QStringLiteral("cannot save %1: %2").arg(path, writer.errorString()));
            return kExitBadInput;
        }
        return 0;
    }

    window.resize(1400, 900);
    window.show();
    return QApplication::exec();
}
