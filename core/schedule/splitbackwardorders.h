// SPDX-License-Identifier: MIT
#pragma once

#include "core/schedule/schedule.h"

#include <cstdint>
#include <vector>

namespace memledger {

// The op orders of the schedules that split backwards into B and W (see
// scheduleOps): each rank's ops for `m` micro-batches (per direction for DualPipe).
std::vector<PipelineOp> zbH1Ops(std::int64_t p, std::int64_t m, std::int64_t rank);
std::vector<PipelineOp> zbH2Ops(std::int64_t p, std::int64_t m, std::int64_t rank);
// Every rank's order at once: the greedy fill decides them together, timed by `times`.
std::vector<std::vector<PipelineOp>> zbVOps(std::int64_t p, std::int64_t m, double weightShare,
                                            const PassTimes &times = {});
std::vector<PipelineOp> dualPipeOps(std::int64_t p, std::int64_t mPerDirection, std::int64_t rank);
std::vector<PipelineOp> dualPipeVOps(std::int64_t p, std::int64_t m, std::int64_t rank);

} // namespace memledger
