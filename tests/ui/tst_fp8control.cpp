// SPDX-License-Identifier: MIT
// The FP8 recipe combo: one undo step, and the ledger gains the FP8 rows.
#include <QApplication>
#include <QComboBox>
#include <QUndoStack>

#include "core/ledger/ledger.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;

TEST_CASE("The FP8 recipe is a control: one undo step, FP8 weight copies in the ledger", "[ui][controls][fp8]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario("llama-3-70b-128xh100"));
    MainWindow window(&document);
    QComboBox *recipe = nullptr;
    for (QWidget *w : window.controlPanel()->controls())
        if (w->accessibleName() == QStringLiteral("FP8 recipe"))
            recipe = qobject_cast<QComboBox *>(w);
    REQUIRE(recipe);
    REQUIRE(recipe->count() == 5);
    CHECK(recipe->currentIndex() == int(Fp8Recipe::None));
    const auto fp8Rows = [&document] {
        int rows = 0;
        for (const LedgerEntry &e : document.ledger().ranks.front().entries)
            rows += e.label.rfind("FP8", 0) == 0;
        return rows;
    };
    CHECK(fp8Rows() == 0);
    const Bytes activations = document.ledger().ranks.front().device[std::size_t(Category::Activations)];
    const int undo = document.undoStack()->count();

    const int tensorwise = int(Fp8Recipe::Tensorwise);
    recipe->setCurrentIndex(tensorwise);
    Q_EMIT recipe->activated(tensorwise);
    QApplication::processEvents();
    CHECK(document.config().training.fp8_recipe == Fp8Recipe::Tensorwise);
    CHECK(document.undoStack()->count() == undo + 1);
    CHECK(fp8Rows() == 2); // FP8 weight copies, quantisation buffer
    CHECK(document.ledger().ranks.front().device[std::size_t(Category::Activations)] < activations);

    document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(document.config().training.fp8_recipe == Fp8Recipe::None);
    CHECK(recipe->currentIndex() == int(Fp8Recipe::None));
    CHECK(fp8Rows() == 0);
}
