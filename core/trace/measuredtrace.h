// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memledger {

// A measured run, as read from a PyTorch memory snapshot
// (torch.cuda.memory._dump_snapshot) or a PyTorch profiler Chrome trace
// (profile_memory=True). Both importers reduce their file to this one shape,
// keeping one device's allocator events and nothing else of the file, so that
// memory stays proportional to the events kept.

enum class TraceFormat { Snapshot, ProfilerTrace };

// The allocator actions of a snapshot's device_traces (PyTorch's names).
enum class TraceAction : std::uint8_t {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom
};

struct TraceFrame
{
    std::string filename;
    std::int64_t line = 0;
    std::string name;
    bool operator==(const TraceFrame &) const = default;
};

/// One allocator event. A profiler trace's [memory] event becomes Alloc
/// (positive bytes) or FreeCompleted (negative bytes, stored as size > 0).
struct TraceEvent
{
    TraceAction action = TraceAction::Alloc;
    std::uint64_t addr = 0;
    Bytes size = 0; ///< bytes, always >= 0
    double time_us = 0; ///< microseconds, as the file says (0 when it has none)
    std::int64_t stream = 0;
    std::int32_t stack = -1; ///< index into MeasuredTrace::stacks, -1 when none
    Bytes total_allocated = -1; ///< profiler traces: the allocator's total after this event; -1 unknown
};

/// A block still allocated when the snapshot was taken (segments[].blocks[]
/// with state active_allocated); counted from the start of the window when
/// the trace holds no allocation of it (MemoryViz.js, process_alloc_data).
struct TraceBlock
{
    std::uint64_t addr = 0;
    Bytes size = 0; ///< requested_size, as MemoryViz.js plots it
    std::int32_t stack = -1;
};

/// A segment (cudaMalloc'd region) present when the snapshot was taken.
struct TraceSegment
{
    std::uint64_t addr = 0;
    Bytes total_size = 0;
    std::int64_t stream = 0;
};

/// A named range: a record_function / ProfilerStep#N range of a profiler
/// trace, or a snapshot's external_annotations (START/END pairs matched).
struct TraceRange
{
    std::string name;
    double start_us = 0;
    double end_us = 0;
};

struct MeasuredTrace
{
    TraceFormat format = TraceFormat::Snapshot;
    int device = 0; ///< the device whose events were kept
    std::vector<int> devices; ///< every device present in the file, ascending
    std::vector<TraceEvent> events; ///< that device's events, in file order
    std::vector<TraceBlock> live_blocks;
    std::vector<TraceSegment> segments;
    std::vector<std::vector<TraceFrame>> stacks; ///< deduplicated, innermost frame first
    std::vector<TraceRange> ranges; ///< sorted by start
    bool has_times = false; ///< events carry time_us
    /// Profiler traces: the allocator's total before the first event, from
    /// its "Total Allocated" (what the window cannot see being allocated).
    std::optional<Bytes> initial_allocated_bytes;
    /// Snapshots: the allocator's settings while it recorded (allocator_settings:
    /// expandable_segments, max_split_size, garbage_collection_threshold).
    std::optional<AllocatorConfig> allocator_settings;
};

/// What an importer returns: a trace, or the problems that stopped it
/// (truncated file, refused pickle opcode, wrong shape), each naming where.
struct TraceLoadResult
{
    std::optional<MeasuredTrace> trace;
    Problems problems;
};

/// Lets a long import report progress and be cancelled (GUI: a progress bar
/// and Cancel). Called every few megabytes with the bytes read so far;
/// returning false cancels the import, which then fails with one problem.
using TraceProgress = bool (*)(void *context, std::uint64_t bytesRead, std::uint64_t bytesTotal);

struct TraceImportOptions
{
    std::optional<int> device; ///< default: the lowest device with events
    TraceProgress progress = nullptr;
    void *progress_context = nullptr;
};

} // namespace memledger
