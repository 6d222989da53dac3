// SPDX-License-Identifier: MIT
// The smaller defects of the views (issue 16, item 11) and the Help menu.
#include <QAbstractEventDispatcher>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QUndoStack>
#include <QUrl>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/helpmenu.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/planfindermodel.h"
#include "ui/staircasechart.h"

#include <algorithm>
#include <cstdlib>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

QAction *actionWithShortcut(QWidget &window, const QKeySequence &keys)
{
    for (QAction *action : window.findChildren<QAction *>())
        if (action->shortcut() == keys)
            return action;
    return nullptr;
}

QAction *actionNamed(QWidget &window, const QString &text)
{
    for (QAction *action : window.findChildren<QAction *>())
        if (action->text().remove(QLatin1Char('&')) == text)
            return action;
    return nullptr;
}

} // namespace

TEST_CASE("The lifetimes legend wraps instead of running off a 1024-pixel window", "[ui][lifetimes]")
{
    ShownWindow gui(kDefaultScenario, QSize(1024, 700));
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    QApplication::processEvents();
    LifetimeView *view = gui.window.lifetimes();
    const std::vector<LifetimeView::LegendEntry> legend = view->legend();
    REQUIRE(legend.size() > 6); // the title, the categories and the three phases
    QStringList labels;
    for (std::size_t i = 0; i < legend.size(); ++i) {
        const LifetimeView::LegendEntry &entry = legend[i];
        labels << entry.label;
        INFO(entry.label.toStdString());
        CHECK(entry.rect.left() >= 0);
        CHECK(entry.rect.right() <= view->width());
        for (std::size_t j = 0; j < i; ++j)
            CHECK_FALSE(entry.rect.intersects(legend[j].rect));
        // Nothing of the legend over the curve.
        CHECK(entry.rect.bottom() <= view->curveArea().top());
    }
    CHECK(labels.contains(QStringLiteral("Optimizer step")));
}

TEST_CASE("Lifetimes: a reset-zoom control and a zoom hint, and the zoom stays when the rank changes",
          "[ui][lifetimes]")
{
    ShownWindow gui;
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    QApplication::processEvents();
    LifetimeView *view = gui.window.lifetimes();
    auto *reset = gui.window.findChild<QToolButton *>(QStringLiteral("resetZoom"));
    auto *hint = gui.window.findChild<QLabel *>(QStringLiteral("zoomHint"));
    REQUIRE(reset != nullptr);
    REQUIRE(hint != nullptr);
    CHECK(hint->isVisible());
    CHECK(hint->text().contains(QStringLiteral("zoom")));
    // Whole at 1024 pixels beside the plan panel (it was cut to "Wheel or + − zooms, d…"): on one line or on
    // two, every word inside the label.
    for (const QSize size : {QSize(1024, 700), QSize(1400, 900)}) {
        gui.window.resize(size);
        QApplication::processEvents();
        INFO(size.width() << "x" << size.height());
        const QRect needed
            = hint->fontMetrics().boundingRect(QRect(0, 0, hint->width(), 10000), Qt::TextWordWrap, hint->text());
        CHECK(needed.width() <= hint->width());
        CHECK(needed.height() <= hint->height());
        CHECK(hint->geometry().right() <= hint->parentWidget()->width());
    }
    CHECK_FALSE(reset->isEnabled());

    const TimeAxis &axis = view->timeAxis();
    view->zoomAround((axis.t0 + axis.t1) / 2, 4);
    REQUIRE(axis.isZoomed());
    CHECK(reset->isEnabled());
    const double t0 = axis.t0, t1 = axis.t1;

    // Another rank: the same window of the iteration.
    auto *rank = gui.window.findChild<QSpinBox *>(QStringLiteral("lifetimesRank"));
    REQUIRE(rank != nullptr);
    REQUIRE(rank->maximum() >= 1);
    rank->setValue(rank->value() == 0 ? 1 : 0);
    QApplication::processEvents();
    CHECK(view->rank() == rank->value());
    CHECK(view->timeAxis().isZoomed());
    CHECK(view->timeAxis().t0 == Approx(t0));
    CHECK(view->timeAxis().t1 == Approx(t1));
    CHECK(reset->isEnabled());

    reset->click();
    CHECK_FALSE(view->timeAxis().isZoomed());
    CHECK_FALSE(reset->isEnabled());
}

TEST_CASE("The host-memory chart shows only when something is offloaded", "[ui][charts]")
{
    ShownWindow gui;
    // Nothing offloaded: the staircase has the whole column.
    CHECK_FALSE(gui.window.hostBars()->isVisible());
    const int alone = gui.window.staircase()->height();

    REQUIRE(gui.document.loadBuiltinScenario("seed-000-7b-c-offload"));
    QApplication::processEvents();
    CHECK(gui.window.hostBars()->isVisible());
    CHECK(gui.window.staircase()->height() < alone);
}

TEST_CASE("The host-memory chart keeps its room while offload is toggled back and forth", "[ui][charts][bench]")
{
    // Issue 16, one frame per move: toggling an offload combo showed and hid the host chart at every step,
    // and both charts of the column were resized, laid out and repainted each time (2 Mpx a move).
    ShownWindow gui(kDefaultScenario, QSize(1600, 1000));
    gui.holdRunsUntilPause(); // the test pauses the edits itself, below
    REQUIRE_FALSE(gui.window.hostBars()->isVisible());
    const int alone = gui.window.staircase()->height();
    auto *offload = gui.control<QComboBox>(QStringLiteral("Optimizer offload"));
    auto *micro = gui.control<QSpinBox>(QStringLiteral("Micro-batch (b)"));
    const int none = offload->currentIndex();
    const auto pick = [&](int index) {
        offload->setCurrentIndex(index);
        Q_EMIT offload->activated(index); // what a user's pick emits
        settle();
    };

    pick((none + 1) % offload->count()); // something offloaded: the chart shows, half the column each
    REQUIRE(gui.window.hostBars()->isVisible());
    const int half = gui.window.staircase()->height();
    CHECK(half < alone);
    CHECK(std::abs(gui.window.hostBars()->height() - half) <= 2);

    pick(none); // back to nothing offloaded, the same control: the chart keeps its room
    CHECK(gui.window.hostBars()->isVisible());
    CHECK(gui.window.staircase()->height() == half);
    pick((none + 1) % offload->count()); // on again: nothing moves
    CHECK(gui.window.staircase()->height() == half);
    pick(none);

    micro->setValue(micro->value() + 1); // another control right after: the run goes on, the room stays
    settle();
    CHECK(gui.window.hostBars()->isVisible());
    CHECK(gui.window.staircase()->height() == half);
    // The edits pause: the room goes back to the staircase.
    gui.pauseEdits();
    CHECK_FALSE(gui.window.hostBars()->isVisible());
    CHECK(gui.window.staircase()->height() == alone);

    pick((none + 1) % offload->count()); // shown again, then an undo: the room goes back at once
    REQUIRE(gui.window.hostBars()->isVisible());
    gui.document.undoStack()->undo();
    settle();
    CHECK_FALSE(gui.window.hostBars()->isVisible());
    CHECK(gui.window.staircase()->height() == alone);
}

TEST_CASE("Help: F1 lists the shortcuts, About names the version, Documentation links the guides", "[ui][help]")
{
    ShownWindow gui(kDefaultScenario, kOwnSize);

    QAction *keys = actionWithShortcut(gui.window, QKeySequence(Qt::Key_F1));
    REQUIRE(keys != nullptr);
    keys->trigger();
    QApplication::processEvents();
    auto *shortcuts = gui.window.findChild<QDialog *>(QStringLiteral("shortcuts"));
    REQUIRE(shortcuts != nullptr);
    CHECK(shortcuts->isVisible());
    auto *table = shortcuts->findChild<QTableWidget *>();
    REQUIRE(table != nullptr);
    QStringList rows;
    for (int row = 0; row < table->rowCount(); ++row)
        rows << table->item(row, 0)->text() + QStringLiteral(" = ") + table->item(row, 1)->text();
    const QString all = rows.join(QLatin1Char('\n'));
    INFO(all.toStdString());
    CHECK(all.contains(QKeySequence(QKeySequence::Save).toString(QKeySequence::NativeText)
                       + QStringLiteral(" = File › Save")));
    CHECK(all.contains(QKeySequence(QKeySequence::Undo).toString(QKeySequence::NativeText)));
    CHECK(all.contains(QStringLiteral("F1 = Help › Keyboard shortcuts")));
    CHECK(all.contains(QStringLiteral(" = File › Save as…")));
    CHECK(all.contains(QStringLiteral(" = File › Quit")));
    CHECK(all.contains(QStringLiteral("Talk mode")));
    CHECK(all.contains(QStringLiteral("Lifetimes")));

    const QString version = QCoreApplication::applicationVersion();
    QCoreApplication::setApplicationVersion(QStringLiteral("9.8.7"));
    QAction *about = actionNamed(gui.window, QStringLiteral("About MemLedger"));
    REQUIRE(about != nullptr);
    about->trigger();
    QApplication::processEvents();
    auto *aboutBox = gui.window.findChild<QMessageBox *>(QStringLiteral("about"));
    REQUIRE(aboutBox != nullptr);
    CHECK(aboutBox->text().contains(QStringLiteral("MemLedger 9.8.7")));
    aboutBox->close();
    QCoreApplication::setApplicationVersion(version);

    QAction *docs = actionNamed(gui.window, QStringLiteral("Documentation"));
    REQUIRE(docs != nullptr);
    docs->trigger();
    QApplication::processEvents();
    auto *docsBox = gui.window.findChild<QMessageBox *>(QStringLiteral("documentation"));
    REQUIRE(docsBox != nullptr);
    CHECK(docsBox->text().contains(QStringLiteral("README.md")));
    CHECK(docsBox->text().contains(QStringLiteral("docs/")));
    docsBox->close();
}

TEST_CASE("Help Documentation links a copy of the guides beside the program and never the source tree", "[ui][help]")
{
    // Issue 34, item 21: Help > Documentation linked the source tree it was built from, which an installed
    // program's user does not have. The guides are installed in share/doc/memledger (the build tree holds the
    // same copy): each link is a file there, with the source's content.
    const QStringList guides = memledger::ui::HelpMenu::guides();
    REQUIRE(guides.size() >= 8); // README, the six docs, the preset format
    const QString source = QDir(QStringLiteral(MEMLEDGER_SOURCE_DIR)).canonicalPath();
    const QString folder = memledger::ui::HelpMenu::documentationFolder();
    CHECK(folder.endsWith(QStringLiteral("share/doc/memledger")));
    CHECK(folder != source); // the build tree may lie inside the source tree (build/default): its copy is not it
    for (const QString &relative : {QStringLiteral("README.md"), QStringLiteral("docs/time-model.md"),
                                    QStringLiteral("docs/accounting.md"), QStringLiteral("presets/README.md")}) {
        INFO(relative.toStdString());
        const QString copy = folder + QLatin1Char('/') + relative;
        CHECK(guides.contains(copy));
        QFile installed(copy), original(source + QLatin1Char('/') + relative);
        REQUIRE(installed.open(QIODevice::ReadOnly));
        REQUIRE(original.open(QIODevice::ReadOnly));
        CHECK(installed.readAll() == original.readAll());
    }
    // Nor do the tooltips send the user to a source-tree path ("docs/time-model.md").
    ShownWindow gui;
    for (QWidget *widget : gui.window.findChildren<QWidget *>()) {
        INFO(widget->metaObject()->className() << ": " << widget->toolTip().toStdString());
        CHECK_FALSE(widget->toolTip().contains(QStringLiteral("docs/")));
    }
    const memledger::ui::PlanFinderModel finder;
    CHECK_FALSE(finder.headerData(memledger::ui::PlanFinderModel::StepTimeColumn, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("docs/")));
    QAction *docs = actionNamed(gui.window, QStringLiteral("Documentation"));
    REQUIRE(docs != nullptr);
    docs->trigger();
    QApplication::processEvents();
    auto *box = gui.window.findChild<QMessageBox *>(QStringLiteral("documentation"));
    REQUIRE(box != nullptr);
    CHECK(box->text().contains(QUrl::fromLocalFile(folder + QStringLiteral("/docs/time-model.md")).toString()));
    CHECK_FALSE(box->text().contains(QUrl::fromLocalFile(source + QStringLiteral("/docs")).toString()));
    box->close();
}

TEST_CASE("In the dark palette a disabled menu command looks disabled", "[ui][dark]")
{
    TestWindow gui;
    gui.window.setDark(true);
    gui.show(kOwnSize);
    QAction *undo = actionWithShortcut(gui.window, QKeySequence(QKeySequence::Undo));
    REQUIRE(undo != nullptr);
    REQUIRE_FALSE(undo->isEnabled()); // a fresh document: nothing to undo
    QMenu *edit = nullptr;
    for (QAction *top : gui.window.menuBar()->actions())
        if (top->menu() && top->menu()->actions().contains(undo))
            edit = top->menu();
    REQUIRE(edit != nullptr);
    // An enabled command beside it to compare with.
    QAction *enabled = edit->addAction(QStringLiteral("Undo Set Tensor (t) to 4"));
    enabled->setShortcut(QKeySequence(QKeySequence::Undo));
    edit->popup(QPoint(0, 0));
    QApplication::processEvents();
    const QImage image = edit->grab().toImage();
    // The brightest text pixel of each item: a disabled one is clearly dimmer on the dark background.
    const auto brightest = [&](QAction *action) {
        int most = 0;
        const QRect r = edit->actionGeometry(action).intersected(image.rect());
        for (int y = r.top(); y <= r.bottom(); ++y)
            for (int x = r.left(); x <= r.right(); ++x)
                most = std::max(most, qGray(image.pixel(x, y)));
        return most;
    };
    const int on = brightest(enabled);
    const int off = brightest(undo);
    INFO("enabled " << on << ", disabled " << off);
    CHECK(on - off >= 60);
    edit->hide();
    gui.window.setDark(false);
}

namespace {

// As --bench-ui does after a move: event-loop passes until none has work left, then the frame.
void settleAndPaint(QWidget &window)
{
    QAbstractEventDispatcher *dispatcher = QAbstractEventDispatcher::instance();
    for (int pass = 0; pass < 16 && dispatcher->processEvents(QEventLoop::AllEvents); ++pass) { }
    QEvent frame(QEvent::UpdateRequest);
    QApplication::sendEvent(&window, &frame);
}
} // namespace

TEST_CASE("An edit repaints the staircase once and does not relayout the window", "[ui][charts][bench]")
{
    // Issue 16, one frame per move: Recompute toggled between selective and full painted the staircase twice
    // per move (its chart laid out after the first paint, a second paint for the new axes), and the new axis
    // labels' width set a new minimum width, which relayouted both splitters and the main window each time.
    ShownWindow gui(kDefaultScenario, QSize(1600, 1000));
    settleAndPaint(gui.window);
    const Config selective = gui.document.config();
    REQUIRE(selective.strategy.recompute_granularity == RecomputeGranularity::Selective);
    Config full = selective;
    full.strategy.recompute_granularity = RecomputeGranularity::Full;
    gui.document.edit(full, QStringLiteral("full"));
    settleAndPaint(gui.window);
    gui.document.edit(selective, QStringLiteral("selective"));
    settleAndPaint(gui.window);

    PaintCount staircase, central;
    gui.window.staircase()->viewport()->installEventFilter(&staircase);
    gui.window.centralWidget()->installEventFilter(&central);
    for (int step = 0; step < 4; ++step) {
        gui.document.edit(step % 2 == 0 ? full : selective, QStringLiteral("toggle"));
        settleAndPaint(gui.window);
        CHECK(staircase.paints == step + 1); // once per edit
    }
    CHECK(central.layouts == 0);
}

TEST_CASE("A new status message repaints the status bar, not the window under it", "[ui][bench]")
{
    // Issue 16, one frame per move: an edit through an invalid value and back changes the status message at
    // every step, and the see-through status bar had the main window paint its background under it each time.
    ShownWindow gui(kDefaultScenario, QSize(1600, 1000));
    settleAndPaint(gui.window);
    PaintCount own, bar;
    gui.window.installEventFilter(&own);
    gui.window.statusBar()->installEventFilter(&bar);
    gui.window.statusBar()->showMessage(QStringLiteral("1 error in the configuration"));
    settleAndPaint(gui.window);
    gui.window.statusBar()->showMessage(QStringLiteral("Showing built-in: llama-3-70b-128xh100"));
    settleAndPaint(gui.window);
    CHECK(bar.paints == 2);
    CHECK(own.paints == 0);
}
