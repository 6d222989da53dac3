// SPDX-License-Identifier: MIT
// The explorer's interaction: controls edit the document, a burst of changes
// recomputes once, every view follows, invalid edits keep the last valid
// charts, and undo restores.
#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStackedBarSeries>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "testwindow.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/planfiles.h"
#include "ui/staircasechart.h"
#include "ui/theme.h"

#include <array>
#include <catch2/catch.hpp>
#include <vector>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

int barCount(MemoryBarsChart *chart)
{
    const auto series = chart->chart()->series();
    for (QAbstractSeries *s : series)
        if (auto *bars = qobject_cast<QStackedBarSeries *>(s))
            return bars->barSets().front()->count();
    return -1;
}

} // namespace

TEST_CASE("A burst of control changes recomputes once and every view follows", "[ui][controls]")
{
    TestWindow gui;
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    REQUIRE(p != nullptr);
    REQUIRE(p->value() == 4);
    CHECK(barCount(gui.window.memoryBars()) == 4);

    QSignalSpy ledgers(&gui.document, &Document::ledgerChanged);
    const int before = gui.document.recomputeCount();
    p->setValue(2);
    p->setValue(8); // within one event-loop pass: one recompute
    CHECK(gui.document.recomputeCount() == before);
    QApplication::processEvents();
    CHECK(gui.document.recomputeCount() == before + 1);
    CHECK(ledgers.count() == 1);
    CHECK(gui.document.ledger().ranks.size() == 8);
    CHECK(barCount(gui.window.memoryBars()) == 8);
    CHECK(gui.document.timeline().ranks.size() == 8);
    // Two separate edits are two undo steps, named by their values.
    CHECK(gui.document.undoStack()->count() == 2);
    CHECK(gui.document.undoStack()->undoText().endsWith(QStringLiteral("to 8")));
}

TEST_CASE("Undo merges one continuous drag only, and names it by where it ended", "[ui][controls][undo]")
{
    TestWindow gui;
    QUndoStack *undo = gui.document.undoStack();
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    REQUIRE(p != nullptr);
    const int start = p->value();

    // p 4 -> 2, something else, p -> 8: two steps; one Ctrl+Z returns to 2, not to 4.
    p->setValue(2);
    QApplication::processEvents();
    p->setValue(8);
    QApplication::processEvents();
    CHECK(undo->count() == 2);
    CHECK(undo->undoText().endsWith(QStringLiteral("to 8")));
    undo->undo();
    QApplication::processEvents();
    CHECK(p->value() == 2);
    undo->undo();
    QApplication::processEvents();
    CHECK(p->value() == start);

    // The sequence slider dragged from 8K to 64K: one step, named 64K.
    QSlider *slider = gui.window.controlPanel()->findChild<QSlider *>();
    REQUIRE(slider != nullptr);
    const std::int64_t before = gui.document.config().training.seq_length;
    const int count = undo->index(); // the redo steps above go with the next edit
    slider->setSliderDown(true); // what a press on the handle does
    for (int log2 = 14; log2 <= 16; ++log2) {
        slider->setValue(log2);
        QApplication::processEvents();
    }
    slider->setSliderDown(false);
    CHECK(undo->index() == count + 1);
    CHECK(undo->undoText().contains(QStringLiteral("64K")));
    // A second drag is a second step.
    slider->setSliderDown(true);
    slider->setValue(15);
    slider->setSliderDown(false);
    QApplication::processEvents();
    CHECK(undo->index() == count + 2);
    CHECK(undo->undoText().contains(QStringLiteral("32K")));
    undo->undo();
    undo->undo();
    QApplication::processEvents();
    CHECK(gui.document.config().training.seq_length == before);
}

TEST_CASE("An edit that keeps the ranks updates every bar in place to the new ledger", "[ui][controls][charts]")
{
    TestWindow gui;
    QStackedBarSeries *series = nullptr;
    for (QAbstractSeries *s : gui.window.memoryBars()->chart()->series())
        if (auto *bars = qobject_cast<QStackedBarSeries *>(s))
            series = bars;
    REQUIRE(series != nullptr);
    const QList<QBarSet *> sets = series->barSets();
    REQUIRE(sets.size() == kCategoryCount);
    const QList<QBarSet *> before = sets;

    Config config = gui.document.config();
    config.training.seq_length *= 2; // every rank's activations double; the ranks stay
    gui.document.edit(config, QStringLiteral("longer sequence"));
    QApplication::processEvents();
    REQUIRE(gui.document.ledger().ranks.size() == 4);
    CHECK(series->barSets() == before); // updated in place, not rebuilt
    for (int c = 0; c < kCategoryCount; ++c)
        for (int r = 0; r < 4; ++r)
            CHECK(sets[c]->at(r)
                  == Approx(static_cast<double>(gui.document.ledger().ranks[std::size_t(r)].device[std::size_t(c)])
                            / kGB));
}

TEST_CASE("An invalid edit is explained and the last valid charts stay", "[ui][controls]")
{
    TestWindow gui;
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    const Bytes peak = gui.document.ledger().peak_bytes;
    p->setValue(3); // 80 layers do not split over 3 stages
    QApplication::processEvents();
    CHECK(gui.document.isStale());
    bool named = false;
    for (const Problem &problem : gui.document.problems())
        named |= problem.path == "model.num_layers" && !problem.suggestion.empty();
    CHECK(named);
    CHECK(gui.document.ledger().peak_bytes == peak);
    CHECK(gui.document.ledger().ranks.size() == 4);
    CHECK(barCount(gui.window.memoryBars()) == 4);

    // Inline, under the control that caused it: why, and the nearest valid values.
    const QString note = gui.window.controlPanel()->noteOf(p);
    CHECK(note.contains(QStringLiteral("num_layers (80)")));
    CHECK(note.contains(QStringLiteral("p·v")));
    for (QWidget *control : gui.window.controlPanel()->controls())
        if (control != p)
            CHECK(gui.window.controlPanel()->noteOf(control).isEmpty());
    if (qEnvironmentVariableIsSet("MEMLEDGER_CONTROLS_PNG")) {
        gui.show(QSize(1600, 1000));
        gui.window.grab().save(qEnvironmentVariable("MEMLEDGER_CONTROLS_PNG"));
    }
    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.window.controlPanel()->noteOf(p).isEmpty());
}

TEST_CASE("An error naming a control's own field is explained under that control", "[ui][controls]")
{
    TestWindow gui;
    auto *tensor = gui.control<QSpinBox>(QStringLiteral("Tensor (t)"));
    tensor->setValue(3); // 64 heads do not split over 3
    QApplication::processEvents();
    CHECK(gui.window.controlPanel()->noteOf(tensor).contains(QStringLiteral("num_attention_heads")));
}

TEST_CASE("Undo restores the previous configuration and the controls follow", "[ui][controls]")
{
    TestWindow gui;
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    const Config original = gui.document.config();
    p->setValue(8);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.pipeline_model_parallel_size == 8);
    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.document.config() == original);
    CHECK(p->value() == 4);
    CHECK(gui.document.ledger().ranks.size() == 4);
    gui.document.undoStack()->redo();
    QApplication::processEvents();
    CHECK(p->value() == 8);
    CHECK(gui.document.ledger().ranks.size() == 8);
}

TEST_CASE("Hovering a bar segment names its entries and bytes", "[ui][charts]")
{
    TestWindow gui;
    const QString text = gui.window.memoryBars()->segmentText(0, Category::Activations);
    CHECK(text.contains(QStringLiteral("Rank 0")));
    CHECK(text.contains(QStringLiteral("Transformer layers")));
    CHECK(text.contains(QStringLiteral("22.48 GB")));
}

TEST_CASE("Compare: pinned plans stand beside the current one, as seed 000's plans A-D", "[ui][charts]")
{
    TestWindow gui("seed-000-7b-a-plain");
    REQUIRE(gui.document.pinCurrent());
    REQUIRE(gui.document.loadBuiltinScenario("seed-000-7b-b-checkpointing"));
    REQUIRE(gui.document.pinCurrent());
    REQUIRE(gui.document.loadBuiltinScenario("seed-000-7b-c-offload"));
    REQUIRE(gui.document.pinCurrent());
    REQUIRE(gui.document.loadBuiltinScenario("seed-000-7b-d-both"));
    QApplication::processEvents();
    CHECK(gui.window.memoryBars()->isComparing());
    CHECK(barCount(gui.window.memoryBars()) == 4); // A, B, C pinned + the current D
    // Each bar is its plan's peak rank: A's activations, D's are small.
    CHECK(gui.window.memoryBars()
              ->segmentText(0, Category::OptimizerStates)
              .contains(QStringLiteral("Optimizer states")));
    CHECK(gui.window.memoryBars()->segmentText(3, Category::OptimizerStates).contains(QStringLiteral("0 B")));
    gui.document.clearPins();
    CHECK_FALSE(gui.window.memoryBars()->isComparing());
    CHECK(barCount(gui.window.memoryBars()) == 1);
}

TEST_CASE("Save writes the edited plan over its file and marks it clean", "[ui][files]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("plan.json"));
    {
        QFile f(path);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write(findBuiltin("scenarios", "llama-3-70b-128xh100")->text.data());
    }
    TestWindow gui(kNoScenario);
    REQUIRE(gui.window.files()->openPath(path));
    CHECK(gui.window.files()->filePath() == path);
    CHECK(gui.document.undoStack()->isClean());
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    p->setValue(8);
    QApplication::processEvents();
    CHECK_FALSE(gui.document.undoStack()->isClean());
    // The plan's description was written before the edit: Save asks; accepted as it comes, over the same file.
    gui.window.files()->setSaveDialogRunner([&path](ui::SavePlanDialog &dialog) {
        return dialog.path() == path ? int(QDialog::Accepted) : int(QDialog::Rejected);
    });
    REQUIRE(gui.window.files()->save());
    CHECK(gui.document.undoStack()->isClean());
    const LoadResult back = presetFromFile(path.toStdString());
    REQUIRE(back.config.has_value());
    CHECK(back.config->parallelism.pipeline_model_parallel_size == 8);
    CHECK(*back.config == gui.document.config());
}

TEST_CASE("Host memory has its own bars: the offloaded optimizer of seed 000's plan C", "[ui][charts]")
{
    TestWindow gui("seed-000-7b-c-offload");
    const QString host = gui.window.hostBars()->segmentText(0, Category::OptimizerStates);
    CHECK(host.contains(QStringLiteral("80.86 GB")));
    CHECK(host.contains(QStringLiteral("Transformer layers")));
    CHECK(gui.window.memoryBars()->segmentText(0, Category::OptimizerStates).contains(QStringLiteral("0 B")));
}

TEST_CASE("The host bars mark what core's host verdict says does not fit", "[ui][charts][fits]")
{
    TestWindow gui("seed-000-7b-c-offload");
    CHECK(gui.window.hostBars()->failingBars().empty());
    // 80 GB of host memory per GPU for the 80.86 GB of offloaded optimizer states.
    Config config = gui.document.config();
    config.hardware.host_bytes = 80'000'000'000;
    gui.document.setConfig(config);
    QApplication::processEvents();
    REQUIRE_FALSE(gui.document.ledger().ranks[0].host_fits);
    CHECK(gui.window.hostBars()->failingBars() == std::vector<int>{0});
    CHECK(gui.window.hostBars()
              ->chart()
              ->title()
              .replace(QStringLiteral("<br>"), QStringLiteral(" "))
              .contains(QStringLiteral("rank 0 over the host's memory")));
    // The device chart keeps its own verdict: the GPU side still fits.
    CHECK(gui.window.memoryBars()->failingBars().empty());
}

TEST_CASE("A new pipeline depth drops a preset's stage layout and says why the layers do not divide", "[ui][controls]")
{
    TestWindow gui("deepseek-v3-2048xh100-p16-v4");
    REQUIRE(gui.document.config().parallelism.pipeline_layout.size() == 64);
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    REQUIRE(p->value() == 16);
    p->setValue(8);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.pipeline_layout.empty());
    bool named = false;
    for (const Problem &problem : gui.document.problems())
        named |= problem.path == "model.num_layers" && problem.isError(); // 61 layers over 8 × 4 stages
    CHECK(named);
    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.pipeline_layout.size() == 64);
}

TEST_CASE("The optimizer, its states' dtype and the master weights are controls too", "[ui][controls]")
{
    TestWindow gui("seed-000-7b-a-plain");
    auto *optimizer = gui.control<QComboBox>(QStringLiteral("Optimizer"));
    auto *states = gui.control<QComboBox>(QStringLiteral("Optimizer states"));
    auto *master = gui.control<QCheckBox>(QStringLiteral("fp32 master weights"));
    const auto optimizerBytes
        = [&gui] { return gui.document.ledger().ranks.front().device[std::size_t(Category::OptimizerStates)]; };
    const Bytes adam = optimizerBytes();

    // 8-bit Adam: its moments default to int8 (2 bytes per parameter instead of 8, the master copy stays).
    optimizer->setCurrentIndex(4);
    Q_EMIT optimizer->activated(4);
    QApplication::processEvents();
    CHECK(gui.document.config().training.optimizer == Optimizer::Adam8bit);
    CHECK(optimizerBytes() < adam);

    // bf16 moments set both.
    states->setCurrentIndex(2);
    Q_EMIT states->activated(2);
    QApplication::processEvents();
    CHECK(gui.document.config().training.exp_avg_dtype == Dtype::BF16);
    CHECK(gui.document.config().training.exp_avg_sq_dtype == Dtype::BF16);

    master->setChecked(!gui.document.config().training.main_params_fp32);
    QApplication::processEvents();
    CHECK(gui.document.undoStack()->count() == 3);
}

TEST_CASE("Picking a two-chunk schedule sets v = 2 in one undo step — a one-chunk schedule sets it back",
          "[ui][controls]")
{
    TestWindow gui("llama-3-70b-128xh100");
    auto *schedule = gui.control<QComboBox>(QStringLiteral("Schedule"));
    REQUIRE(schedule->count() == 8);
    const int undo = gui.document.undoStack()->count();

    const int zbv = int(PipelineSchedule::ZbV);
    schedule->setCurrentIndex(zbv);
    Q_EMIT schedule->activated(zbv);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.schedule() == PipelineSchedule::ZbV);
    CHECK(gui.document.config().parallelism.virtual_pipeline_model_parallel_size == 2);
    CHECK(gui.document.undoStack()->count() == undo + 1);
    CHECK(gui.document.ledger().ranks.size() == 4);

    const int h1 = int(PipelineSchedule::ZbH1);
    schedule->setCurrentIndex(h1);
    Q_EMIT schedule->activated(h1);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.schedule() == PipelineSchedule::ZbH1);
    CHECK(gui.document.config().parallelism.virtual_pipeline_model_parallel_size == 1);

    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.schedule() == PipelineSchedule::ZbV);
    CHECK(schedule->currentIndex() == zbv);
}

TEST_CASE("Muon and gradient offload are one pick each, one undo step, and the ledger follows", "[ui][controls]")
{
    TestWindow gui("seed-000-7b-a-plain");
    auto *optimizer = gui.control<QComboBox>(QStringLiteral("Optimizer"));
    auto *grads = gui.control<QComboBox>(QStringLiteral("Gradient offload"));
    const auto bytes = [&gui](Category c, bool host) {
        const RankLedger &r = gui.document.ledger().ranks.front();
        return (host ? r.host : r.device)[std::size_t(c)];
    };
    const Bytes adamStates = bytes(Category::OptimizerStates, false);
    const int before = gui.document.undoStack()->count();

    // Muon: one momentum buffer per matrix element instead of two moments (plus its transient working set).
    optimizer->setCurrentIndex(5);
    Q_EMIT optimizer->activated(5);
    QApplication::processEvents();
    CHECK(gui.document.config().training.optimizer == Optimizer::Muon);
    CHECK(bytes(Category::OptimizerStates, false) < adamStates);
    CHECK(gui.document.undoStack()->count() == before + 1);

    // Gradient offload brings the optimizer step to the CPU in the same step: gradients leave the device.
    const Bytes deviceGrads = bytes(Category::Gradients, false);
    grads->setCurrentIndex(1);
    Q_EMIT grads->activated(1);
    QApplication::processEvents();
    CHECK(gui.document.config().strategy.grad_offload == OffloadTarget::CPU);
    CHECK(gui.document.config().strategy.optimizer_offload == OffloadTarget::CPU);
    CHECK(bytes(Category::Gradients, false) < deviceGrads);
    CHECK(bytes(Category::Gradients, true) > 0);
    CHECK(gui.document.undoStack()->count() == before + 2);
    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.document.config().strategy.grad_offload == OffloadTarget::None);
    CHECK(gui.document.config().strategy.optimizer_offload == OffloadTarget::None);
}

TEST_CASE("An edit repaints the controls whose value it changed, not every control of the panel",
          "[ui][controls][bench]")
{
    // QSpinBox::setValue repaints the box even when the value is the one it shows; following the plan back
    // after each edit set every box, so a move of one control repainted the whole panel (the bench's profile).
    ShownWindow gui;
    std::vector<QSpinBox *> spins;
    for (QWidget *w : gui.window.controlPanel()->controls())
        if (auto *spin = qobject_cast<QSpinBox *>(w))
            spins.push_back(spin);
    REQUIRE(spins.size() > 4);
    QSpinBox *tensor = spins[0];
    QSpinBox *data = spins[3]; // t, p, v, d
    PaintCount tensorPaints, dataPaints;
    tensor->installEventFilter(&tensorPaints);
    data->installEventFilter(&dataPaints);

    Config config = gui.document.config();
    config.parallelism.tensor_model_parallel_size /= 2; // still valid: t = 4
    gui.document.edit(config, QStringLiteral("Set t"));
    for (int pass = 0; pass < 5; ++pass)
        QApplication::processEvents();
    CHECK(tensor->value() == config.parallelism.tensor_model_parallel_size);
    CHECK(tensorPaints.paints > 0); // the control that changed shows its value
    CHECK(dataPaints.paints == 0); // one whose value is the same is left alone
}

namespace {
// Counts the layout requests a widget receives (a relayout of everything under it follows each).
class LayoutRequests : public QObject
{
public:
    int requests = 0;

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        requests += event->type() == QEvent::LayoutRequest;
        return false;
    }
};
} // namespace

TEST_CASE("A note that comes and goes while its control is edited relayouts nothing", "[ui][controls][bench]")
{
    // Issue 16, one frame per move: the note kept its room, but clearing and setting its text each step
    // relayouted its group, the panel and the scroll area (the Model combo toggled between a plan that fits
    // and one whose layers do not split: a seventh of the move's instructions in the bench's callgrind profile).
    ShownWindow gui;
    // As the bench moves it: the next model (Llama 3.1 405B's 126 layers) does not split over p = 4.
    auto *model = gui.control<QComboBox>(QStringLiteral("Model"));
    const int fits = model->currentIndex();
    const auto pick = [&](int index) {
        model->setCurrentIndex(index);
        Q_EMIT model->activated(index);
        settle();
    };
    pick(fits + 1); // a note under Model
    REQUIRE_FALSE(gui.window.controlPanel()->noteOf(model).isEmpty());
    pick(fits); // gone, its room kept
    LayoutRequests panel, group;
    gui.window.controlPanel()->installEventFilter(&panel);
    model->parentWidget()->installEventFilter(&group);
    for (int step = 0; step < 4; ++step) {
        pick(step % 2 == 0 ? fits + 1 : fits);
        CHECK(gui.window.controlPanel()->noteOf(model).isEmpty() == (step % 2 == 1));
    }
    CHECK(panel.requests == 0);
    CHECK(group.requests == 0);
}

TEST_CASE("A note keeps its room while its control is edited, so the panel does not move at each step",
          "[ui][controls][bench]")
{
    // Issue 16, one frame per move: spinning t through 3, 4, 5 … showed and hid the note under it at every
    // step, and every control below moved (a relayout and a repaint of the whole panel per step).
    ShownWindow gui;
    auto *tensor = gui.control<QSpinBox>(QStringLiteral("Tensor (t)"));
    auto *pipeline = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    auto *data = gui.control<QSpinBox>(QStringLiteral("Data (d)"));
    const auto top = [&](QWidget *w) { return w->mapTo(gui.window.controlPanel(), QPoint(0, 0)).y(); };
    const int pipelineTop = top(pipeline);

    tensor->setValue(3); // 64 heads do not split over 3: a note under t
    settle();
    CHECK_FALSE(gui.window.controlPanel()->noteOf(tensor).isEmpty());
    const int withNote = top(pipeline);
    CHECK(withNote > pipelineTop); // the note pushed p down

    tensor->setValue(4); // valid again: the note is gone, its room is kept
    settle();
    CHECK(gui.window.controlPanel()->noteOf(tensor).isEmpty());
    CHECK(top(pipeline) == withNote);
    const int panelHeight = gui.window.controlPanel()->height();
    const int bottom = top(gui.window.controlPanel()->controls().back());
    tensor->setValue(3); // invalid again: the same room, nothing moves
    settle();
    CHECK_FALSE(gui.window.controlPanel()->noteOf(tensor).isEmpty());
    CHECK(top(pipeline) == withNote);
    // Nor does the note's group or the panel change height (a group that grows by a line resizes the
    // panel, which repaints all of it): the last control stays where it was.
    CHECK(gui.window.controlPanel()->height() == panelHeight);
    CHECK(top(gui.window.controlPanel()->controls().back()) == bottom);
    tensor->setValue(4);
    settle();
    CHECK(gui.window.controlPanel()->height() == panelHeight);
    CHECK(top(gui.window.controlPanel()->controls().back()) == bottom);
    tensor->setValue(8);
    settle();

    data->setValue(data->value() * 2); // an edit elsewhere gives the room back
    settle();
    CHECK(gui.window.controlPanel()->noteOf(tensor).isEmpty());
    CHECK(top(pipeline) == pipelineTop);
}

TEST_CASE("A note that appears repaints its own group, not the groups above it, and squeezes no group",
          "[ui][controls][bench]")
{
    // Issue 16, one frame per move: a note that appeared resized its group, then the panel, then the scroll
    // area's range, each on a layout request posted by the one before. Between them the other groups were
    // squeezed into the panel's old height and stretched back, and a frame painted in between drew the whole
    // panel twice: half of a control's first move.
    ShownWindow gui;
    auto *microBatch = gui.control<QSpinBox>(QStringLiteral("Micro-batch (b)"));
    QWidget *globalBatch = gui.control(QStringLiteral("Global batch"));
    const QList<QGroupBox *> groups = gui.window.controlPanel()->findChildren<QGroupBox *>();
    REQUIRE(groups.size() == 4);
    REQUIRE(groups[2] == microBatch->parentWidget());
    std::array<PaintCount, 4> counts;
    for (int i = 0; i < 4; ++i)
        groups[i]->installEventFilter(&counts[std::size_t(i)]);
    const int ownHeight = groups[2]->height();
    const int panelHeight = gui.window.controlPanel()->height();
    const int belowTop = groups[3]->y();

    microBatch->setValue(3); // a global batch of 512 does not split into micro-batches of 3 over d = 4
    settle();
    REQUIRE_FALSE(gui.window.controlPanel()->noteOf(globalBatch).isEmpty());
    for (QWidget *control : gui.window.controlPanel()->controls())
        REQUIRE((control == globalBatch) != gui.window.controlPanel()->noteOf(control).isEmpty()); // one note
    CHECK(groups[2]->height() > ownHeight);
    CHECK(gui.window.controlPanel()->height() > panelHeight); // the panel grew
    CHECK(groups[3]->y() > belowTop); // and the group below moved down
    for (int i : {0, 1}) { // the groups above the note are left as they were
        INFO(groups[i]->title().toStdString());
        CHECK(counts[std::size_t(i)].paints == 0);
        CHECK(counts[std::size_t(i)].resizes == 0);
    }
    CHECK(counts[2].resizes == 1); // the note's group grows once, straight to its new height
    CHECK(counts[3].resizes == 0); // the group below moves, never squeezed and stretched back
}

TEST_CASE("A note is drawn in the palette's error colour, and follows a switch to the dark palette", "[ui][controls]")
{
    // The notes are recoloured only when the error colour changes (not at every edit): a switch of
    // palette must still reach a note that is shown, and one shown after it.
    ShownWindow gui;
    auto *tensor = gui.control<QSpinBox>(QStringLiteral("Tensor (t)"));
    auto *micro = gui.control<QSpinBox>(QStringLiteral("Micro-batch (b)"));
    const auto noteLabel = [&](QWidget *control) -> QLabel * {
        for (QLabel *label : gui.window.controlPanel()->findChildren<QLabel *>())
            if (label->isVisible() && label->text() == gui.window.controlPanel()->noteOf(control))
                return label;
        return nullptr;
    };
    tensor->setValue(3);
    settle();
    QLabel *note = noteLabel(tensor);
    REQUIRE(note);
    CHECK(note->palette().color(QPalette::WindowText) == errorTextColor(gui.window.controlPanel()->palette()));

    struct LightAgain // for the tests after this one, however this one ends
    {
        ~LightAgain() { applyPalette(false); }
    } lightAgain;
    applyPalette(true);
    settle();
    const QColor dark = errorTextColor(gui.window.controlPanel()->palette());
    CHECK(note->palette().color(QPalette::WindowText) == dark);
    micro->setValue(3); // a second note, shown under the dark palette
    settle();
    QLabel *second = noteLabel(gui.control(QStringLiteral("Global batch")));
    REQUIRE(second);
    CHECK(second->palette().color(QPalette::WindowText) == dark);
    applyPalette(false);
    settle();
    CHECK(note->palette().color(QPalette::WindowText) == errorTextColor(gui.window.controlPanel()->palette()));
    CHECK(note->palette().color(QPalette::WindowText) != dark);
}

TEST_CASE("Keep the GPU count: t and p move d, or the panel says why they cannot", "[ui][controls]")
{
    TestWindow gui; // Llama 3 70B on 128 GPUs: t 8, p 4, d 4
    ControlPanel *panel = gui.window.controlPanel();
    QSpinBox *t = gui.control<QSpinBox>(QStringLiteral("Tensor (t)"));
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    REQUIRE(gui.document.config().parallelism.gpus() == 128);
    // Off, as before: t 4 halves the count.
    t->setValue(4);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.gpus() == 64);
    gui.document.undoStack()->undo();
    QApplication::processEvents();
    REQUIRE(gui.document.config().parallelism.gpus() == 128);

    panel->keepGpusBox()->setChecked(true);
    t->setValue(4); // 4 · 4 · d = 128: d = 8
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.data_parallel_size == 8);
    CHECK(gui.document.config().parallelism.gpus() == 128);
    CHECK(panel->keepGpusNote().isEmpty());
    p->setValue(2); // 4 · 2 · d = 128: d = 16
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.data_parallel_size == 16);
    // p = 3: 4 · 3 = 12 does not divide 128; d stays 16 (192 GPUs) and the note names the p that keep 128.
    p->setValue(3);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.data_parallel_size == 16);
    const QString why = panel->keepGpusNote();
    INFO(why.toStdString());
    CHECK(why.contains(QStringLiteral("runs on 192 GPUs")));
    CHECK(why.contains(QStringLiteral("p = 2 or 4 keeps 128")));
    if (qEnvironmentVariableIsSet("MEMLEDGER_KEEPGPUS_PNG")) { // the note as a user sees it
        gui.show();
        gui.window.grab().save(qEnvironmentVariable("MEMLEDGER_KEEPGPUS_PNG"));
    }
    // p = 4 aims at 128 again, not at the 192 the step before left: d = 8, and the note goes.
    p->setValue(4);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.gpus() == 128);
    CHECK(gui.document.config().parallelism.data_parallel_size == 8);
    CHECK(panel->keepGpusNote().isEmpty());
    // d itself is a new count, the user's.
    gui.control<QSpinBox>(QStringLiteral("Data (d)"))->setValue(16);
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.gpus() == 256);
    t->setValue(8); // 8 · 4 · d = 256: d = 8
    QApplication::processEvents();
    CHECK(gui.document.config().parallelism.data_parallel_size == 8);
}

TEST_CASE("A split that does not divide the layers suggests what the panel can do, and the layout editor does it",
          "[ui][controls]")
{
    TestWindow gui; // Llama 3 70B: 80 layers, a built-in model whose depth the panel cannot change
    QSpinBox *p = gui.control<QSpinBox>(QStringLiteral("Pipeline (p)"));
    auto *layout = gui.control<QLineEdit>(QStringLiteral("Pipeline layout"));
    CHECK(layout->text().isEmpty()); // the even split
    p->setValue(3);
    QApplication::processEvents();
    REQUIRE(gui.document.isStale());
    const QString note = gui.window.controlPanel()->noteOf(p);
    INFO(note.toStdString());
    CHECK_FALSE(note.contains(QStringLiteral("use num_layers")));
    CHECK(note.contains(QStringLiteral("pipeline_layout [27, 27, 26]")));

    // Typed as the note writes it, applied on Return: three stages of 27, 27 and 26 layers.
    layout->setFocus();
    layout->setText(QStringLiteral("[27, 27, 26]"));
    QTest::keyClick(layout, Qt::Key_Return);
    QApplication::processEvents();
    REQUIRE_FALSE(gui.document.isStale());
    const Ledger &ledger = gui.document.ledger();
    REQUIRE(ledger.ranks.size() == 3);
    CHECK(ledger.ranks[0].layers == 27);
    CHECK(ledger.ranks[1].layers == 27);
    CHECK(ledger.ranks[2].layers == 26);
    CHECK(layout->text() == QStringLiteral("27, 27, 26"));
    CHECK(gui.document.undoStack()->undoText().contains(QStringLiteral("27, 27, 26")));

    // Cleared: the even split again, refused with 80 layers on 3 stages; Balance fills the balanced layout in.
    layout->clear();
    QTest::keyClick(layout, Qt::Key_Return);
    QApplication::processEvents();
    CHECK(gui.document.isStale());
    auto *balance = gui.window.controlPanel()->findChild<QToolButton *>(QStringLiteral("balanceLayout"));
    REQUIRE(balance != nullptr);
    balance->click();
    QApplication::processEvents();
    CHECK_FALSE(gui.document.isStale());
    CHECK(gui.document.config().parallelism.pipeline_layout == std::vector<std::int64_t>{27, 27, 26});
}
