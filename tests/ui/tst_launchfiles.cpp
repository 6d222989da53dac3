// SPDX-License-Identifier: MIT
// File > Import launch config and File > Export > As Megatron-LM arguments /
// As torchtitan TOML / As DeepSpeed JSON (issue 33): the dialogs show what the
// core import and export give, an applied import is one undo step, an error
// blocks Apply, and the dialogs read in the dark palette.
#include <QAbstractButton>
#include <QAbstractItemView>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QUrl>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/launchexport.h"
#include "core/formats/preset.h"
#include "testwindow.h"
#include "ui/launchdialogs.h"
#include "ui/launchfiles.h"
#include "ui/theme.h"

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

const QString kLaunchData = QStringLiteral(MEMLEDGER_TEST_DATA "/launch/");

bool anyLineContains(const QStringList &lines, const QString &prefix, const QString &text)
{
    return std::any_of(lines.begin(), lines.end(),
                       [&](const QString &l) { return l.startsWith(prefix) && l.contains(text); });
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    return file.readAll();
}

} // namespace

TEST_CASE("A Megatron-LM launch imported through the dialog sets the plan from the file and one undo restores it",
          "[ui][launch]")
{
    TestWindow gui;
    const Config before = gui.document.config();
    const int steps = gui.document.undoStack()->count();
    LaunchFiles *launch = gui.window.launchFiles();
    QStringList lines;
    launch->setImportRunner([&](LaunchImportDialog &d) {
        lines = d.reportLines();
        CHECK_FALSE(d.modelCombo()->isEnabled()); // a Megatron-LM launch names its model
        REQUIRE(d.applyButton()->isEnabled());
        d.applyButton()->click();
        return d.result();
    });
    REQUIRE(launch->importLaunch(kLaunchData + QStringLiteral("megatron-llama3-8b-fp8.sh")));
    settle();

    // train_llama3_8b_h100_fp8.sh's own numbers; its world size is GPUS_PER_NODE=8 × NUM_NODES=1.
    const Config &c = gui.document.config();
    CHECK(c.model.num_layers == 32);
    CHECK(c.model.hidden_size == 4096);
    CHECK(c.model.ffn_hidden_size == 14336);
    CHECK(c.training.seq_length == 8192);
    CHECK(c.training.micro_batch_size == 1);
    CHECK(c.training.global_batch_size == 128);
    CHECK(c.parallelism.tensor_model_parallel_size == 1);
    CHECK(c.parallelism.gpus() == 8);
    CHECK(anyLineContains(lines, QStringLiteral("Unused: "), QStringLiteral("--lr")));
    CHECK_FALSE(anyLineContains(lines, QStringLiteral("Error: "), QString()));

    CHECK(gui.document.undoStack()->count() == steps + 1);
    gui.document.undoStack()->undo();
    settle();
    CHECK(gui.document.config() == before);
}

TEST_CASE("A bad launch file shows the error naming the argument, Apply stays disabled and nothing changes",
          "[ui][launch]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    // 32 heads do not split over 3 tensor-parallel ranks.
    const QString path
        = writeFile(dir, QStringLiteral("bad.sh"),
                    "torchrun --nproc_per_node 6 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                    "--num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048 --vocab-size 32000 "
                    "--micro-batch-size 1 --tensor-model-parallel-size 3\n");
    TestWindow gui;
    const Config before = gui.document.config();
    const int steps = gui.document.undoStack()->count();
    LaunchFiles *launch = gui.window.launchFiles();
    launch->setImportRunner([&](LaunchImportDialog &d) {
        const QStringList lines = d.reportLines();
        INFO(lines.join(QLatin1Char('\n')).toStdString());
        CHECK(anyLineContains(lines, QStringLiteral("Error: "), QStringLiteral("--tensor-model-parallel-size")));
        CHECK_FALSE(d.applyButton()->isEnabled());
        d.applyButton()->click(); // disabled: does nothing
        return d.result();
    });
    CHECK_FALSE(launch->importLaunch(path));
    settle();
    CHECK(gui.document.config() == before);
    CHECK(gui.document.undoStack()->count() == steps);
}

TEST_CASE("A DeepSpeed config takes the current plan model and GPU count unless another model is chosen",
          "[ui][launch]")
{
    TestWindow gui;
    const Config before = gui.document.config();
    LaunchImportDialog d(before);
    REQUIRE(d.loadFile(kLaunchData + QStringLiteral("hf-ds-config-zero2.json")));
    INFO(d.reportLines().join(QLatin1Char('\n')).toStdString());
    CHECK(d.modelCombo()->isEnabled());
    REQUIRE(d.config());
    CHECK(d.config()->model == before.model);
    CHECK(d.config()->parallelism.gpus() == before.parallelism.gpus());
    CHECK(anyLineContains(d.reportLines(), QStringLiteral("Note: "), QStringLiteral("current plan")));

    const std::string other = builtinNames("models").front();
    d.setModel(QString::fromStdString(other));
    REQUIRE(d.config());
    CHECK(d.config()->model == presetFromText(findBuiltin("models", other)->text, other).config->model);
}

TEST_CASE("The export dialogs show the core export of the plan and Copy puts it on the clipboard", "[ui][launch]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    TestWindow gui;
    const Config &plan = gui.document.config();
    LaunchFiles *launch = gui.window.launchFiles();
    for (LaunchFormat format : {LaunchFormat::Megatron, LaunchFormat::Torchtitan, LaunchFormat::DeepSpeed}) {
        const QString expected = QString::fromStdString(exportLaunch(plan, format).text);
        int runs = 0;
        launch->setExportRunner([&](LaunchExportDialog &d) {
            ++runs;
            CHECK(d.text() == expected);
            d.copyButton()->click();
            CHECK(QApplication::clipboard()->text() == expected);
            const QString path = dir.filePath(QStringLiteral("out.txt"));
            REQUIRE(d.saveTo(path));
            CHECK(readAll(path) == expected.toUtf8());
            return 0;
        });
        launch->exportLaunch(format);
        CHECK(runs == 1);
        if (format == LaunchFormat::Megatron)
            CHECK(expected.contains(
                QStringLiteral("--tensor-model-parallel-size %1").arg(plan.parallelism.tensor_model_parallel_size)));
        if (format == LaunchFormat::Torchtitan)
            CHECK(expected.contains(
                QStringLiteral("tensor_parallel_degree = %1").arg(plan.parallelism.tensor_model_parallel_size)));
    }
}

TEST_CASE("A dropped launch script or DeepSpeed config opens the import dialog and a preset does not",
          "[ui][launch][drop]")
{
    TestWindow gui;
    LaunchFiles *launch = gui.window.launchFiles();
    QString loaded;
    launch->setImportRunner([&](LaunchImportDialog &d) {
        loaded = d.textEdit()->toPlainText();
        return 0;
    });
    const QString script = kLaunchData + QStringLiteral("megatron-mixtral-8x7b.sh");
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(script)});
    // Qt sends a drop to the widget that accepted the drag's entry.
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&gui.window, &enter);
    CHECK(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&gui.window, &drop);
    CHECK(drop.isAccepted());
    CHECK(loaded == QString::fromUtf8(readAll(script)));

    const auto carries = [](const QString &path) {
        QMimeData m;
        m.setUrls({QUrl::fromLocalFile(path)});
        return !LaunchFiles::launchFileFromMimeData(&m).isEmpty();
    };
    CHECK(carries(kLaunchData + QStringLiteral("dse-zero-infinity.json")));
    CHECK(carries(kLaunchData + QStringLiteral("torchtitan-202412-llama3_8b.toml")));
    CHECK_FALSE(carries(QStringLiteral(MEMLEDGER_TEST_DATA "/reference_cases.json")));
    CHECK_FALSE(carries(QStringLiteral(MEMLEDGER_TEST_DATA "/measured/small-plain-full/trace.json.gz")));
    CHECK_FALSE(carries(QStringLiteral(MEMLEDGER_TEST_DATA "/../../presets/scenarios/gpt-3-175b-64gpus-tp-only.json")));
}

TEST_CASE("The launch dialogs fit a 1024x768 screen", "[ui][launch][size]")
{
    TestWindow gui;
    LaunchImportDialog importDialog(gui.document.config());
    REQUIRE(importDialog.loadFile(kLaunchData + QStringLiteral("megatron-gpt3-175b.sh")));
    LaunchExportDialog exportDialog(gui.document.config(), LaunchFormat::DeepSpeed);
    for (QDialog *d : {static_cast<QDialog *>(&importDialog), static_cast<QDialog *>(&exportDialog)}) {
        // Beside a taskbar and the title bar: 740 of 768 rows.
        CHECK(d->minimumSizeHint().width() <= 1024);
        CHECK(d->minimumSizeHint().height() <= 740);
        CHECK(d->width() <= 1024);
        CHECK(d->height() <= 740);
    }
}

// Not run by default: renders the dialogs to PNGs in MEMLEDGER_SHOT_DIR (or
// the temporary folder) to look at them as a user does.
TEST_CASE("Launch dialog screenshots", "[.][ui][launch][screenshot]")
{
    const QString folder = qEnvironmentVariableIsSet("MEMLEDGER_SHOT_DIR") ? qEnvironmentVariable("MEMLEDGER_SHOT_DIR")
                                                                           : QDir::tempPath();
    TestWindow gui;
    const auto shoot = [&](QDialog &d, const QString &name) {
        d.show();
        settle();
        REQUIRE(d.grab().save(folder + QLatin1Char('/') + name));
    };
    LaunchImportDialog good(gui.document.config());
    REQUIRE(good.loadFile(kLaunchData + QStringLiteral("megatron-gpt3-175b.sh")));
    shoot(good, QStringLiteral("launch-import-megatron.png"));
    LaunchImportDialog ds(gui.document.config());
    REQUIRE(ds.loadFile(kLaunchData + QStringLiteral("hf-ds-config-zero3.json")));
    shoot(ds, QStringLiteral("launch-import-deepspeed.png"));
    LaunchImportDialog bad(gui.document.config());
    bad.setText(QStringLiteral("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 "
                               "--max-position-embeddings 2048 --vocab-size 32000 --micro-batch-size 1 "
                               "--tensor-model-parallel-size 3"));
    shoot(bad, QStringLiteral("launch-import-bad.png"));
    LaunchExportDialog exported(gui.document.config(), LaunchFormat::Megatron);
    shoot(exported, QStringLiteral("launch-export-megatron.png"));
    LaunchImportDialog titan(gui.document.config());
    REQUIRE(titan.loadFile(kLaunchData + QStringLiteral("torchtitan-202509-llama3_405b.toml")));
    shoot(titan, QStringLiteral("launch-import-torchtitan.png"));
    LaunchExportDialog titanOut(gui.document.config(), LaunchFormat::Torchtitan);
    shoot(titanOut, QStringLiteral("launch-export-torchtitan.png"));
    // The same in the dark palette (memledger --dark, View > Dark palette).
    gui.window.setDark(true, false);
    settle();
    LaunchImportDialog darkBad(gui.document.config());
    darkBad.setText(bad.textEdit()->toPlainText());
    shoot(darkBad, QStringLiteral("launch-import-bad-dark.png"));
    LaunchImportDialog darkTitan(gui.document.config());
    REQUIRE(darkTitan.loadFile(kLaunchData + QStringLiteral("torchtitan-202509-llama3_405b.toml")));
    shoot(darkTitan, QStringLiteral("launch-import-torchtitan-dark.png"));
    LaunchExportDialog darkOut(gui.document.config(), LaunchFormat::Torchtitan);
    shoot(darkOut, QStringLiteral("launch-export-torchtitan-dark.png"));
    gui.window.setDark(false, false);
    settle();
}

TEST_CASE("File Export holds the launch exports before the PNG scale", "[ui][launch][menu]")
{
    TestWindow gui;
    QStringList texts;
    for (QAction *top : gui.window.menuBar()->actions()) {
        if (!top->menu())
            continue;
        for (QAction *a : top->menu()->actions())
            if (a->menu() && a->menu()->title() == QStringLiteral("&Export"))
                for (QAction *e : a->menu()->actions())
                    texts << e->text();
    }
    INFO(texts.join(QLatin1Char('|')).toStdString());
    const qsizetype megatron = texts.indexOf(QStringLiteral("As Megatron-LM arguments…"));
    const qsizetype torchtitan = texts.indexOf(QStringLiteral("As torchtitan TOML…"));
    const qsizetype deepSpeed = texts.indexOf(QStringLiteral("As DeepSpeed JSON…"));
    REQUIRE(megatron >= 0);
    CHECK(torchtitan == megatron + 1);
    CHECK(deepSpeed == megatron + 2);
    CHECK(texts.last() == QStringLiteral("PNG &scale"));
}

TEST_CASE("A torchtitan TOML imported through the dialog maps its flavor and degrees and names unused keys",
          "[ui][launch][torchtitan]")
{
    TestWindow gui;
    const Config before = gui.document.config();
    LaunchImportDialog d(before);
    REQUIRE(d.loadFile(kLaunchData + QStringLiteral("torchtitan-202509-llama3_8b.toml")));
    const QStringList lines = d.reportLines();
    INFO(lines.join(QLatin1Char('\n')).toStdString());
    CHECK(d.modelCombo()->isEnabled()); // a chosen model replaces the flavor
    REQUIRE(d.config());
    // flavor = "8B": the built-in Llama 3.1 8B; data_parallel_shard_degree = -1 over the current plan's GPUs.
    CHECK(d.config()->model
          == presetFromText(findBuiltin("models", "llama-3.1-8b")->text, "llama-3.1-8b").config->model);
    CHECK(d.config()->strategy.framework == Framework::Torchtitan);
    CHECK(d.config()->parallelism.data_parallel_size == before.parallelism.gpus());
    CHECK(d.config()->parallelism.zero_stage == 3);
    CHECK(anyLineContains(lines, QStringLiteral("Note: "), QStringLiteral("current plan")));
    CHECK(anyLineContains(lines, QStringLiteral("Unused: "), QStringLiteral("optimizer.lr")));
    CHECK(d.applyButton()->isEnabled());

    // Pasted, without a file name: told from a shell script by its TOML tables.
    LaunchImportDialog pasted(before);
    pasted.setText(QString::fromUtf8(readAll(kLaunchData + QStringLiteral("torchtitan-202412-llama3_70b.toml"))));
    REQUIRE(pasted.config());
    CHECK(pasted.config()->strategy.framework == Framework::Torchtitan);
    CHECK(pasted.config()->parallelism.tensor_model_parallel_size == 8); // tensor_parallel_degree = 8
    // A schedule MemLedger does not model is an error naming the key, and blocks Apply.
    pasted.setText(QStringLiteral("[parallelism]\npipeline_parallel_degree = 2\ndata_parallel_shard_degree = 1\n"
                                  "pipeline_parallel_schedule = \"LoopedBFS\"\n"));
    CHECK_FALSE(pasted.applyButton()->isEnabled());
    CHECK(anyLineContains(pasted.reportLines(), QStringLiteral("Error: "),
                          QStringLiteral("parallelism.pipeline_parallel_schedule")));
}

TEST_CASE("The launch dialogs keep readable text in the dark palette", "[ui][launch][dark]")
{
    // Issue 33's last check: the report list, the text boxes, the labels and
    // the export's warning line against what they are drawn on, after
    // View > Dark palette (WCAG 2's 4.5:1 for normal text).
    TestWindow gui;
    gui.window.setDark(true, false);
    settle();
    LaunchImportDialog bad(gui.document.config());
    bad.setText(QStringLiteral("[parallelism]\ndata_parallel_shard_degree = 0\n"));
    LaunchExportDialog exported(gui.document.config(), LaunchFormat::Torchtitan);
    for (QDialog *d : {static_cast<QDialog *>(&bad), static_cast<QDialog *>(&exported)}) {
        d->show();
        settle();
        for (QWidget *w : d->findChildren<QWidget *>()) {
            // Inactive controls (the disabled Apply) are exempt, as WCAG exempts them.
            if (!w->isVisible() || !w->isEnabled())
                continue;
            const QPalette pal = w->palette();
            const bool field = qobject_cast<QPlainTextEdit *>(w) || qobject_cast<QAbstractItemView *>(w);
            const bool button = qobject_cast<QAbstractButton *>(w) && !qobject_cast<QCheckBox *>(w);
            const QColor text = pal.color(field    ? QPalette::Text
                                          : button ? QPalette::ButtonText
                                                   : QPalette::WindowText);
            const QColor back = pal.color(field ? QPalette::Base : button ? QPalette::Button : QPalette::Window);
            INFO(w->metaObject()->className()
                 << " " << text.name().toStdString() << " on " << back.name().toStdString());
            CHECK(ui::contrastRatio(text, back) >= 4.5);
        }
        // The dialog follows the dark palette: its window is dark.
        CHECK(d->palette().color(QPalette::Window).lightness() < 128);
    }
    CHECK(anyLineContains(bad.reportLines(), QStringLiteral("Error: "),
                          QStringLiteral("parallelism.data_parallel_shard_degree")));
    // The unchecked box of "also when the file says" shows against the window:
    // some pixel of its indicator at 3:1 or more (WCAG 2's non-text contrast).
    // Fusion's own outline was 1.1:1 on the dark window.
    auto *box = bad.findChild<QCheckBox *>();
    REQUIRE(box != nullptr);
    REQUIRE_FALSE(box->isChecked());
    QStyleOptionButton option;
    option.initFrom(box);
    const QRect indicator = box->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, box);
    const QImage image = box->grab().toImage();
    const QColor window = box->palette().color(QPalette::Window);
    double best = 1.0;
    for (int y = indicator.top(); y <= indicator.bottom(); ++y)
        for (int x = indicator.left(); x <= indicator.right(); ++x)
            best = std::max(
                best, ui::contrastRatio(image.pixelColor(x * image.devicePixelRatio(), y * image.devicePixelRatio()),
                                        window));
    CHECK(best >= 3.0);
    gui.window.setDark(false, false);
    settle();
}
