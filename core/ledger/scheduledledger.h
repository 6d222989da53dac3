// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/schedule/schedule.h"

#include <vector>

namespace memledger {

// computeLedger, given every rank's op order as scheduleAllOps(parallelism,
// microBatches(), weightPassShare(...), times) makes it: the timeline
// schedules once, ZB-V's greedy fill timed by the passes (scheduledOps,
// core/time/passtimes.h), and hands the order to the ledger. Only the
// schedules that split backwards read `ops`.
Ledger computeLedger(const Config &config, const std::vector<std::vector<PipelineOp>> &ops);

} // namespace memledger
