// SPDX-License-Identifier: MIT
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMessageBox>
#include <QMimeData>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QUrl>

#include "catchqt.h"
#include "core/base/units.h"
#include "testwindow.h"
#include "ui/comparisontablemodel.h"
#include "ui/document.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/measuredpanel.h"
#include "ui/measuredrun.h"
#include "ui/measuredview.h"
#include "ui/planfiles.h"
#include "ui/qtstring.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

using memledger::ui::ComparisonTableModel;
using memledger::ui::Document;
using memledger::ui::MainWindow;
using memledger::ui::MeasuredRun;

namespace {

const QString kFixture = QStringLiteral(MEMLEDGER_TEST_DATA "/measured/small-plain-none");

QString fixtureFile(const QString &name)
{
    return kFixture + QLatin1Char('/') + name;
}

// The measured run's own figures, written by tools/measure beside the fixture.
nlohmann::json measuredFigures()
{
    std::ifstream in(fixtureFile(QStringLiteral("measured.json")).toStdString());
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

bool dragAccepted(MainWindow &window, const QList<QUrl> &urls)
{
    QMimeData mime;
    mime.setUrls(urls);
    QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    return enter.isAccepted();
}

QMessageBox *failureBox(MainWindow &window)
{
    for (QMessageBox *box : window.findChildren<QMessageBox *>())
        if (box->isVisible())
            return box;
    return nullptr;
}

// The window on the fixture's plan, opened as a file (as its trace was recorded against it), at a small size.
struct MeasuredWindow : memledger::test::TestWindow
{
    MeasuredWindow()
        : TestWindow(memledger::test::kNoScenario)
    {
        REQUIRE(document.loadFile(fixtureFile(QStringLiteral("preset.json"))));
        show(QSize(1024, 700));
    }
    MeasuredRun *run() const { return window.measuredRun(); }
    int measuredTab() const { return window.views()->indexOf(window.measuredPanel()); }
};

} // namespace

TEST_CASE("Measured vs model is a view of the window, reached by Ctrl+6", "[ui][measured][mainwindow]")
{
    MeasuredWindow f;
    REQUIRE(f.measuredTab() == 5);
    for (QAction *action : f.window.findChildren<QAction *>())
        if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_6))
            action->trigger();
    CHECK(f.window.views()->currentIndex() == 5);
    CHECK_FALSE(f.window.measuredPanel()->hasComparison());
}

TEST_CASE("Dragging onto the window accepts trace files only", "[ui][measured][mainwindow][drop]")
{
    MeasuredWindow f;
    CHECK(f.window.acceptDrops());
    CHECK(dragAccepted(f.window, {QUrl::fromLocalFile(fixtureFile(QStringLiteral("snapshot.pickle.gz")))}));
    CHECK(dragAccepted(f.window, {QUrl::fromLocalFile(fixtureFile(QStringLiteral("trace.json.gz")))}));
    CHECK_FALSE(dragAccepted(f.window, {QUrl::fromLocalFile(QStringLiteral("/tmp/model.pt"))}));
    CHECK_FALSE(dragAccepted(f.window, {QUrl(QStringLiteral("https://example.org/snapshot.pickle"))}));
    CHECK_FALSE(dragAccepted(f.window, {}));

    // A drop imports the file and shows the comparison when it is in.
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(fixtureFile(QStringLiteral("snapshot.pickle.gz")))});
    QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&f.window, &drop);
    CHECK(drop.isAccepted());
    REQUIRE(f.run()->waitUntilIdle());
    CHECK(f.run()->hasTrace());
    CHECK(f.window.views()->currentIndex() == f.measuredTab());
}

TEST_CASE("A file that is no trace is explained and changes nothing", "[ui][measured][mainwindow]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    MeasuredWindow f;
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")), false);
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    const memledger::Bytes peak = f.run()->comparison()->measured_peak_allocated_bytes;
    const memledger::Config config = f.document.config();
    f.window.views()->setCurrentIndex(0);

    const QString bad = memledger::test::writeFile(dir, QStringLiteral("notes.pickle"), QByteArrayLiteral("hello"));
    QSignalSpy changed(f.run(), &MeasuredRun::changed);
    f.window.measuredView()->importTrace(bad);
    REQUIRE(f.run()->waitUntilIdle());
    QApplication::processEvents();
    QMessageBox *box = failureBox(f.window);
    REQUIRE(box != nullptr);
    CHECK(box->text().contains(QStringLiteral("notes.pickle")));
    CHECK(box->text().contains(QStringLiteral("nothing was changed")));
    CHECK(box->informativeText().contains(QStringLiteral("neither a PyTorch memory snapshot")));
    box->close();
    CHECK(changed.count() == 0);
    CHECK(f.run()->fileName() == QStringLiteral("snapshot.pickle.gz"));
    CHECK(f.run()->comparison()->measured_peak_allocated_bytes == peak);
    CHECK(f.window.measuredPanel()->hasComparison());
    CHECK(f.document.config() == config);
    CHECK(f.window.views()->currentIndex() == 0); // a failed import does not switch views
}

TEST_CASE("Cancelling a real import leaves the window as it was", "[ui][measured][mainwindow]")
{
    MeasuredWindow f;
    QSignalSpy cancelled(f.run(), &MeasuredRun::importCancelled);
    // Cancelled before the worker can finish: whatever it read is dropped.
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    f.run()->cancelImport();
    REQUIRE(f.run()->waitUntilIdle());
    CHECK(cancelled.count() == 1);
    CHECK_FALSE(f.run()->hasTrace());
    CHECK_FALSE(f.window.measuredPanel()->hasComparison());
    CHECK_FALSE(f.window.lifetimes()->measuredOverlay().has_value());
    CHECK(failureBox(f.window) == nullptr);
    CHECK(f.window.views()->currentIndex() == 0);
}

TEST_CASE("A measured snapshot end to end: table, overlay, edits, undo, clear", "[ui][measured][mainwindow]")
{
    MeasuredWindow f;
    const nlohmann::json figures = measuredFigures();
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    QApplication::processEvents();
    REQUIRE(f.run()->comparison().has_value());
    const memledger::TraceComparison c = *f.run()->comparison();
    // The replayed peak is the measurement's own, to the byte.
    CHECK(c.measured_peak_allocated_bytes == figures.at("peak_allocated_bytes").get<memledger::Bytes>());

    // The panel shows core's figures, in the app's units.
    CHECK(f.window.views()->currentIndex() == f.measuredTab());
    const QAbstractItemModel *table = f.window.measuredPanel()->comparisonTable()->model();
    const auto cell = [&](int row, int column) { return table->data(table->index(row, column)).toString(); };
    CHECK(cell(0, ComparisonTableModel::MeasuredColumn)
          == memledger::ui::toQString(memledger::formatGB(double(c.measured_peak_allocated_bytes))));
    CHECK(cell(0, ComparisonTableModel::ModelledColumn)
          == memledger::ui::toQString(memledger::formatGB(double(c.modelled_peak_bytes))));
    CHECK(cell(0, ComparisonTableModel::DifferenceColumn) == ComparisonTableModel::differenceText(c.peak_error));
    CHECK(table->rowCount() == 2 + int(c.phases.size()));
    CHECK(f.window.measuredPanel()->allocationsTable()->model()->rowCount() == int(c.alive_at_peak.size()));

    // The lifetimes view draws the run over the rank it is held against.
    f.window.views()->setCurrentWidget(f.window.lifetimes()->parentWidget());
    QApplication::processEvents();
    REQUIRE(f.window.lifetimes()->measuredOverlay().has_value());
    CHECK(f.window.lifetimes()->overlayShown());
    CHECK(f.window.lifetimes()->measuredOverlay()->label == QStringLiteral("measured (snapshot.pickle.gz)"));
    CHECK(f.window.lifetimes()->fitBytes());
    CHECK_FALSE(f.window.lifetimes()->measuredLine().isEmpty());

    // An edit re-runs the comparison on the kept trace; undo brings the old figures back.
    memledger::Config edited = f.document.config();
    edited.training.micro_batch_size *= 2;
    edited.training.global_batch_size = edited.training.micro_batch_size;
    f.document.edit(edited, QStringLiteral("micro-batch"));
    REQUIRE(f.run()->waitUntilIdle());
    CHECK(f.run()->comparison()->modelled_peak_bytes > c.modelled_peak_bytes);
    CHECK(f.run()->comparison()->measured_peak_allocated_bytes == c.measured_peak_allocated_bytes);
    f.document.undoStack()->undo();
    REQUIRE(f.run()->waitUntilIdle());
    CHECK(f.run()->comparison()->modelled_peak_bytes == c.modelled_peak_bytes);
    CHECK(cell(0, ComparisonTableModel::ModelledColumn)
          == memledger::ui::toQString(memledger::formatGB(double(c.modelled_peak_bytes))));

    // Clear: the panel goes back to its placeholder and the overlay goes.
    QAction *clear = nullptr;
    for (QAction *action : f.window.findChildren<QAction *>())
        if (action->text() == QStringLiteral("C&lear measured trace"))
            clear = action;
    REQUIRE(clear != nullptr);
    CHECK(clear->isEnabled());
    clear->trigger();
    CHECK_FALSE(f.run()->hasTrace());
    CHECK_FALSE(clear->isEnabled());
    CHECK_FALSE(f.window.measuredPanel()->hasComparison());
    CHECK_FALSE(f.window.lifetimes()->measuredOverlay().has_value());
}

TEST_CASE("A profiler trace imports through the same path", "[ui][measured][mainwindow]")
{
    MeasuredWindow f;
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("trace.json.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    CHECK(f.run()->comparison()->format == memledger::TraceFormat::ProfilerTrace);
    CHECK(f.window.measuredPanel()->summaryText().contains(QStringLiteral("profiler trace")));
}

TEST_CASE("The summary gives no measured iteration where none was told apart, and a CPU run's as not comparable",
          "[ui][measured][mainwindow]")
{
    // Issue 34, item 11: the page said "no iteration could be told apart" beside "iteration … measured", and
    // held a CPU run's wall time against the GPU's model.
    MeasuredWindow f;
    f.window.measuredView()->importTrace(QStringLiteral(MEMLEDGER_TEST_DATA "/snapshots/multidevice.pickle"));
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    CAPTURE(f.window.measuredPanel()->summaryText());
    CHECK(f.window.measuredPanel()->notesText().contains(QStringLiteral("No iteration could be told apart")));
    CHECK_FALSE(f.window.measuredPanel()->summaryText().contains(QStringLiteral(" measured, ")));
    CHECK(f.window.measuredPanel()->summaryText().contains(QStringLiteral("no iteration told apart")));

    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    CAPTURE(f.window.measuredPanel()->summaryText());
    CHECK(f.window.measuredPanel()->summaryText().contains(QStringLiteral("measured on the CPU")));
    CHECK(f.window.measuredPanel()->summaryText().contains(QStringLiteral("not comparable")));
}

TEST_CASE("Opening another plan clears the measured trace — one of another model is said to be",
          "[ui][measured][mainwindow]")
{
    // Issue 34: a 12 M-parameter CPU trace stayed "held against" every plan opened after it, GPT-3 175B too.
    MeasuredWindow f;
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    CHECK_FALSE(f.run()->comparison()->plainly_other_model); // the run of this very plan
    CHECK(f.window.measuredPanel()->warningText().isEmpty());

    // A built-in scenario: the trace goes, and the panel says why.
    REQUIRE(f.document.loadBuiltinScenario("gpt-3-175b-64gpus-tp-only"));
    REQUIRE(f.run()->waitUntilIdle());
    CHECK_FALSE(f.run()->hasTrace());
    CHECK_FALSE(f.window.measuredPanel()->hasComparison());
    CHECK_FALSE(f.window.lifetimes()->measuredOverlay().has_value());

    // Imported again over GPT-3: held against it, with a warning that it is plainly another model's.
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    CHECK(f.run()->comparison()->plainly_other_model);
    CHECK(f.window.measuredPanel()->warningText().contains(QStringLiteral("plainly of another model")));

    // New and a file opened clear it too; an edit or a save does not.
    memledger::Config edited = f.document.config();
    edited.training.micro_batch_size += 1;
    edited.training.global_batch_size = std::max(edited.training.global_batch_size, edited.training.micro_batch_size);
    f.document.edit(edited, QStringLiteral("micro-batch"));
    REQUIRE(f.run()->waitUntilIdle());
    CHECK(f.run()->hasTrace());
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    REQUIRE(f.window.files()->saveTo(dir.filePath(QStringLiteral("gpt3.json"))));
    CHECK(f.run()->hasTrace());
    f.document.newPlan();
    REQUIRE(f.run()->waitUntilIdle());
    CHECK_FALSE(f.run()->hasTrace());
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->hasTrace());
    REQUIRE(f.window.files()->openPath(fixtureFile(QStringLiteral("preset.json"))));
    REQUIRE(f.run()->waitUntilIdle());
    CHECK_FALSE(f.run()->hasTrace());
}

TEST_CASE("A snapshot of several devices names them all and holds the one picked against the plan",
          "[ui][measured][mainwindow]")
{
    // Issue 34, item 10: the GUI showed one device of a multi-device snapshot with no word of the others
    // (memledger-cli compare has --device). The fixture holds devices 0, 1 and 2; 0 has no events, so the
    // import keeps 1 (tests/core/test_snapshot.cpp), whose 3 events are not device 2's 2.
    MeasuredWindow f;
    f.window.measuredView()->importTrace(QStringLiteral(MEMLEDGER_TEST_DATA "/snapshots/multidevice.pickle"));
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    CHECK(f.run()->comparison()->device == 1);
    QComboBox *devices = f.window.measuredPanel()->devicePicker();
    REQUIRE(devices != nullptr);
    CHECK(devices->isVisibleTo(f.window.measuredPanel()));
    CHECK(devices->isEnabled());
    REQUIRE(devices->count() == 3);
    CHECK(devices->itemText(0) == QStringLiteral("device 0"));
    CHECK(devices->itemText(2) == QStringLiteral("device 2"));
    CHECK(devices->currentText() == QStringLiteral("device 1"));
    CAPTURE(f.window.measuredPanel()->summaryText());
    CHECK(f.window.measuredPanel()->summaryText().contains(QStringLiteral("device 1 of 3")));

    // Picking device 2 imports the same file again for that device and holds it against the plan.
    devices->setCurrentIndex(2);
    REQUIRE(f.run()->waitUntilIdle());
    REQUIRE(f.run()->comparison().has_value());
    CHECK(f.run()->comparison()->device == 2);
    CHECK(f.run()->trace()->events.size() == 2);
    CHECK(devices->currentText() == QStringLiteral("device 2"));
    CHECK(f.window.measuredPanel()->summaryText().contains(QStringLiteral("device 2 of 3")));

    // A one-device trace: the picker names its device and offers nothing else.
    f.window.measuredView()->importTrace(fixtureFile(QStringLiteral("snapshot.pickle.gz")));
    REQUIRE(f.run()->waitUntilIdle());
    CHECK(devices->count() == 1);
    CHECK_FALSE(devices->isEnabled());
}
