// SPDX-License-Identifier: MIT
#include <QApplication>
#include <QFont>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include "catchqt.h"
#include "core/base/units.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/serving/inferencetimeline.h"
#include "core/timeline/timeline.h"
#include "core/view/gantt.h"
#include "scenariotimeline.h"
#include "ui/categorycolors.h"
#include "ui/lifetimeview.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

#include <algorithm>
#include <optional>

using memledger::ui::LifetimeView;
using namespace memledger;

namespace {

// Pixels in `area` that differ from the top-left background pixel of the image.
int paintedPixels(const QImage &image, const QRectF &area)
{
    const QRgb background = image.pixel(0, image.height() - 1);
    int painted = 0;
    const QRect r = area.toAlignedRect().intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            painted += image.pixel(x, y) != background;
    return painted;
}

} // namespace

TEST_CASE("The lifetime view renders the curve and the rows offscreen", "[ui][lifetimes]")
{
    LifetimeView view;
    view.setTimeline(test::scenarioTimeline("seed-000-7b-b-checkpointing"));
    view.resize(1400, 600);
    QImage image(view.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    view.render(&image);

    const QRectF curve = view.curveArea();
    const QRectF rows = view.rowsArea();
    REQUIRE_FALSE(curve.isEmpty());
    REQUIRE_FALSE(rows.isEmpty());
    CHECK(curve.bottom() < rows.top());
    CHECK(paintedPixels(image, curve) > int(curve.width() * curve.height() / 20));
    CHECK(paintedPixels(image, rows) > int(rows.width() * rows.height() / 20));
}

TEST_CASE("Hovering a lifetime names it with its bytes and interval", "[ui][lifetimes]")
{
    LifetimeView view;
    const Timeline tl = test::scenarioTimeline("seed-000-7b-b-checkpointing");
    view.setTimeline(tl);
    view.resize(1400, 600);

    const RankTimeline &rank = tl.ranks.front();
    std::optional<std::size_t> weights, activations;
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        if (!weights && rank.lifetimes[i].category == Category::Weights)
            weights = i;
        if (!activations && rank.lifetimes[i].kind == LifetimeKind::Activations)
            activations = i;
    }
    // A micro-batch's saved activations arrive and leave layer by layer: its
    // pieces share a row, each inside the one saved before it, the shortest
    // drawn on top. Hover the shortest one, the last saved.
    REQUIRE(activations);
    const Lifetime &group = rank.lifetimes[*activations];
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        const Lifetime &l = rank.lifetimes[i];
        if (l.kind == LifetimeKind::Activations && l.microbatch == group.microbatch && l.chunk == group.chunk
            && l.end - l.start < rank.lifetimes[*activations].end - rank.lifetimes[*activations].start)
            activations = i;
    }
    REQUIRE(weights);
    REQUIRE(activations);
    for (std::size_t i : {*weights, *activations}) {
        const Lifetime &l = rank.lifetimes[i];
        const QRectF bar = view.barRect(int(i));
        REQUIRE_FALSE(bar.isEmpty());
        const QString tip = view.toolTipAt(bar.center());
        CHECK(tip.contains(ui::toQString(lifetimeLabel(tl, rank, l))));
        CHECK(tip.contains(ui::toQString(formatGB(double(l.bytes)))));
        CHECK(tip.contains(ui::toQString(formatMilliseconds(l.start))));
        CHECK(tip.contains(ui::toQString(formatMilliseconds(l.end))));
    }
    // Over the curve: the memory in use; outside everything: nothing.
    CHECK(view.toolTipAt(view.curveArea().center()).contains(QStringLiteral(" GB in use at ")));
    CHECK(view.toolTipAt(QPointF(1, 599)).isEmpty());

    // The bar under the mouse is outlined, and only while the mouse is over it.
    view.show();
    QApplication::processEvents();
    const int bar = int(*activations);
    QTest::mouseMove(&view, view.barRect(bar).center().toPoint());
    CHECK(view.hoveredLifetime() == bar);
    QImage outlined(view.size(), QImage::Format_ARGB32);
    view.render(&outlined);
    if (qEnvironmentVariableIsSet("MEMLEDGER_LIFETIMES_PNG"))
        outlined.save(qEnvironmentVariable("MEMLEDGER_LIFETIMES_PNG"));
    QTest::mouseMove(&view, view.curveArea().center().toPoint());
    CHECK(view.hoveredLifetime() == -1);
    QImage plain(view.size(), QImage::Format_ARGB32);
    view.render(&plain);
    CHECK(outlined != plain);
}

TEST_CASE("Zooming and panning change the visible window, double-click resets", "[ui][lifetimes]")
{
    LifetimeView view;
    view.setTimeline(test::scenarioTimeline("gpt-3-175b-64gpus-tp-only"));
    view.resize(1400, 600);
    QSignalSpy spy(&view, &LifetimeView::visibleWindowChanged);

    const double whole = view.timeAxis().visibleSpan();
    const QRectF rows = view.rowsArea();
    const QPointF at(rows.left() + rows.width() * 0.3, rows.center().y());
    const double timeAt = view.timeAxis().toTime(at.x());

    QWheelEvent wheel(at, view.mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &wheel);
    CHECK(spy.count() == 1);
    CHECK(view.timeAxis().visibleSpan() < whole);
    CHECK(view.timeAxis().toX(timeAt) == Approx(at.x()));
    CHECK(view.timeAxis().isZoomed());

    const double t0 = view.timeAxis().t0;
    view.zoomAround(timeAt, 2.0);
    CHECK(view.timeAxis().visibleSpan() < whole / 2);
    CHECK(view.timeAxis().t0 > t0);

    // Still renders when zoomed in.
    QImage image(view.size(), QImage::Format_ARGB32);
    view.render(&image);
    CHECK(paintedPixels(image, view.rowsArea()) > 0);

    view.resetZoom();
    CHECK_FALSE(view.timeAxis().isZoomed());
    CHECK(view.timeAxis().visibleSpan() == Approx(whole));

    // Another rank keeps working; an out-of-range rank is clamped.
    view.setRank(1000);
    CHECK(view.rank() == int(view.timeline().ranks.size()) - 1);
}

TEST_CASE("Bands mode stacks the lifetimes under the curve and names the band under the cursor", "[ui][lifetimes]")
{
    LifetimeView view;
    const Timeline tl = test::scenarioTimeline("seed-000-7b-b-checkpointing");
    view.setTimeline(tl);
    view.setMode(LifetimeView::Mode::Bands);
    view.resize(1400, 600);
    QImage image(view.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    view.render(&image);
    const QRectF plot = view.curveArea();
    CHECK(plot.height() > 300); // one plot area over the whole height
    CHECK(paintedPixels(image, plot) > int(plot.width() * plot.height() / 4));

    // The bottom band is the largest weights row, allocated for the whole iteration.
    const RankTimeline &rank = tl.ranks.front();
    std::optional<std::size_t> bottom;
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i)
        if (rank.lifetimes[i].category == Category::Weights && isPersistent(rank.lifetimes[i].kind)
            && (!bottom || rank.lifetimes[i].bytes > rank.lifetimes[*bottom].bytes))
            bottom = i;
    REQUIRE(bottom);
    const QString tip = view.toolTipAt(QPointF(plot.center().x(), plot.bottom() - 2));
    CHECK(tip.contains(ui::toQString(lifetimeLabel(tl, rank, rank.lifetimes[*bottom]))));
    CHECK(tip.contains(ui::toQString(formatGB(double(rank.lifetimes[*bottom].bytes)))));

    view.setMode(LifetimeView::Mode::Gantt);
    CHECK(view.curveArea().height() < plot.height());
}

TEST_CASE("A fitted bytes axis still paints the curve and keeps hovering working", "[ui][lifetimes]")
{
    LifetimeView view;
    view.setTimeline(test::scenarioTimeline("seed-000-7b-b-checkpointing"));
    view.resize(1400, 600);
    view.setFitBytes(true);
    CHECK(view.fitBytes());
    QImage image(view.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    view.render(&image);
    CHECK(paintedPixels(image, view.curveArea()) > 0);
    CHECK(view.toolTipAt(view.curveArea().center()).contains(QStringLiteral(" GB in use at ")));
}

TEST_CASE("Keys zoom, pan and reset — the phase strip names the op", "[ui][lifetimes]")
{
    LifetimeView view;
    const Timeline tl = test::scenarioTimeline("seed-000-7b-b-checkpointing");
    view.setTimeline(tl);
    view.resize(1400, 600);
    const double whole = view.timeAxis().visibleSpan();
    QTest::keyClick(&view, Qt::Key_Plus);
    CHECK(view.timeAxis().visibleSpan() < whole);
    const double t0 = view.timeAxis().t0;
    QTest::keyClick(&view, Qt::Key_Right);
    CHECK(view.timeAxis().t0 > t0);
    QTest::keyClick(&view, Qt::Key_0);
    CHECK_FALSE(view.timeAxis().isZoomed());

    // Between the curve and the rows: the op at that time.
    const RankTimeline &rank = tl.ranks.front();
    REQUIRE_FALSE(rank.ops.empty());
    const TimedOp &op = rank.ops.front();
    const double x = view.timeAxis().toX((op.start + op.end) / 2);
    const QString tip = view.toolTipAt(QPointF(x, (view.curveArea().bottom() + view.rowsArea().top()) / 2));
    CHECK(tip.contains(QStringLiteral("micro-batch %1").arg(op.op.microbatch)));
    CHECK(tip.contains(ui::toQString(formatMilliseconds(op.start))));
}

TEST_CASE("Activations stored in FP8 are hatched, named in the legend and the tooltip", "[ui][lifetimes][fp8]")
{
    const BuiltinPreset *preset = findBuiltin("scenarios", "llama-3-70b-128xh100");
    REQUIRE(preset != nullptr);
    LoadResult loaded = presetFromText(preset->text);
    REQUIRE(loaded.config.has_value());
    const Timeline plain = simulateIteration(*loaded.config);
    Config quantised = *loaded.config;
    quantised.strategy.tensor_policies = {{"mlp.fc1.output", TensorFate::QuantizeFp8}};
    const Timeline tl = simulateIteration(quantised);

    const auto hasFp8Legend = [](const LifetimeView &v) {
        for (const LifetimeView::LegendEntry &e : v.legend())
            if (e.label == QStringLiteral("Stored in FP8"))
                return e.pattern != Qt::SolidPattern;
        return false;
    };
    LifetimeView view;
    view.resize(2000, 600); // wide: the legend keeps one line with or without its FP8 entry
    view.setTimeline(plain);
    CHECK(view.fp8Rects().isEmpty());
    CHECK_FALSE(hasFp8Legend(view));

    view.setTimeline(tl);
    CHECK(hasFp8Legend(view));
    const QVector<QRectF> hatched = view.fp8Rects();
    REQUIRE_FALSE(hatched.isEmpty());
    // Each hatched part lies at the bottom of a bar with FP8 bytes, its height the bar's FP8 share.
    const RankTimeline &rank = tl.ranks.front();
    int matched = 0;
    std::optional<std::size_t> example;
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        const QRectF bar = view.barRect(int(i));
        if (bar.isEmpty() || rank.lifetimes[i].fp8Bytes <= 0)
            continue;
        for (const QRectF &h : hatched)
            if (std::abs(h.bottom() - bar.bottom()) < 0.5 && std::abs(h.left() - bar.left()) < 0.5
                && std::abs(h.width() - bar.width()) < 0.5) {
                CHECK(h.height() == Approx(bar.height() * fp8Share(rank.lifetimes[i])).margin(0.5));
                ++matched;
                example = example ? example : std::optional<std::size_t>(i);
                break;
            }
    }
    CHECK(matched == hatched.size());
    REQUIRE(example);

    // The tooltip says how much of the bar is FP8. A group's pieces share a
    // row, each inside the one saved before it, the shortest drawn on top:
    // hover the shortest of the example's group (the last layer's MLP half,
    // saved last and freed first, holds fc1's output).
    const Lifetime &group = rank.lifetimes[*example];
    std::size_t top = *example;
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        const Lifetime &l = rank.lifetimes[i];
        if (l.kind == LifetimeKind::Activations && l.microbatch == group.microbatch && l.chunk == group.chunk
            && l.end - l.start < rank.lifetimes[top].end - rank.lifetimes[top].start && !view.barRect(int(i)).isEmpty())
            top = i;
    }
    REQUIRE(rank.lifetimes[top].fp8Bytes > 0);
    const QString tip = view.toolTipAt(view.barRect(int(top)).center());
    CHECK(tip.contains(ui::toQString(lifetimeLabel(tl, rank, rank.lifetimes[top]))));
    CHECK(tip.contains(ui::toQString(fp8Text(rank.lifetimes[top]))));

    // Drawn: the same bars without their FP8 bytes paint otherwise inside the hatched parts.
    const auto render = [&](const Timeline &t) {
        view.setTimeline(t);
        QImage image(view.size(), QImage::Format_ARGB32);
        image.fill(Qt::white);
        view.render(&image);
        return image;
    };
    Timeline unmarked = tl;
    for (RankTimeline &rt : unmarked.ranks)
        for (Lifetime &l : rt.lifetimes)
            l.fp8Bytes = 0;
    const QImage hatchedImage = render(tl), plainImage = render(unmarked);
    int differing = 0, outside = 0;
    for (int y = 0; y < hatchedImage.height(); ++y)
        for (int x = 0; x < hatchedImage.width(); ++x) {
            if (hatchedImage.pixel(x, y) == plainImage.pixel(x, y))
                continue;
            const bool inside = std::any_of(hatched.begin(), hatched.end(), [&](const QRectF &h) {
                return h.adjusted(-1, -1, 1, 1).contains(QPointF(x + 0.5, y + 0.5));
            });
            (inside ? differing : outside) += 1;
        }
    CHECK(differing > 0);
    // Elsewhere only the legend's new swatch and label differ.
    CHECK(outside < differing + 2000);
}

TEST_CASE("The names inside the gantt's bars keep their contrast on every category's fill", "[ui][lifetimes][dark]")
{
    // WCAG 2's contrast ratio, checked by hand: white on black is 21:1, a colour on itself 1:1.
    CHECK(ui::contrastRatio(Qt::white, Qt::black) == Approx(21.0));
    CHECK(ui::contrastRatio(QColor(0x80, 0x80, 0x80), QColor(0x80, 0x80, 0x80)) == Approx(1.0));
    // The label used to be white on every bar: about 2.2:1 on the gradients' orange (#e69f00).
    CHECK(ui::contrastRatio(Qt::white, ui::categoryColor(Category::Gradients)) < 2.5);
    // Now white or near-black, whichever reads better: at least WCAG's 4.5:1 for normal text (to 0.1)
    // on every fill, device and host.
    for (Category c : kCategories)
        for (Placement p : {Placement::Device, Placement::Host}) {
            const QColor fill = ui::categoryColor(c, p);
            INFO(qPrintable(fill.name()));
            CHECK(ui::contrastRatio(ui::textColorOn(fill), fill) >= 4.4);
        }
}

TEST_CASE("The memory curve is held against the capacity alone: no usable line takes the reserve off twice",
          "[ui][lifetimes][fit]")
{
    // The curve holds the runtime reserve as a row (a band of the iteration),
    // so its peak is held against the whole device (peakFits); a line at
    // capacity less the reserve, as the view drew in orange, made a peak
    // between the two look over while the verdict said it fits.
    LifetimeView view;
    const Timeline tl = test::scenarioTimeline("llama-3-70b-128xh100");
    view.setTimeline(tl);
    view.resize(1400, 600);
    QImage image(view.size(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    view.render(&image);
    const QRect area = view.curveArea().toAlignedRect();
    int orange = 0;
    for (int y = area.top(); y <= area.bottom(); ++y)
        for (int x = area.left(); x <= area.right(); ++x) {
            const QColor c = image.pixelColor(x, y);
            orange += std::abs(c.red() - 0xd0) < 24 && std::abs(c.green() - 0x7a) < 24 && c.blue() < 40;
        }
    CHECK(orange == 0);
    CHECK(tl.ranks[0].peak_bytes <= tl.ledger.capacity_bytes);
    CHECK(peakFits(tl, tl.ranks[0]));
}

TEST_CASE("A served forward's peak label stands whole inside the curve at any width and font", "[ui][lifetimes]")
{
    // Issue 34, item 21: the prefill's peak comes at the forward's end, at the curve's right edge; its label
    // was placed by the regular font's width and drawn bold in a framed box, which the curve's clip cut.
    const BuiltinPreset *preset = findBuiltin("scenarios", "seed-000-7b-a-plain");
    REQUIRE(preset != nullptr);
    const LoadResult loaded = presetFromText(preset->text);
    REQUIRE(loaded.config.has_value());
    LifetimeView view;
    view.setTimeline(simulateInferenceForward(*loaded.config, ServingPass::Prefill));
    view.show();
    for (const double points : {9.0, 14.4}) { // the user's font, talk mode's (1.6 ×)
        QFont font = view.font();
        font.setPointSizeF(points);
        view.setFont(font);
        for (const int width : {480, 700, 1000, 1400}) {
            view.resize(width, 500);
            QApplication::processEvents();
            const QRectF area = view.curveArea();
            const QRectF box = view.peakLabelBox();
            INFO(points << " pt, " << width << " px: box " << box.left() << " to " << box.right() << ", curve "
                        << area.left() << " to " << area.right());
            REQUIRE_FALSE(box.isEmpty());
            // Drawn clipped to the curve's width (and a line of text above and below it).
            CHECK(box.left() >= area.left());
            CHECK(box.right() <= area.right() + 1);
            CHECK(box.top() >= area.top() - QFontMetricsF(font).height());
        }
    }
}

TEST_CASE("The persistent rows' labels are drawn readable or not at all", "[ui][lifetimes]")
{
    // Issue 34, item 21: on a talk slide the persistent rows got 30 % of a short rows area, thinner than a line
    // of text, and their labels shrank to about 7 px. The layout now gives them a line where it can, and a
    // label is never drawn smaller than 9 px (or 80 % of the view's font).
    const BuiltinPreset *preset = findBuiltin("scenarios", "seed-000-7b-a-plain");
    REQUIRE(preset != nullptr);
    const LoadResult loaded = presetFromText(preset->text);
    REQUIRE(loaded.config.has_value());
    LifetimeView view;
    view.setTimeline(simulateInferenceForward(*loaded.config, ServingPass::Prefill));
    view.show();
    for (const double points : {9.0, 14.4}) { // the user's font, talk mode's (1.6 ×)
        QFont font = view.font();
        font.setPointSizeF(points);
        view.setFont(font);
        for (int height = 300; height <= 800; height += 25) {
            view.resize(1000, height);
            QApplication::processEvents();
            view.grab();
            const int pixels = QFontInfo(font).pixelSize();
            INFO(points << " pt (" << pixels << " px), 1000x" << height << ": labels " << view.barLabelPixels()
                        << " px");
            CHECK((view.barLabelPixels() == 0 || view.barLabelPixels() >= std::max(9, pixels * 8 / 10)));
            // A talk slide's Lifetimes view on a 1024 × 768 projector is about 390 px tall: labelled.
            if (height >= 375)
                CHECK(view.barLabelPixels() > 0);
        }
    }
}
