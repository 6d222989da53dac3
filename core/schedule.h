// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"

#include <cstdint>
#include <vector>

namespace memledger {

// How many chunk-micro-batches a pipeline rank holds at its activation peak,
// from the op order of each schedule (one chunk per rank unless interleaved):
//  - GPipe runs every forward before any backward: all m.
//  - 1F1B warms up with p-r-1 forwards and then alternates: min(p-r, m).
//  - Megatron's interleaved 1F1B warms up with 2(p-r-1) + (v-1)p chunk
//    forwards (get_forward_backward_func, schedules.py) and holds one more in
//    steady state: min(2(p-r-1) + (v-1)p + 1, m v).
std::int64_t inFlightChunks(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank);

// Of those, how many belong to virtual chunk `chunk` (0..v-1). Forward i of
// the interleaved warm-up runs chunk (i mod pv) / p.
std::int64_t inFlightOfChunk(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank,
                             std::int64_t chunk);

enum class OpKind : std::uint8_t { Forward, Backward };

// One compute op of a pipeline rank: the forward or backward of one virtual
// chunk (stage chunk * p + rank) for one micro-batch.
struct PipelineOp {
    OpKind kind = OpKind::Forward;
    std::int32_t microbatch = 0;
    std::int32_t chunk = 0;
    bool operator==(const PipelineOp &) const = default;
};

// The exact op order of one rank:
//  - GPipe: every forward in micro-batch order, then every backward in reverse;
//  - 1F1B: min(p-r-1, m) warm-up forwards, m - warm-up forward/backward pairs,
//    then the cool-down backwards;
//  - interleaved 1F1B as Megatron's forward_backward_pipelining_with_interleaving:
//    forward k runs chunk (k mod pv)/p on micro-batch (k / pv) p + k mod p, and
//    backward k the mirrored chunk v-1-(k mod pv)/p.
std::vector<PipelineOp> scheduleOps(const ParallelismConfig &parallelism, std::int64_t microBatches, std::int64_t rank);

} // namespace memledger
