// SPDX-License-Identifier: MIT
// Talk mode: a deck stepped with the arrow keys, full screen, large fonts.
#include <QApplication>
#include <QChart>
#include <QDockWidget>
#include <QTest>

#include "core/builtins.h"
#include "core/deck.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/talkmode.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;

TEST_CASE("Talk mode steps a deck with the arrow keys and Escape leaves", "[ui][talk]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    MainWindow window(&document);
    window.show();
    const DeckLoadResult loaded = deckFromText(findBuiltin("decks", "seed-000")->text, "seed-000");
    REQUIRE(loaded.deck.has_value());
    REQUIRE(loaded.deck->slides.size() == 4);
    const double font = window.font().pointSizeF();
    const double chartTitle = window.memoryBars()->chart()->titleFont().pointSizeF();

    window.talkMode()->start(*loaded.deck);
    QApplication::processEvents();
    CHECK(window.talkMode()->isActive());
    CHECK(window.font().pointSizeF() > font * 1.5);
    // The charts' own fonts (Qt Charts keeps them apart from the widget's) grow too.
    CHECK(window.memoryBars()->chart()->titleFont().pointSizeF() > chartTitle * 1.5);
    CHECK(document.config() == loaded.deck->slides[0]);

    QTest::keyClick(&window, Qt::Key_Right);
    QTest::keyClick(&window, Qt::Key_Right);
    CHECK(window.talkMode()->slide() == 2);
    CHECK(document.config() == loaded.deck->slides[2]);
    if (qEnvironmentVariableIsSet("MEMLEDGER_TALK_PNG")) {
        window.resize(1600, 1000);
        QApplication::processEvents();
        window.grab().save(qEnvironmentVariable("MEMLEDGER_TALK_PNG"));
    }
    QTest::keyClick(&window, Qt::Key_Left);
    CHECK(document.config() == loaded.deck->slides[1]);
    // The last slide holds.
    for (int i = 0; i < 6; ++i)
        QTest::keyClick(&window, Qt::Key_Right);
    CHECK(window.talkMode()->slide() == 3);

    QTest::keyClick(&window, Qt::Key_Escape);
    CHECK_FALSE(window.talkMode()->isActive());
    CHECK(window.font().pointSizeF() == Approx(font));
    CHECK(window.memoryBars()->chart()->titleFont().pointSizeF() == Approx(chartTitle));
}
