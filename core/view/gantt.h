// SPDX-License-Identifier: MIT
#pragma once

#include "core/timeline/lifetimelabels.h" // lifetimeLabel: the rows' and the views' labels
#include "core/timeline/timeline.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memledger {

// Neutral geometry of the lifetimes view (Qt Creator's timelinecoordinates /
// trackpainterbase split): time <-> pixel mapping, ticks, row packing, phases
// and the rects a painter replays. No Qt here, so all of it is table-tested.

struct GanttPoint
{
    double x = 0;
    double y = 0;
};

struct GanttRect
{
    double x = 0;
    double y = 0;
    double w = 0;
    double h = 0;
    double right() const { return x + w; }
    double bottom() const { return y + h; }
    bool isEmpty() const { return w <= 0 || h <= 0; }
    // Half-open: [x, x + w) x [y, y + h).
    bool contains(double px, double py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

/// A visible time window [t0, t1] (seconds) inside the iteration [start, end],
/// mapped linearly onto the pixels [x0, x1].
struct TimeAxis
{
    double start = 0;
    double end = 1;
    double t0 = 0;
    double t1 = 1;
    double x0 = 0;
    double x1 = 1;

    // The whole iteration visible.
    static TimeAxis over(double start, double end, double x0, double x1);

    double toX(double t) const;
    double toTime(double x) const;
    double visibleSpan() const { return t1 - t0; }
    double centre() const { return (t0 + t1) / 2; }
    // The narrowest window zooming reaches: a millionth of the iteration.
    double minSpan() const;
    bool isZoomed() const { return t0 > start || t1 < end; }

    void setPixels(double left, double right);
    void reset();
    // factor > 1 zooms in. The time under `time` keeps its x unless the window
    // would leave the iteration, where it is shifted back inside.
    void zoomAround(double time, double factor);
    // Drags the content by dx pixels (positive: content moves right, earlier
    // times come into view), clamped to the iteration.
    void pan(double dx);
};

/// Bytes (or any value) [v0, v1] onto pixels [y0, y1] (y0 is the bottom).
struct ValueAxis
{
    double v0 = 0;
    double v1 = 1;
    double y0 = 1;
    double y1 = 0;
    double toY(double v) const;
    double toValue(double y) const;
};

struct Tick
{
    double value = 0;
    std::string label;
};

// The 1-2-5 step that gives at most maxTicks intervals over `range` (> 0).
double niceStep(double range, int maxTicks);
// Ticks at multiples of a 1-2-5 step inside [t0, t1] (seconds), labelled "1.5 s"
// when the window reaches a second with steps of 0.1 s or more, else "250 ms".
std::vector<Tick> timeTicks(double t0, double t1, int maxTicks);
// Ticks 0, step, ... up to the first multiple >= top (bytes), labelled in GB ("20 GB").
std::vector<Tick> bytesTicks(double top, int maxTicks);

// Ticks at a 1-2-5 step from the multiple at or below lo to the one at or above hi, in GB.
std::vector<Tick> bytesTicksBetween(double lo, double hi, int maxTicks);
// The lowest and highest bytes of a step curve over [t0, t1): the value holding at t0
// included, a point at t1 (the drop at the end of the iteration) not.
std::pair<double, double> curveRange(const std::vector<CurvePoint> &curve, double t0, double t1);

// The share of a lifetime's bytes stored in FP8 (0..1): the gantt hatches
// that part of an activation bar. "0.84 GB of it in FP8" for its tooltip,
// empty when none is.
double fp8Share(const Lifetime &lifetime);
std::string fp8Text(const Lifetime &lifetime);

// "838.4 ms" (tooltips).
std::string formatMilliseconds(double seconds);
// "peak 71.20 GB at 0.84 s".
std::string peakLabel(const RankTimeline &rank);

struct Span
{
    double start = 0;
    double end = 0;
};

// Greedy interval colouring: spans in order of start (ties by index) each get
// the lowest row free at their start. Half-open, so a span may start where
// another ends in the same row. The result is indexed like `spans`.
std::vector<int> packRows(const std::vector<Span> &spans);

enum class RowMode {
    Groups, // persistent rows, one row per (chunk, micro-batch) activation group (a served forward: per layer),
            // transients packed
    Packed // persistent rows, then every other lifetime packed
};
enum class RowSection { Persistent, Activations, Transients };
std::string_view rowSectionLabel(RowSection section); // "Persistent", "Activations", "Transients"

struct GanttRow
{
    RowSection section = RowSection::Persistent;
    std::string label; // "mb 3", "mb 3 c1", a persistent row's ledger label, or "" for packed rows
    Bytes bytes = 0; // persistent rows: all their lifetimes together (a ledger row's bytes)
};

struct GanttRows
{
    std::vector<int> rowOf; // per lifetime, indexed like rank.lifetimes
    std::vector<GanttRow> rows;
};

// Persistent and gradient rows first (category order, then larger first),
// then activations, then transients (recompute, backward working sets, loss
// and optimizer temporaries).
GanttRows ganttRows(const Timeline &timeline, const RankTimeline &rank, RowMode mode);
bool isPersistent(LifetimeKind kind);
bool isTransient(LifetimeKind kind);

// Weight: a deferred weight-gradient pass (W) of the schedules that split
// backwards (ZB-H1, ZB-H2, ZB-V, DualPipe): drawn apart from B so the W
// deferral is visible.
enum class PhaseKind { Forward, Backward, Optimizer, Weight };
std::string_view phaseLabel(PhaseKind kind); // "Forward", "Backward", "Optimizer step", "Weight gradients"

struct Phase
{
    double start = 0;
    double end = 0;
    PhaseKind kind = PhaseKind::Forward;
    int microbatch = -1;
    int chunk = -1;
};

// One phase per op (forward or backward of a micro-batch and chunk), then the
// optimizer step when it takes time.
std::vector<Phase> phasesOf(const RankTimeline &rank);

// A phase in the strip under the curve: its tag where it fits ("F3", "B3.1", "W3",
// "Opt"; a served forward "Prefill" or "Decode") and its hover title
// ("Forward, micro-batch 3, chunk 1"; a served forward is one pass, so it
// names no micro-batch).
std::string phaseTag(const Timeline &timeline, const Phase &phase);
std::string phaseTitle(const Timeline &timeline, const Phase &phase);

// Where things go, in pixels: the curve on top, the rows below.
struct GanttFrame
{
    GanttRect curveArea;
    GanttRect rowsArea;
    int maxTimeTicks = 10;
    int maxBytesTicks = 5;
    double maxRowHeight = 24; // rows never grow taller than this
    // A persistent row carries its ledger label inside its bar: one line of text, this tall (0: no floor).
    double labelRowHeight = 0;
    bool fitBytes = false; // bytes axis fitted to the visible curve instead of zero..max(peak, capacity)
};

// Row heights: every row maxRowHeight when they all fit; otherwise the
// persistent and transient sections keep up to 30 % and 10 % of the
// height (rows no taller than maxRowHeight, no thinner than an even share) and
// the activation rows share the rest. A persistent row is at least
// labelRowHeight tall, the line of its label, while the persistent rows take no
// more than 45 % of the height (issue 34, item 21: at 30 % their labels were
// drawn about 7 px high on a talk slide).
std::vector<double> rowHeights(const GanttRows &rows, double height, double maxRowHeight, double labelRowHeight = 0);

// The frame for a widget of width x height with text lineHeight pixels high and
// a left gutter for labels. The curve takes about a third of the height.
// `top`: where the curve starts, below a legend of several lines (at least
// the one-line legend's 1.8 lineHeight); the rest is shared as before.
GanttFrame ganttFrame(double width, double height, double lineHeight, double gutterWidth, double top = 0);

struct PositionedTick
{
    double pos = 0; // x for time, y for bytes
    std::string label;
};

struct GanttGeometry
{
    std::vector<GanttRect> bars; // per lifetime; empty when outside the window
    std::vector<GanttRect> phases; // per phase, over the whole height of both areas; empty when outside
    std::vector<GanttPoint> curve; // the step line of the memory curve, clipped to the window
    std::vector<GanttPoint> curveFill; // the same closed down to zero bytes
    GanttPoint peak;
    bool peakVisible = false;
    double capacityY = 0;
    double usableY = 0;
    std::vector<PositionedTick> timeTicks;
    std::vector<PositionedTick> bytesTicks;
    std::vector<double> rowTop; // per row
    std::vector<double> rowHeight; // per row: uniform within a section
    std::vector<double> sectionTop; // per RowSection, -1 when empty
};

GanttGeometry layoutGantt(const Timeline &timeline, const RankTimeline &rank, const GanttRows &rows,
                          const std::vector<Phase> &phases, const TimeAxis &axis, const GanttFrame &frame);

// ---- stacked bands (PyTorch memory_viz's "active memory timeline") ----------

// Where a lifetime sits in the stack: from `time` on, `offset` bytes lie below it.
struct BandStep
{
    double time = 0;
    double offset = 0;
};

// Per lifetime (indexed like rank.lifetimes) the steps of its band's bottom edge;
// persistent rows at the bottom, then every other lifetime in order of
// allocation, so that a band drops when one below it is freed and the top edge
// is the rank's memory. Lifetimes of zero duration get no steps.
std::vector<std::vector<BandStep>> stackBands(const RankTimeline &rank);

// The lifetime whose band covers `bytes` at time t, or -1.
int bandAt(const RankTimeline &rank, const std::vector<std::vector<BandStep>> &bands, double t, double bytes);

// The bytes ticks of the view: zero to a tick at or above peak and capacity, or with
// frame.fitBytes the visible part of the curve between two ticks (small spikes show).
std::vector<Tick> viewBytesTicks(const Timeline &timeline, const RankTimeline &rank, const TimeAxis &axis,
                                 const GanttFrame &frame);
// Those ticks' range over `area`.
ValueAxis bytesAxis(const std::vector<Tick> &ticks, const GanttRect &area);

// Each band as a closed polygon in pixels, clipped to the visible window; empty out of view.
std::vector<std::vector<GanttPoint>> bandPolygons(const RankTimeline &rank,
                                                  const std::vector<std::vector<BandStep>> &bands, const TimeAxis &axis,
                                                  const ValueAxis &values);

// The same as axis-aligned rects (one per step of the band), a pixel apart vertically
// where bands are three pixels or taller: what a painter fills fastest.
std::vector<std::vector<GanttRect>> bandRects(const RankTimeline &rank, const std::vector<std::vector<BandStep>> &bands,
                                              const TimeAxis &axis, const ValueAxis &values);

// The bands mode's frame: one plot area where the gantt has curve and rows.
GanttFrame bandsFrame(double width, double height, double lineHeight, double gutterWidth, double top = 0);

// The last (topmost) rect containing (x, y), or -1.
int itemAt(const std::vector<GanttRect> &rects, double x, double y);

// The bytes of a step curve at time t (the last point at or before t; 0 before the first).
Bytes curveBytesAt(const std::vector<CurvePoint> &curve, double t);

// The iteration of a rank: from 0 to its last lifetime, op or optimizer end,
// at least the timeline's step time.
double iterationEnd(const Timeline &timeline, const RankTimeline &rank);

} // namespace memledger
