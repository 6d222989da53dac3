// SPDX-License-Identifier: MIT
#include "core/trace/iteration.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

namespace memledger {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &ch : out)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

// ProfilerStep#N is torch.profiler's own iteration range (profiler.py, step()).
bool isStep(const TraceRange &r)
{
    return r.name.rfind("ProfilerStep#", 0) == 0;
}

std::optional<IterationPhase> phaseOfName(const std::string &name)
{
    const std::string n = lower(name);
    if (n.find("profilerstep") != std::string::npos)
        return std::nullopt;
    if (n.find("forward") != std::string::npos)
        return IterationPhase::Forward;
    if (n.find("backward") != std::string::npos)
        return IterationPhase::Backward;
    if (n.find("optimizer") != std::string::npos || n == "optim" || n == "step" || n == "optimizer_step")
        return IterationPhase::Optimizer;
    return std::nullopt;
}

// The curve index of the first point at or after `time`.
std::size_t pointAt(const MemoryReplay &replay, double time)
{
    const auto it = std::lower_bound(replay.curve.begin(), replay.curve.end(), time,
                                     [](const ReplayPoint &p, double t) { return p.time_us < t; });
    return static_cast<std::size_t>(it - replay.curve.begin());
}

std::vector<PhaseSpan> phaseSpans(const MeasuredTrace &trace, double start, double end)
{
    std::vector<PhaseSpan> spans;
    for (const TraceRange &r : trace.ranges) {
        const auto phase = phaseOfName(r.name);
        if (!phase || r.end_us <= start || r.start_us >= end)
            continue;
        spans.push_back({*phase, std::max(r.start_us, start), std::min(r.end_us, end)});
    }
    std::sort(spans.begin(), spans.end(), [](const PhaseSpan &a, const PhaseSpan &b) { return a.start < b.start; });
    return spans;
}

// The events that move the curve, as MemoryReplay counts its points.
bool movesCurve(TraceAction a)
{
    return a == TraceAction::Alloc || a == TraceAction::FreeCompleted || a == TraceAction::SegmentAlloc
           || a == TraceAction::SegmentFree || a == TraceAction::SegmentMap || a == TraceAction::SegmentUnmap;
}

// The smallest period P whose last two repetitions match event for event
// (action and size). Mismatches show up within a few events, so the search is
// close to linear on real traces; it gives up on periods past `limit`.
std::size_t repeatingPeriod(const std::vector<std::uint64_t> &sig, std::size_t limit)
{
    const std::size_t n = sig.size();
    for (std::size_t period = 2; period <= std::min(limit, n / 2); ++period) {
        bool same = true;
        for (std::size_t i = n - period; i < n && same; ++i)
            same = sig[i] == sig[i - period];
        if (same)
            return period;
    }
    return 0;
}

IterationWindow fromSteps(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    IterationWindow w;
    const TraceRange *last = nullptr;
    for (const TraceRange &r : trace.ranges)
        if (isStep(r) && r.end_us > r.start_us && (!last || r.start_us > last->start_us))
            last = &r;
    if (!last)
        return w;
    w.found = true;
    w.start = last->start_us;
    w.end = last->end_us;
    w.first_point = pointAt(replay, w.start);
    w.end_point = pointAt(replay, w.end);
    w.phases = phaseSpans(trace, w.start, w.end);
    w.how = "The iteration is the trace's last profiler step, " + last->name + ".";
    return w;
}

IterationWindow fromPhases(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    IterationWindow w;
    std::vector<PhaseSpan> all = phaseSpans(trace, -1e300, 1e300);
    // The last forward that a backward and an optimizer step follow.
    for (std::size_t i = all.size(); i-- > 0;) {
        if (all[i].phase != IterationPhase::Forward)
            continue;
        bool backward = false;
        double end = -1;
        for (std::size_t j = i + 1; j < all.size() && all[j].phase != IterationPhase::Forward; ++j) {
            backward = backward || all[j].phase == IterationPhase::Backward;
            if (backward && all[j].phase == IterationPhase::Optimizer)
                end = std::max(end, all[j].end);
        }
        if (end < 0)
            continue;
        w.found = true;
        w.start = all[i].start;
        w.end = end;
        w.first_point = pointAt(replay, w.start);
        w.end_point = pointAt(replay, w.end);
        w.phases = phaseSpans(trace, w.start, w.end);
        w.how = "The iteration runs from the last forward range to the end of the optimizer range after it.";
        return w;
    }
    return w;
}

// Which phase an allocation's call stack says it was made in: the optimizer
// (a frame in an optimizer's source, torch/optim, Apex's or Megatron's
// optimizer packages), the backward (autograd's engine, or a frame named
// backward: Tensor.backward, torch.autograd.backward, an autograd Function's,
// where checkpointing recomputes), else the forward; none when the event has
// no stack or is the profiler's own (record_function's handles).
std::optional<IterationPhase> phaseOfStack(const MeasuredTrace &trace, const TraceEvent &e)
{
    if (e.stack < 0 || static_cast<std::size_t>(e.stack) >= trace.stacks.size()
        || trace.stacks[static_cast<std::size_t>(e.stack)].empty())
        return std::nullopt;
    bool backward = false;
    for (const TraceFrame &f : trace.stacks[static_cast<std::size_t>(e.stack)]) {
        // The profiler's own bookkeeping (record_function's handles) belongs to no phase.
        if (f.filename.find("profiler") != std::string::npos)
            return std::nullopt;
        if (f.filename.find("optim") != std::string::npos)
            return IterationPhase::Optimizer;
        // Autograd's engine, or any backward(): Tensor.backward, torch.autograd.backward, a custom
        // Function's (torch.utils.checkpoint's recompute runs inside one).
        backward = backward || f.name.rfind("autograd::engine::", 0) == 0 || f.name == "backward";
    }
    return backward ? IterationPhase::Backward : IterationPhase::Forward;
}

struct Run
{
    IterationPhase phase;
    std::size_t first, last; // curve points
};

// Consecutive curve points of one phase (points without a stack join the run around them).
std::vector<Run> phaseRuns(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    std::vector<Run> runs;
    std::size_t point = 0;
    for (const TraceEvent &e : trace.events) {
        if (!movesCurve(e.action))
            continue;
        const std::size_t at = point++;
        const std::optional<IterationPhase> phase = phaseOfStack(trace, e);
        if (!phase)
            continue;
        if (!runs.empty() && runs.back().phase == *phase)
            runs.back().last = at;
        else
            runs.push_back({*phase, at, at});
    }
    return point == replay.curve.size() ? runs : std::vector<Run>{};
}

// The call stacks of a snapshot say which allocations the forward, the
// backward and the optimizer step made: the last iteration is the last
// optimizer step with the forward and backward before it, from the first
// forward allocation after the optimizer step before.
IterationWindow fromStacks(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    IterationWindow w;
    const std::vector<Run> runs = phaseRuns(trace, replay);
    std::size_t lastStep = runs.size();
    for (std::size_t i = runs.size(); i-- > 0;)
        if (runs[i].phase == IterationPhase::Optimizer) {
            lastStep = i;
            break;
        }
    if (lastStep == runs.size())
        return w;
    // Back to the optimizer step before (or the trace's start); the iteration needs a backward and a forward.
    std::size_t first = lastStep;
    bool backward = false, forward = false;
    while (first > 0 && runs[first - 1].phase != IterationPhase::Optimizer) {
        --first;
        backward = backward || runs[first].phase == IterationPhase::Backward;
        forward = forward || runs[first].phase == IterationPhase::Forward;
    }
    while (first < lastStep && runs[first].phase != IterationPhase::Forward)
        ++first;
    if (!backward || !forward || first >= lastStep)
        return w;
    const auto time
        = [&](std::size_t point) { return trace.has_times ? replay.curve[point].time_us : static_cast<double>(point); };
    w.found = true;
    w.first_point = runs[first].first;
    w.end_point = runs[lastStep].last + 1;
    w.start = time(w.first_point);
    w.end = w.end_point < replay.curve.size() ? time(w.end_point) : time(runs[lastStep].last) + 1;
    for (std::size_t i = first; i <= lastStep; ++i) {
        const double end = i < lastStep ? time(runs[i + 1].first) : w.end;
        if (!w.phases.empty() && w.phases.back().phase == runs[i].phase)
            w.phases.back().end = end;
        else
            w.phases.push_back({runs[i].phase, time(runs[i].first), end});
    }
    w.how = "The iteration is told apart by the allocations' call stacks: the last optimizer step (frames in an "
            "optimizer's source) with the forward and the backward (autograd's frames) before it.";
    return w;
}

// Allocated memory between two iterations: the lowest it falls after the
// trace first reaches its highest, and a swing from there to the peak.
struct Swing
{
    Bytes low = 0, high = 0;
};

Swing swingOf(const MemoryReplay &replay)
{
    Swing s;
    std::size_t top = 0;
    for (std::size_t i = 0; i < replay.curve.size(); ++i)
        if (replay.curve[i].allocated > replay.curve[top].allocated)
            top = i;
    s.high = replay.curve.empty() ? 0 : replay.curve[top].allocated;
    s.low = s.high;
    for (std::size_t i = top; i < replay.curve.size(); ++i)
        s.low = std::min(s.low, replay.curve[i].allocated);
    return s;
}

// Without ranges or stacks (a profiler trace): each iteration climbs from
// between iterations through its forward to a peak and falls back through
// its backward, so the iterations are what lies between the troughs of
// consecutive climbs (thresholds at a twentieth and three fifths of the swing,
// apart so that wobbles do not count). The last iteration is the last climb
// that falls back.
IterationWindow fromTroughs(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    IterationWindow w;
    const Swing swing = swingOf(replay);
    const Bytes range = swing.high - swing.low;
    if (range <= 0 || replay.curve.size() < 8)
        return w;
    const Bytes low = swing.low + range / 20, high = swing.low + range * 3 / 5;
    std::vector<std::size_t> troughs; // the lowest point of each stretch below `low` that a climb above `high` ends
    bool below = true;
    std::size_t trough = 0;
    for (std::size_t i = 0; i < replay.curve.size(); ++i) {
        const Bytes b = replay.curve[i].allocated;
        if (below) {
            if (b < replay.curve[trough].allocated)
                trough = i;
            if (b >= high) {
                troughs.push_back(trough);
                below = false;
            }
        } else if (b <= low) {
            below = true;
            trough = i;
        }
    }
    if (below && !troughs.empty())
        troughs.push_back(trough); // the last climb came down: its end counts
    if (troughs.size() < 2)
        return w;
    w.found = true;
    w.first_point = troughs[troughs.size() - 2] + 1;
    w.end_point = std::min(troughs.back() + 1, replay.curve.size());
    w.start = replay.curve[w.first_point - 1].time_us;
    w.end = replay.curve[w.end_point - 1].time_us;
    w.phases = trace.has_times ? phaseSpans(trace, w.start, w.end) : std::vector<PhaseSpan>{};
    w.how = "The iteration is the trace's last climb of allocated memory and its fall, between two troughs (no "
            "profiler steps, phase ranges or call stacks to tell it apart).";
    return w;
}

IterationWindow fromPattern(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    IterationWindow w;
    std::vector<std::uint64_t> sig;
    sig.reserve(replay.curve.size());
    for (const TraceEvent &e : trace.events)
        if (movesCurve(e.action))
            sig.push_back(static_cast<std::uint64_t>(e.size) * 16 + static_cast<std::uint64_t>(e.action));
    if (sig.size() != replay.curve.size())
        return w; // the replay counted other points; do not guess
    const std::size_t period = repeatingPeriod(sig, 1u << 20);
    if (period == 0)
        return w;
    // Of the rotations of the last two periods, the one that starts where
    // allocated memory is lowest: between two iterations.
    const std::size_t n = sig.size();
    std::size_t best = n - 2 * period;
    for (std::size_t i = n - 2 * period; i <= n - period; ++i) {
        const Bytes before = i == 0 ? replay.initial_allocated_bytes : replay.curve[i - 1].allocated;
        const Bytes bestBefore = best == 0 ? replay.initial_allocated_bytes : replay.curve[best - 1].allocated;
        if (before < bestBefore)
            best = i;
    }
    w.found = true;
    w.first_point = best;
    w.end_point = best + period;
    w.start = replay.curve[best].time_us;
    w.end = w.end_point < n ? replay.curve[w.end_point].time_us : replay.curve.back().time_us;
    w.phases = trace.has_times ? phaseSpans(trace, w.start, w.end) : std::vector<PhaseSpan>{};
    w.how = "The iteration is the trace's repeating pattern of " + std::to_string(period)
            + " allocator events, starting where allocated memory is lowest.";
    return w;
}

} // namespace

IterationPhase phaseAt(const std::vector<PhaseSpan> &phases, double time)
{
    // The innermost (latest-starting) span that holds the moment.
    IterationPhase found = IterationPhase::Outside;
    for (const PhaseSpan &s : phases)
        if (s.start <= time && time < s.end)
            found = s.phase;
    return found;
}

IterationWindow findIteration(const MeasuredTrace &trace, const MemoryReplay &replay)
{
    if (trace.has_times) {
        if (IterationWindow w = fromSteps(trace, replay); w.found && w.end_point > w.first_point)
            return w;
        if (IterationWindow w = fromPhases(trace, replay); w.found && w.end_point > w.first_point)
            return w;
    }
    if (IterationWindow w = fromStacks(trace, replay); w.found && w.end_point > w.first_point)
        return w;
    if (IterationWindow w = fromTroughs(trace, replay); w.found && w.end_point > w.first_point)
        return w;
    if (IterationWindow w = fromPattern(trace, replay); w.found)
        return w;
    IterationWindow whole;
    whole.first_point = 0;
    whole.end_point = replay.curve.size();
    whole.start = replay.curve.empty() ? 0 : replay.curve.front().time_us;
    whole.end = replay.curve.empty() ? 0 : replay.curve.back().time_us;
    whole.phases = trace.has_times ? phaseSpans(trace, whole.start, whole.end + 1) : std::vector<PhaseSpan>{};
    whole.how = "No iteration could be told apart (no profiler steps, phase ranges, call stacks, climbs of allocated "
                "memory or repeating pattern): the whole trace is compared.";
    return whole;
}

} // namespace memledger
