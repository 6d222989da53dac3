// SPDX-License-Identifier: MIT
// What the memory charts say on their bars and axes, as drawn: every rank
// that does not fit is marked on its own bar, and every rank stays
// identifiable when there are many (issue 16, defects 2 and 7).
#include <QAbstractSeries>
#include <QApplication>
#include <QChart>
#include <QGraphicsTextItem>
#include <QImage>
#include <QLegend>
#include <QValueAxis>

#include "catchqt.h"
#include "charttexts.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/staircasechart.h"
#include "ui/theme.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

// Pixels of `image` inside `rect` within `tolerance` of `color` in every channel.
int pixelsNear(const QImage &image, const QRect &rect, const QColor &color, int tolerance = 40)
{
    int n = 0;
    const QRect r = rect.intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x) {
            const QColor c = image.pixelColor(x, y);
            if (std::abs(c.red() - color.red()) <= tolerance && std::abs(c.green() - color.green()) <= tolerance
                && std::abs(c.blue() - color.blue()) <= tolerance)
                ++n;
        }
    return n;
}

// The labels under the plot: the rank under each label's centre -> the label's text.
std::map<int, QString> rankLabels(QChartView *view)
{
    QChart *chart = view->chart();
    const QRectF plot = chart->plotArea();
    QAbstractSeries *series = chart->series().constFirst();
    std::map<int, QString> labels;
    for (QGraphicsTextItem *text : test::shownChartTexts(view)) {
        const QRectF box = text->sceneBoundingRect();
        if (box.top() < plot.bottom() - 1 || box.center().x() < plot.left() || box.center().x() > plot.right())
            continue;
        bool number = false;
        text->toPlainText().toInt(&number);
        if (!number)
            continue; // the axis title
        const int rank = static_cast<int>(std::lround(chart->mapToValue(box.center(), series).x()));
        labels[rank] = text->toPlainText();
    }
    return labels;
}

// Nothing is cut short; the labels name the ranks under them, the peak rank
// and rank 0 are labelled, at most `maxGap` ranks apart (2: every other rank), and a
// tick marks every bar between two labels, so each rank can be told.
void checkIdentifiable(QChartView *view, int ranks, int peak, int maxGap, const char *what)
{
    INFO(what << " at " << view->width() << "x" << view->height());
    const QStringList cut = test::elidedChartTexts(view);
    INFO("cut: " << cut.join(QStringLiteral(" | ")).toStdString());
    CHECK(cut.isEmpty());
    const std::map<int, QString> labels = rankLabels(view);
    for (const auto &[rank, text] : labels)
        CHECK(text == QString::number(rank));
    CHECK(labels.count(peak) == 1);
    CHECK(labels.count(0) == 1); // issue 34, item 21: anchored on the peak (15), the labels left rank 0 out
    REQUIRE_FALSE(labels.empty());
    int previous = -1;
    for (const auto &[rank, text] : labels) {
        CHECK(rank - previous <= maxGap);
        previous = rank;
    }
    CHECK(ranks - previous <= maxGap);
    QValueAxis *axis = nullptr;
    for (QAbstractAxis *a : view->chart()->axes(Qt::Horizontal))
        if (a->isVisible())
            axis = qobject_cast<QValueAxis *>(a);
    REQUIRE(axis != nullptr);
    CHECK(axis->minorTickCount() + 1 == int(axis->tickInterval()));
}

} // namespace

TEST_CASE("Every rank that does not fit is marked on its own bar and named in the title", "[ui][charts][fits]")
{
    TestWindow gui("llama-3-70b-128xh100");
    // Micro-batch 4: the first two of the four pipeline ranks overflow the H100 (112.5 and 88.9 GB).
    Config config = gui.document.config();
    config.training.micro_batch_size = 4;
    gui.document.setConfig(config);
    REQUIRE(gui.document.ledger().ranks.size() == 4);
    std::vector<int> overflowing;
    for (const RankLedger &r : gui.document.ledger().ranks)
        if (!r.fits)
            overflowing.push_back(r.pipeline_rank);
    REQUIRE(overflowing == std::vector<int>{0, 1});

    gui.show();
    MemoryBarsChart *bars = gui.window.memoryBars();
    CHECK(bars->failingBars() == overflowing);
    CHECK(bars->chart()
              ->title()
              .replace(QStringLiteral("<br>"), QStringLiteral(" "))
              .contains(QStringLiteral("ranks 0 and 1 do NOT fit")));

    const QImage image = bars->grab().toImage();
    const QColor red = memledger::ui::errorColor(false); // the theme's one red, light chart
    for (int bar = 0; bar < 4; ++bar) {
        const QRect outline = bars->failMarkRect(bar).toRect();
        if (bar < 2) {
            REQUIRE_FALSE(outline.isEmpty());
            // The outline's two sides at least: red along the bar's whole height.
            CHECK(pixelsNear(image, outline.adjusted(-2, -2, 2, 2), red) >= 2 * outline.height());
        } else {
            CHECK(outline.isEmpty());
        }
    }

    // One rank over: the title names it alone.
    config.training.micro_batch_size = 2;
    config.training.seq_length = 16384;
    gui.document.setConfig(config);
    QApplication::processEvents();
    std::vector<int> over;
    for (const RankLedger &r : gui.document.ledger().ranks)
        if (!r.fits)
            over.push_back(r.pipeline_rank);
    CHECK(bars->failingBars() == over);
    if (over.size() == 1)
        CHECK(bars->chart()
                  ->title()
                  .replace(QStringLiteral("<br>"), QStringLiteral(" "))
                  .contains(QStringLiteral("rank %1 does NOT fit").arg(over[0])));
}

TEST_CASE("Sixteen pipeline ranks stay identifiable on every chart, every other one labelled at 1400x900",
          "[ui][charts][ranks]")
{
    ShownWindow gui("deepseek-v3-2048xh100-p16-v4", kOwnSize);
    const int ranks = static_cast<int>(gui.document.ledger().ranks.size());
    REQUIRE(ranks == 16);
    const int peak = gui.document.ledger().peak_rank;
    // The window: every other rank labelled at most. A smaller one
    // labels fewer, with a tick under every bar; a wide one labels them all.
    for (const auto &[size, maxGap] :
         {std::pair(QSize(1400, 900), 2), std::pair(QSize(1920, 1080), 2), std::pair(QSize(1024, 700), 4)}) {
        gui.window.resize(size);
        QApplication::processEvents();
        checkIdentifiable(gui.window.memoryBars(), ranks, peak, maxGap, "device bars");
        checkIdentifiable(gui.window.staircase(), ranks, peak, maxGap, "staircase");
        if (gui.window.hostBars()->isVisible())
            checkIdentifiable(gui.window.hostBars(), ranks, peak, maxGap, "host bars");
    }
    gui.window.resize(2400, 1000);
    QApplication::processEvents();
    CHECK(rankLabels(gui.window.memoryBars()).size() == std::size_t(ranks));
}

TEST_CASE("With the peak on rank 1 a narrow staircase still labels the other ranks", "[ui][charts][ranks]")
{
    // Llama 3 405B's long-context plan peaks on rank 1: every step then labels
    // rank 1 first, and a narrow chart has no room for rank 0's own label
    // beside it; it labelled the peak alone before.
    ShownWindow gui("llama-3.1-405b-16384xh100-cp16-128k", kOwnSize);
    const int ranks = static_cast<int>(gui.document.ledger().ranks.size());
    REQUIRE(ranks == 16);
    const int peak = gui.document.ledger().peak_rank;
    REQUIRE(peak == 1);
    for (const QSize size : {QSize(1280, 860), QSize(1024, 700)}) {
        gui.window.resize(size);
        QApplication::processEvents();
        for (QChartView *view :
             {static_cast<QChartView *>(gui.window.staircase()), static_cast<QChartView *>(gui.window.memoryBars())}) {
            INFO(view->width() << "x" << view->height());
            const std::map<int, QString> labels = rankLabels(view);
            CHECK(labels.count(peak) == 1);
            CHECK(labels.size() >= 4); // at most every fourth rank unlabelled, from rank 1 to 15
            int previous = -1;
            for (const auto &[rank, text] : labels) {
                CHECK(text == QString::number(rank));
                CHECK(rank - previous <= 4);
                previous = rank;
            }
            CHECK(ranks - previous <= 4);
        }
    }
}
