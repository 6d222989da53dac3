// SPDX-License-Identifier: MIT
// Issue 16: "the pinned compare plan carries over to another model and
// replaces the per-rank chart". A pin compares plans of one model: opening
// another model's plan shows its per-rank chart; the pins come back with
// their model, until cleared.
#include <QApplication>
#include <QTabWidget>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"

using namespace memledger;

TEST_CASE("Pins of another model never take the per-rank chart's place", "[ui][pins]")
{
    ui::Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario)); // Llama 3 70B
    ui::MainWindow window(&document);
    window.resize(1400, 900);
    window.views()->setCurrentIndex(0);

    REQUIRE(document.pinCurrent()); // View > Pin (Ctrl+B)
    QApplication::processEvents();
    CHECK(window.memoryBars()->isComparing());

    // Another model: its own chart, one bar per pipeline rank, not the comparison.
    REQUIRE(document.loadBuiltinScenario("mixtral-8x22b-64xh100-dropless"));
    QApplication::processEvents();
    CHECK_FALSE(window.memoryBars()->isComparing());
    CHECK(document.pins().size() == 1); // kept, for when its model comes back
    CHECK_FALSE(document.isComparable(document.pins().front()));

    // An edit of the Mixtral plan keeps it that way.
    Config edited = document.config();
    edited.training.micro_batch_size = 2;
    document.edit(edited, QStringLiteral("micro-batch 2"));
    QApplication::processEvents();
    CHECK_FALSE(window.memoryBars()->isComparing());

    // Pinning a Mixtral plan compares it with Mixtral plans only: one pinned plan beside the current one.
    REQUIRE(document.pinCurrent());
    QApplication::processEvents();
    CHECK(window.memoryBars()->isComparing());
    CHECK_FALSE(window.memoryBars()->segmentText(1, Category::Weights).isEmpty());
    CHECK(window.memoryBars()->segmentText(2, Category::Weights).isEmpty()); // bars: A, now; no third

    // Back on the Llama plan (another file of the same model): its pin is shown again, the Mixtral one is not.
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    QApplication::processEvents();
    CHECK(window.memoryBars()->isComparing());
    CHECK(window.memoryBars()->segmentText(2, Category::Weights).isEmpty());

    // Cleared: the per-rank chart.
    document.clearPins();
    QApplication::processEvents();
    CHECK_FALSE(window.memoryBars()->isComparing());
}
