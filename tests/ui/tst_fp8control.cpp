// SPDX-License-Identifier: MIT
// The FP8 recipe combo: one undo step, and the ledger gains the FP8 rows.
#include <QApplication>
#include <QComboBox>
#include <QUndoStack>

#include "core/ledger/ledger.h"
#include "testwindow.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

TEST_CASE("The FP8 recipe is a control: one undo step, FP8 weight copies in the ledger", "[ui][controls][fp8]")
{
    TestWindow gui("llama-3-70b-128xh100");
    auto *recipe = gui.control<QComboBox>(QStringLiteral("FP8 recipe"));
    REQUIRE(recipe->count() == 5);
    CHECK(recipe->currentIndex() == int(Fp8Recipe::None));
    const auto fp8Rows = [&gui] {
        int rows = 0;
        for (const LedgerEntry &e : gui.document.ledger().ranks.front().entries)
            rows += e.label.rfind("FP8", 0) == 0;
        return rows;
    };
    CHECK(fp8Rows() == 0);
    const Bytes activations = gui.document.ledger().ranks.front().device[std::size_t(Category::Activations)];
    const int undo = gui.document.undoStack()->count();

    const int tensorwise = int(Fp8Recipe::Tensorwise);
    recipe->setCurrentIndex(tensorwise);
    Q_EMIT recipe->activated(tensorwise);
    QApplication::processEvents();
    CHECK(gui.document.config().training.fp8_recipe == Fp8Recipe::Tensorwise);
    CHECK(gui.document.undoStack()->count() == undo + 1);
    CHECK(fp8Rows() == 2); // FP8 weight copies, quantisation buffer
    CHECK(gui.document.ledger().ranks.front().device[std::size_t(Category::Activations)] < activations);

    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.document.config().training.fp8_recipe == Fp8Recipe::None);
    CHECK(recipe->currentIndex() == int(Fp8Recipe::None));
    CHECK(fp8Rows() == 0);
}
