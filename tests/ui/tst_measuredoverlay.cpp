// SPDX-License-Identifier: MIT
#include <QApplication>
#include <QImage>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/timeline/timeline.h"
#include "core/view/gantt.h"
#include "scenariotimeline.h"
#include "ui/lifetimeview.h"
#include "ui/measuredoverlay.h"
#include "ui/theme.h"

using namespace memledger;
using memledger::ui::LifetimeView;
using memledger::ui::MeasuredOverlay;

namespace {

// A measured run shaped like the rank's own curve, `scale` times as high.
MeasuredOverlay overlayLike(const RankTimeline &rank, double stepTime, double scale)
{
    MeasuredOverlay overlay;
    overlay.label = QStringLiteral("measured (run.pickle.gz)");
    overlay.pipelineRank = rank.pipeline_rank;
    for (const CurvePoint &p : rank.curve) {
        const double t = std::min(1.0, p.time / stepTime);
        overlay.measured.push_back({t, Bytes(double(p.bytes) * scale)});
        overlay.modelled.push_back({t, p.bytes});
    }
    return overlay;
}

int pixelsOf(const QImage &image, const QColor &color, const QRectF &area)
{
    int n = 0;
    const QRect r = area.toAlignedRect().intersected(image.rect());
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x)
            n += QColor(image.pixel(x, y)) == color;
    return n;
}

} // namespace

TEST_CASE("A normalised curve goes onto the view's clock and is drawn as steps", "[ui][measured][lifetimes]")
{
    const std::vector<CurvePoint> curve = ui::onIterationClock({{0, 10}, {0.5, 30}, {1, 20}}, 2.0);
    REQUIRE(curve.size() == 3);
    CHECK(curve[1].time == 1.0);
    CHECK(curve[2].time == 2.0);
    CHECK(curve[2].bytes == 20);

    // 0..4 s over 0..400 px; 0..40 bytes over 100..0 px.
    const TimeAxis axis = TimeAxis::over(0, 4, 0, 400);
    const ValueAxis values{0, 40, 100, 0};
    const QPolygonF line = ui::stepLine(curve, axis, values);
    // Steps at 1 s and 2 s, then the curve stops where the trace's iteration ends (2 s), not at 4 s.
    REQUIRE(line.size() == 6);
    CHECK(line[0] == QPointF(0, 75));
    CHECK(line[1] == QPointF(100, 75));
    CHECK(line[2] == QPointF(100, 25));
    CHECK(line[3] == QPointF(200, 25));
    CHECK(line[4] == QPointF(200, 50));
    CHECK(line[5] == QPointF(200, 50));
    CHECK(ui::stepLine({}, axis, values).isEmpty());
}

TEST_CASE("The bytes axis grows to hold a measured run above the model", "[ui][measured][lifetimes]")
{
    const Timeline tl = test::scenarioTimeline("seed-000-7b-b-checkpointing");
    const RankTimeline &rank = tl.ranks.front();
    const TimeAxis axis = TimeAxis::over(0, iterationEnd(tl, rank), 100, 900);
    GanttFrame frame = ganttFrame(1000, 600, 16, 80);
    const std::vector<Tick> plain = viewBytesTicks(tl, rank, axis, frame);

    // Inside the plain axis: the same ticks.
    const std::vector<CurvePoint> low = {{0, rank.peak_bytes / 2}};
    CHECK(ui::bytesTicksWithOverlay(tl, rank, {low}, axis, frame).back().value == plain.back().value);
    // Above it: the top tick holds the overlay's peak.
    const Bytes high = Bytes(plain.back().value * 1.7);
    const std::vector<CurvePoint> tall = {{0, rank.peak_bytes / 2}, {axis.end / 2, high}};
    CHECK(ui::bytesTicksWithOverlay(tl, rank, {tall}, axis, frame).back().value >= double(high));
    // Fitted: the range reaches down to the overlay's low.
    frame.fitBytes = true;
    const std::vector<Tick> fitted = viewBytesTicks(tl, rank, axis, frame);
    const std::vector<CurvePoint> under = {{0, Bytes(fitted.front().value / 2)}};
    CHECK(ui::bytesTicksWithOverlay(tl, rank, {under}, axis, frame).front().value <= fitted.front().value / 2);

    // Rescaling moves the curve and the peak with the axis; the fill still closes at the bottom.
    GanttGeometry g = layoutGantt(tl, rank, {}, {}, axis, frame);
    const ValueAxis from = bytesAxis(fitted, frame.curveArea);
    const std::vector<Tick> wider = ui::bytesTicksWithOverlay(tl, rank, {under}, axis, frame);
    const ValueAxis to = ui::rescaleBytes(g, from, wider, frame.curveArea);
    CHECK(g.peak.y == Approx(to.toY(double(rank.peak_bytes))));
    CHECK(g.curveFill.back().y == Approx(frame.curveArea.bottom()));
    CHECK(g.bytesTicks.size() == wider.size());
}

TEST_CASE("The overlay's legend goes where the curves leave room, clear of the peak", "[ui][measured][lifetimes]")
{
    const QRectF area(0, 0, 400, 200);
    const QSizeF size(100, 40);
    // Nothing drawn: top-left.
    const QPolygonF none;
    CHECK(ui::quietestPlace(area, size, 5, {&none}, {}) == QRectF(5, 5, 100, 40));
    // A curve along the top: bottom-left.
    const QPolygonF top({{0, 10}, {400, 10}});
    CHECK(ui::quietestPlace(area, size, 5, {&top}, {}) == QRectF(5, 155, 100, 40));
    // The peak's label top-left: further right along the top.
    const QRectF peak(0, 0, 50, 50);
    const QRectF clear = ui::quietestPlace(area, size, 5, {&none}, peak);
    CHECK(clear.top() == 5);
    CHECK_FALSE(clear.intersects(peak));
    // A spike through the left of the plot and a curve along the bottom: along the top, right of the spike.
    const QPolygonF spike({{0, 190}, {50, 190}, {50, 0}, {60, 0}, {60, 190}, {400, 190}});
    const QRectF beside = ui::quietestPlace(area, size, 5, {&spike}, {});
    CHECK(beside.top() == 5);
    CHECK(beside.left() > 60);
    CHECK(area.contains(beside));
}

TEST_CASE("The lifetimes view draws the measured curve over its rank, with a legend, and clears it",
          "[ui][measured][lifetimes]")
{
    ui::applyPalette(false);
    const Timeline tl = test::scenarioTimeline("seed-000-7b-b-checkpointing");
    LifetimeView view;
    view.setTimeline(tl);
    view.resize(1200, 600);
    const RankTimeline &rank = tl.ranks.front();
    CHECK_FALSE(view.overlayShown());

    // 30 % above the model: beyond the plain axis's top when the rank is near capacity, never clipped.
    view.setMeasuredOverlay(overlayLike(rank, tl.step_time, 1.3));
    REQUIRE(view.overlayShown());
    const QPolygonF measured = view.measuredLine();
    REQUIRE(measured.size() > 4);
    const QRectF area = view.curveArea().adjusted(-0.5, -0.5, 0.5, 0.5);
    for (const QPointF &pt : measured)
        CHECK(area.contains(pt));
    CHECK(view.modelledLine().size() > 4);

    QImage image(view.size(), QImage::Format_ARGB32);
    view.render(&image);
    const QColor violet = ui::measuredColor(view.palette());
    CHECK(pixelsOf(image, violet, view.curveArea()) > 200);
    // Over the curve the tooltip gives the measured bytes too.
    CHECK(view.toolTipAt(view.curveArea().center()).contains(QStringLiteral("measured (run.pickle.gz)")));

    // On another rank it is not drawn; the legend says which rank it belongs to.
    if (tl.ranks.size() > 1) {
        view.setRank(1);
        CHECK_FALSE(view.overlayShown());
        CHECK(view.measuredLine().isEmpty());
        view.setRank(0);
    }
    view.clearMeasuredOverlay();
    CHECK_FALSE(view.overlayShown());
    CHECK_FALSE(view.measuredOverlay().has_value());
    QImage cleared(view.size(), QImage::Format_ARGB32);
    view.render(&cleared);
    CHECK(pixelsOf(cleared, violet, view.curveArea()) == 0);
}
