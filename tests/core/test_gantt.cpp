// SPDX-License-Identifier: MIT
// The lifetimes view's geometry as pure functions: time <-> x, zoom and pan,
// ticks, row packing, phases and hit testing (Qt Creator's
// tst_timelinecoordinates style, as tables).
#include "core/timeline/timeline.h"
#include "core/view/gantt.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("Time and x map onto each other and round-trip", "[gantt]")
{
    const auto [start, end, x0, x1] = GENERATE(table<double, double, double, double>({
        {0.0, 1.0, 0.0, 100.0},
        {0.0, 8.13, 120.0, 1380.0},
        {2.5, 3.0, 10.0, 11.0},
        {0.0, 1e-3, 50.0, 1650.0},
    }));
    const TimeAxis a = TimeAxis::over(start, end, x0, x1);
    CHECK(a.toX(start) == Approx(x0));
    CHECK(a.toX(end) == Approx(x1));
    CHECK(a.toTime(x0) == Approx(start));
    CHECK(a.toTime(x1) == Approx(end));
    for (double f : {0.0, 0.1, 0.37, 0.5, 0.99, 1.0}) {
        const double t = start + f * (end - start);
        CHECK(a.toTime(a.toX(t)) == Approx(t).margin(1e-12));
        const double x = x0 + f * (x1 - x0);
        CHECK(a.toX(a.toTime(x)) == Approx(x));
    }
    CHECK_FALSE(a.isZoomed());
}

TEST_CASE("Zooming keeps the time under the cursor at its pixel", "[gantt]")
{
    const auto [cursorFraction, factor] = GENERATE(table<double, double>({
        {0.5, 2.0},
        {0.25, 4.0},
        {0.8, 1.5},
        {0.5, 100.0},
        {0.3, 10.0},
    }));
    TimeAxis a = TimeAxis::over(0, 10, 100, 1100);
    a.zoomAround(3.0, 2.0); // start from a zoomed window away from the edges
    const double x = 100 + cursorFraction * 1000;
    const double t = a.toTime(x);
    const double span = a.visibleSpan();
    a.zoomAround(t, factor);
    CHECK(a.visibleSpan() == Approx(span / factor));
    CHECK(a.toX(t) == Approx(x));
    CHECK(a.isZoomed());
    // Zooming back out by the same factor restores the window.
    a.zoomAround(t, 1 / factor);
    CHECK(a.visibleSpan() == Approx(span));
}

TEST_CASE("Zoom is clamped to the iteration and to a minimum span", "[gantt]")
{
    TimeAxis a = TimeAxis::over(0, 10, 0, 1000);
    a.zoomAround(5, 0.5); // zooming out of the whole iteration changes nothing
    CHECK(a.t0 == 0);
    CHECK(a.t1 == 10);
    a.zoomAround(9.9, 4); // near the right edge: shifted back inside
    CHECK(a.visibleSpan() == Approx(2.5));
    CHECK(a.t1 <= 10);
    CHECK(a.t0 >= 0);
    a.zoomAround(5, 1e12);
    CHECK(a.visibleSpan() == Approx(a.minSpan()));
    a.reset();
    CHECK(a.t0 == 0);
    CHECK(a.t1 == 10);
}

TEST_CASE("Panning moves the window by pixels and stops at the ends", "[gantt]")
{
    const auto [dx, expectedT0] = GENERATE(table<double, double>({
        {0.0, 4.0},
        {-100.0, 4.2}, // drag left: later times come in (2 s over 1000 px)
        {100.0, 3.8},
        {-1e6, 8.0}, // clamped at the end
        {1e6, 0.0}, // clamped at the start
    }));
    TimeAxis a = TimeAxis::over(0, 10, 0, 1000);
    a.t0 = 4;
    a.t1 = 6;
    a.pan(dx);
    CHECK(a.t0 == Approx(expectedT0));
    CHECK(a.visibleSpan() == Approx(2.0));
}

TEST_CASE("Nice steps are 1, 2 or 5 times a power of ten", "[gantt][ticks]")
{
    const auto [range, maxTicks, step] = GENERATE(table<double, int, double>({
        {10.0, 10, 1.0},
        {10.0, 5, 2.0},
        {10.0, 3, 5.0},
        {8.13, 10, 1.0},
        {0.466, 10, 0.05},
        {80e9, 5, 20e9},
        {141e9, 5, 50e9},
        {1.0, 1, 1.0},
        {0.003, 6, 0.0005},
    }));
    CHECK(niceStep(range, maxTicks) == Approx(step));
}

TEST_CASE("Time ticks are labelled in ms below 0.1 s steps and in s above", "[gantt][ticks]")
{
    using Labels = std::vector<std::string>;
    const auto [t0, t1, maxTicks, labels] = GENERATE(table<double, double, int, Labels>({
        {0.0, 8.13, 5, Labels{"0 s", "2 s", "4 s", "6 s", "8 s"}},
        {0.0, 1.0, 5, Labels{"0.0 s", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1.0 s"}},
        {0.0, 0.466, 5, Labels{"0 ms", "100 ms", "200 ms", "300 ms", "400 ms"}},
        {0.31, 0.36, 5, Labels{"310 ms", "320 ms", "330 ms", "340 ms", "350 ms", "360 ms"}},
        {1.2345, 1.2355, 2, Labels{"1234.5 ms", "1235.0 ms", "1235.5 ms"}},
    }));
    const std::vector<Tick> ticks = timeTicks(t0, t1, maxTicks);
    Labels got;
    for (const Tick &t : ticks) {
        got.push_back(t.label);
        CHECK(t.value >= t0 - 1e-12);
        CHECK(t.value <= t1 + 1e-12);
    }
    CHECK(got == labels);
}

TEST_CASE("Bytes ticks start at zero and reach the top in GB", "[gantt][ticks]")
{
    using Labels = std::vector<std::string>;
    const auto [top, maxTicks, labels] = GENERATE(table<double, int, Labels>({
        {80e9, 4, Labels{"0 GB", "20 GB", "40 GB", "60 GB", "80 GB"}},
        {85.9e9, 4, Labels{"0 GB", "50 GB", "100 GB"}},
        {1.2e9, 3, Labels{"0.0 GB", "0.5 GB", "1.0 GB", "1.5 GB"}},
    }));
    Labels got;
    for (const Tick &t : bytesTicks(top, maxTicks))
        got.push_back(t.label);
    CHECK(got == labels);
    CHECK(bytesTicks(top, maxTicks).back().value >= top);
}

TEST_CASE("Durations and the peak label read like the seeds", "[gantt]")
{
    CHECK(formatMilliseconds(0.8383689) == "838.4 ms");
    CHECK(formatSeconds(0.8383689) == "0.84 s");
    CHECK(formatSeconds(8.13) == "8.13 s");
    CHECK(formatSeconds(0.0125) == "12.5 ms");
    RankTimeline r;
    r.peak_bytes = 71'200'000'000;
    r.peak_time = 0.84;
    CHECK(peakLabel(r) == "peak 71.20 GB at 0.84 s");
}

TEST_CASE("packRows gives each span the lowest row free at its start", "[gantt][rows]")
{
    using Spans = std::vector<Span>;
    using Rows = std::vector<int>;
    const auto [spans, rows] = GENERATE(table<Spans, Rows>({
        {Spans{}, Rows{}},
        {Spans{{0, 1}}, Rows{0}},
        // Disjoint and touching spans share row 0 (half-open intervals).
        {Spans{{0, 1}, {1, 2}, {2, 3}}, Rows{0, 0, 0}},
        // Nested: the inner span needs a second row.
        {Spans{{0, 10}, {2, 3}, {4, 5}}, Rows{0, 1, 1}},
        // A staircase of in-flight micro-batches (1F1B warm-up, p = 3).
        {Spans{{0, 6}, {1, 5}, {2, 4}, {4.5, 7}}, Rows{0, 1, 2, 2}},
        // Input order does not matter, rows follow start times; the freed row 0 is reused first.
        {Spans{{3, 4}, {0, 2}, {1, 5}, {2, 3}}, Rows{0, 0, 1, 0}},
        // Equal starts keep input order.
        {Spans{{0, 1}, {0, 1}, {0, 1}}, Rows{0, 1, 2}},
        // Lowest free row, not the most recently freed one.
        {Spans{{0, 4}, {0, 2}, {0, 3}, {3, 5}, {4, 6}}, Rows{0, 1, 2, 1, 0}},
    }));
    CHECK(packRows(spans) == rows);
}

TEST_CASE("packRows never overlaps two spans in a row and uses as many rows as the deepest overlap", "[gantt][rows]")
{
    std::vector<Span> spans;
    for (int i = 0; i < 300; ++i) {
        const double s = (i * 37) % 101;
        spans.push_back({s, s + 1 + (i * 13) % 17});
    }
    const std::vector<int> rows = packRows(spans);
    int depth = 0;
    for (const Span &a : spans) {
        int alive = 0;
        for (const Span &b : spans)
            alive += b.start <= a.start && a.start < b.end;
        depth = std::max(depth, alive);
    }
    CHECK(*std::max_element(rows.begin(), rows.end()) + 1 == depth);
    for (std::size_t i = 0; i < spans.size(); ++i)
        for (std::size_t j = i + 1; j < spans.size(); ++j)
            if (rows[i] == rows[j])
                REQUIRE((spans[i].end <= spans[j].start || spans[j].end <= spans[i].start));
}

TEST_CASE("Hit testing returns the topmost rect under the point", "[gantt]")
{
    const std::vector<GanttRect> rects = {{0, 0, 10, 10}, {5, 5, 10, 10}, {}, {100, 0, 1, 1}};
    const auto [x, y, hit] = GENERATE(table<double, double, int>({
        {1, 1, 0},
        {7, 7, 1},
        {14, 14, 1},
        {15, 15, -1},
        {100, 0, 3},
        {101, 0, -1},
        {-1, 0, -1},
        {0, 0, 0},
    }));
    CHECK(itemAt(rects, x, y) == hit);
}

TEST_CASE("Gantt rows, phases and geometry of a simulated rank", "[gantt][timeline]")
{
    const Config config = configFrom(scenarioDoc("seed-000-7b-b-checkpointing"));
    const Timeline tl = simulateIteration(config);
    const RankTimeline &rank = tl.ranks.front();

    for (RowMode mode : {RowMode::Groups, RowMode::Packed}) {
        CAPTURE(int(mode));
        const GanttRows rows = ganttRows(tl, rank, mode);
        REQUIRE(rows.rowOf.size() == rank.lifetimes.size());
        // Persistent rows first, then sections in order; no two lifetimes overlap in a row
        // unless they belong to one activation group.
        for (std::size_t r = 1; r < rows.rows.size(); ++r)
            CHECK(int(rows.rows[r - 1].section) <= int(rows.rows[r].section));
        for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
            const Lifetime &l = rank.lifetimes[i];
            REQUIRE(rows.rowOf[i] >= 0);
            REQUIRE(std::size_t(rows.rowOf[i]) < rows.rows.size());
            const RowSection s = rows.rows[std::size_t(rows.rowOf[i])].section;
            CHECK((s == RowSection::Persistent) == isPersistent(l.kind));
            for (std::size_t j = i + 1; j < rank.lifetimes.size(); ++j) {
                const Lifetime &m = rank.lifetimes[j];
                if (rows.rowOf[i] == rows.rowOf[j] && s != RowSection::Activations)
                    CHECK((l.end <= m.start || m.end <= l.start));
            }
        }
    }

    const GanttRows rows = ganttRows(tl, rank, RowMode::Groups);
    const std::vector<Phase> phases = phasesOf(rank);
    REQUIRE(phases.size() >= rank.ops.size());
    CHECK(std::count_if(phases.begin(), phases.end(), [](const Phase &p) { return p.kind == PhaseKind::Optimizer; })
          == (rank.optimizer_end > rank.optimizer_start ? 1 : 0));

    const GanttFrame frame = ganttFrame(1400, 600, 16, 120);
    CHECK(frame.curveArea.bottom() < frame.rowsArea.y);
    CHECK(frame.rowsArea.bottom() < 600);
    const TimeAxis axis = TimeAxis::over(0, iterationEnd(tl, rank), frame.rowsArea.x, frame.rowsArea.right());
    const GanttGeometry g = layoutGantt(tl, rank, rows, phases, axis, frame);
    REQUIRE(g.bars.size() == rank.lifetimes.size());
    REQUIRE(g.peakVisible);
    CHECK(g.peak.x == Approx(axis.toX(rank.peak_time)));
    // The peak is the highest point of the curve (smallest y) and sits under capacity when it fits.
    double minY = 1e9;
    for (const GanttPoint &p : g.curve)
        minY = std::min(minY, p.y);
    CHECK(minY == Approx(g.peak.y));
    CHECK(g.capacityY <= g.usableY);
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        const GanttRect &b = g.bars[i];
        REQUIRE_FALSE(b.isEmpty());
        CHECK(b.x >= frame.rowsArea.x - 1e-9);
        CHECK(b.right() <= frame.rowsArea.right() + 1.0);
        CHECK(b.bottom() <= frame.rowsArea.bottom() + 1e-9);
        // The middle of a bar hits that bar (or one drawn above it).
        const int hit = itemAt(g.bars, b.x + b.w / 2, b.y + b.h / 2);
        CHECK(hit >= int(i));
    }
    CHECK(g.timeTicks.size() >= 2);
    CHECK(g.bytesTicks.front().label == "0 GB");
}

TEST_CASE("Row heights: all rows full height when they fit, persistent rows kept legible when not", "[gantt][rows]")
{
    GanttRows rows;
    for (int i = 0; i < 4; ++i)
        rows.rows.push_back({RowSection::Persistent, "p"});
    for (int i = 0; i < 60; ++i)
        rows.rows.push_back({RowSection::Activations, "mb"});
    rows.rows.push_back({RowSection::Transients, ""});

    const std::vector<double> roomy = rowHeights(rows, 2000, 20);
    CHECK(std::all_of(roomy.begin(), roomy.end(), [](double h) { return h == 20; }));

    const std::vector<double> tight = rowHeights(rows, 400, 20);
    double total = 0;
    for (double h : tight)
        total += h;
    CHECK(total == Approx(400));
    CHECK(tight.front() == Approx(20)); // 4 x 20 <= 30 % of 400
    CHECK(tight.back() == Approx(20)); // 1 x 20 <= 10 % of 400
    CHECK(tight[10] == Approx((400 - 100) / 60.0)); // activations share the rest
    CHECK(tight[10] < tight.front());
}

TEST_CASE("Gantt rows: a persistent row is one label line tall while the persistent rows take at most 45 %", "[gantt]")
{
    // Issue 34, item 21: a talk slide's rows area of 160 px gave its 3 persistent rows 30 % of it, 16 px each,
    // under a 21 px line: their labels were drawn about 7 px high, or not at all.
    GanttRows rows;
    for (int i = 0; i < 3; ++i)
        rows.rows.push_back({RowSection::Persistent, "p"});
    for (int i = 0; i < 32; ++i)
        rows.rows.push_back({RowSection::Activations, "layer"});
    rows.rows.push_back({RowSection::Transients, ""});
    const std::vector<double> without = rowHeights(rows, 160, 34);
    CHECK(without.front() == Approx(0.3 * 160 / 3)); // 16 px
    const std::vector<double> labelled = rowHeights(rows, 160, 34, 21);
    CHECK(labelled.front() == Approx(21)); // 3 x 21 = 63 px, 39 % of 160
    double total = 0;
    for (double h : labelled)
        total += h;
    CHECK(total == Approx(160));
    CHECK(labelled[3] == Approx((160 - 63 - 16) / 32.0)); // the activations share the rest
    // Too short for three lines in 45 %: as tall as 45 % allows.
    CHECK(rowHeights(rows, 100, 34, 21).front() == Approx(0.45 * 100 / 3));
}

TEST_CASE("Stacked bands: a band drops when one below it is freed and the top edge is the memory", "[gantt][bands]")
{
    RankTimeline r;
    auto add = [&](double s, double e, Bytes b, LifetimeKind k) {
        Lifetime l;
        l.start = s;
        l.end = e;
        l.bytes = b;
        l.kind = k;
        r.lifetimes.push_back(l);
    };
    add(1, 4, 10, LifetimeKind::Activations); // 0: allocated first, freed at 4
    add(2, 6, 5, LifetimeKind::Activations); // 1: sits on 0, drops at 4
    add(0, 8, 100, LifetimeKind::Persistent); // 2: at the bottom throughout
    add(3, 3, 7, LifetimeKind::Activations); // 3: zero duration, no band
    const auto bands = stackBands(r);
    REQUIRE(bands.size() == 4);
    CHECK(bands[2].size() == 1);
    CHECK(bands[2][0].offset == 0);
    REQUIRE(bands[0].size() == 1);
    CHECK(bands[0][0].offset == 100);
    REQUIRE(bands[1].size() == 2);
    CHECK(bands[1][0].time == 2);
    CHECK(bands[1][0].offset == 110);
    CHECK(bands[1][1].time == 4);
    CHECK(bands[1][1].offset == 100);
    CHECK(bands[3].empty());

    const auto [t, bytes, hit] = GENERATE(table<double, double, int>({
        {0.5, 50, 2},
        {2.5, 105, 0},
        {2.5, 112, 1},
        {5, 102, 1},
        {5, 112, -1},
        {9, 1, -1},
    }));
    CHECK(bandAt(r, bands, t, bytes) == hit);

    const TimeAxis axis = TimeAxis::over(0, 8, 0, 80);
    const ValueAxis values{0, 200, 200, 0};
    const auto polys = bandPolygons(r, bands, axis, values);
    REQUIRE(polys[1].size() == 8); // two segments: bottom 2 x 2 points, top 2 x 2 points
    CHECK(polys[1][0].x == Approx(20));
    CHECK(polys[1][0].y == Approx(90));
    CHECK(polys[1][3].y == Approx(100)); // dropped by 10 bytes at t = 4
    CHECK(polys[3].empty());
}

TEST_CASE("A fitted bytes axis spans the visible curve between two ticks", "[gantt][ticks]")
{
    using Labels = std::vector<std::string>;
    Labels got;
    for (const Tick &t : bytesTicksBetween(110.9e9, 112.1e9, 4))
        got.push_back(t.label);
    CHECK(got == Labels{"110.5 GB", "111.0 GB", "111.5 GB", "112.0 GB", "112.5 GB"});

    const std::vector<CurvePoint> curve = {{0, 10}, {1, 30}, {2, 20}, {3, 50}, {4, 5}};
    CHECK(curveRange(curve, 0, 4) == std::pair<double, double>(10, 50)); // the drop at t1 is not visible
    CHECK(curveRange(curve, 0, 4.5) == std::pair<double, double>(5, 50));
    CHECK(curveRange(curve, 1.5, 2.5) == std::pair<double, double>(20, 30)); // 30 holds at 1.5
    CHECK(curveRange(curve, 0.5, 0.9) == std::pair<double, double>(10, 10));

    RankTimeline r;
    r.curve = {{0, 100'000'000'000}, {1, 100'300'000'000}, {2, 100'000'000'000}};
    r.peak_bytes = 100'300'000'000;
    Timeline tl;
    tl.ledger.capacity_bytes = 80'000'000'000;
    GanttFrame frame;
    frame.maxBytesTicks = 4;
    const TimeAxis axis = TimeAxis::over(0, 3, 0, 300);
    CHECK(viewBytesTicks(tl, r, axis, frame).front().value == 0);
    frame.fitBytes = true;
    const std::vector<Tick> fitted = viewBytesTicks(tl, r, axis, frame);
    CHECK(fitted.front().value > 99e9);
    CHECK(fitted.front().value <= 100e9);
    CHECK(fitted.back().value >= 100.3e9);
    CHECK(fitted.back().value < 101e9);
}

namespace {

// GPT-3's layer without tensor parallelism or FlashAttention (h = 12288,
// s = 2048, b = 1), on one pipeline rank, 96 layers.
Config gpt3OneRank(const std::vector<std::string> &sets)
{
    std::vector<std::string> all
        = {"parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1"};
    all.insert(all.end(), sets.begin(), sets.end());
    return scenario("gpt-3-175b-64gpus-tp-only", all);
}

// The FP8 bytes of micro-batch 0's activation pieces on the first rank, and
// how many pieces carry any.
std::pair<Bytes, int> fp8OfFirstGroup(const Timeline &tl)
{
    Bytes sum = 0;
    int pieces = 0;
    for (const Lifetime &l : tl.ranks.front().lifetimes) {
        CHECK(l.fp8Bytes <= l.bytes);
        CHECK(fp8Share(l) >= 0.0);
        CHECK(fp8Share(l) <= 1.0);
        if (l.kind == LifetimeKind::Activations && l.microbatch == 0 && l.chunk == 0) {
            sum += l.fp8Bytes;
            pieces += l.fp8Bytes > 0;
        }
    }
    return {sum, pieces};
}

} // namespace

TEST_CASE("The gantt marks activations stored in FP8: quantize_fp8 policies and an FP8 recipe's inputs",
          "[gantt][timeline][fp8]")
{
    constexpr Bytes sbh = 2048LL * 1 * 12288;
    // No FP8 anywhere: nothing marked.
    const Timeline plain = simulateIteration(gpt3OneRank({}));
    CHECK(fp8OfFirstGroup(plain).first == 0);

    // mlp.fc1.output (GeLU's input, s·b·4h elements) quantised: 1 byte each
    // and one fp32 scale per 128 (the policy's defaults), in every layer's
    // MLP half: 96 pieces.
    const Timeline policy
        = simulateIteration(gpt3OneRank({R"(strategy.tensor_policies={"mlp.fc1.output":"quantize_fp8"})"}));
    const Bytes fc1 = 4 * sbh + 4 * sbh / 128 * 4;
    const auto [q, qPieces] = fp8OfFirstGroup(policy);
    CHECK(q == 96 * fc1);
    CHECK(qPieces == 96);
    for (const Lifetime &l : policy.ranks.front().lifetimes)
        if (l.kind == LifetimeKind::Activations && l.fp8Bytes > 0) {
            CHECK(l.fp8Bytes == fc1); // one layer's MLP half
            CHECK(fp8Share(l) == Approx(double(fc1) / double(l.bytes)));
            CHECK(fp8Text(l) == formatGB(double(fc1)) + " of it in FP8");
            break;
        }

    // On an H100 (the scenario's A100 has no FP8 tensor cores), Transformer Engine's tensorwise recipe saves each
    // linear layer's input as FP8, one byte per element (one scale per tensor): the QKV, the projection's and fc1's
    // inputs (s·b·h each) and fc2's (s·b·4h): 7·sbh a layer, over both halves of every layer.
    const Timeline recipe
        = simulateIteration(gpt3OneRank({"hardware=H100-SXM-80GB", "training.fp8_recipe=tensorwise"}));
    const auto [r, rPieces] = fp8OfFirstGroup(recipe);
    CHECK(r == 96 * 7 * sbh);
    CHECK(rPieces == 2 * 96);
    Lifetime none;
    none.bytes = 10;
    CHECK(fp8Text(none).empty());
    CHECK(fp8Share(none) == 0.0);
}

TEST_CASE("A legend of several lines moves the gantt's frame down — curve and rows share what is left", "[gantt]")
{
    // 600 px high, 16 px text: the one-line legend takes 1.8 lines (28.8 px),
    // the time axis 28.8 px and the gap 19.2 px, 523.2 px left: the curve
    // round(0.36 · 523.2) = 188 px, the rows the other 335.2 px.
    const GanttFrame one = ganttFrame(1400, 600, 16, 120);
    CHECK(one.curveArea.y == Approx(28.8));
    CHECK(one.curveArea.h == 188);
    CHECK(one.rowsArea.h == Approx(335.2));
    // A legend ending at 100 px: 452 px left, the curve round(162.72) = 163 px
    // from y = 100, the rows 289 px from 100 + 163 + 19.2; nothing past the axis.
    const GanttFrame tall = ganttFrame(1400, 600, 16, 120, 100);
    CHECK(tall.curveArea.y == 100);
    CHECK(tall.curveArea.h == 163);
    CHECK(tall.rowsArea.y == Approx(282.2));
    CHECK(tall.rowsArea.h == Approx(289));
    CHECK(tall.rowsArea.bottom() == Approx(one.rowsArea.bottom()));
    // A top above the one-line legend's keeps that legend's room.
    CHECK(ganttFrame(1400, 600, 16, 120, 10).curveArea.y == Approx(28.8));
    // Bands: one plot area from the same top.
    const GanttFrame bands = bandsFrame(1400, 600, 16, 120, 100);
    CHECK(bands.curveArea.y == 100);
    CHECK(bands.curveArea.bottom() == Approx(tall.rowsArea.bottom()));
}
