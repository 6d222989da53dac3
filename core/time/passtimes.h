// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/schedule/schedule.h"
#include "core/time/costmodel.h"

#include <vector>

namespace memledger {

// One micro-batch's passes through each chunk of each rank
// (`passes[rank][chunk]`) as simulateIteration times them, from the same
// layer costs laid end to end: the forward with the last stage's output layer
// and loss, the input gradients with recompute and the output layer's (a B
// that defers its W), the weight gradients (that W); and one send between
// neighbouring stages.
PassTimes passTimes(const Config &config, const CostModel &cost);

// Every rank's op order as simulateIteration runs it: scheduleAllOps with
// ZB-V's fill timed by passTimes. computeLedger(config, scheduledOps(...)) is
// the ledger of the simulated iteration; `weightShare` as weightPassShare
// gives it.
std::vector<std::vector<PipelineOp>> scheduledOps(const Config &config, const CostModel &cost, double weightShare);
// The same, with the weight share of the configuration's layers.
std::vector<std::vector<PipelineOp>> scheduledOps(const Config &config, const CostModel &cost);

} // namespace memledger
