// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>

namespace memledger {

// Gradient offload as ZeRO-Offload runs it (Ren et al. 2021, §4; DeepSpeed's
// offload_optimizer with ZeRO stage 1–3): the fp16/bf16 gradients leave the
// device bucket by bucket while backward still runs, the fp32 master weights
// and optimizer states live on the host and the update runs on the CPU; the
// updated parameters come back. The device keeps only a double buffer: one
// bucket being filled by backward while the other drains over PCIe. The
// bucket is strategy.ddp_bucket_size elements (Megatron's name; DeepSpeed's
// reduce_bucket_size plays the same part), capped at the rank's parameters.

// Bytes of the device double buffer.
Bytes gradOffloadBufferBytes(std::int64_t bucketElements, std::int64_t rankParams, int gradBytes);

// Seconds one backward of `backwardSeconds` waits for its `bytes` of
// gradients to cross a link of `linkBytesPerS`, when it may run at most two
// buckets of `bucketBytes` ahead of the copy: the copy of all but the last
// two buckets must be done when the backward ends.
double gradOffloadStall(double backwardSeconds, double bytes, double bucketBytes, double linkBytesPerS);

// What is left to copy after the last backward: the two buckets in the
// buffer, before the CPU step may start.
double gradOffloadTail(double bytes, double bucketBytes, double linkBytesPerS);

// The offload settings as one edit (the GUI's combos): gradients offloaded
// bring the optimizer step to the CPU; the step back on the device brings
// the gradients back too (validate refuses one without the other).
void setGradOffload(StrategyConfig &strategy, OffloadTarget target);
void setOptimizerOffload(StrategyConfig &strategy, OffloadTarget target);

} // namespace memledger
