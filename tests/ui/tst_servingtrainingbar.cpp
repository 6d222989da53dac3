// SPDX-License-Identifier: MIT
// The serving-vs-training strip over the memory charts (seed 001): its
// sentence names computeInference's and the ledger's numbers, it follows the
// document, and the KV cache has a color no training category has.
#include <QApplication>
#include <QFontMetrics>
#include <QImage>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/serving/inference.h"
#include "testwindow.h"
#include "ui/categorycolors.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/servingtrainingbar.h"

#include <numeric>

using memledger::Bytes;
using memledger::Config;
using memledger::ui::Document;
using memledger::ui::ServingTrainingBar;
using namespace memledger::test;

namespace {

QString gb(Bytes bytes)
{
    return QString::fromStdString(memledger::formatGB(static_cast<double>(bytes)));
}

} // namespace

TEST_CASE("Serving vs training: the sentence names the core's numbers", "[ui][inference]")
{
    Document document;
    ServingTrainingBar bar(&document);
    CHECK(bar.text().isEmpty());
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    const memledger::InferenceLedger inference = memledger::computeInference(document.config());
    const QString text = bar.text();
    CHECK(text.contains(gb(inference.peak_bytes) + QStringLiteral(" per GPU")));
    CHECK(text.contains(QStringLiteral("training this plan needs ") + gb(document.ledger().peak_bytes)));
    CHECK(text.startsWith(QStringLiteral("Serving %1 × ").arg(inference.settings.batch_size)));
    // The bars are the peak ranks' device bytes, category by category.
    const std::vector<Bytes> serving = bar.servingBytes();
    CHECK(std::accumulate(serving.begin(), serving.end(), Bytes{0}) == inference.peak_bytes);
    const std::vector<Bytes> training = bar.trainingBytes();
    CHECK(std::accumulate(training.begin(), training.end(), Bytes{0}) == document.ledger().peak_bytes);
    CHECK(bar.toolTip().contains(QStringLiteral("KV cache")));
    CHECK(bar.toolTip().contains(QStringLiteral("Optimizer states")));
}

TEST_CASE("Serving vs training: follows the document's configuration", "[ui][inference]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    ServingTrainingBar bar(&document);
    const QString before = bar.text();
    Config config = document.config();
    memledger::InferenceConfig serving = memledger::resolvedInference(config);
    serving.batch_size = 32;
    config.inference = serving;
    document.setConfig(config);
    REQUIRE(document.hasLedger());
    const memledger::InferenceLedger inference = memledger::computeInference(config);
    CHECK(bar.text() != before);
    CHECK(bar.text().contains(QStringLiteral("Serving 32 × ")));
    CHECK(bar.text().contains(gb(inference.peak_bytes) + QStringLiteral(" per GPU")));
}

TEST_CASE("Serving vs training: the KV cache's color is its own", "[ui][inference]")
{
    for (bool dark : {false, true}) {
        const QColor kv = memledger::ui::kvCacheColor(dark);
        CHECK(memledger::ui::inferenceCategoryColor(memledger::InferenceCategory::KvCache, dark) == kv);
        for (memledger::Category c : memledger::kCategories)
            CHECK(memledger::ui::categoryColor(c) != kv);
        for (memledger::InferenceCategory c : memledger::kInferenceCategories)
            if (c != memledger::InferenceCategory::KvCache)
                CHECK(memledger::ui::inferenceCategoryColor(c, dark) != kv);
    }
}

TEST_CASE("Serving vs training: the sentence wraps instead of eliding, both numbers whole", "[ui][inference]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    ServingTrainingBar bar(&document);
    const QFontMetrics fm = bar.fontMetrics();
    const int whole = fm.horizontalAdvance(bar.text());
    bar.resize(whole + 10, bar.sizeHint().height());
    CHECK(bar.lines() == QStringList{bar.text()});
    const int oneLine = bar.sizeHint().height();

    bar.resize(whole * 2 / 3, bar.sizeHint().height());
    const QStringList lines = bar.lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines.join(QLatin1Char(' ')) == bar.text());
    CHECK(lines[0].endsWith(QStringLiteral("per GPU;")));
    CHECK(lines[1].startsWith(QStringLiteral("training this plan needs")));
    for (const QString &line : lines)
        CHECK(fm.horizontalAdvance(line) <= bar.width());
    // One more text line of height, so the bars stay clear of the sentence.
    CHECK(bar.sizeHint().height() == oneLine + fm.height());
}

TEST_CASE("Serving vs training: the sentence reads whole in a 1024-pixel window", "[ui][inference]")
{
    ShownWindow gui(memledger::kDefaultScenario, QSize(1024, 768));
    QApplication::processEvents(); // the strip's new height, asked for once its width was known
    auto *bar = gui.window.findChild<ServingTrainingBar *>();
    REQUIRE(bar != nullptr);
    REQUIRE(bar->isVisible());
    const QFontMetrics fm = bar->fontMetrics();
    const QStringList lines = bar->lines();
    CHECK(lines.join(QLatin1Char(' ')) == bar->text());
    for (const QString &line : lines) {
        INFO(line.toStdString() << " in " << bar->width() << " px");
        CHECK(fm.horizontalAdvance(line) <= bar->width());
        CHECK(fm.elidedText(line, Qt::ElideRight, bar->width()) == line);
    }
    // The strip is tall enough for every line above its two bars.
    CHECK(bar->height() >= bar->sizeHint().height());
    CHECK(bar->sizeHint().height() >= int(lines.size()) * fm.height() + 2 * std::max(fm.height(), 12));
}

TEST_CASE("Serving vs training: repainted only when what it shows changed", "[ui][inference][bench]")
{
    // Issue 16, one frame per move: the strip repainted on every edit (6.5 % of the bench's instructions),
    // though most edits change neither peak.
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    ServingTrainingBar bar(&document);
    bar.resize(700, bar.sizeHint().height());
    bar.show();
    for (int pass = 0; pass < 4; ++pass)
        QApplication::processEvents();
    PaintCount count;
    bar.installEventFilter(&count);

    // The same plan again: a new ledger and problems list, the same numbers.
    document.setConfig(document.config());
    for (int pass = 0; pass < 4; ++pass)
        QApplication::processEvents();
    CHECK(count.paints == 0);

    // The global batch changes the step, not the memory of either workload.
    Config config = document.config();
    config.training.global_batch_size *= 2;
    document.setConfig(config);
    for (int pass = 0; pass < 4; ++pass)
        QApplication::processEvents();
    CHECK(count.paints == 0);

    // Twice the micro-batch: more activations, a new training peak.
    const QString before = bar.text();
    config.training.micro_batch_size *= 2;
    document.setConfig(config);
    for (int pass = 0; pass < 4; ++pass)
        QApplication::processEvents();
    CHECK(bar.text() != before);
    CHECK(count.paints > 0);

    // An error dims it (the last valid plan's numbers).
    count.paints = 0;
    config.parallelism.tensor_model_parallel_size = 3;
    document.setConfig(config);
    for (int pass = 0; pass < 4; ++pass)
        QApplication::processEvents();
    REQUIRE(document.isStale());
    CHECK(count.paints > 0);
}

TEST_CASE("Serving vs training: a strip shown before is drawn from what was kept", "[ui][inference][bench]")
{
    // Issue 16: a control moved and moved back (or an undo) shows the strip as it was; its text is not
    // shaped and drawn again. (grab() paints the widget.)
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    ServingTrainingBar bar(&document);
    bar.resize(700, bar.sizeHint().height());
    const Config plan = document.config();
    const QImage first = bar.grab().toImage();
    const int drawn = bar.drawn();
    CHECK(drawn == 1);
    Config doubled = plan;
    doubled.training.micro_batch_size *= 2;
    document.setConfig(doubled);
    CHECK(bar.grab().toImage() != first);
    CHECK(bar.drawn() == drawn + 1);
    document.setConfig(plan);
    CHECK(bar.grab().toImage() == first);
    CHECK(bar.drawn() == drawn + 1);
}

TEST_CASE("Serving vs training: the HBM line never runs through a total", "[ui][inference]")
{
    // A talk slide (GPT-3 175B, t = 8 with sequence parallelism: 81.62 of 85.90 GB) wrote the training
    // total across the HBM line, "8|1.62 GB": a bar that ends just short of the line has its total past it.
    Document document;
    REQUIRE(document.loadBuiltinScenario("gpt-3-175b-64gpus-tp-only"));
    Config plan = document.config();
    plan.parallelism.sequence_parallel = true;
    document.setConfig(plan);
    REQUIRE(document.hasLedger());
    ServingTrainingBar bar(&document);
    int movedPast = 0;
    for (int width = 360; width <= 1600; width += 7) {
        bar.resize(width, bar.sizeHint().height());
        INFO("width " << width);
        for (int row : {0, 1}) {
            const ServingTrainingBar::RowGeometry g = bar.rowGeometry(row);
            CHECK_FALSE((g.capacityX >= g.total.left() - 1 && g.capacityX <= g.total.right() + 1));
            CHECK_FALSE(g.hbm.intersects(g.total));
            if (row == 1 && g.total.left() > g.capacityX)
                movedPast += 1;
        }
        CHECK(bar.rowGeometry(1).hbm.isEmpty()); // named once, on the serving row
    }
    CHECK(movedPast > 0); // the case arises: 81.62 GB ends within a total's width of the line
}
