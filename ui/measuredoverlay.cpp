// SPDX-License-Identifier: MIT
#include "ui/measuredoverlay.h"

#include <algorithm>

namespace memledger::ui {

std::vector<CurvePoint> onIterationClock(const std::vector<NormalisedPoint> &curve, double iterationSeconds)
{
    std::vector<CurvePoint> out;
    out.reserve(curve.size());
    for (const NormalisedPoint &p : curve)
        out.push_back({p.t * iterationSeconds, p.bytes});
    return out;
}

QPolygonF stepLine(const std::vector<CurvePoint> &curve, const TimeAxis &axis, const ValueAxis &values)
{
    QPolygonF line;
    if (curve.empty())
        return line;
    // From the point holding at the window's start, as layoutGantt draws the model's curve.
    std::size_t i = 0;
    while (i + 1 < curve.size() && curve[i + 1].time <= axis.t0)
        ++i;
    double y = values.toY(double(curve[i].bytes));
    line.append({axis.toX(std::max(curve[i].time, axis.t0)), y});
    for (++i; i < curve.size() && curve[i].time <= axis.t1; ++i) {
        const double x = axis.toX(curve[i].time);
        line.append({x, y});
        y = values.toY(double(curve[i].bytes));
        line.append({x, y});
    }
    // A curve that ends inside the window stops there: the trace says nothing after its iteration.
    const double end = i < curve.size() ? axis.t1 : std::min(axis.t1, curve.back().time);
    line.append({axis.toX(std::max(end, axis.t0)), y});
    return line;
}

std::vector<Tick> bytesTicksWithOverlay(const Timeline &timeline, const RankTimeline &rank,
                                        const std::vector<std::vector<CurvePoint>> &overlays, const TimeAxis &axis,
                                        const GanttFrame &frame)
{
    auto [lo, hi] = curveRange(rank.curve, axis.t0, axis.t1);
    Bytes peak = rank.peak_bytes;
    for (const std::vector<CurvePoint> &curve : overlays) {
        if (curve.empty())
            continue;
        const auto [l, h] = curveRange(curve, axis.t0, axis.t1);
        lo = std::min(lo, l);
        hi = std::max(hi, h);
        for (const CurvePoint &p : curve)
            peak = std::max(peak, p.bytes);
    }
    // Two points that curveRange() reads as lo (held at t0) and hi (inside the window).
    RankTimeline standIn;
    standIn.curve = {{axis.t0, Bytes(lo)}, {(axis.t0 + axis.t1) / 2, Bytes(hi)}};
    standIn.peak_bytes = peak;
    return viewBytesTicks(timeline, standIn, axis, frame);
}

ValueAxis rescaleBytes(GanttGeometry &geometry, const ValueAxis &from, const std::vector<Tick> &ticks,
                       const GanttRect &curveArea)
{
    const ValueAxis to = bytesAxis(ticks, curveArea);
    if (to.v0 == from.v0 && to.v1 == from.v1)
        return to;
    const auto move = [&](double y) { return to.toY(from.toValue(y)); };
    for (GanttPoint &p : geometry.curve)
        p.y = move(p.y);
    // The fill closes down to the bottom of the area, whatever value that is.
    for (std::size_t i = 0; i < geometry.curveFill.size(); ++i)
        geometry.curveFill[i].y = i < geometry.curve.size() ? geometry.curve[i].y : curveArea.bottom();
    geometry.peak.y = move(geometry.peak.y);
    geometry.capacityY = move(geometry.capacityY);
    geometry.usableY = move(geometry.usableY);
    geometry.bytesTicks.clear();
    for (const Tick &t : ticks)
        geometry.bytesTicks.push_back({to.toY(t.value), t.label});
    return to;
}

QRectF quietestPlace(const QRectF &area, const QSizeF &size, double margin, const std::vector<const QPolygonF *> &lines,
                     const QRectF &avoid)
{
    const double left = area.left() + margin, right = area.right() - margin - size.width();
    const double top = area.top() + margin, bottom = area.bottom() - margin - size.height();
    // A grid over the area, row by row from the top, each left to right: the corners first among equals.
    constexpr int kColumns = 6;
    constexpr int kRows = 4;
    std::vector<QPointF> places;
    for (const double y : {top, bottom})
        for (int k = 0; k <= kColumns; ++k)
            places.push_back({left + (right - left) * k / kColumns, y});
    for (int r = 1; r < kRows; ++r)
        for (int k = 0; k <= kColumns; ++k)
            places.push_back({left + (right - left) * k / kColumns, top + (bottom - top) * r / kRows});
    QRectF best;
    double bestScore = -1;
    for (const QPointF &place : places) {
        const QRectF box(place, size);
        // Pixels of line the box would hide. Step lines are axis-aligned: a segment's rect, a hair thick,
        // cut by the box is the part of it under the box.
        double score = box.intersects(avoid) ? 1e9 : 0;
        for (const QPolygonF *line : lines)
            for (qsizetype i = 1; i < line->size(); ++i) {
                const QRectF hidden
                    = QRectF((*line)[i - 1], (*line)[i]).normalized().adjusted(-0.5, -0.5, 0.5, 0.5).intersected(box);
                score += std::max(hidden.width(), hidden.height());
            }
        if (bestScore < 0 || score < bestScore) {
            best = box;
            bestScore = score;
        }
    }
    return best;
}

} // namespace memledger::ui
