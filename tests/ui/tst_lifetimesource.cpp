// SPDX-License-Identifier: MIT
// The lifetimes view's Training | Inference switch (seed 001): a served
// forward drawn from core/serving/inferencetimeline.h in the same view, the KV cache
// in its own color, a caption saying which, and optionally on the training
// iteration's time scale.
#include <QApplication>
#include <QComboBox>
#include <QImage>
#include <QListWidget>
#include <QToolButton>

#include "catchqt.h"
#include "core/base/units.h"
#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "core/serving/inference.h"
#include "core/serving/inferencetimeline.h"
#include "core/time/steptime.h"
#include "core/timeline/steptimegap.h"
#include "core/view/gantt.h"
#include "testwindow.h"
#include "ui/categorycolors.h"
#include "ui/document.h"
#include "ui/lifetimesource.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/planheader.h"
#include "ui/qtstring.h"
#include "ui/steptimebar.h"
#include "ui/talkmode.h"

#include <cmath>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

QStringList legendLabels(const LifetimeView &view)
{
    QStringList labels;
    for (const LifetimeView::LegendEntry &e : view.legend())
        labels << e.label;
    return labels;
}

} // namespace

TEST_CASE("Lifetimes: the switch draws a served prefill and decode step from core", "[ui][lifetimes][inference]")
{
    ShownWindow gui;
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    QApplication::processEvents();
    LifetimeView *view = gui.window.lifetimes();
    auto *source = gui.window.findChild<LifetimeSource *>();
    auto *combo = gui.window.findChild<QComboBox *>(QStringLiteral("lifetimesSource"));
    REQUIRE(source != nullptr);
    REQUIRE(combo != nullptr);
    REQUIRE(combo->count() == 3);
    const double training = gui.document.timeline().step_time;
    CHECK(view->timeline().step_time == training);
    CHECK(view->caption().startsWith(QStringLiteral("training iteration")));
    CHECK_FALSE(legendLabels(*view).contains(QStringLiteral("KV cache")));

    combo->setCurrentIndex(1);
    QApplication::processEvents();
    const Timeline prefill = simulateInferenceForward(gui.document.ledgerConfig(), ServingPass::Prefill);
    CHECK(view->timeline().step_time == prefill.step_time);
    CHECK(view->timeline().ranks.size() == prefill.ranks.size());
    CHECK(view->caption().startsWith(QStringLiteral("serving prefill")));
    CHECK(view->timeAxis().end == Approx(prefill.step_time));
    QStringList labels = legendLabels(*view);
    CHECK(labels.front().contains(view->caption()));
    CHECK(labels.contains(QStringLiteral("KV cache")));
    CHECK(labels.contains(QStringLiteral("Forward")));
    CHECK_FALSE(labels.contains(QStringLiteral("Backward")));
    CHECK_FALSE(labels.contains(QStringLiteral("Optimizer step")));

    // Layer 0's KV cache lives from the layer's start to the end of the forward,
    // in the KV cache's own color (its working sets cover only its left end).
    const RankTimeline &rank = view->timeline().ranks[std::size_t(view->rank())];
    int kv = -1;
    for (std::size_t i = 0; i < rank.lifetimes.size() && kv < 0; ++i)
        if (rank.lifetimes[i].kind == LifetimeKind::KvCache)
            kv = int(i);
    REQUIRE(kv >= 0);
    const QRectF bar = view->barRect(kv);
    REQUIRE_FALSE(bar.isEmpty());
    const QImage image = view->grab().toImage();
    const QPointF probe(bar.left() + bar.width() * 0.75, bar.center().y());
    CHECK(image.pixelColor(probe.toPoint()) == kvCacheColor(false));

    combo->setCurrentIndex(2);
    QApplication::processEvents();
    const Timeline decode = simulateInferenceForward(gui.document.ledgerConfig(), ServingPass::Decode);
    CHECK(view->timeline().step_time == decode.step_time);
    CHECK(decode.step_time < prefill.step_time);
    CHECK(view->caption().startsWith(QStringLiteral("serving decode step")));

    combo->setCurrentIndex(0);
    QApplication::processEvents();
    CHECK(view->timeline().step_time == training);
    CHECK(view->timeSpan() == 0);
    CHECK(legendLabels(*view).contains(QStringLiteral("Optimizer step")));
}

TEST_CASE("Lifetimes: a served forward on the training iteration's time scale is visibly short",
          "[ui][lifetimes][inference]")
{
    ShownWindow gui;
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    QApplication::processEvents();
    LifetimeView *view = gui.window.lifetimes();
    auto *source = gui.window.findChild<LifetimeSource *>();
    REQUIRE(source != nullptr);
    source->setSource(LifetimeSource::Source::Prefill);
    QApplication::processEvents();
    const double forward = view->timeline().step_time;
    const double ownWidth = view->barRect(0).width(); // the weights: alive through the forward

    source->setTrainingScale(true);
    QApplication::processEvents();
    const double iteration = gui.document.timeline().step_time;
    REQUIRE(iteration > forward);
    CHECK(view->timeSpan() == iteration);
    CHECK(view->timeAxis().end == Approx(iteration));
    CHECK(view->caption().contains(QStringLiteral("training iteration")));
    // The same bar, now the forward's share of the iteration's width.
    CHECK(view->barRect(0).width() == Approx(ownWidth * forward / iteration).margin(2));
}

TEST_CASE("Talk mode: the seed-001 deck opens its lifetimes slides on the served and the trained forward",
          "[ui][lifetimes][talk]")
{
    ShownWindow gui(kDefaultScenario, QSize(1024, 768));
    const DeckLoadResult loaded = deckFromText(findBuiltin("decks", "seed-001")->text, "seed-001");
    REQUIRE(loaded.deck.has_value());
    gui.window.talkMode()->start(*loaded.deck);
    QApplication::processEvents();
    CHECK(gui.window.views()->currentIndex() == 0); // the memory view: served vs trained bars
    // The slide's notes give their room to the charts during the talk.
    auto *problems = gui.window.findChild<QListWidget *>();
    REQUIRE(problems != nullptr);
    CHECK_FALSE(problems->isVisible());
    gui.window.talkMode()->step(1);
    QApplication::processEvents();
    CHECK(gui.window.views()->currentIndex() == kLifetimesTab);
    auto *source = gui.window.findChild<LifetimeSource *>();
    REQUIRE(source != nullptr);
    CHECK(source->source() == LifetimeSource::Source::Prefill);
    CHECK(gui.window.lifetimes()->caption().startsWith(QStringLiteral("serving prefill")));
    CHECK(gui.window.lifetimes()->timeline().step_time
          == simulateInferenceForward(gui.document.ledgerConfig(), ServingPass::Prefill).step_time);
    gui.window.talkMode()->step(1);
    QApplication::processEvents();
    CHECK(source->source() == LifetimeSource::Source::Training);
    CHECK(gui.window.lifetimes()->caption().startsWith(QStringLiteral("training iteration")));
    gui.window.talkMode()->step(1);
    QApplication::processEvents();
    CHECK(gui.window.views()->currentIndex() == 0);
    gui.window.talkMode()->step(-2); // back to the served slide, and leave the talk there
    QApplication::processEvents();
    CHECK(source->source() == LifetimeSource::Source::Prefill);
    gui.window.talkMode()->stop();
    QApplication::processEvents();
    CHECK(problems->isVisible());
    // The user's view and source come back: the Memory view, training's lifetimes and header.
    CHECK(gui.window.views()->currentIndex() == 0);
    CHECK(source->source() == LifetimeSource::Source::Training);
    CHECK(gui.window.findChild<PlanHeader *>()->plainText().contains(QStringLiteral("Peak: rank")));
}

TEST_CASE("Lifetimes: beside a served forward the header gives the serving peak, training's next to it",
          "[ui][lifetimes][inference]")
{
    ShownWindow gui;
    auto *header = gui.window.findChild<PlanHeader *>();
    auto *stepTime = gui.window.findChild<StepTimeBar *>();
    REQUIRE(header != nullptr);
    REQUIRE(stepTime != nullptr);
    CHECK(header->plainText().contains(QStringLiteral("Peak: rank")));
    CHECK(stepTime->isVisible());

    gui.window.views()->setCurrentIndex(kLifetimesTab);
    gui.window.findChild<LifetimeSource *>()->setSource(LifetimeSource::Source::Prefill);
    QApplication::processEvents();
    // The numbers are core's: the inference ledger's peak, and the training ledger's beside it.
    const InferenceLedger serving = computeInference(gui.document.ledgerConfig());
    const QString text = header->plainText();
    CHECK(text.contains(
        QStringLiteral("Serving peak: rank %1, %2").arg(serving.peak_rank).arg(bytesText(serving.peak_bytes))));
    CHECK(text.contains(QStringLiteral("training this plan: %1").arg(bytesText(gui.document.ledger().peak_bytes))));
    CHECK_FALSE(text.contains(QStringLiteral("Peak: rank")));
    CHECK_FALSE(stepTime->isVisible()); // a training step time does not describe a served forward
    auto *resetZoom = gui.window.findChild<QToolButton *>(QStringLiteral("resetZoom"));
    REQUIRE(resetZoom != nullptr);
    CHECK(resetZoom->text() == QStringLiteral("Whole forward"));

    // Another view describes the training plan again.
    gui.window.views()->setCurrentIndex(0);
    QApplication::processEvents();
    CHECK(header->plainText().contains(QStringLiteral("Peak: rank")));
    CHECK(stepTime->isVisible());
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    gui.window.findChild<LifetimeSource *>()->setSource(LifetimeSource::Source::Training);
    QApplication::processEvents();
    CHECK(header->plainText().contains(QStringLiteral("Peak: rank")));
    CHECK(resetZoom->text() == QStringLiteral("Whole iteration"));
}

TEST_CASE("Lifetimes: the simulated iteration says how it compares to the header's step-time model",
          "[ui][lifetimes][steptime]")
{
    // The header's "≈ … s / step" is estimateStepTime's; the Lifetimes view
    // draws the simulated iteration. On the DualPipe scenario they differ by a
    // few per cent (the simulation waits on uneven neighbours, core/timeline/steptimegap.h):
    // the caption names the model's figure and the title's tooltip says why.
    ShownWindow gui("deepseek-v3-2048xh100-dualpipe");
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    QApplication::processEvents();
    const LifetimeView *view = gui.window.lifetimes();
    const Config &config = gui.document.ledgerConfig();
    const StepTimeGap gap = stepTimeGap(config, estimateStepTime(config), gui.document.timeline());
    REQUIRE(std::abs(gap.relative()) > 0.01);
    const QString model = toQString(formatSeconds(estimateStepTime(config).total));
    CHECK(view->caption().startsWith(QStringLiteral("training iteration, ")
                                     + toQString(formatSeconds(gui.document.timeline().step_time))));
    CHECK(view->caption().contains(QStringLiteral("step-time model ") + model));
    CHECK(view->captionToolTip() == toQString(gap.explanation));
    // The tooltip is the title's: over the legend's first entry.
    const std::vector<LifetimeView::LegendEntry> legend = view->legend();
    REQUIRE_FALSE(legend.empty());
    CHECK(legend.front().label.contains(view->caption()));
    CHECK(view->toolTipAt(legend.front().rect.center()) == toQString(gap.explanation));

    // A plan whose two figures agree says so in the same place.
    REQUIRE(gui.document.loadBuiltinScenario(kDefaultScenario));
    QApplication::processEvents();
    CHECK(view->caption().contains(QStringLiteral("within 1 %")));
}
