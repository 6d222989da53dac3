// SPDX-License-Identifier: MIT
// Issue 16, one frame per move: an edit that leaves the problems and notes as
// they were does not rebuild the list (its layout and paint were a fifth of a
// move's time in the bench's profile); one that changes them does.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QScrollBar>
#include <QStyledItemDelegate>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/paint/cachedsizedelegate.h"
#include "ui/qtstring.h"

using namespace memledger;
using namespace memledger::test;

TEST_CASE("The problems list is rebuilt only when its lines change", "[ui][problems][bench]")
{
    TestWindow gui;
    auto *list = gui.window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    REQUIRE(list->count() > 0);
    list->item(0)->setData(Qt::UserRole + 1, 42); // a mark that only this item carries
    const int lines = list->count();

    // Half the sequence (the slider) changes no note (memledger-cli eval --set training.seq_length=4096 lists the
    // same choices): the same items stay.
    Config edited = gui.document.config();
    edited.training.seq_length /= 2;
    gui.document.edit(edited, QStringLiteral("sequence"));
    QApplication::processEvents();
    REQUIRE(gui.document.config().training.seq_length == edited.training.seq_length);
    CHECK(list->count() == lines);
    CHECK(list->item(0)->data(Qt::UserRole + 1).toInt() == 42); // not rebuilt

    // t = 3 does not divide the heads: an error line comes first.
    edited.parallelism.tensor_model_parallel_size = 3;
    gui.document.edit(edited, QStringLiteral("t = 3"));
    QApplication::processEvents();
    REQUIRE(gui.document.isStale());
    CHECK_FALSE(list->item(0)->data(Qt::UserRole + 1).isValid()); // rebuilt
    bool errorShown = false;
    for (int i = 0; i < list->count(); ++i)
        errorShown = errorShown || list->item(i)->text().contains(QStringLiteral("tensor"), Qt::CaseInsensitive);
    CHECK(errorShown);
}

TEST_CASE("The problems list measures a line once, not at every relayout", "[ui][problems][bench]")
{
    // An error line that comes and goes relayouts the word-wrapped list, and Qt's style shaped every line's
    // text again for its size: the sizes are kept per text and width, and agree with the style's own.
    ShownWindow gui;
    auto *list = gui.window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    auto *delegate = dynamic_cast<ui::CachedSizeDelegate *>(list->itemDelegate());
    REQUIRE(delegate != nullptr);

    Config edited = gui.document.config();
    const Config valid = edited;
    edited.parallelism.tensor_model_parallel_size = 3;
    // Each line laid out, so measured, once (the window settled, as a user sees it after each edit).
    gui.document.edit(edited, QStringLiteral("t = 3"));
    settle();
    gui.document.edit(valid, QStringLiteral("t = 8"));
    settle();
    const int measured = delegate->computed();
    for (int i = 0; i < 3; ++i) { // the same lines again: no line measured afresh
        gui.document.edit(edited, QStringLiteral("t = 3"));
        settle();
        gui.document.edit(valid, QStringLiteral("t = 8"));
        settle();
    }
    CHECK(delegate->computed() == measured);

    // The kept sizes are the style's.
    QStyledItemDelegate plain;
    QStyleOptionViewItem option;
    option.initFrom(list->viewport());
    // A valid rectangle, as the view offers: the style wraps only within a valid one.
    option.rect = QRect(0, 0, list->viewport()->width(), 1);
    option.decorationSize = list->iconSize();
    option.features = QStyleOptionViewItem::WrapText;
    for (int i = 0; i < list->count(); ++i) {
        const QModelIndex index = list->model()->index(i, 0);
        CHECK(delegate->sizeHint(option, index) == plain.sizeHint(option, index));
    }
}

TEST_CASE("The problems list draws a line once, not at every repaint", "[ui][problems][bench]")
{
    // Qt's style shapes and wraps an item's text again at every paint (a fifth of a Model change in the
    // bench's profile): an item is drawn once per text, size and state, and repaints draw what was kept,
    // the same pixels.
    ShownWindow gui;
    auto *list = gui.window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    REQUIRE(list->count() > 0);
    auto *delegate = dynamic_cast<ui::CachedSizeDelegate *>(list->itemDelegate());
    REQUIRE(delegate != nullptr);

    // Once through an error line and back: the lines as the edits below show them (the first paint
    // marks the current line, which a rebuilt list no longer has).
    const Config valid = gui.document.config();
    Config edited = valid;
    edited.parallelism.tensor_model_parallel_size = 3; // an error line
    const auto show = [&](const Config &config) {
        gui.document.edit(config, QStringLiteral("t"));
        settle(); // laid out at the list's width, as a user sees it
        list->viewport()->repaint();
    };
    show(edited);
    show(valid);
    const QImage first = list->viewport()->grab().toImage();
    const int drawn = delegate->drawn();
    CHECK(drawn > 0);
    list->viewport()->repaint();
    list->viewport()->repaint();
    CHECK(delegate->drawn() == drawn); // nothing drawn afresh
    CHECK(list->viewport()->grab().toImage() == first);

    // Lines shown before are not drawn afresh when they come back (an error line, a plan toggled back and
    // forth), and they look as they did.
    show(edited);
    show(valid);
    CHECK(delegate->drawn() == drawn);
    CHECK(list->viewport()->grab().toImage() == first);
    // A line never shown is drawn.
    edited.parallelism.tensor_model_parallel_size = 5;
    show(edited);
    CHECK(delegate->drawn() > drawn);
}

TEST_CASE("The problems list says when the plan does not fit, naming the worst rank", "[ui][problems]")
{
    // Issue 34, item 21: the header said "does not fit" in red, the problems list nothing.
    TestWindow gui("gpt-3-175b-64gpus-tp-only");
    const Ledger &ledger = gui.document.ledger();
    REQUIRE_FALSE(ledger.fits());
    auto *list = gui.window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    const QString expected = QStringLiteral("The plan does not fit: rank %1 needs %2 of the device's %3.")
                                 .arg(ledger.peak_rank)
                                 .arg(ui::bytesText(ledger.peak_bytes), ui::bytesText(ledger.capacity_bytes));
    const QList<QListWidgetItem *> found = list->findItems(expected, Qt::MatchExactly);
    REQUIRE(found.size() == 1);
    CHECK(found.front()->data(Qt::UserRole).toInt() == 1); // a warning, not an error: the ledger is shown

    // A plan that fits says nothing of the kind.
    REQUIRE(gui.document.loadBuiltinScenario(kDefaultScenario));
    QApplication::processEvents();
    REQUIRE(gui.document.ledger().fits());
    CHECK(list->findItems(QStringLiteral("does not fit"), Qt::MatchContains).isEmpty());
}

TEST_CASE("The problems list shows new lines from the top", "[ui][problems]")
{
    // Scrolled down to the last note, an edit that brings an error line (first) kept the scroll position:
    // the error sat above the fold.
    ShownWindow gui(kDefaultScenario, QSize(1000, 700));
    auto *list = gui.window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    list->scrollToBottom();
    settle();
    REQUIRE(list->verticalScrollBar()->value() > 0); // more lines than the list shows at once

    Config edited = gui.document.config();
    edited.parallelism.tensor_model_parallel_size = 3; // does not divide the heads
    gui.document.edit(edited, QStringLiteral("t = 3"));
    settle();
    REQUIRE(gui.document.isStale());
    CHECK(list->verticalScrollBar()->value() == 0);
}

TEST_CASE("View > Plan hides and shows the plan panel", "[ui][mainwindow]")
{
    // Issue 34, item 21: the entry was checked and disabled (the dock could not be closed).
    ShownWindow gui;
    auto *dock = gui.window.findChild<QDockWidget *>(QStringLiteral("plan"));
    REQUIRE(dock != nullptr);
    QAction *toggle = dock->toggleViewAction();
    bool inViewMenu = false;
    for (QAction *top : gui.window.menuBar()->actions())
        if (top->menu() && top->menu()->actions().contains(toggle))
            inViewMenu = top->text() == QStringLiteral("&View");
    CHECK(inViewMenu);
    CHECK(toggle->isEnabled());
    CHECK(toggle->isChecked());
    toggle->trigger();
    settle();
    CHECK_FALSE(dock->isVisible());
    CHECK_FALSE(toggle->isChecked());
    toggle->trigger();
    settle();
    CHECK(dock->isVisible());
    CHECK(toggle->isChecked());
}
