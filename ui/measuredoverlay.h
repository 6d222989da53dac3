// SPDX-License-Identifier: MIT
#pragma once

#include <QPolygonF>
#include <QRectF>
#include <QString>

#include "core/trace/compare.h"
#include "core/view/gantt.h"

#include <vector>

namespace memledger::ui {

// A measured run drawn over a rank's memory curve in the lifetimes view: the
// measured curve and the model's allocator curve (the runtime reserve left
// out, as the trace leaves it out), both from core's TraceComparison on the
// iteration's own clock (t in [0, 1]).
struct MeasuredOverlay
{
    QString label; ///< the legend's "measured (run.pickle.gz)"
    int pipelineRank = 0; ///< the rank the trace was held against: drawn over that rank only
    std::vector<NormalisedPoint> measured;
    std::vector<NormalisedPoint> modelled;
};

// A normalised curve on the view's clock: t in [0, 1] stretched over [0, iterationSeconds].
std::vector<CurvePoint> onIterationClock(const std::vector<NormalisedPoint> &curve, double iterationSeconds);

// A step curve (each point's bytes hold until the next) in pixels, from the
// visible window's start to its end or the curve's last point.
QPolygonF stepLine(const std::vector<CurvePoint> &curve, const TimeAxis &axis, const ValueAxis &values);

// The view's bytes ticks when the overlay curves are drawn too, so that they
// stay on the plot: core's viewBytesTicks for a stand-in rank that spans the
// visible range of every curve and peaks at the highest of them.
std::vector<Tick> bytesTicksWithOverlay(const Timeline &timeline, const RankTimeline &rank,
                                        const std::vector<std::vector<CurvePoint>> &overlays, const TimeAxis &axis,
                                        const GanttFrame &frame);

// Moves everything layoutGantt() placed on the bytes axis `from` onto the axis
// of `ticks` (the curve, its fill, the peak, the capacity and usable lines, the
// ticks); the rows and the time axis stay. Returns the new axis.
ValueAxis rescaleBytes(GanttGeometry &geometry, const ValueAxis &from, const std::vector<Tick> &ticks,
                       const GanttRect &curveArea);

// Where a legend box of `size` goes in `area` (inset by `margin`): the place
// that hides the least of `lines` and keeps clear of `avoid` (the peak's
// label), the top edge first, then the bottom one, then in between.
QRectF quietestPlace(const QRectF &area, const QSizeF &size, double margin, const std::vector<const QPolygonF *> &lines,
                     const QRectF &avoid);

} // namespace memledger::ui
