// SPDX-License-Identifier: MIT
// Reserved memory in the GUI: the document has the allocator model run off the
// GUI thread, for the plan asked last (a slider move never waits for it), and
// the lifetimes view draws it, with the runtime reserve, over the memory curve.
#include <QSignalSpy>
#include <QSpinBox>

#include "catchqt.h"
#include "core/base/units.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/lifetimesource.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/planheader.h"
#include "ui/windowheader.h"

#include <algorithm>
#include <string_view>

using namespace memledger;
using namespace memledger::test;
using namespace memledger::ui;

namespace {

Config builtinScenario(std::string_view name)
{
    const BuiltinPreset *preset = findBuiltin("scenarios", name);
    REQUIRE(preset != nullptr);
    const LoadResult loaded = presetFromText(preset->text);
    REQUIRE(loaded.config.has_value());
    return *loaded.config;
}

} // namespace

TEST_CASE("The document computes reserved memory off the GUI thread, for the plan asked last", "[ui][reserved]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario("seed-000-7b-c-offload"));
    CHECK(document.reserved() == nullptr); // asked: the worker starts
    CHECK(document.reservedPending());
    REQUIRE(document.waitForReserved(60000));
    const PlanReserved expected = simulateReserved(document.ledgerConfig(), simulateIteration(document.ledgerConfig()));
    REQUIRE(document.reserved() != nullptr);
    CHECK(document.reserved()->peak_bytes == expected.peak_bytes);
    CHECK(document.reserved()->ranks.front().curve.size() == expected.ranks.front().curve.size());
    CHECK(document.reservedCount() == 1);

    // A run of edits, each asking while the worker runs: what arrives is the last plan's, and the plans
    // in between are not all computed.
    QSignalSpy ready(&document, &Document::reservedChanged);
    Config config = document.config();
    for (const std::int64_t s : {1024, 4096, 1536, 3072}) {
        config.training.seq_length = s;
        document.setConfig(config);
        CHECK(document.reserved() == nullptr);
    }
    REQUIRE(document.waitForReserved(60000));
    const PlanReserved last = simulateReserved(config, simulateIteration(config));
    CHECK(document.reserved()->peak_bytes == last.peak_bytes);
    CHECK(ready.count() == 1);
    CHECK(document.reservedCount() <= 3); // the first plan asked, perhaps one in between, the last
    // Asked again without a change: kept.
    CHECK(document.reserved() != nullptr);
    CHECK(document.reservedCount() <= 3);
}

TEST_CASE("The lifetimes view draws reserved memory with the runtime reserve, names it and says it on hover",
          "[ui][reserved][lifetimes]")
{
    const Config config = builtinScenario("llama-3-70b-128xh100");
    const Timeline tl = simulateIteration(config);
    const PlanReserved reserved = simulateReserved(config, tl);
    LifetimeView view;
    view.resize(1400, 600);
    view.setTimeline(tl);
    CHECK_FALSE(view.reservedShown());
    const auto hasEntry = [&] {
        for (const LifetimeView::LegendEntry &e : view.legend())
            if (e.line && e.label == QStringLiteral("Reserved (allocator)"))
                return true;
        return false;
    };
    CHECK_FALSE(hasEntry());

    view.setReserved(&reserved);
    REQUIRE(view.reservedShown());
    CHECK(hasEntry());
    const QPolygonF line = view.reservedLine();
    REQUIRE(line.size() >= 2);
    // Above the allocated curve's peak: reserved holds the blocks in use, and the runtime reserve is on both.
    const RankTimeline &rank = tl.ranks[std::size_t(view.rank())];
    const RankReserved &rr = reserved.ranks[std::size_t(view.rank())];
    CHECK(rr.device_peak_bytes >= rank.peak_bytes);
    double top = line.front().y();
    for (const QPointF &p : line)
        top = std::min(top, p.y());
    CHECK(top <= view.curveArea().bottom());
    const QString tip = view.toolTipAt(view.curveArea().center());
    CHECK(tip.contains(QStringLiteral("reserved by PyTorch's allocator")));

    // Another rank draws its own; none again hides it.
    view.setRank(3);
    CHECK(view.reservedShown());
    view.setReserved(nullptr);
    CHECK_FALSE(view.reservedShown());
    CHECK_FALSE(hasEntry());
}

TEST_CASE("The Lifetimes tab gets reserved memory when the worker has it, and a served forward hides it",
          "[ui][reserved][mainwindow]")
{
    ShownWindow gui;
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    settle();
    LifetimeView *view = gui.window.lifetimes();
    REQUIRE(gui.document.waitForReserved(60000));
    settle();
    CHECK(view->reservedShown());

    // An edit: the line goes while the new plan's reserved memory is computed, and comes back with it.
    auto *microBatch = gui.control<QSpinBox>(QStringLiteral("Micro-batch (b)"));
    microBatch->setValue(microBatch->value() + 1);
    settle();
    REQUIRE(gui.document.waitForReserved(60000));
    settle();
    CHECK(view->reservedShown());
    CHECK(gui.document.reserved()->ranks.size() == view->timeline().ranks.size());

    // Served, it is not the forward's.
    auto *source = gui.window.findChild<LifetimeSource *>();
    REQUIRE(source != nullptr);
    source->setSource(LifetimeSource::Source::Prefill);
    settle();
    CHECK_FALSE(view->reservedShown());
    source->setSource(LifetimeSource::Source::Training);
    settle();
    CHECK(view->reservedShown());
}

TEST_CASE("The header's verdict is reserved memory's once the allocator model has it", "[ui][reserved][header]")
{
    // Llama-3-70B's plan: 45.30 GB allocated at the simulated peak, a little
    // more reserved by the allocator. On a device between the two, the
    // simulated peak fits and what runs out does not: the header says so,
    // with the reserved figure, when the worker's answer arrives.
    TestWindow gui("llama-3-70b-128xh100");
    REQUIRE(gui.document.waitForReserved(60000));
    settle();
    const Bytes allocated = gui.document.ledger().peak_bytes;
    const Bytes reserved = gui.document.reserved()->peak_bytes;
    REQUIRE(reserved > allocated);
    Config small = gui.document.config();
    small.hardware.hbm_bytes = (allocated + reserved) / 2;
    gui.document.edit(small, QStringLiteral("HBM"));
    settle();
    auto *header = gui.window.findChild<PlanHeader *>();
    REQUIRE(header != nullptr);
    REQUIRE(gui.document.ledger().fits());
    CHECK(header->plainText().contains(QStringLiteral("— fits"))); // the simulated peak's, until the worker answers
    REQUIRE(gui.document.waitForReserved(60000));
    settle();
    REQUIRE_FALSE(gui.document.reserved()->fits());
    const QString text = header->plainText();
    INFO(text.toStdString());
    CHECK(text.contains(QStringLiteral("does not fit (reserved ")
                        + QString::fromStdString(formatGB(double(gui.document.reserved()->peak_bytes)))
                        + QLatin1Char(')')));
    CHECK(gui.window.header()->peakToolTip().contains(QStringLiteral("Reserved: rank")));
    // The memory bars give the same verdict: the ranks whose reserved memory is over are marked.
    std::vector<int> over;
    for (const RankReserved &r : gui.document.reserved()->ranks)
        if (!r.fits)
            over.push_back(r.pipeline_rank);
    REQUIRE_FALSE(over.empty());
    MemoryBarsChart *bars = gui.window.memoryBars();
    CHECK(bars->failingBars() == over);
    CHECK(bars->chart()
              ->title()
              .replace(QStringLiteral("<br>"), QStringLiteral(" "))
              .contains(QStringLiteral("NOT fit (reserved by the allocator)")));
}
