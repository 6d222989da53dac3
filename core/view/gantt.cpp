// SPDX-License-Identifier: MIT
#include "core/view/gantt.h"

#include <queue>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

namespace memledger {

namespace {

std::string printf1(const char *format, double value)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

// Decimals that show a 1-2-5 step exactly: 0.5 -> 1, 20 -> 0, 0.05 -> 2.
int decimalsFor(double step)
{
    if (step <= 0)
        return 0;
    return std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6);
}

std::string fixed(double value, int decimals)
{
    if (std::fabs(value) < 0.5 * std::pow(10.0, -decimals))
        value = 0; // no "-0"
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

} // namespace

// ---- axes ------------------------------------------------------------------

TimeAxis TimeAxis::over(double start, double end, double x0, double x1)
{
    TimeAxis a;
    a.start = start;
    a.end = std::max(end, start);
    a.t0 = a.start;
    a.t1 = a.end;
    a.x0 = x0;
    a.x1 = x1;
    return a;
}

double TimeAxis::toX(double t) const
{
    if (t1 <= t0)
        return x0;
    return x0 + (t - t0) * (x1 - x0) / (t1 - t0);
}

double TimeAxis::toTime(double x) const
{
    if (x1 == x0)
        return t0;
    return t0 + (x - x0) * (t1 - t0) / (x1 - x0);
}

double TimeAxis::minSpan() const
{
    return std::max((end - start) * 1e-6, 1e-12);
}

void TimeAxis::setPixels(double left, double right)
{
    x0 = left;
    x1 = right;
}

void TimeAxis::reset()
{
    t0 = start;
    t1 = end;
}

void TimeAxis::zoomAround(double time, double factor)
{
    const double span = t1 - t0;
    if (!(factor > 0) || span <= 0)
        return;
    const double whole = end - start;
    const double newSpan = std::clamp(span / factor, std::min(minSpan(), whole), whole);
    const double fraction = (time - t0) / span;
    double a = time - fraction * newSpan;
    a = std::clamp(a, start, end - newSpan);
    t0 = a;
    t1 = a + newSpan;
}

void TimeAxis::pan(double dx)
{
    const double span = t1 - t0;
    if (x1 == x0 || span <= 0)
        return;
    const double a = std::clamp(t0 - dx * span / (x1 - x0), start, end - span);
    t0 = a;
    t1 = a + span;
}

double ValueAxis::toY(double v) const
{
    if (v1 == v0)
        return y0;
    return y0 + (v - v0) * (y1 - y0) / (v1 - v0);
}

double ValueAxis::toValue(double y) const
{
    if (y1 == y0)
        return v0;
    return v0 + (y - y0) * (v1 - v0) / (y1 - y0);
}

// ---- ticks and labels ------------------------------------------------------

double niceStep(double range, int maxTicks)
{
    if (!(range > 0))
        return 1;
    const double raw = range / std::max(maxTicks, 1);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * magnitude >= raw * (1 - 1e-9))
            return m * magnitude;
    return 10 * magnitude;
}

std::vector<Tick> timeTicks(double t0, double t1, int maxTicks)
{
    std::vector<Tick> ticks;
    if (!(t1 > t0))
        return ticks;
    const double step = niceStep(t1 - t0, maxTicks);
    // Seconds once the window reaches a second and steps are tenths or more; milliseconds otherwise.
    const bool seconds = step >= 0.1 * (1 - 1e-9) && t1 >= 1 - 1e-9;
    const double unit = seconds ? 1.0 : 1e-3;
    const int decimals = decimalsFor(step / unit);
    const char *suffix = seconds ? " s" : " ms";
    for (double k = std::ceil(t0 / step - 1e-6); k * step <= t1 + step * 1e-6; k += 1) {
        const double v = k * step;
        ticks.push_back({v, fixed(v / unit, decimals) + suffix});
    }
    return ticks;
}

std::vector<Tick> bytesTicks(double top, int maxTicks)
{
    return bytesTicksBetween(0, top > 0 ? top : kGB, maxTicks);
}

std::vector<Tick> bytesTicksBetween(double lo, double hi, int maxTicks)
{
    if (!(hi > lo))
        hi = lo + kGB;
    const double step = niceStep(hi - lo, maxTicks);
    const int decimals = decimalsFor(step / kGB);
    std::vector<Tick> ticks;
    const auto first = static_cast<long>(std::floor(lo / step + 1e-9));
    const auto last = static_cast<long>(std::ceil(hi / step - 1e-9));
    for (long k = first; k <= std::max(last, first + 1); ++k) {
        const double v = double(k) * step;
        ticks.push_back({v, fixed(v / kGB, decimals) + " GB"});
    }
    return ticks;
}

std::pair<double, double> curveRange(const std::vector<CurvePoint> &curve, double t0, double t1)
{
    if (curve.empty())
        return {0, 0};
    double lo = double(curveBytesAt(curve, t0)), hi = lo;
    for (const CurvePoint &p : curve)
        if (p.time > t0 && p.time < t1) {
            lo = std::min(lo, double(p.bytes));
            hi = std::max(hi, double(p.bytes));
        }
    return {lo, hi};
}

double fp8Share(const Lifetime &l)
{
    return l.bytes > 0 ? std::clamp(double(l.fp8Bytes) / double(l.bytes), 0.0, 1.0) : 0.0;
}

std::string fp8Text(const Lifetime &l)
{
    return l.fp8Bytes > 0 ? formatGB(double(l.fp8Bytes)) + " of it in FP8" : std::string();
}

std::string formatMilliseconds(double seconds)
{
    return printf1("%.1f ms", seconds * 1e3);
}

std::string peakLabel(const RankTimeline &rank)
{
    return "peak " + formatGB(double(rank.peak_bytes)) + " at " + formatSeconds(rank.peak_time);
}

// ---- rows ------------------------------------------------------------------

std::vector<int> packRows(const std::vector<Span> &spans)
{
    std::vector<std::size_t> order(spans.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return spans[a].start < spans[b].start; });

    using Busy = std::pair<double, int>; // (end, row)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::priority_queue<int, std::vector<int>, std::greater<>> free;
    int rows = 0;
    std::vector<int> rowOf(spans.size(), 0);
    for (std::size_t i : order) {
        while (!busy.empty() && busy.top().first <= spans[i].start) {
            free.push(busy.top().second);
            busy.pop();
        }
        int row = rows;
        if (!free.empty()) {
            row = free.top();
            free.pop();
        } else {
            ++rows;
        }
        rowOf[i] = row;
        busy.push({std::max(spans[i].end, spans[i].start), row});
    }
    return rowOf;
}

bool isPersistent(LifetimeKind kind)
{
    return kind == LifetimeKind::Persistent || kind == LifetimeKind::Gradients;
}

bool isTransient(LifetimeKind kind)
{
    return !isPersistent(kind) && kind != LifetimeKind::Activations;
}

std::string_view rowSectionLabel(RowSection section)
{
    switch (section) {
    case RowSection::Persistent:
        return "Persistent";
    case RowSection::Activations:
        return "Activations";
    case RowSection::Transients:
        return "Transients";
    }
    return "";
}

GanttRows ganttRows(const Timeline &timeline, const RankTimeline &rank, RowMode mode)
{
    const auto &ls = rank.lifetimes;
    GanttRows out;
    out.rowOf.assign(ls.size(), 0);

    std::vector<std::size_t> persistent;
    for (std::size_t i = 0; i < ls.size(); ++i)
        if (isPersistent(ls[i].kind))
            persistent.push_back(i);
    std::stable_sort(persistent.begin(), persistent.end(), [&](std::size_t a, std::size_t b) {
        return std::make_tuple(int(ls[a].category), -ls[a].bytes) < std::make_tuple(int(ls[b].category), -ls[b].bytes);
    });
    // Gradients created layer by layer (grad_buffer on_demand) share their
    // ledger row's line: the bars start one after another and end together.
    std::map<std::int32_t, int> rowOfEntry;
    for (std::size_t i : persistent) {
        const bool piece = ls[i].kind == LifetimeKind::Gradients && ls[i].layer >= 0;
        if (piece) {
            const auto found = rowOfEntry.find(ls[i].entry);
            if (found != rowOfEntry.end()) {
                out.rowOf[i] = found->second;
                out.rows[std::size_t(found->second)].bytes += ls[i].bytes;
                continue;
            }
            rowOfEntry[ls[i].entry] = int(out.rows.size());
        }
        out.rowOf[i] = int(out.rows.size());
        Lifetime whole = ls[i];
        whole.layer = -1;
        out.rows.push_back({RowSection::Persistent, lifetimeLabel(timeline, rank, whole), ls[i].bytes});
    }

    const auto appendPacked = [&](const std::vector<std::size_t> &members, RowSection section) {
        std::vector<Span> spans;
        spans.reserve(members.size());
        for (std::size_t i : members)
            spans.push_back({ls[i].start, ls[i].end});
        const std::vector<int> packed = packRows(spans);
        const int base = int(out.rows.size());
        int count = 0;
        for (std::size_t k = 0; k < members.size(); ++k) {
            out.rowOf[members[k]] = base + packed[k];
            count = std::max(count, packed[k] + 1);
        }
        for (int r = 0; r < count; ++r)
            out.rows.push_back({section, ""});
    };

    if (mode == RowMode::Packed) {
        std::vector<std::size_t> rest;
        for (std::size_t i = 0; i < ls.size(); ++i)
            if (!isPersistent(ls[i].kind))
                rest.push_back(i);
        appendPacked(rest, RowSection::Activations);
        return out;
    }

    // One row per (chunk, micro-batch), in order of the group's first allocation.
    // A served forward (core/serving/inferencetimeline.h) has no saved activations:
    // one row per layer instead, its KV cache and its working sets together,
    // so the short lives of the one stand beside the long life of the other.
    bool chunked = false;
    std::map<std::pair<int, int>, std::vector<std::size_t>> groups;
    std::map<int, std::vector<std::size_t>> servedLayers;
    std::vector<std::size_t> transients;
    for (std::size_t i = 0; i < ls.size(); ++i) {
        const bool served = ls[i].kind == LifetimeKind::KvCache || ls[i].kind == LifetimeKind::InferenceWorkingSet;
        if (ls[i].kind == LifetimeKind::Activations) {
            groups[{ls[i].chunk, ls[i].microbatch}].push_back(i);
            chunked = chunked || ls[i].chunk > 0;
        } else if (served && ls[i].layer >= 0) {
            servedLayers[ls[i].layer].push_back(i);
        } else if (isTransient(ls[i].kind)) {
            transients.push_back(i);
        }
    }
    std::vector<std::pair<double, std::pair<int, int>>> order;
    for (const auto &[key, members] : groups) {
        double first = ls[members.front()].start;
        for (std::size_t i : members)
            first = std::min(first, ls[i].start);
        order.push_back({first, key});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &[first, key] : order) {
        const int row = int(out.rows.size());
        for (std::size_t i : groups[key])
            out.rowOf[i] = row;
        std::string label = "mb " + std::to_string(key.second);
        if (chunked && timeline.schedule == PipelineSchedule::DualPipe)
            label += key.first == 0 ? " fwd" : " rev"; // DualPipe's two directions (chunkName)
        else if (chunked)
            label += " c" + std::to_string(key.first);
        out.rows.push_back({RowSection::Activations, std::move(label)});
    }
    for (const auto &[layer, members] : servedLayers) {
        for (std::size_t i : members)
            out.rowOf[i] = int(out.rows.size());
        out.rows.push_back({RowSection::Activations, "layer " + std::to_string(layer)});
    }
    appendPacked(transients, RowSection::Transients);
    return out;
}

// ---- phases ----------------------------------------------------------------

std::string_view phaseLabel(PhaseKind kind)
{
    switch (kind) {
    case PhaseKind::Forward:
        return "Forward";
    case PhaseKind::Backward:
        return "Backward";
    case PhaseKind::Optimizer:
        return "Optimizer step";
    case PhaseKind::Weight:
        return "Weight gradients";
    }
    return "";
}

std::vector<Phase> phasesOf(const RankTimeline &rank)
{
    std::vector<Phase> phases;
    phases.reserve(rank.ops.size() + 1);
    for (const TimedOp &op : rank.ops)
        phases.push_back({op.start, op.end,
                          op.op.kind == OpKind::Forward  ? PhaseKind::Forward
                          : op.op.kind == OpKind::Weight ? PhaseKind::Weight
                                                         : PhaseKind::Backward,
                          op.op.microbatch, op.op.chunk});
    if (rank.optimizer_end > rank.optimizer_start)
        phases.push_back({rank.optimizer_start, rank.optimizer_end, PhaseKind::Optimizer, -1, -1});
    return phases;
}

std::string phaseTag(const Timeline &timeline, const Phase &phase)
{
    if (phase.kind == PhaseKind::Optimizer)
        return "Opt";
    if (timeline.kind != TimelineKind::Iteration)
        return timeline.kind == TimelineKind::Prefill ? "Prefill" : "Decode";
    const char *letter = phase.kind == PhaseKind::Forward ? "F" : phase.kind == PhaseKind::Weight ? "W" : "B";
    std::string tag = letter + std::to_string(phase.microbatch);
    if (phase.chunk > 0)
        tag += "." + std::to_string(phase.chunk);
    return tag;
}

std::string phaseTitle(const Timeline &timeline, const Phase &phase)
{
    if (timeline.kind == TimelineKind::Prefill)
        return "Prefill forward, one pass through the rank's layers";
    if (timeline.kind == TimelineKind::Decode)
        return "Decode step, one pass through the rank's layers (one new token per sequence)";
    std::string title(phaseLabel(phase.kind));
    if (phase.kind == PhaseKind::Optimizer)
        return title;
    title += ", micro-batch " + std::to_string(phase.microbatch);
    if (phase.chunk > 0)
        title += ", chunk " + std::to_string(phase.chunk);
    return title;
}

// ---- layout ----------------------------------------------------------------

GanttFrame ganttFrame(double width, double height, double lineHeight, double gutterWidth, double legendTop)
{
    GanttFrame f;
    const double top = std::max(1.8 * lineHeight, legendTop); // legend
    const double bottom = 1.8 * lineHeight; // time axis labels
    const double right = std::max(lineHeight, 8.0);
    const double gap = 1.2 * lineHeight; // between curve and rows (the peak label may sit there)
    const double plotWidth = std::max(width - gutterWidth - right, 1.0);
    const double available = std::max(height - top - bottom - gap, 2.0);
    const double curveHeight = std::round(0.36 * available);
    f.curveArea = {gutterWidth, top, plotWidth, curveHeight};
    f.rowsArea = {gutterWidth, top + curveHeight + gap, plotWidth, available - curveHeight};
    f.maxTimeTicks = std::max(2, static_cast<int>(plotWidth / (6.5 * lineHeight)));
    f.maxBytesTicks = std::max(1, static_cast<int>(curveHeight / (2.0 * lineHeight)));
    f.maxRowHeight = std::round(1.6 * lineHeight);
    f.labelRowHeight = std::ceil(lineHeight);
    return f;
}

Bytes curveBytesAt(const std::vector<CurvePoint> &curve, double t)
{
    const auto it = std::upper_bound(curve.begin(), curve.end(), t,
                                     [](double time, const CurvePoint &p) { return time < p.time; });
    return it == curve.begin() ? 0 : std::prev(it)->bytes;
}

double iterationEnd(const Timeline &timeline, const RankTimeline &rank)
{
    double end = std::max({timeline.step_time, rank.optimizer_end, rank.pipeline_end});
    for (const Lifetime &l : rank.lifetimes)
        end = std::max(end, l.end);
    for (const TimedOp &op : rank.ops)
        end = std::max(end, op.end);
    if (!rank.curve.empty())
        end = std::max(end, rank.curve.back().time);
    return end > 0 ? end : 1.0;
}

std::vector<double> rowHeights(const GanttRows &rows, double height, double maxRowHeight, double labelRowHeight)
{
    const std::size_t n = rows.rows.size();
    std::vector<double> heights(n, maxRowHeight);
    if (n == 0 || double(n) * maxRowHeight <= height)
        return heights;
    std::array<std::size_t, 3> count{};
    for (const GanttRow &r : rows.rows)
        ++count[std::size_t(r.section)];
    const double even = height / double(n);
    std::array<double, 3> h{even, even, even};
    const std::array<double, 3> share{0.3, 0.0, 0.1};
    double used = 0;
    for (std::size_t s : {std::size_t(0), std::size_t(2)}) {
        if (count[s] == 0)
            continue;
        h[s] = std::clamp(share[s] * height / double(count[s]), even, maxRowHeight);
        if (s == 0) // the persistent rows' labels, up to 45 % of the height
            h[s] = std::max(h[s], std::min({labelRowHeight, maxRowHeight, 0.45 * height / double(count[s])}));
        used += h[s] * double(count[s]);
    }
    if (count[1] > 0)
        h[1] = std::max(height - used, 0.0) / double(count[1]);
    else if (used < height) // no activation rows: the others share everything
        for (std::size_t s : {std::size_t(0), std::size_t(2)})
            h[s] = std::min(maxRowHeight, h[s] * height / used);
    for (std::size_t r = 0; r < n; ++r)
        heights[r] = h[std::size_t(rows.rows[r].section)];
    return heights;
}

GanttGeometry layoutGantt(const Timeline &timeline, const RankTimeline &rank, const GanttRows &rows,
                          const std::vector<Phase> &phases, const TimeAxis &axis, const GanttFrame &frame)
{
    GanttGeometry g;
    const GanttRect &ca = frame.curveArea;
    const GanttRect &ra = frame.rowsArea;

    const std::vector<Tick> bt = viewBytesTicks(timeline, rank, axis, frame);
    const ValueAxis values = bytesAxis(bt, ca);
    for (const Tick &t : bt)
        g.bytesTicks.push_back({values.toY(t.value), t.label});
    g.capacityY = values.toY(double(timeline.ledger.capacity_bytes));
    g.usableY = values.toY(double(timeline.ledger.usable_bytes));

    for (const Tick &t : timeTicks(axis.t0, axis.t1, frame.maxTimeTicks))
        g.timeTicks.push_back({axis.toX(t.value), t.label});

    // The memory curve as a step line: each point's bytes hold until the next point.
    const auto &c = rank.curve;
    if (!c.empty()) {
        std::size_t i = 0;
        while (i + 1 < c.size() && c[i + 1].time <= axis.t0)
            ++i;
        double y = values.toY(double(c[i].bytes));
        g.curve.push_back({axis.toX(std::max(c[i].time, axis.t0)), y});
        for (++i; i < c.size() && c[i].time <= axis.t1; ++i) {
            const double x = axis.toX(c[i].time);
            g.curve.push_back({x, y});
            y = values.toY(double(c[i].bytes));
            g.curve.push_back({x, y});
        }
        g.curve.push_back({axis.toX(std::min(axis.t1, axis.end)), y});
        g.curveFill = g.curve;
        g.curveFill.push_back({g.curve.back().x, ca.bottom()});
        g.curveFill.push_back({g.curve.front().x, ca.bottom()});
    }
    g.peak = {axis.toX(rank.peak_time), values.toY(double(rank.peak_bytes))};
    g.peakVisible = rank.peak_time >= axis.t0 && rank.peak_time <= axis.t1;

    // Rows.
    const std::size_t n = rows.rows.size();
    g.rowHeight = rowHeights(rows, ra.h, frame.maxRowHeight, frame.labelRowHeight);
    g.sectionTop.assign(3, -1);
    double y = ra.y;
    for (std::size_t r = 0; r < n; ++r) {
        g.rowTop.push_back(y);
        y += g.rowHeight[r];
        double &s = g.sectionTop[std::size_t(rows.rows[r].section)];
        if (s < 0)
            s = g.rowTop.back();
    }
    g.bars.resize(rank.lifetimes.size());
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        const Lifetime &l = rank.lifetimes[i];
        if (l.end < axis.t0 || l.start > axis.t1 || i >= rows.rowOf.size())
            continue;
        const double x = axis.toX(std::max(l.start, axis.t0));
        const double r = axis.toX(std::min(l.end, axis.t1));
        const auto row = std::size_t(rows.rowOf[i]);
        const double gap = g.rowHeight[row] >= 3 ? 1 : 0;
        // A pixel off the end of bars wider than 3 px, so back-to-back lifetimes in a row
        // (one layer's recompute after another's) stay apart.
        const double endGap = !isPersistent(l.kind) && r - x >= 3 ? 1 : 0;
        g.bars[i] = {x, g.rowTop[row] + gap, std::max(r - x - endGap, 1.0), std::max(g.rowHeight[row] - gap, 1.0)};
    }

    g.phases.resize(phases.size());
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const Phase &p = phases[i];
        if (p.end < axis.t0 || p.start > axis.t1)
            continue;
        const double x = axis.toX(std::max(p.start, axis.t0));
        const double r = axis.toX(std::min(p.end, axis.t1));
        g.phases[i] = {x, ca.y, std::max(r - x, 1.0), ra.bottom() - ca.y};
    }
    return g;
}

std::vector<Tick> viewBytesTicks(const Timeline &timeline, const RankTimeline &rank, const TimeAxis &axis,
                                 const GanttFrame &frame)
{
    if (frame.fitBytes && !rank.curve.empty()) {
        auto [lo, hi] = curveRange(rank.curve, axis.t0, axis.t1);
        const double pad = std::max((hi - lo) * 0.05, hi * 1e-3);
        return bytesTicksBetween(std::max(lo - pad, 0.0), hi + pad, frame.maxBytesTicks);
    }
    return bytesTicks(double(std::max(rank.peak_bytes, timeline.ledger.capacity_bytes)), frame.maxBytesTicks);
}

ValueAxis bytesAxis(const std::vector<Tick> &ticks, const GanttRect &area)
{
    return {ticks.front().value, ticks.back().value, area.bottom(), area.y};
}

GanttFrame bandsFrame(double width, double height, double lineHeight, double gutterWidth, double top)
{
    GanttFrame f = ganttFrame(width, height, lineHeight, gutterWidth, top);
    f.curveArea.h = f.rowsArea.bottom() - f.curveArea.y;
    f.rowsArea = {f.curveArea.x, f.curveArea.bottom(), f.curveArea.w, 0};
    f.maxBytesTicks = std::max(1, static_cast<int>(f.curveArea.h / (2.6 * lineHeight)));
    return f;
}

std::vector<std::vector<BandStep>> stackBands(const RankTimeline &rank)
{
    const auto &ls = rank.lifetimes;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < ls.size(); ++i)
        if (ls[i].end > ls[i].start)
            order.push_back(i);
    // Persistent rows first (by category, larger first), then by allocation time.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const bool pa = isPersistent(ls[a].kind), pb = isPersistent(ls[b].kind);
        if (pa != pb)
            return pa;
        if (pa)
            return std::make_tuple(int(ls[a].category), -ls[a].bytes)
                   < std::make_tuple(int(ls[b].category), -ls[b].bytes);
        return ls[a].start < ls[b].start;
    });
    std::vector<std::size_t> rankInStack(ls.size(), 0);
    for (std::size_t k = 0; k < order.size(); ++k)
        rankInStack[order[k]] = k;

    std::vector<double> times;
    for (std::size_t i : order) {
        times.push_back(ls[i].start);
        times.push_back(ls[i].end);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());

    // Starts in time order; the alive set kept in stack order.
    std::vector<std::size_t> byStart = order;
    std::stable_sort(byStart.begin(), byStart.end(),
                     [&](std::size_t a, std::size_t b) { return ls[a].start < ls[b].start; });
    std::vector<std::vector<BandStep>> bands(ls.size());
    std::vector<std::size_t> alive;
    std::size_t next = 0;
    for (double t : times) {
        alive.erase(std::remove_if(alive.begin(), alive.end(), [&](std::size_t i) { return ls[i].end <= t; }),
                    alive.end());
        bool added = false;
        for (; next < byStart.size() && ls[byStart[next]].start <= t; ++next) {
            alive.push_back(byStart[next]);
            added = true;
        }
        if (added)
            std::sort(alive.begin(), alive.end(),
                      [&](std::size_t a, std::size_t b) { return rankInStack[a] < rankInStack[b]; });
        double offset = 0;
        for (std::size_t i : alive) {
            auto &steps = bands[i];
            if (steps.empty() || steps.back().offset != offset)
                steps.push_back({t, offset});
            offset += double(ls[i].bytes);
        }
    }
    return bands;
}

namespace {

double offsetAt(const std::vector<BandStep> &steps, double t)
{
    const auto it
        = std::upper_bound(steps.begin(), steps.end(), t, [](double time, const BandStep &s) { return time < s.time; });
    return it == steps.begin() ? steps.front().offset : std::prev(it)->offset;
}

} // namespace

int bandAt(const RankTimeline &rank, const std::vector<std::vector<BandStep>> &bands, double t, double bytes)
{
    for (std::size_t i = 0; i < bands.size() && i < rank.lifetimes.size(); ++i) {
        const Lifetime &l = rank.lifetimes[i];
        if (bands[i].empty() || t < l.start || t >= l.end)
            continue;
        const double o = offsetAt(bands[i], t);
        if (bytes >= o && bytes < o + double(l.bytes))
            return int(i);
    }
    return -1;
}

namespace {

using BandSegment = std::pair<std::pair<double, double>, double>; // ([from, to), offset)

// A band's segments inside the window. A segment narrower than half a pixel hands
// its span to the next one: invisible, and it keeps thousands of bands to a few
// segments per pixel column.
std::vector<BandSegment> bandSegments(const Lifetime &l, const std::vector<BandStep> &steps, const TimeAxis &axis)
{
    std::vector<BandSegment> segments;
    const double a = std::max(l.start, axis.t0), b = std::min(l.end, axis.t1);
    if (steps.empty() || a >= b)
        return segments;
    double carried = -1;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        double from = std::max(steps[k].time, a);
        const double to = std::min(k + 1 < steps.size() ? steps[k + 1].time : l.end, b);
        if (to <= from)
            continue;
        if (carried >= 0)
            from = carried;
        const bool last = k + 1 >= steps.size() || steps[k + 1].time >= b;
        if (!last && axis.toX(to) - axis.toX(from) < 0.5) {
            carried = from;
            continue;
        }
        carried = -1;
        segments.push_back({{from, to}, steps[k].offset});
    }
    return segments;
}

} // namespace

std::vector<std::vector<GanttPoint>> bandPolygons(const RankTimeline &rank,
                                                  const std::vector<std::vector<BandStep>> &bands, const TimeAxis &axis,
                                                  const ValueAxis &values)
{
    std::vector<std::vector<GanttPoint>> polygons(bands.size());
    for (std::size_t i = 0; i < bands.size() && i < rank.lifetimes.size(); ++i) {
        const Lifetime &l = rank.lifetimes[i];
        const std::vector<BandSegment> segments = bandSegments(l, bands[i], axis);
        auto &poly = polygons[i];
        for (const auto &[span, offset] : segments) {
            const double y = values.toY(offset);
            poly.push_back({axis.toX(span.first), y});
            poly.push_back({axis.toX(span.second), y});
        }
        // Back along the top edge (an index loop: clang 14 cannot parse
        // libstdc++ 12's reverse_view, which clang-tidy would then not analyse).
        for (std::size_t i = segments.size(); i-- > 0;) {
            const auto &[span, offset] = segments[i];
            const double y = values.toY(offset + double(l.bytes));
            poly.push_back({axis.toX(span.second), y});
            poly.push_back({axis.toX(span.first), y});
        }
    }
    return polygons;
}

std::vector<std::vector<GanttRect>> bandRects(const RankTimeline &rank, const std::vector<std::vector<BandStep>> &bands,
                                              const TimeAxis &axis, const ValueAxis &values)
{
    std::vector<std::vector<GanttRect>> rects(bands.size());
    for (std::size_t i = 0; i < bands.size() && i < rank.lifetimes.size(); ++i) {
        const Lifetime &l = rank.lifetimes[i];
        for (const auto &[span, offset] : bandSegments(l, bands[i], axis)) {
            const double x = axis.toX(span.first), r = axis.toX(span.second);
            const double bottom = values.toY(offset), top = values.toY(offset + double(l.bytes));
            const double h = std::abs(bottom - top);
            // A pixel between stacked bands three pixels or taller keeps neighbours of one colour apart.
            const double gap = h >= 3 ? 1 : 0;
            rects[i].push_back({x, std::min(top, bottom) + gap, std::max(r - x, 1.0), std::max(h - gap, 0.5)});
        }
    }
    return rects;
}

int itemAt(const std::vector<GanttRect> &rects, double x, double y)
{
    for (std::size_t i = rects.size(); i-- > 0;)
        if (!rects[i].isEmpty() && rects[i].contains(x, y))
            return int(i);
    return -1;
}

} // namespace memledger
