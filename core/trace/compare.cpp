// SPDX-License-Identifier: MIT
#include "core/trace/compare.h"

#include "core/model/runtimereserve.h"
#include "core/timeline/curve.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "core/trace/allocatorreplay.h"
#include "core/trace/iteration.h"
#include "core/trace/tensorcatalog.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace memledger {

std::string_view phaseName(IterationPhase phase)
{
    switch (phase) {
    case IterationPhase::Forward:
        return "forward";
    case IterationPhase::Backward:
        return "backward";
    case IterationPhase::Optimizer:
        return "optimizer";
    case IterationPhase::Outside:
        return "outside";
    }
    return "outside";
}

namespace {

constexpr std::size_t kFramesShown = 4;
constexpr std::size_t kPeakRows = 20;

double ratioError(Bytes modelled, Bytes measured)
{
    return measured > 0 ? double(modelled) / double(measured) - 1.0 : 0.0;
}

// kOtherModelFactor or more apart, either way; nothing measured (or modelled) is no verdict.
bool plainlyOtherModel(Bytes modelled, Bytes measured)
{
    if (modelled <= 0 || measured <= 0)
        return false;
    const double ratio = double(modelled) / double(measured);
    return ratio >= kOtherModelFactor || ratio <= 1.0 / kOtherModelFactor;
}

// Whether the trace is a CPU run's: a profiler trace of the host's allocations (device -1), or a snapshot whose
// segments no CUDA caching allocator made (tools/measure presents the CPU as device 0, each block its own
// segment). That allocator's segments are whole multiples of 2 MiB (kSmallBuffer, kRoundLarge, kLargeBuffer
// and the expandable segments' pages in c10/cuda/CUDACachingAllocator.cpp); a CPU block is any size.
bool recordedOnCpu(const MeasuredTrace &trace)
{
    if (trace.format == TraceFormat::ProfilerTrace)
        return trace.device < 0;
    constexpr Bytes kSegmentGranule = Bytes{2} << 20;
    for (const TraceSegment &s : trace.segments)
        if (s.total_size % kSegmentGranule != 0)
            return true;
    for (const TraceEvent &e : trace.events)
        if ((e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap)
            && e.size % kSegmentGranule != 0)
            return true;
    return false;
}

// The modelled rank's memory at full resolution, without the runtime reserve:
// the allocator that wrote the trace never sees the CUDA context.
std::vector<CurvePoint> allocatorCurve(const RankTimeline &rank)
{
    std::vector<std::pair<double, Bytes>> events;
    events.reserve(rank.lifetimes.size() * 2);
    for (const Lifetime &l : rank.lifetimes) {
        if (l.category == Category::Runtime || l.bytes == 0)
            continue;
        events.emplace_back(l.start, l.bytes);
        events.emplace_back(l.end, -l.bytes);
    }
    // Frees before allocations at the same instant, as the timeline orders them.
    std::sort(events.begin(), events.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    std::vector<CurvePoint> curve;
    Bytes now = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        now += events[i].second;
        if (i + 1 < events.size() && events[i + 1].first == events[i].first)
            continue;
        curve.push_back({events[i].first, now});
    }
    return curve;
}

std::vector<PhaseSpan> modelledPhases(const RankTimeline &rank)
{
    std::vector<PhaseSpan> spans;
    for (const TimedOp &op : rank.ops)
        spans.push_back(
            {op.op.kind == OpKind::Forward ? IterationPhase::Forward : IterationPhase::Backward, op.start, op.end});
    spans.push_back(
        {IterationPhase::Optimizer, rank.optimizer_start, std::max(rank.optimizer_end, rank.optimizer_start + 1e-12)});
    return spans;
}

// The highest value of a step curve while a phase runs: the value entering a
// span counts, as the memory it holds is alive when the span begins. A
// measured curve has a point per allocator event, so the one before the span
// is what enters it; the modelled curve merges the events of one instant, so
// a point at the span's start already holds what the previous phase freed
// there (`merged`).
template<typename Point, typename TimeOf, typename BytesOf>
Bytes peakIn(const std::vector<Point> &curve, const std::vector<PhaseSpan> &spans, IterationPhase phase, Bytes before,
             bool merged, TimeOf time, BytesOf bytes)
{
    Bytes peak = 0;
    for (const PhaseSpan &s : spans) {
        if (s.phase != phase)
            continue;
        const auto first = std::lower_bound(curve.begin(), curve.end(), s.start,
                                            [&](const Point &p, double t) { return time(p) < t; });
        const bool startsWithPoint = merged && first != curve.end() && time(*first) == s.start;
        Bytes entering = startsWithPoint ? bytes(*first) : first == curve.begin() ? before : bytes(*(first - 1));
        peak = std::max(peak, entering);
        for (auto it = first; it != curve.end() && time(*it) < s.end; ++it)
            peak = std::max(peak, bytes(*it));
    }
    return peak;
}

std::vector<NormalisedPoint> downsample(std::vector<NormalisedPoint> curve, std::size_t points)
{
    if (curve.size() <= points || points < 2)
        return curve;
    std::vector<CurvePoint> c;
    c.reserve(curve.size());
    for (const NormalisedPoint &p : curve)
        c.push_back({p.t, p.bytes});
    std::vector<NormalisedPoint> out;
    for (const CurvePoint &p : downsampleKeepingMax(c, points))
        out.push_back({p.time, p.bytes});
    return out;
}

void compareAlive(const Config &config, const MeasuredTrace &trace, const MemoryReplay &replay, TraceComparison &out)
{
    const std::vector<CatalogTensor> catalog = tensorCatalog(config);
    std::map<std::tuple<Bytes, std::int32_t>, std::int64_t> groups; // (size, stack) -> count
    std::vector<PeakAllocation> rows;
    for (const ReplayBlock &b : replay.alive_at_peak) {
        if (b.anonymous()) {
            PeakAllocation row;
            row.bytes = b.size;
            row.count = 1;
            row.matched = "Allocated before the trace began (the profiler's Total Allocated): the steady state";
            rows.push_back(std::move(row));
            continue;
        }
        ++groups[{b.size, b.stack}];
    }
    for (const auto &[key, count] : groups) {
        const auto [size, stack] = key;
        PeakAllocation row;
        row.bytes = size * count;
        row.count = count;
        if (stack >= 0 && static_cast<std::size_t>(stack) < trace.stacks.size()) {
            const std::vector<TraceFrame> &frames = trace.stacks[static_cast<std::size_t>(stack)];
            row.frames.assign(frames.begin(),
                              frames.begin() + static_cast<std::ptrdiff_t>(std::min(frames.size(), kFramesShown)));
        }
        // A block allocated inside torch.optim (any frame's file) is most
        // likely an optimizer state of a parameter's size.
        bool optimizerStack = false;
        if (stack >= 0 && static_cast<std::size_t>(stack) < trace.stacks.size())
            for (const TraceFrame &f : trace.stacks[static_cast<std::size_t>(stack)])
                optimizerStack = optimizerStack || f.filename.find("optim") != std::string::npos;
        if (const CatalogTensor *m = matchBySize(catalog, size, optimizerStack))
            row.matched = m->label;
        rows.push_back(std::move(row));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const PeakAllocation &a, const PeakAllocation &b) { return a.bytes > b.bytes; });
    for (const PeakAllocation &r : rows)
        if (r.matched.empty() && out.unexplained.size() < kPeakRows)
            out.unexplained.push_back(r);
    if (rows.size() > kPeakRows)
        rows.resize(kPeakRows);
    out.alive_at_peak = std::move(rows);
}

// Reserved memory measured and modelled. A snapshot's segments are what the
// device's caching allocator reserved; a CPU run's (tools/measure) are its
// blocks, one each, and a profiler trace has none: then what the allocator
// model reserves for the trace's own requests stands for the measurement.
void compareReserved(const Config &config, const MeasuredTrace &trace, const MemoryReplay &replay,
                     const Timeline &timeline, TraceComparison &out)
{
    std::int64_t allocs = 0, segments = 0;
    for (const TraceEvent &e : trace.events) {
        allocs += e.action == TraceAction::Alloc;
        segments += e.action == TraceAction::SegmentAlloc || e.action == TraceAction::SegmentMap;
    }
    AllocatorReplayOptions options;
    options.device_limit = timeline.ledger.usable_bytes;
    options.device_total = config.hardware.hbm_bytes;
    const AllocatorReplay requests = replayThroughAllocator(trace, options);
    out.measured_requests_reserved_bytes = requests.stats.reserved_peak;
    out.measured_reserved_from_segments = segments > 0 && segments < allocs;
    // A profiler trace names no block allocated before its first event.
    const bool blocksKnown = trace.format == TraceFormat::Snapshot || trace.initial_allocated_bytes.value_or(0) == 0;
    if (out.measured_reserved_from_segments) {
        out.measured_peak_reserved_bytes = replay.peak_reserved_bytes;
    } else if (blocksKnown) {
        out.measured_peak_reserved_bytes = requests.stats.reserved_peak;
        out.notes.push_back(std::string(segments > 0 ? "The trace's segments are its blocks, one each (no caching "
                                                       "allocator recorded them: a CPU run)"
                                                     : "The trace records no segments")
                            + ": the measured reserved memory is what the caching allocator's rules reserve for its "
                              "own requests.");
    } else {
        out.notes.push_back("The trace records no segments and began with memory allocated whose blocks it does "
                            "not name: its reserved memory is not known (a memory snapshot records it).");
    }
    const PlanReserved modelled = simulateReserved(config, timeline);
    out.modelled_peak_reserved_bytes = modelled.ranks.at(static_cast<std::size_t>(out.pipeline_rank)).reserved_peak;
    if (out.measured_peak_reserved_bytes && *out.measured_peak_reserved_bytes > 0)
        out.reserved_error = ratioError(out.modelled_peak_reserved_bytes, *out.measured_peak_reserved_bytes);
}

} // namespace

TraceComparison compareTrace(const Config &config, const MeasuredTrace &trace, const CompareOptions &options)
{
    TraceComparison out;
    out.format = trace.format;
    out.device = trace.device;
    out.events = static_cast<std::int64_t>(trace.events.size());

    // Measured.
    const MemoryReplay replay = replayAllocated(trace);
    const IterationWindow window = findIteration(trace, replay);
    out.notes.push_back(window.how);
    out.measured_peak_allocated_bytes = replay.peak_allocated_bytes;
    const auto before = [&](std::size_t point) {
        return point == 0 ? replay.initial_allocated_bytes : replay.curve[point - 1].allocated;
    };
    out.measured_steady_allocated_bytes = before(window.first_point);
    // The phase of the peak inside the compared iteration: a trace repeats its
    // peak every step, and the first time may fall in a warm-up step.
    if (trace.has_times)
        for (std::size_t i = window.first_point; i < window.end_point; ++i)
            if (replay.curve[i].allocated == replay.peak_allocated_bytes) {
                out.measured_peak_phase = phaseAt(window.phases, replay.curve[i].time_us);
                break;
            }
    // The whole trace's span, when no iteration was told apart, is no iteration's time.
    out.iteration_found = window.found;
    out.measured_on_cpu = recordedOnCpu(trace);
    if (trace.has_times && window.found && window.end > window.start)
        out.measured_iteration_s = (window.end - window.start) * 1e-6;
    if (window.phases.empty())
        out.notes.push_back("The trace names no forward, backward or optimizer ranges: its phases are not known.");

    // Modelled.
    const int rank = options.pipeline_rank.value_or(0);
    const Timeline timeline = simulateIteration(config, {std::numeric_limits<std::size_t>::max()});
    const RankTimeline &rt = timeline.ranks.at(static_cast<std::size_t>(rank));
    out.pipeline_rank = rank;
    out.modelled_iteration_s = timeline.step_time;
    if (out.measured_iteration_s && *out.measured_iteration_s > 0) {
        if (out.measured_on_cpu)
            out.notes.push_back("The trace was recorded on the CPU: its iteration time says nothing of "
                                + config.hardware.name + "'s, so the two times are shown, not compared.");
        else
            out.iteration_error = out.modelled_iteration_s / *out.measured_iteration_s - 1.0;
    }
    const std::vector<CurvePoint> modelled = allocatorCurve(rt);
    for (const CurvePoint &p : modelled)
        if (p.bytes > out.modelled_peak_bytes) {
            out.modelled_peak_bytes = p.bytes;
            out.modelled_peak_phase = phaseAt(modelledPhases(rt), p.time);
        }
    for (const Lifetime &l : rt.lifetimes)
        if ((l.kind == LifetimeKind::Persistent || l.kind == LifetimeKind::Gradients) && l.category != Category::Runtime
            && l.start <= 0 && l.end >= timeline.step_time)
            out.modelled_steady_bytes += l.bytes;
    out.peak_error = ratioError(out.modelled_peak_bytes, out.measured_peak_allocated_bytes);
    out.plainly_other_model = plainlyOtherModel(out.modelled_peak_bytes, out.measured_peak_allocated_bytes);
    out.steady_error = ratioError(out.modelled_steady_bytes, out.measured_steady_allocated_bytes);

    // Phase by phase, inside the iteration.
    const std::vector<PhaseSpan> mPhases = modelledPhases(rt);
    const std::vector<ReplayPoint> iteration(replay.curve.begin() + static_cast<std::ptrdiff_t>(window.first_point),
                                             replay.curve.begin() + static_cast<std::ptrdiff_t>(window.end_point));
    for (IterationPhase phase : {IterationPhase::Forward, IterationPhase::Backward, IterationPhase::Optimizer}) {
        PhaseComparison pc;
        pc.phase = phase;
        pc.modelled_peak_bytes = peakIn(
            modelled, mPhases, phase, Bytes{0}, true, [](const CurvePoint &p) { return p.time; },
            [](const CurvePoint &p) { return p.bytes; });
        if (!window.phases.empty())
            pc.measured_peak_bytes = peakIn(
                iteration, window.phases, phase, before(window.first_point), false,
                [](const ReplayPoint &p) { return p.time_us; }, [](const ReplayPoint &p) { return p.allocated; });
        pc.error = ratioError(pc.modelled_peak_bytes, pc.measured_peak_bytes);
        out.phases.push_back(pc);
    }

    // The two curves on the iteration's clock.
    const double span = window.end > window.start ? window.end - window.start : 1.0;
    const std::size_t count = window.end_point - window.first_point;
    std::vector<NormalisedPoint> measured;
    measured.reserve(count + 1);
    measured.push_back({0.0, before(window.first_point)});
    for (std::size_t i = 0; i < count; ++i) {
        const ReplayPoint &p = iteration[i];
        const double t = trace.has_times ? (p.time_us - window.start) / span
                                         : double(i + 1) / double(std::max<std::size_t>(count, 1));
        measured.push_back({std::clamp(t, 0.0, 1.0), p.allocated});
    }
    out.measured_curve = downsample(std::move(measured), options.curve_points);
    std::vector<NormalisedPoint> model;
    model.reserve(modelled.size());
    const double step = timeline.step_time > 0 ? timeline.step_time : 1.0;
    for (const CurvePoint &p : modelled)
        model.push_back({std::clamp(p.time / step, 0.0, 1.0), p.bytes});
    out.modelled_curve = downsample(std::move(model), options.curve_points);

    compareReserved(config, trace, replay, timeline, out);
    compareAlive(config, trace, replay, out);
    out.notes.push_back("Modelled figures leave out the runtime reserve ("
                        + formatGB(double(maxRuntimeReserveBytes(config)))
                        + "): an allocator never sees the CUDA context.");
    return out;
}

} // namespace memledger
