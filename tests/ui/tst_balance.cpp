// SPDX-License-Identifier: MIT
// Activation balance in the explorer: one checkbox, one undo step, and the
// staircase's dashed outline of the activations before balancing over the
// balanced bars, with the bandwidth the copies need in its title.
#include <QApplication>
#include <QCheckBox>
#include <QLineSeries>
#include <QUndoStack>

#include "core/ledger/balance.h"
#include "testwindow.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/staircasechart.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

TEST_CASE("Balancing activations is one checkbox, one undo step, and a ghost of the staircase",
          "[ui][controls][balance]")
{
    TestWindow gui("llama-3-70b-128xh100"); // p = 4, 1F1B
    gui.window.resize(1400, 900);
    QApplication::processEvents();
    auto *balance = gui.control<QCheckBox>(QStringLiteral("Balance activations"));
    CHECK_FALSE(balance->isChecked());
    const Bytes peakBefore = gui.document.ledger().peak_bytes;
    CHECK(gui.window.staircase()->unbalancedOutline()->count() == 0);
    CHECK(gui.window.staircase()->titleText() == QStringLiteral("Activation staircase"));

    const int steps = gui.document.undoStack()->count();
    balance->setChecked(true);
    QApplication::processEvents();
    CHECK(gui.document.undoStack()->count() == steps + 1);
    CHECK(gui.document.config().strategy.pipeline_activation_balance == ActivationBalance::Auto);
    const Ledger &ledger = gui.document.ledger();
    REQUIRE_FALSE(ledger.parked.empty());
    CHECK(ledger.peak_bytes < peakBefore);

    // The outline: each rank's activations before balancing across its slot.
    const QLineSeries *outline = gui.window.staircase()->unbalancedOutline();
    REQUIRE(outline->count() == 2 * static_cast<int>(ledger.ranks.size()));
    for (const RankLedger &r : ledger.ranks) {
        const QPointF left = outline->at(2 * r.pipeline_rank);
        CHECK(left.x() == Approx(r.pipeline_rank - 0.5));
        CHECK(left.y() * kGB == Approx(double(unbalancedActivationBytes(r))));
    }
    CHECK(gui.window.staircase()->titleText().contains(QStringLiteral("GB/s")));

    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.document.config().strategy.pipeline_activation_balance == ActivationBalance::None);
    CHECK_FALSE(balance->isChecked());
    CHECK(gui.document.ledger().peak_bytes == peakBefore);
}
