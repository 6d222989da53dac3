// SPDX-License-Identifier: MIT
#pragma once

#include "core/allocator/cachingallocator.h"
#include "core/base/units.h"
#include "core/config/config.h"
#include "core/timeline/timeline.h"

#include <cstdint>
#include <vector>

namespace memledger {

// A rank's simulated iteration as the requests PyTorch's caching allocator
// receives: each lifetime of the timeline becomes the tensors it is made of
// (core/timeline/lifetimetensors.h), allocated at its start and freed at its
// end. docs/accounting.md ("Reserved memory") says what order this is and why:
// - the ledger's model-state and buffer rows are allocated once, before the
//   first iteration, in the ledger's order (parameters, gradients, optimizer
//   states, buffers), except the optimizer's moments, which its first step
//   makes, in the first iteration; the runtime reserve is not the allocator's;
// - everything else is allocated where its lifetime starts and freed, in
//   reverse order, where it ends: a layer's saved tensors as its forward runs
//   and as its backward passes them, the working sets as the ops that hold
//   them run;
// - at one instant, what ends is freed before what starts is allocated, as
//   the memory curve counts it; lifetimes that hold nothing over time (they
//   end where they start) are left out, as the curve leaves them out; a
//   layer half's tensors, those it keeps and those its forward makes and does
//   not keep (per-op checkpointing, tensor_policies, Megatron's selective
//   recompute of an unfused core), in the order the
//   forward makes them (LifetimeTensors::forwardPositions);
// - everything runs on the compute stream, except tensors copied back from
//   the host (activation offload), which the copy stream allocates, and the
//   ledger rows that name their own stream (FSDP2's sharded gradients on its
//   reduce-scatter stream, its all-gather buffers on its copy-in stream).

struct AllocationEvent
{
    double time = 0;
    Bytes bytes = 0; // the request, on an allocation
    std::int32_t tensor = 0; // which allocation (a free names the one it ends)
    StreamId stream = 0;
    bool free = false;
};

struct AllocationStream
{
    std::vector<AllocationEvent> setup; // model states, before the first iteration; never freed
    std::vector<AllocationEvent> iteration; // one iteration's allocations and frees, in order
    // The first iteration: the same, with the optimizer's moments made in its
    // step (lazily, as torch.optim and FusedAdam do) and never freed.
    std::vector<AllocationEvent> firstIteration;
    std::int32_t tensors = 0; // allocations in all (ids 0 .. tensors - 1)
};

// `ledger`: the rank's ledger, whose rows the persistent lifetimes are.
AllocationStream allocationStream(const Config &config, const RankLedger &ledger, const RankTimeline &rank);

} // namespace memledger
