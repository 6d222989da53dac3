// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/trace/measuredtrace.h"
#include "core/trace/replay.h"

#include <optional>
#include <string>
#include <vector>

namespace memledger {

// A measured run held against the model: the replayed trace on one side, the
// simulated iteration of the preset (one pipeline rank) on the other, both
// without the runtime reserve (an allocator never sees the CUDA context).

/// Forward, backward or optimizer: where in an iteration a moment falls.
enum class IterationPhase { Forward, Backward, Optimizer, Outside };
std::string_view phaseName(IterationPhase phase); // "forward", "backward", "optimizer", "outside"

struct PhaseComparison
{
    IterationPhase phase = IterationPhase::Forward;
    Bytes measured_peak_bytes = 0; ///< the largest allocated total inside this phase of the iteration
    Bytes modelled_peak_bytes = 0;
    double error = 0; ///< modelled / measured - 1 (0 when nothing was measured)
};

/// Blocks alive at the measured peak with the same size and stack, matched by
/// size to a tensor the model knows where one fits.
struct PeakAllocation
{
    Bytes bytes = 0; ///< all of them together
    std::int64_t count = 1; ///< blocks of this size and stack
    std::vector<TraceFrame> frames; ///< innermost first, at most a few
    std::string matched; ///< the ledger or timeline item it was matched to; empty: unexplained
};

/// A point of a curve on the iteration's own clock: 0 is its start, 1 its end.
struct NormalisedPoint
{
    double t = 0;
    Bytes bytes = 0;
};

struct TraceComparison
{
    // The trace.
    TraceFormat format = TraceFormat::Snapshot;
    int device = 0;
    std::int64_t events = 0;
    // Measured (replayed) figures.
    Bytes measured_peak_allocated_bytes = 0; ///< anywhere in the trace
    Bytes measured_steady_allocated_bytes = 0; ///< between iterations
    IterationPhase measured_peak_phase = IterationPhase::Outside;
    /// Whether one iteration was told apart; else the whole trace is compared
    /// and its span is no iteration's time (measured_iteration_s is none).
    bool iteration_found = false;
    /// A CPU run (a profiler trace of the host, a snapshot without CUDA's
    /// caching allocator): its wall time is not comparable with a GPU's model.
    bool measured_on_cpu = false;
    std::optional<double> measured_iteration_s;
    /// Reserved memory: the segments the trace recorded when a caching allocator
    /// made them; else (a CPU run whose segments are its blocks, a profiler
    /// trace) what the allocator model reserves for the trace's own requests,
    /// when every block alive in it is known by its size (none: a profiler
    /// trace that began with memory allocated).
    std::optional<Bytes> measured_peak_reserved_bytes;
    bool measured_reserved_from_segments = false;
    /// The trace's own allocations and frees through the allocator model
    /// (core/trace/allocatorreplay.h), under its own allocator settings.
    Bytes measured_requests_reserved_bytes = 0;
    // Modelled figures.
    int pipeline_rank = 0;
    Bytes modelled_peak_bytes = 0;
    Bytes modelled_steady_bytes = 0;
    IterationPhase modelled_peak_phase = IterationPhase::Outside;
    double modelled_iteration_s = 0;
    Bytes modelled_peak_reserved_bytes = 0; ///< the rank's iteration through the allocator model
    std::optional<double> reserved_error; ///< modelled / measured reserved - 1, when that is known
    /// modelled / measured - 1 of the iteration time; none when the trace has no
    /// times or was recorded on the CPU (not comparable with a GPU's model)
    std::optional<double> iteration_error;
    double peak_error = 0; ///< modelled / measured - 1 (0 when nothing was measured: not comparable)
    double steady_error = 0; ///< modelled / measured - 1 (0 when nothing was measured: not comparable)
    std::vector<PhaseComparison> phases;
    std::vector<PeakAllocation> alive_at_peak; ///< largest first
    std::vector<PeakAllocation> unexplained; ///< those of alive_at_peak with no match
    // One iteration of each, for drawing one over the other.
    std::vector<NormalisedPoint> measured_curve;
    std::vector<NormalisedPoint> modelled_curve;
    std::vector<std::string> notes; ///< how the iteration was found, what was assumed
    /// The measured and modelled peaks are kOtherModelFactor or more apart, either way: no error of the
    /// model comes near that, so the trace is of another model or plan (a 12 M-parameter CPU run held
    /// against GPT-3 175B), and its figures say nothing of this one.
    bool plainly_other_model = false;
};

/// How far apart (as a ratio, either way) the measured and modelled peaks are when the trace is plainly
/// another model's: the model's peaks are within 2 % of the measured runs of tests/data/measured
/// (test_measured_runs.cpp), so a factor of ten is no error of the model's.
inline constexpr double kOtherModelFactor = 10.0;

struct CompareOptions
{
    std::optional<int> pipeline_rank; ///< default: rank 0
    std::size_t curve_points = 2000;
};

// Precondition: validate(config) has no errors.
TraceComparison compareTrace(const Config &config, const MeasuredTrace &trace, const CompareOptions &options = {});

} // namespace memledger
