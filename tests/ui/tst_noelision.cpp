// SPDX-License-Identifier: MIT
// Issue 16: chart text must not be cut. The staircase's axis titles, the
// memory bars' and the Lifetimes legends whole at 1024x700; every slide of every shipped deck at a
// projector's 1024x768 and 1600x1000 with no elided chart text.
#include <QApplication>
#include <QValueAxis>

#include "charttexts.h"
#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "ui/chartlegend.h"
#include "ui/document.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/staircasechart.h"
#include "ui/talkmode.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;

namespace {

QStringList axisTitles(QChartView *view)
{
    QStringList titles;
    for (QAbstractAxis *axis : view->chart()->axes())
        titles << QString(axis->titleText()).replace(QStringLiteral("<br>"), QStringLiteral(" ")); // two lines
    return titles;
}

} // namespace

TEST_CASE("At 1024x700 the staircase keeps its axis titles and the memory and Lifetimes legends are whole",
          "[ui][charts][elide]")
{
    for (const std::string &scenario : builtinNames("scenarios")) {
        INFO(scenario);
        Document document;
        REQUIRE(document.loadBuiltinScenario(scenario));
        MainWindow window(&document);
        window.resize(1024, 700);
        window.show();
        QApplication::processEvents();
        INFO("cut: " << test::elidedChartTexts(window.staircase()).join(QStringLiteral(" | ")).toStdString());
        CHECK(test::elidedChartTexts(window.staircase()).isEmpty());
        if (!test::elidedChartTexts(window.staircase()).isEmpty() && qEnvironmentVariableIsSet("MEMLEDGER_ELIDE_PNG"))
            window.grab().save(qEnvironmentVariable("MEMLEDGER_ELIDE_PNG")
                               + QStringLiteral("/%1.png").arg(QString::fromStdString(scenario)));
        // Each axis titled, whole (on one or two lines) or by its short form where the plot is short (a
        // host chart below it), never cut.
        const QStringList titles = axisTitles(window.staircase());
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
        for (MemoryBarsChart *bars : {window.memoryBars(), window.hostBars()}) {
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

        window.views()->setCurrentIndex(1);
        QApplication::processEvents();
        const auto legend = window.lifetimes()->legend();
        REQUIRE(legend.size() > 4);
        for (const LifetimeView::LegendEntry &entry : legend) {
            INFO(entry.label.toStdString());
            CHECK(entry.rect.right() <= window.lifetimes()->width());
            CHECK_FALSE(entry.label.contains(QChar(0x2026)));
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
            Document document;
            REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
            MainWindow window(&document);
            window.show();
            window.talkMode()->start(*loaded.deck);
            // Offscreen, full screen is the virtual screen's size: the projector's size instead.
            window.setWindowState(window.windowState() & ~Qt::WindowFullScreen);
            window.resize(size);
            QApplication::processEvents();
            for (int slide = 0; slide < window.talkMode()->slideCount(); ++slide) {
                INFO("slide " << slide + 1);
                // Every chart's texts (the axis titles and rank labels among them), and the bars' legends
                // whole inside their charts (the right column is short on a 768-pixel projector).
                QStringList cut = test::elidedChartTexts(window.staircase());
                for (MemoryBarsChart *bars : {window.memoryBars(), window.hostBars()}) {
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
                    window.grab().save(qEnvironmentVariable("MEMLEDGER_ELIDE_PNG")
                                       + QStringLiteral("/%1-%2-%3.png")
                                             .arg(QString::fromStdString(deckName))
                                             .arg(size.width())
                                             .arg(slide + 1));
                window.talkMode()->step(+1);
                QApplication::processEvents();
            }
            window.talkMode()->stop();
        }
    }
}
