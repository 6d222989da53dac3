// SPDX-License-Identifier: MIT
// Issue 16, one frame per move: through a run of edits (less than a quarter
// second apart) the memory charts' axes only grow, and fit the plan again once
// the edits pause (the test makes the pause: MainWindow::fitAxesTimer), or at
// an undo or a load. Each axis range change made Qt Charts measure
// every label of the chart again and lay it out, and p = 4 <-> 5 changed both
// charts' rank axes at every step.
#include <QChart>
#include <QImage>
#include <QLineSeries>
#include <QSpinBox>
#include <QTimer>
#include <QUndoStack>
#include <QValueAxis>

#include "catchqt.h"
#include "core/model/gradoffload.h"
#include "testwindow.h"
#include "ui/memorybarschart.h"
#include "ui/staircasechart.h"

using namespace memledger;
using namespace memledger::test;
using namespace memledger::ui;

namespace {

// The horizontal value axis of a chart (the pipeline ranks: -0.5 to slots - 0.5).
const QValueAxis *rankAxis(const QChartView *view)
{
    for (QAbstractAxis *axis : view->chart()->axes(Qt::Horizontal))
        if (axis->isVisible())
            if (const auto *value = qobject_cast<const QValueAxis *>(axis))
                return value;
    return nullptr;
}

} // namespace

TEST_CASE("Through a run of edits the memory charts' axes only grow, and fit once it pauses or at an undo",
          "[ui][charts][bench]")
{
    ShownWindow gui;
    // The test makes the edits' pause itself (pauseEdits), rather than waiting for the quarter second to pass:
    // no run ends between two steps on a slow machine (ASan, a loaded CI).
    const QTimer *fitTimer = gui.window.fitAxesTimer();
    REQUIRE(fitTimer->isSingleShot());
    REQUIRE(fitTimer->interval() == 250); // kFitAxesDelayMs, the pause a user makes
    gui.holdRunsUntilPause();
    auto *pipeline = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    REQUIRE(pipeline->value() == 4);
    const QValueAxis *bars = rankAxis(gui.window.memoryBars());
    const QValueAxis *steps = rankAxis(gui.window.staircase());
    REQUIRE(bars);
    REQUIRE(steps);
    CHECK(bars->max() == 3.5);

    pipeline->setValue(5); // the run's first step: the charts show 5 ranks
    settle();
    CHECK(gui.document.ledger().ranks.size() == 5);
    CHECK(bars->max() == 4.5);
    CHECK(steps->max() == 4.5);

    int rangeChanges = 0;
    QObject counter; // the connections end with it, before rangeChanges and well before the window
    for (const QValueAxis *axis : {bars, steps})
        QObject::connect(axis, &QValueAxis::rangeChanged, &counter, [&] { ++rangeChanges; });
    pipeline->setValue(4); // back within the run: 4 bars on the 5 slots already laid out
    settle();
    CHECK(gui.document.ledger().ranks.size() == 4);
    CHECK(gui.window.memoryBars()->rankSlots() == 5);
    CHECK(gui.window.staircase()->rankSlots() == 5);
    CHECK(rangeChanges == 0); // no rank axis laid out again
    pipeline->setValue(5);
    settle();
    CHECK(rangeChanges == 0);

    pipeline->setValue(4);
    settle();
    CHECK(gui.window.memoryBars()->rankSlots() == 5); // still the run's
    // The edits pause: the axes fit the plan again, 4 ranks.
    gui.pauseEdits();
    CHECK(gui.window.memoryBars()->rankSlots() == 4);
    CHECK(gui.window.staircase()->rankSlots() == 4);
    CHECK(bars->max() == 3.5);
    CHECK(steps->max() == 3.5);

    // One edit after the pause is no run: it fits at once (p = 5, then 4 ranks after a pause).
    pipeline->setValue(5);
    settle();
    gui.pauseEdits();
    pipeline->setValue(4);
    settle();
    CHECK(gui.window.memoryBars()->rankSlots() == 4);
    CHECK(bars->max() == 3.5);

    // Edits of other controls right after a run continue it (a user moving on to the next control pauses
    // anyway; the bench does not, and paid both charts' layout at each control's first move): p = 5, 4, then d.
    pipeline->setValue(5);
    settle();
    pipeline->setValue(4);
    settle();
    REQUIRE(gui.window.memoryBars()->rankSlots() == 5);
    auto *data = gui.control<QSpinBox>(QStringLiteral("Data (d)"));
    data->setValue(data->value() * 2);
    settle();
    CHECK(gui.window.memoryBars()->rankSlots() == 5);
    CHECK(gui.window.staircase()->rankSlots() == 5);
    // An undo is no edit of a control: the axes fit the plan it returns to at once.
    gui.document.undoStack()->undo();
    settle();
    CHECK(gui.window.memoryBars()->rankSlots() == 4);
    CHECK(gui.window.staircase()->rankSlots() == 4);
    CHECK(bars->max() == 3.5);
}

TEST_CASE("The staircase's slanted lines are antialiased, its grid and bars are not", "[ui][charts][bench]")
{
    // Qt Charts draws each grid and tick line as an item that an antialiased painter rasterizes as a path:
    // half of a p = 4 <-> 5 move's instructions. The view paints without antialiasing; the micro-batches
    // line and its dots are drawn over the chart with it.
    ShownWindow gui;
    StaircaseChart *staircase = gui.window.staircase();
    CHECK_FALSE(staircase->renderHints().testFlag(QPainter::Antialiasing));
    // And the light theme's white-to-white background is plain white (solidChartBackground): no gradient
    // spans blended on Qt's thread pool at each repaint.
    CHECK(staircase->chart()->backgroundBrush().style() == Qt::SolidPattern);
    CHECK(gui.window.memoryBars()->chart()->backgroundBrush().style() == Qt::SolidPattern);
    const QImage image = staircase->grab().toImage();
    // The in-flight series (hidden in the chart, drawn over it): a dot on each rank's count, in the line's colour.
    QLineSeries *inFlight = nullptr;
    for (QAbstractSeries *series : staircase->chart()->series())
        if (series->name() == QStringLiteral("Micro-batches in flight"))
            inFlight = qobject_cast<QLineSeries *>(series);
    REQUIRE(inFlight);
    REQUIRE(inFlight->count() == 4);
    const QColor line = inFlight->pen().color();
    for (const QPointF &value : inFlight->points()) {
        const QPoint at = staircase->mapFromScene(
            staircase->chart()->mapToScene(staircase->chart()->mapToPosition(value, inFlight)));
        const QColor shown = image.pixelColor(at * image.devicePixelRatio());
        INFO("rank " << value.x() << " at " << at.x() << "," << at.y());
        CHECK(std::abs(shown.red() - line.red()) < 40);
        CHECK(std::abs(shown.green() - line.green()) < 40);
        CHECK(std::abs(shown.blue() - line.blue()) < 40);
    }
    // Between two dots the line is antialiased: a pixel beside it is blended, neither the line's colour nor the
    // background's.
    const QPointF a = staircase->chart()->mapToPosition(inFlight->at(2), inFlight);
    const QPointF b = staircase->chart()->mapToPosition(inFlight->at(3), inFlight);
    bool blended = false;
    const int y = int((a.y() + b.y()) / 2);
    for (int x = int(std::min(a.x(), b.x())); x < int(std::max(a.x(), b.x())); ++x) {
        const QColor c = image.pixelColor(QPoint(x, y) * image.devicePixelRatio());
        const int grey = qGray(c.rgb());
        blended = blended || (grey > qGray(line.rgb()) + 40 && grey < 200 && c.saturation() < 60);
    }
    CHECK(blended);
}

TEST_CASE("A hidden host-memory chart is not laid out again at each edit, and shows the plan when it appears",
          "[ui][charts][bench]")
{
    // Issue 16: the host chart, hidden while nothing is offloaded, still took every ledger, and its axes'
    // range changes laid it out: a third of a Pipeline move's chart work.
    ShownWindow gui;
    MemoryBarsChart *host = gui.window.hostBars();
    REQUIRE_FALSE(host->isVisible());
    int rangeChanges = 0;
    QObject counter; // the connections end with it, before rangeChanges and well before the window
    for (QAbstractAxis *axis : host->chart()->axes())
        if (auto *value = qobject_cast<QValueAxis *>(axis))
            QObject::connect(value, &QValueAxis::rangeChanged, &counter, [&] { ++rangeChanges; });
    Config config = gui.document.config();
    config.parallelism.pipeline_model_parallel_size = 5;
    config.parallelism.data_parallel_size = 2;
    gui.document.edit(config, QStringLiteral("Set p and d"));
    settle();
    REQUIRE(gui.document.ledger().ranks.size() == 5);
    CHECK(rangeChanges == 0);

    // Offloaded: the chart appears with this plan's five ranks.
    setOptimizerOffload(config.strategy, OffloadTarget::CPU);
    gui.document.edit(config, QStringLiteral("Offload the optimizer"));
    settle();
    REQUIRE(host->isVisible());
    CHECK(host->rankSlots() == 5);
    CHECK(rankAxis(host)->max() == 4.5);
}
