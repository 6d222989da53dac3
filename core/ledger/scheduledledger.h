// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/schedule/schedule.h"

#include <vector>

namespace memledger {

// computeLedger, given every rank's op order as scheduleAllOps(parallelism,
// microBatches(), weightPassShare(...)) makes it: the timeline schedules once
// and hands the order to the ledger, so ZB-V's greedy fill (about a
// millisecond) runs once per timeline. Only the schedules that split
// backwards read `ops`.
Ledger computeLedger(const Config &config, const std::vector<std::vector<PipelineOp>> &ops);

} // namespace memledger
