// SPDX-License-Identifier: MIT
// What the document derives from its plan besides the ledger: the step time
// (estimateStepTime) and the same plan served (computeInference). Each is
// computed on first use after a change and once per change however many
// views read it, so that a slider move pays for neither twice, and a view
// that is hidden pays for nothing.
#include <QApplication>
#include <QComboBox>
#include <QSpinBox>
#include <QTabWidget>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/serving/inference.h"
#include "core/time/steptime.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

using namespace memledger;
using namespace memledger::test;
using namespace memledger::ui;

namespace {

constexpr int kFindTab = 4;

} // namespace

TEST_CASE("The document computes the step time and the serving ledger on first use after a change", "[ui][document]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    CHECK(document.stepTimeCount() == 0); // nothing asked yet
    CHECK(document.inferenceCount() == 0);

    const StepTime expected = estimateStepTime(document.ledgerConfig());
    CHECK(document.stepTime().total == expected.total);
    CHECK(document.stepTime().mfu == expected.mfu);
    CHECK(document.stepTimeCount() == 1);
    const InferenceLedger served = computeInference(document.ledgerConfig());
    CHECK(document.inference().peak_bytes == served.peak_bytes);
    CHECK(document.inference().peak_rank == served.peak_rank);
    CHECK(document.inferenceCount() == 1);
    // Asked again: kept.
    (void)document.stepTime();
    (void)document.inference();
    CHECK(document.stepTimeCount() == 1);
    CHECK(document.inferenceCount() == 1);

    // A valid edit: both follow it, once each, when asked.
    Config longer = document.config();
    longer.training.seq_length *= 2;
    document.setConfig(longer);
    CHECK(document.stepTimeCount() == 1);
    CHECK(document.stepTime().total == estimateStepTime(longer).total);
    CHECK(document.inference().peak_bytes == computeInference(longer).peak_bytes);
    (void)document.stepTime();
    CHECK(document.stepTimeCount() == 2);
    CHECK(document.inferenceCount() == 2);

    // An invalid one keeps the last valid plan's, as it keeps its ledger.
    Config broken = longer;
    broken.parallelism.tensor_model_parallel_size = 0;
    document.setConfig(broken);
    REQUIRE(document.isStale());
    CHECK(document.stepTime().total == estimateStepTime(longer).total);
    CHECK(document.stepTimeCount() == 2);
    CHECK(document.inferenceCount() == 2);
}

TEST_CASE("The window's views read one step time per edit", "[ui][document][mainwindow]")
{
    ShownWindow gui;
    Document &document = gui.document;
    MainWindow &window = gui.window;
    auto *spin = gui.control<QSpinBox>(QStringLiteral("Micro-batch (b)"));

    // The Memory view: the header's step time (and the staircase's balance line) are one computation.
    int before = document.stepTimeCount();
    spin->setValue(spin->value() + 1);
    QApplication::processEvents();
    CHECK(document.stepTimeCount() == before + 1);
    // The serving strip beside the memory bars reads the plan served, once.
    CHECK(document.inferenceCount() >= 1);
    int served = document.inferenceCount();
    spin->setValue(spin->value() - 1);
    QApplication::processEvents();
    CHECK(document.inferenceCount() == served + 1);

    // The Lifetimes view's caption holds the simulated iteration against the same step time.
    window.views()->setCurrentIndex(kLifetimesTab);
    QApplication::processEvents();
    before = document.stepTimeCount();
    spin->setValue(spin->value() + 1);
    QApplication::processEvents();
    CHECK(document.stepTimeCount() == before + 1);

    // Served on the Lifetimes view: the header and the strip share one serving ledger.
    auto *source = window.findChild<QComboBox *>(QStringLiteral("lifetimesSource"));
    REQUIRE(source != nullptr);
    source->setCurrentIndex(1);
    QApplication::processEvents();
    served = document.inferenceCount();
    spin->setValue(spin->value() - 1);
    QApplication::processEvents();
    CHECK(document.inferenceCount() == served + 1);

    // Find plans rings the current plan with the same step time.
    source->setCurrentIndex(0);
    window.views()->setCurrentIndex(kFindTab);
    QApplication::processEvents();
    before = document.stepTimeCount();
    spin->setValue(spin->value() + 1);
    QApplication::processEvents();
    CHECK(document.stepTimeCount() == before + 1);
}
