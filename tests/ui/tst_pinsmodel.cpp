// SPDX-License-Identifier: MIT
// Issue 16: "the pinned compare plan carries over to another model and
// replaces the per-rank chart". A pin compares plans of one model: opening
// another model's plan shows its per-rank chart; the pins come back with
// their model, until cleared.
#include <QApplication>
#include <QTabWidget>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"

using namespace memledger;
using namespace memledger::test;

TEST_CASE("Pins of another model never take the per-rank chart's place", "[ui][pins]")
{
    TestWindow gui; // Llama 3 70B
    gui.window.resize(1400, 900);
    gui.window.views()->setCurrentIndex(0);

    REQUIRE(gui.document.pinCurrent()); // View > Pin (Ctrl+B)
    QApplication::processEvents();
    CHECK(gui.window.memoryBars()->isComparing());

    // Another model: its own chart, one bar per pipeline rank, not the comparison.
    REQUIRE(gui.document.loadBuiltinScenario("mixtral-8x22b-64xh100-dropless"));
    QApplication::processEvents();
    CHECK_FALSE(gui.window.memoryBars()->isComparing());
    CHECK(gui.document.pins().size() == 1); // kept, for when its model comes back
    CHECK_FALSE(gui.document.isComparable(gui.document.pins().front()));

    // An edit of the Mixtral plan keeps it that way.
    Config edited = gui.document.config();
    edited.training.micro_batch_size = 2;
    gui.document.edit(edited, QStringLiteral("micro-batch 2"));
    QApplication::processEvents();
    CHECK_FALSE(gui.window.memoryBars()->isComparing());

    // Pinning a Mixtral plan compares it with Mixtral plans only: one pinned plan beside the current one.
    REQUIRE(gui.document.pinCurrent());
    QApplication::processEvents();
    CHECK(gui.window.memoryBars()->isComparing());
    CHECK_FALSE(gui.window.memoryBars()->segmentText(1, Category::Weights).isEmpty());
    CHECK(gui.window.memoryBars()->segmentText(2, Category::Weights).isEmpty()); // bars: A, now; no third

    // Back on the Llama plan (another file of the same model): its pin is shown again, the Mixtral one is not.
    REQUIRE(gui.document.loadBuiltinScenario(kDefaultScenario));
    QApplication::processEvents();
    CHECK(gui.window.memoryBars()->isComparing());
    CHECK(gui.window.memoryBars()->segmentText(2, Category::Weights).isEmpty());

    // Cleared: the per-rank chart.
    gui.document.clearPins();
    QApplication::processEvents();
    CHECK_FALSE(gui.window.memoryBars()->isComparing());
}
