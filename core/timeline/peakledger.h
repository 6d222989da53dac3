// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/timeline/timeline.h"

namespace memledger {

// One peak (docs/accounting.md, "One peak"): every verdict — eval, check, the
// search, the GUI's header and bars — reads a rank's total as the peak of its
// simulated iteration, not as the sum of the ledger's rows. The rows are each
// a maximum (the saved activations of the most micro-batches in flight, the
// largest recompute group); what the sum misses is what is alive only for a
// moment at the peak: a layer's activation gradients, the loss's logits and
// fp32 copies, a weight gradient before its accumulation, a parked slice whose
// copy has not left yet; and what it counts twice: maxima that never
// coincide (a recompute group rebuilt while fewer micro-batches are saved,
// the optimizer step's scratch during the backward).

// Sets each rank's device figures to what is allocated at its simulated peak:
// for each category whose bytes then differ from its rows', one row
// (LedgerEntry::atPeak) of the difference, "Working set at the simulated
// peak" when it is above them (its note naming what is alive then for a
// moment) or "Not allocated at the simulated peak" when below (the rows, each
// a maximum on its own, that are not all allocated at that moment); then the
// totals, the verdicts and the ledger's peak. `timeline` is the same
// configuration's (simulateIteration).
void carrySimulatedPeak(Ledger &ledger, const Timeline &timeline);

// The ledger every verdict reads: computeLedger's rows with the simulated
// peak carried. Precondition: validate(config) has no errors.
struct PlanPeak
{
    Ledger ledger;
    Timeline timeline;
};
PlanPeak planPeak(const Config &config, const TimelineOptions &options = {});
Ledger peakLedger(const Config &config);

} // namespace memledger
