// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/timeline/timeline.h"

#include <cstdint>
#include <vector>

namespace memledger {

// Reserved memory, the number that runs out: each rank's simulated iteration
// (core/timeline/allocationstream.h) run through PyTorch's caching allocator
// (core/allocator/cachingallocator.h) under strategy.allocator, with the
// device's usable memory (capacity less the runtime reserve) as what
// cudaMalloc can get. The model states are allocated first, then the
// iteration runs until one reserves no new memory (at most five times): each
// begins with the cache the one before left, as every iteration of a training
// job does, and the figures are the run's.
struct RankReserved
{
    int pipeline_rank = 0;
    Bytes reserved_peak = 0; // torch.cuda.max_memory_reserved()
    Bytes allocated_peak = 0; // torch.cuda.max_memory_allocated(): blocks as handed out (rounded, unsplit tails)
    Bytes requested_peak = 0; // the tensors' own bytes: the timeline's peak
    // At the reserved peak: the blocks in use, the free bytes cached beside
    // them in their segments (fragmentation), and the wholly free segments cached.
    Bytes allocated_at_reserved_peak = 0;
    Bytes fragmentation = 0;
    Bytes cached = 0;
    std::int64_t segments = 0; // cudaMalloc'd segments (expandable: segments of address space) at the end
    std::int64_t alloc_retries = 0; // the cache emptied to make room (slow: a synchronisation each)
    std::int64_t ooms = 0; // requests that failed even then: the plan does not run
    std::int64_t requests = 0; // allocations per iteration
    std::vector<CurvePoint> curve; // reserved through the last iteration simulated, on the timeline's clock
    // What runs out: reserved plus the runtime reserve (the ledger's runtime
    // rows: CUDA context, NCCL and cuBLAS workspaces), against the device.
    Bytes runtime_bytes = 0;
    Bytes device_peak_bytes = 0;
    bool fits = true; // within the device, and no request failed
};

struct PlanReserved
{
    AllocatorConfig settings;
    std::vector<RankReserved> ranks;
    int peak_rank = 0; // the rank whose device_peak_bytes is highest
    Bytes peak_bytes = 0;
    Bytes capacity_bytes = 0;
    bool fits() const;
};

// Precondition: `timeline` is simulateIteration(config).
PlanReserved simulateReserved(const Config &config, const Timeline &timeline);

// A rank's reserved curve with the runtime reserve on top, on the timeline's
// clock: what the device holds, beside the timeline's curve (which counts the
// reserve as a row); the lifetimes view draws it.
std::vector<CurvePoint> deviceReservedCurve(const RankReserved &rank);

} // namespace memledger
