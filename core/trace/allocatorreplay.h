// SPDX-License-Identifier: MIT
#pragma once

#include "core/allocator/cachingallocator.h"
#include "core/config/config.h"
#include "core/trace/measuredtrace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace memledger {

// A measured trace's own allocations and frees run through the caching
// allocator simulation (core/allocator): what PyTorch's allocator reserves
// for that stream of requests. A snapshot records the segments the real
// allocator reserved (segment_alloc, segment_free, segment_map,
// segment_unmap); when the trace starts with an empty allocator and the
// simulation follows the same rules, its segment events are the same ones at
// the same places, which is how the simulation is checked against PyTorch.
// A CPU run (tools/measure) has no caching allocator of its own: its
// snapshot's segments are its blocks, and the replay says what a GPU's
// allocator would reserve for the same requests.

struct AllocatorReplayOptions
{
    // The allocator's settings; default: the snapshot's own allocator_settings
    // (PYTORCH_CUDA_ALLOC_CONF), else PyTorch's defaults.
    std::optional<AllocatorConfig> settings;
    Bytes device_limit = Bytes(1) << 50; // what cudaMalloc may reserve (default: no limit)
    Bytes device_total = Bytes(1) << 50;
};

struct AllocatorReplay
{
    AllocatorConfig settings; // what the replay ran under
    AllocatorStats stats; // the simulated allocator's
    // Every change of reserved memory, simulated and recorded; `request` is
    // the number of the trace's allocations before the one that caused it.
    std::vector<SegmentEvent> simulated;
    std::vector<SegmentEvent> recorded;
    // Blocks alive in the trace that it did not allocate (freed without an
    // allocation, or still allocated in the snapshot's segments): allocated
    // first, in that order. None when the trace starts with an empty
    // allocator; otherwise where they lay in their segments is not known,
    // and the simulated segments are not the recorded ones.
    std::int64_t allocated_before = 0;
};

AllocatorReplay replayThroughAllocator(const MeasuredTrace &trace, const AllocatorReplayOptions &options = {});

} // namespace memledger
