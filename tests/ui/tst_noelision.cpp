// SPDX-License-Identifier: MIT
// Issue 16: chart text must not be cut. The staircase's axis titles, the
// memory bars' and the Lifetimes legends whole at 1024x700; every slide of every shipped deck at a
// projector's 1024x768 and 1600x1000 with no elided chart text.
#include <QApplication>
#include <QLabel>
#include <QValueAxis>

#include "charttexts.h"
#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "testwindow.h"
#include "ui/chartlegend.h"
#include "ui/document.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/staircasechart.h"
#include "ui/talkmode.h"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

QStringList axisTitles(QChartView *view)
{
    QStringList titles;
    for (QAbstractAxis *axis : view->chart()->axes())
        titles << QString(axis->titleText()).replace(QStringLiteral("<br>"), QStringLiteral(" ")); // two lines
    return titles;
}

} // namespace

TEST_CASE(
    "At 1024x700 the staircase keeps its axis titles, the memory and Lifetimes legends and the GPUs line are whole",
    "[ui][charts][elide]")
{
    for (const std::string &scenario : builtinNames("scenarios")) {
        INFO(scenario);
        ShownWindow gui(scenario, QSize(1024, 700));
        INFO("cut: " << test::elidedChartTexts(gui.window.staircase()).join(QStringLiteral(" | ")).toStdString());
        CHECK(test::elidedChartTexts(gui.window.staircase()).isEmpty());
        if (!test::elidedChartTexts(gui.window.staircase()).isEmpty()
            && qEnvironmentVariableIsSet("MEMLEDGER_ELIDE_PNG"))
            gui.window.grab().save(qEnvironmentVariable("MEMLEDGER_ELIDE_PNG")
                                   + QStringLiteral("/%1.png").arg(QString::fromStdString(scenario)));
        // Each axis titled, whole (on one or two lines) or by its short form where the plot is short (a
        // host chart below it), never cut.
        const QStringList titles = axisTitles(gui.window.staircase());
        INFO("axis titles: " << titles.join(QStringLiteral(" | ")).toStdString());
        CHECK(titles.contains(QStringLiteral("pipeline rank")));
        CHECK((titles.contains(QStringLiteral("activations, GB")) || titles.contains(QStringLiteral("GB"))));
        CHECK((titles.contains(QStringLiteral("micro-batches in flight"))
               || titles.contains(QStringLiteral("in flight"))));
        if (scenario == kDefaultScenario) { // the room to say them whole
            CHECK(titles.contains(QStringLiteral("activations, GB")));
            CHECK(titles.contains(QStringLiteral("micro-batches in flight")));
        }

        // The device and host bars' legends: every name whole, inside the chart and clear of the plot
        // (Qt Charts' own legend cut "Optimizer states" and "Communication" here).
        for (MemoryBarsChart *bars : {gui.window.memoryBars(), gui.window.hostBars()}) {
            if (!bars->isVisible())
                continue;
            const ChartLegend *legend = bars->legend();
            const std::vector<QRectF> rects = legend->entryRects();
            REQUIRE(rects.size() == legend->entries().size());
            REQUIRE_FALSE(rects.empty());
            const QRectF shown = bars->mapToScene(bars->viewport()->rect()).boundingRect();
            for (std::size_t i = 0; i < rects.size(); ++i) {
                INFO(legend->entries()[i].label.toStdString());
                CHECK(shown.contains(rects[i]));
                CHECK(rects[i].width() > legend->labelWidth(i));
                CHECK_FALSE(rects[i].intersects(bars->chart()->plotArea()));
                for (std::size_t j = 0; j < i; ++j)
                    CHECK_FALSE(rects[i].intersects(rects[j]));
            }
        }

        // The plan panel's GPUs line: "2048 = t·p·d·c = 1·16·128·1" ran past the panel's edge at 1024
        // pixels; it wraps instead, and its height holds every line.
        const auto *gpus = gui.window.findChild<QLabel *>(QStringLiteral("gpus"));
        REQUIRE(gpus);
        INFO(gpus->text().toStdString() << ": " << gpus->width() << "x" << gpus->height());
        const QString plain = QString(gpus->text()).remove(QStringLiteral("<b>")).remove(QStringLiteral("</b>"));
        const QFontMetrics fm(gpus->font());
        const int lines = gpus->height() / fm.lineSpacing();
        REQUIRE(lines >= 1);
        // Every word of the line fits the label's width, and the wrapped text fits its height.
        const QRect needed = fm.boundingRect(QRect(0, 0, gpus->contentsRect().width(), 10000),
                                             Qt::TextWordWrap | Qt::AlignLeft, plain);
        CHECK(needed.height() <= gpus->contentsRect().height());
        for (const QString &word : plain.split(QLatin1Char(' ')))
            CHECK(fm.horizontalAdvance(word) <= gpus->contentsRect().width());

        gui.window.views()->setCurrentIndex(1);
        QApplication::processEvents();
        const auto legend = gui.window.lifetimes()->legend();
        REQUIRE(legend.size() > 4);
        const QRectF curve = gui.window.lifetimes()->curveArea();
        for (const LifetimeView::LegendEntry &entry : legend) {
            INFO(entry.label.toStdString());
            CHECK(entry.rect.right() <= gui.window.lifetimes()->width());
            CHECK_FALSE(entry.label.contains(QChar(0x2026)));
            // However many lines the legend takes, the curve starts below it.
            CHECK(entry.rect.bottom() <= curve.top());
        }
    }
}

TEST_CASE("Every slide of every deck cuts no chart text at 1024x768 and 1600x1000", "[ui][talk][elide]")
{
    for (const std::string &deckName : builtinNames("decks")) {
        const DeckLoadResult loaded = deckFromText(findBuiltin("decks", deckName)->text, deckName);
        REQUIRE(loaded.deck.has_value());
        for (const QSize size : {QSize(1024, 768), QSize(1600, 1000)}) {
            INFO(deckName << " at " << size.width() << "x" << size.height());
            ShownWindow gui(kDefaultScenario, kOwnSize);
            gui.window.talkMode()->start(*loaded.deck);
            // Offscreen, full screen is the virtual screen's size: the projector's size instead.
            gui.window.setWindowState(gui.window.windowState() & ~Qt::WindowFullScreen);
            gui.window.resize(size);
            QApplication::processEvents();
            for (int slide = 0; slide < gui.window.talkMode()->slideCount(); ++slide) {
                INFO("slide " << slide + 1);
                // Every chart's texts (the axis titles and rank labels among them), and the bars' legends
                // whole inside their charts (the right column is short on a 768-pixel projector).
                QStringList cut = test::elidedChartTexts(gui.window.staircase());
                for (MemoryBarsChart *bars : {gui.window.memoryBars(), gui.window.hostBars()}) {
                    if (!bars->isVisible())
                        continue;
                    cut += test::elidedChartTexts(bars);
                    const QRectF shown = bars->mapToScene(bars->viewport()->rect()).boundingRect();
                    const std::vector<QRectF> rects = bars->legend()->entryRects();
                    for (std::size_t i = 0; i < rects.size(); ++i)
                        if (!shown.contains(rects[i]) || rects[i].width() <= bars->legend()->labelWidth(i))
                            cut << bars->legend()->entries()[i].label + QStringLiteral(" (legend)");
                }
                INFO("cut: " << cut.join(QStringLiteral(" | ")).toStdString());
                CHECK(cut.isEmpty());
                if (!cut.isEmpty() && qEnvironmentVariableIsSet("MEMLEDGER_ELIDE_PNG"))
                    gui.window.grab().save(qEnvironmentVariable("MEMLEDGER_ELIDE_PNG")
                                           + QStringLiteral("/%1-%2-%3.png")
                                                 .arg(QString::fromStdString(deckName))
                                                 .arg(size.width())
                                                 .arg(slide + 1));
                gui.window.talkMode()->step(+1);
                QApplication::processEvents();
            }
            gui.window.talkMode()->stop();
        }
    }
}

TEST_CASE("A narrow memory chart lays its legend under the plot in columns as wide as their own entries",
          "[ui][charts][legend]")
{
    // DeepSeek-V3 with DualPipe at 1024x700: the staircase of 16 ranks keeps
    // its minimum width, the bars get about 300 pixels, and "Optimizer
    // states" is the one long label. Columns of one common width left a
    // single column of eight rows under a plot a few dozen pixels tall.
    ShownWindow gui("deepseek-v3-2048xh100-dualpipe", QSize(1024, 700));
    MemoryBarsChart *bars = gui.window.memoryBars();
    const std::vector<QRectF> rects = bars->legend()->entryRects();
    REQUIRE(rects.size() == 8); // six categories, capacity and usable
    std::vector<qreal> lefts;
    for (const QRectF &r : rects)
        if (std::find(lefts.begin(), lefts.end(), r.left()) == lefts.end())
            lefts.push_back(r.left());
    INFO("chart " << bars->width() << " px wide, plot " << bars->chart()->plotArea().height() << " px tall");
    CHECK(lefts.size() >= 2);
    // Whole and apart (the first test's checks), and the plot keeps room for its bars.
    for (std::size_t i = 0; i < rects.size(); ++i) {
        CHECK(rects[i].width() > bars->legend()->labelWidth(i));
        for (std::size_t j = 0; j < i; ++j)
            CHECK_FALSE(rects[i].intersects(rects[j]));
    }
    CHECK(bars->chart()->plotArea().height() >= 100);
}
