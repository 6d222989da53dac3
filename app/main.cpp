// SPDX-License-Identifier: MIT
// memledger: the GUI. Thin: arguments, QApplication, Document, MainWindow.
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QIcon>
#include <QImageWriter>
#include <QPixmap>
#include <QScreen>
#include <QTabWidget>

#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "ui/benchui.h"
#include "ui/document.h"
#include "ui/lifetimesource.h"
#include "ui/mainwindow.h"
#include "ui/measuredrun.h"
#include "ui/measuredview.h"
#include "ui/planfinder.h"
#include "ui/talkmode.h"

#include <cstdio>
#include <memory>
#include <optional>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

constexpr int kExitBadInput = 2;
constexpr int kScreenshotWidth = 1600;
constexpr int kScreenshotHeight = 1000;

void printError(const QString &message)
{
    std::fprintf(stderr, "memledger: %s\n", qPrintable(message));
}

// Whether a GUI platform plugin has something to open: a display, or a platform the user chose. Without one,
// QApplication aborts (exit 134), which is no answer to --help on a server or in CI (issue 34, item 18).
bool guiPlatformAvailable()
{
#if defined(Q_OS_UNIX) && !defined(Q_OS_DARWIN)
    return !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY")
           || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
#else
    return true;
#endif
}

// The arguments as QCoreApplication::arguments() has them, for reading before any application exists.
QStringList argumentsOf(int argc, char *argv[])
{
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);
    return arguments;
}

} // namespace

int main(int argc, char *argv[])
{
#if defined(__GLIBC__)
    // glibc gives the top of the heap back to the system as soon as 128 KiB
    // lie free there (M_TRIM_THRESHOLD's default) and then faults the pages in
    // again: an edit frees one ledger (and, on the Lifetimes view, one
    // simulated timeline) and builds the next of about the same size, so
    // every edit paid that round trip. Keep 64 MiB before
    // trimming and grow the heap 16 MiB at a time (mallopt(3)).
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
    // Setting those turns off glibc's own raising of the mmap threshold, so
    // every block over 128 KiB was mapped fresh and unmapped when freed: each
    // image a view keeps of new content (the header, 300 KiB; a control group's
    // frame) faulted its pages in as it was filled, 13 % of a control's first
    // move in a perf profile of the GUI bench. Blocks up to 32 MiB (the most
    // glibc would raise it to) come from the heap, where freed ones are reused.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
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
                                                       "2 Lifetimes, 3 Ledger, 4 Planners, 5 Find plans, "
                                                       "6 Measured vs model."),
                                        QStringLiteral("N"));
    const QCommandLineOption traceOption(
        QStringLiteral("trace"),
        QStringLiteral("Import the measured trace FILE (a PyTorch memory snapshot .pickle or profiler trace .json, "
                       "gzipped or not) and hold the plan against it, as File > Import measured trace does."),
        QStringLiteral("FILE"));
    const QCommandLineOption sizeOption(QStringLiteral("size"),
                                        QStringLiteral("With --screenshot: the window's size, WIDTHxHEIGHT "
                                                       "(default 1600x1000)."),
                                        QStringLiteral("WxH"));
    const QCommandLineOption deckOption(QStringLiteral("deck"),
                                        QStringLiteral("Start talk mode with the built-in deck NAME or the deck FILE "
                                                       "(View > Talk mode); with --screenshot, at --size."),
                                        QStringLiteral("NAME|FILE"));
    const QCommandLineOption slideOption(QStringLiteral("slide"),
                                         QStringLiteral("With --deck: open on slide N, from 1."), QStringLiteral("N"));
    const QCommandLineOption lifetimesOption(
        QStringLiteral("lifetimes"),
        QStringLiteral("What the Lifetimes view draws: training (the default), prefill or decode (the same plan "
                       "served)."),
        QStringLiteral("WHICH"));
    const QCommandLineOption darkOption(QStringLiteral("dark"),
                                        QStringLiteral("Use the dark palette for this run (View > Dark palette "
                                                       "keeps it for the next start)."));
    const QCommandLineOption lightOption(QStringLiteral("light"),
                                         QStringLiteral("Use the light palette for this run, whatever View > Dark "
                                                        "palette keeps."));
    parser.addOption(presetOption);
    parser.addOption(darkOption);
    parser.addOption(lightOption);
    parser.addOption(deckOption);
    parser.addOption(slideOption);
    parser.addOption(lifetimesOption);
    parser.addOption(traceOption);
    parser.addOption(sizeOption);
    parser.addOption(screenshotOption);
    parser.addOption(viewOption);
    parser.addOption(benchOption);

    // Read once before there is an application, to choose which: --help and --version print with a
    // QCoreApplication, which needs no display, and the offscreen runs fall back to the offscreen platform where
    // there is none. Errors are left to process() below.
    (void)parser.parse(argumentsOf(argc, argv));
    const bool printOnly = parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("version"))
                           || (parser.isSet(QStringLiteral("help-all")) && !guiPlatformAvailable());
    if (!printOnly && (parser.isSet(screenshotOption) || parser.isSet(benchOption)) && !guiPlatformAvailable())
        qputenv("QT_QPA_PLATFORM", QByteArrayLiteral("offscreen"));
    const std::unique_ptr<QCoreApplication> app
        = printOnly ? std::make_unique<QCoreApplication>(argc, argv) : std::make_unique<QApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("memledger"));
    QCoreApplication::setApplicationVersion(QStringLiteral(MEMLEDGER_VERSION)); // project(VERSION) in CMakeLists.txt
    // QSettings' path: ~/.config/MemLedger/memledger.conf, not "Unknown Organization" (issue 34, item 21).
    QCoreApplication::setOrganizationName(QStringLiteral("MemLedger"));
    QCoreApplication::setOrganizationDomain(QStringLiteral("memledger.org")); // MEMLEDGER_APP_ID, reversed
    parser.process(*app); // --help and --version exit here
    QApplication::setApplicationDisplayName(QStringLiteral("MemLedger"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/memledger/memledger.svg")));
    if (!parser.positionalArguments().isEmpty()) {
        printError(QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().constFirst()));
        std::fputs(qPrintable(parser.helpText()), stderr);
        return kExitBadInput;
    }
    if (parser.isSet(darkOption) && parser.isSet(lightOption)) {
        printError(QStringLiteral("--dark and --light exclude each other"));
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
    if (parser.isSet(darkOption) || parser.isSet(lightOption))
        window.setDark(parser.isSet(darkOption), false);
    if (parser.isSet(viewOption)) {
        bool ok = false;
        const int view = parser.value(viewOption).toInt(&ok);
        if (!ok || view < 1 || view > window.views()->count()) {
            printError(QStringLiteral("--view needs a view number from 1 to %1").arg(window.views()->count()));
            return kExitBadInput;
        }
        window.views()->setCurrentIndex(view - 1);
    }
    if (parser.isSet(lifetimesOption)) {
        const QString which = parser.value(lifetimesOption);
        const QStringList choices = {QStringLiteral("training"), QStringLiteral("prefill"), QStringLiteral("decode")};
        if (!choices.contains(which)) {
            printError(QStringLiteral("--lifetimes needs one of %1").arg(choices.join(QStringLiteral(", "))));
            return kExitBadInput;
        }
        window.findChild<memledger::ui::LifetimeSource *>()->setSource(
            memledger::ui::LifetimeSource::Source(choices.indexOf(which)));
    }
    QSize screenshotSize(kScreenshotWidth, kScreenshotHeight);
    if (parser.isSet(sizeOption)) {
        const QStringList parts = parser.value(sizeOption).split(QLatin1Char('x'));
        bool okW = false, okH = false;
        if (parts.size() == 2)
            screenshotSize = QSize(parts[0].toInt(&okW), parts[1].toInt(&okH));
        if (!okW || !okH || screenshotSize.width() < 200 || screenshotSize.height() < 200) {
            printError(QStringLiteral("--size needs WIDTHxHEIGHT in pixels, at least 200x200, e.g. 1024x700"));
            return kExitBadInput;
        }
    }
    if (parser.isSet(traceOption)) {
        // Shown when it is in, unless a view was asked for.
        window.measuredView()->importTrace(parser.value(traceOption), !parser.isSet(viewOption));
        if (parser.isSet(screenshotOption)) {
            // The picture is of the imported run: wait for it, and fail like a bad preset when it does not load.
            QString failure;
            QObject::connect(window.measuredRun(), &memledger::ui::MeasuredRun::importFailed,
                             [&failure](const QString &, const QString &problems) { failure = problems; });
            window.measuredRun()->waitUntilIdle();
            if (!failure.isEmpty()) {
                printError(QStringLiteral("cannot import %1:\n%2").arg(parser.value(traceOption), failure));
                return kExitBadInput;
            }
        }
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
    std::optional<memledger::Deck> deck;
    if (parser.isSet(deckOption)) {
        const QString name = parser.value(deckOption);
        const memledger::BuiltinPreset *builtin = memledger::findBuiltin("decks", name.toStdString());
        const memledger::DeckLoadResult loaded = builtin ? memledger::deckFromText(builtin->text, builtin->name)
                                                         : memledger::deckFromFile(name.toStdString());
        if (!loaded.deck) {
            QStringList lines;
            for (const memledger::Problem &p : loaded.problems)
                lines << QString::fromStdString(p.toString());
            printError(QStringLiteral("cannot load the deck %1:\n%2").arg(name, lines.join(QLatin1Char('\n'))));
            return kExitBadInput;
        }
        deck = loaded.deck;
    }
    int slide = 0;
    if (parser.isSet(slideOption)) {
        bool ok = false;
        slide = parser.value(slideOption).toInt(&ok) - 1;
        if (!deck || !ok || slide < 0 || slide >= int(deck->slides.size())) {
            printError(deck ? QStringLiteral("--slide needs a slide number from 1 to %1").arg(deck->slides.size())
                            : QStringLiteral("--slide needs --deck"));
            return kExitBadInput;
        }
    }
    const auto startTalk = [&] {
        if (!deck)
            return;
        window.talkMode()->start(*deck);
        window.talkMode()->step(slide);
    };
    if (parser.isSet(screenshotOption)) {
        const QString path = parser.value(screenshotOption);
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(screenshotSize);
        window.show();
        if (deck) {
            // Talk mode goes full screen; the picture is of a screen of --size.
            startTalk();
            window.setWindowState(Qt::WindowNoState);
            window.resize(screenshotSize);
        }
        // Laid out once, the wrapped texts know their widths and the minimum size its true height (a few
        // passes of the event loop): the size asked for again, where the first layout had held the window larger.
        for (int pass = 0; pass < 10; ++pass)
            QApplication::processEvents();
        // A view that asked for the allocator model's reserved memory (Lifetimes) draws it once it is ready.
        if (document.reservedPending())
            document.waitForReserved(30000);
        // Find plans, when shown, draws the plans its search finds on a worker thread.
        window.planFinder()->waitForSearch();
        QApplication::processEvents();
        window.resize(screenshotSize);
        QApplication::processEvents();
        QImageWriter writer(path, "png");
        if (!writer.write(window.grab().toImage())) {
            printError(QStringLiteral("cannot save %1: %2").arg(path, writer.errorString()));
            return kExitBadInput;
        }
        return 0;
    }

    // Within the screen's available area (a window larger than a small screen opened past its edges).
    window.resize(memledger::ui::startSize(window.screen() ? window.screen()->availableGeometry().size() : QSize()));
    window.show();
    startTalk();
    return QApplication::exec();
}
