// SPDX-License-Identifier: MIT
#include "core/timeline/curve.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace memledger {

struct CurveBuilder::Event
{
    double time;
    Bytes delta;
};

namespace {

using Event = CurveBuilder::Event;

// Orders events by time; the order within one instant does not matter, as
// only the total after an instant becomes a point. Two LSD radix passes of
// 11 bits on a 22-bit key, the time scaled to the latest one (the product is
// monotone in the time, so a smaller key is an earlier time), then each run
// of equal keys ordered by its exact times (a run is rarely out of order; a
// long one falls back to a comparison sort, never quadratic): the timeline
// sorts tens of thousands of events per slider move, and two passes and a
// check of neighbours are far less work than the six passes a sort on all 64
// bits of the times needs. The times are not negative (EventSums::add clamps).
// Returns where the sorted events are: `events` or `spare` (n more records).
// Each pass computes the keys again: cheaper than moving them with the events.
Event *sortEvents(Event *events, Event *spare, std::size_t n, double latest)
{
    constexpr int kBits = 11;
    constexpr std::uint32_t kDigits = std::uint32_t(1) << kBits;
    constexpr std::uint32_t kTop = (std::uint32_t(1) << (2 * kBits)) - 1;
    if (n < 2)
        return events;
    const double scale = latest > 0 ? double(kTop) / latest : 0.0;
    const auto keyOf = [scale](const Event &e) {
        const double k = e.time * scale;
        return k < double(kTop) ? static_cast<std::uint32_t>(k) : kTop;
    };
    std::vector<std::uint32_t> counts(2 * kDigits, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t k = keyOf(events[i]);
        ++counts[k & (kDigits - 1)];
        ++counts[kDigits + (k >> kBits)];
    }
    for (int p = 0; p < 2; ++p) {
        std::uint32_t *count = counts.data() + std::size_t(p) * kDigits;
        const int shift = p * kBits;
        if (count[(keyOf(events[0]) >> shift) & (kDigits - 1)] == n)
            continue; // every key shares this digit
        std::uint32_t sum = 0;
        for (std::uint32_t d = 0; d < kDigits; ++d) {
            const std::uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (std::size_t i = 0; i < n; ++i)
            spare[count[(keyOf(events[i]) >> shift) & (kDigits - 1)]++] = events[i];
        std::swap(events, spare);
    }
    // Events whose times differ by less than latest / 2²² may share a key in
    // either order: put each such run in time order.
    const auto earlier = [](const Event &a, const Event &b) { return a.time < b.time; };
    std::uint32_t runKey = keyOf(events[0]);
    std::size_t runStart = 0;
    for (std::size_t i = 1; i <= n; ++i) {
        const std::uint32_t k = i < n ? keyOf(events[i]) : runKey + 1;
        if (k == runKey)
            continue;
        if (i - runStart > 1 && !std::is_sorted(events + runStart, events + i, earlier))
            std::sort(events + runStart, events + i, earlier);
        runKey = k;
        runStart = i;
    }
    return events;
}

// The events of a rank's lifetimes, summed per instant where neighbours
// share one: slot 0 of `events` is a never-equal sentinel (NaN), so "the
// latest start or end event" needs no check for none.
struct EventSums
{
    Event *events;
    std::size_t n = 1;
    std::size_t lastStart = 0, lastEnd = 0; // the latest new start and end events
    double latest = 0;

    void add(double time, Bytes delta, bool start)
    {
        time = time > 0 ? time : 0.0; // -0.0 and 0.0 alike; nothing before the start
        if (events[lastStart].time == time) {
            events[lastStart].delta += delta;
        } else if (events[lastEnd].time == time) {
            events[lastEnd].delta += delta;
        } else {
            (start ? lastStart : lastEnd) = n;
            events[n++] = {time, delta};
            latest = std::max(latest, time);
        }
    }
};

} // namespace

CurveBuilder::CurveBuilder() = default;
CurveBuilder::~CurveBuilder() = default;

void CurveBuilder::build(RankTimeline &rt, std::size_t points)
{
    // Only the total after all events of one instant becomes a point, so
    // events of one instant may be summed. Lifetimes come in runs that share
    // instants (a micro-batch's pieces share their start; one half's working
    // set ends where the next begins): summing into the latest start or end
    // event of the same instant leaves the sort far fewer events (EventSums).
    const std::size_t most = rt.lifetimes.size() * 2;
    if (m_capacity < 2 * most + 1) {
        m_capacity = 2 * most + 1;
        m_events.reset(new Event[m_capacity]);
    }
    Event *const events = m_events.get();
    events[0] = {std::numeric_limits<double>::quiet_NaN(), 0};
    EventSums sums{events};
    for (const Lifetime &l : rt.lifetimes) {
        sums.add(l.start, l.bytes, true);
        sums.add(l.end, -l.bytes, false);
    }
    const std::size_t n = sums.n;
    const double latest = sums.latest;
    const std::size_t count = n - 1;
    const Event *sorted = sortEvents(events + 1, events + 1 + most, count, latest);
    std::vector<CurvePoint> &curve = m_curve;
    curve.clear();
    Bytes now = 0;
    for (std::size_t i = 0; i < count; ++i) {
        now += sorted[i].delta;
        if (i + 1 < count && sorted[i + 1].time == sorted[i].time)
            continue;
        curve.push_back({sorted[i].time, now});
        if (now > rt.peak_bytes) {
            rt.peak_bytes = now;
            rt.peak_time = sorted[i].time;
        }
    }
    rt.curve = downsampleKeepingMax(curve, points);
}

std::vector<CurvePoint> downsampleKeepingMax(const std::vector<CurvePoint> &curve, std::size_t points)
{
    if (curve.size() <= points || points < 2)
        return curve;
    const double t0 = curve.front().time;
    const double span = curve.back().time - t0;
    std::vector<CurvePoint> out;
    out.reserve(points + 1);
    std::size_t i = 0;
    Bytes carried = curve.front().bytes; // the value entering a bucket lasts into it
    for (std::size_t b = 0; b < points && i < curve.size(); ++b) {
        const double bucketEnd = b + 1 == points ? curve.back().time : t0 + span * double(b + 1) / double(points);
        CurvePoint best{t0 + span * double(b) / double(points), carried};
        for (; i < curve.size() && (curve[i].time < bucketEnd || b + 1 == points); ++i) {
            if (curve[i].bytes > best.bytes)
                best = curve[i];
            carried = curve[i].bytes;
        }
        out.push_back(best);
    }
    out.push_back(curve.back());
    return out;
}

} // namespace memledger
