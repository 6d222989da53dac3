// SPDX-License-Identifier: MIT
// memledger: the GUI. Thin: arguments, QApplication, Document, MainWindow.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QImageWriter>
#include <QPixmap>

#include "core/builtins.h"
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
    parser.addOption(presetOption);
    parser.addOption(screenshotOption);
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
