// SPDX-License-Identifier: MIT
// Talk mode: a deck stepped with the arrow keys, full screen, large fonts.
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QDockWidget>
#include <QKeySequence>
#include <QStatusBar>
#include <QTest>
#include <QUndoStack>

#include "charttexts.h"
#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/planheader.h"
#include "ui/staircasechart.h"
#include "ui/talkmode.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

TEST_CASE("Talk mode steps a deck with the arrow keys and Escape leaves", "[ui][talk]")
{
    ShownWindow gui(kDefaultScenario, kOwnSize);
    const DeckLoadResult loaded = deckFromText(findBuiltin("decks", "seed-000")->text, "seed-000");
    REQUIRE(loaded.deck.has_value());
    REQUIRE(loaded.deck->slides.size() == 4);
    const double font = gui.window.font().pointSizeF();
    const double chartTitle = gui.window.memoryBars()->chart()->titleFont().pointSizeF();

    gui.window.talkMode()->start(*loaded.deck);
    QApplication::processEvents();
    CHECK(gui.window.talkMode()->isActive());
    CHECK(gui.window.font().pointSizeF() > font * 1.5);
    // The charts' own fonts (Qt Charts keeps them apart from the widget's) grow too.
    CHECK(gui.window.memoryBars()->chart()->titleFont().pointSizeF() > chartTitle * 1.5);
    CHECK(gui.document.config() == loaded.deck->slides[0]);

    QTest::keyClick(&gui.window, Qt::Key_Right);
    QTest::keyClick(&gui.window, Qt::Key_Right);
    CHECK(gui.window.talkMode()->slide() == 2);
    CHECK(gui.document.config() == loaded.deck->slides[2]);
    if (qEnvironmentVariableIsSet("MEMLEDGER_TALK_PNG")) {
        gui.window.resize(1600, 1000);
        QApplication::processEvents();
        gui.window.grab().save(qEnvironmentVariable("MEMLEDGER_TALK_PNG"));
    }
    QTest::keyClick(&gui.window, Qt::Key_Left);
    CHECK(gui.document.config() == loaded.deck->slides[1]);
    // The last slide holds.
    for (int i = 0; i < 6; ++i)
        QTest::keyClick(&gui.window, Qt::Key_Right);
    CHECK(gui.window.talkMode()->slide() == 3);

    QTest::keyClick(&gui.window, Qt::Key_Escape);
    CHECK_FALSE(gui.window.talkMode()->isActive());
    CHECK(gui.window.font().pointSizeF() == Approx(font));
    CHECK(gui.window.memoryBars()->chart()->titleFont().pointSizeF() == Approx(chartTitle));
}

TEST_CASE("Leaving talk mode gives the user's document back exactly as it was", "[ui][talk]")
{
    ShownWindow gui(kDefaultScenario, kOwnSize);
    // The user's edit: micro-batch 2, one undo step, unsaved.
    Config edited = gui.document.config();
    edited.training.micro_batch_size = 2;
    gui.document.edit(edited, QStringLiteral("Set Micro-batch (b) to 2"));
    QApplication::processEvents();
    REQUIRE(gui.document.config() == edited);
    QUndoStack *undo = gui.document.undoStack();
    const int index = undo->index();
    const QString undoText = undo->undoText();
    const bool clean = undo->isClean();
    const Bytes peak = gui.document.ledger().peak_bytes;

    QAction *undoAction = nullptr;
    for (QAction *a : gui.window.findChildren<QAction *>())
        if (a->shortcut() == QKeySequence(QKeySequence::Undo))
            undoAction = a;
    REQUIRE(undoAction != nullptr);
    REQUIRE(undoAction->isEnabled());

    const DeckLoadResult loaded = deckFromText(findBuiltin("decks", "seed-000")->text, "seed-000");
    REQUIRE(loaded.deck.has_value());
    gui.window.talkMode()->start(*loaded.deck);
    QApplication::processEvents();
    // During the talk the slides are not edits: nothing to undo, history untouched.
    CHECK_FALSE(undoAction->isEnabled());
    QTest::keyClick(&gui.window, Qt::Key_Right);
    QTest::keyClick(&gui.window, Qt::Key_Right);
    CHECK(gui.document.config() == loaded.deck->slides[2]);
    CHECK(undo->index() == index);

    QTest::keyClick(&gui.window, Qt::Key_Escape);
    QApplication::processEvents();
    CHECK_FALSE(gui.window.talkMode()->isActive());
    CHECK(gui.document.config() == edited);
    CHECK(gui.document.ledger().peak_bytes == peak);
    CHECK(undo->index() == index);
    CHECK(undo->undoText() == undoText);
    CHECK(undo->isClean() == clean);
    CHECK(undoAction->isEnabled());
    // The status bar no longer claims a slide.
    CHECK_FALSE(gui.window.statusBar()->currentMessage().contains(QStringLiteral("Talk mode")));

    // An invalid edit left open comes back invalid, beside its own last valid plan.
    Config invalid = gui.document.config();
    invalid.parallelism.tensor_model_parallel_size = 3;
    gui.document.setConfig(invalid);
    REQUIRE(gui.document.isStale());
    const Bytes lastValid = gui.document.ledger().peak_bytes;
    gui.window.talkMode()->start(*loaded.deck);
    QApplication::processEvents();
    gui.window.talkMode()->stop();
    QApplication::processEvents();
    CHECK(gui.document.config() == invalid);
    CHECK(gui.document.isStale());
    CHECK(gui.document.ledger().peak_bytes == lastValid);
}

TEST_CASE("Slides cut no chart text and show their whole description", "[ui][talk]")
{
    ShownWindow gui(kDefaultScenario, kOwnSize);
    const DeckLoadResult loaded = deckFromText(findBuiltin("decks", "seed-000")->text, "seed-000");
    REQUIRE(loaded.deck.has_value());
    auto *header = gui.window.findChild<PlanHeader *>();
    REQUIRE(header != nullptr);

    gui.window.talkMode()->start(*loaded.deck);
    // A projector's 1600x1000: offscreen, full screen is the virtual screen's 800x600, so the window leaves
    // that state to take the projector's size (talk mode's fonts and layout stay).
    gui.window.setWindowState(gui.window.windowState() & ~Qt::WindowFullScreen);
    gui.window.resize(1600, 1000);
    QApplication::processEvents();
    for (std::size_t slide = 0; slide < loaded.deck->slides.size(); ++slide) {
        INFO("slide " << slide + 1);
        INFO("cut: " << (test::elidedChartTexts(gui.window.memoryBars())
                         + test::elidedChartTexts(gui.window.staircase())
                         + test::elidedChartTexts(gui.window.hostBars()))
                            .join(QStringLiteral(" | "))
                            .toStdString());
        REQUIRE(gui.window.talkMode()->slide() == int(slide));
        CHECK(test::elidedChartTexts(gui.window.memoryBars()).isEmpty());
        CHECK(test::elidedChartTexts(gui.window.staircase()).isEmpty());
        if (gui.window.hostBars()->isVisible())
            CHECK(test::elidedChartTexts(gui.window.hostBars()).isEmpty());
        // The description whole (it is what tells the slides apart), and room for all of its lines.
        const QString description = QString::fromStdString(loaded.deck->slides[slide].description);
        CHECK(header->shownDetail() == description);
        CHECK(header->height() >= header->heightForWidth(header->width()));
        QTest::keyClick(&gui.window, Qt::Key_Right);
        QApplication::processEvents();
    }
    if (qEnvironmentVariableIsSet("MEMLEDGER_TALK_PNG"))
        gui.window.grab().save(qEnvironmentVariable("MEMLEDGER_TALK_PNG"));

    QTest::keyClick(&gui.window, Qt::Key_Escape);
    QApplication::processEvents();
    CHECK_FALSE(header->wrapsDetail());
    CHECK_FALSE(gui.window.statusBar()->currentMessage().contains(QStringLiteral("Talk mode")));
}
