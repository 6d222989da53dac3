// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"

#include <cstdint>

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

} // namespace memledger
