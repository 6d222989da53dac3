// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/ledger/ledger.h"
#include "core/timeline/timeline.h"

#include <string>
#include <vector>

namespace memledger {

// The ledger's peak and the simulated iteration's peak side by side, and why
// they differ. The ledger adds every row at its largest (all in-flight
// micro-batches' activations, the optimizer step's transient rows) as one
// conservative sum and leaves out what lives for a moment only; the timeline
// adds what is alive at each instant, including those short-lived tensors (a
// layer's activation gradients in its backward, the logits around the loss).
// So either can be the larger, by the tensors one counts and the other does not.
struct PeakComparison
{
    int ledger_rank = 0;
    Bytes ledger_bytes = 0; // Ledger::peak_bytes
    int timeline_rank = 0;
    Bytes timeline_bytes = 0; // the simulated peak of timeline_rank
    double timeline_time = 0; // seconds into the iteration
    // Alive at the timeline's peak and counted by no ledger row (largest first).
    std::vector<AliveItem> transients;
    Bytes transient_bytes = 0;
    // The timeline's peak rank: its ledger total minus what of its rows is
    // alive at that moment (negative when the timeline holds more of them),
    // and the category that makes up most of a positive difference.
    Bytes ledger_rows_not_alive_bytes = 0;
    Category largest_absent_category = Category::Activations;

    Bytes difference() const { return timeline_bytes - ledger_bytes; }
};

// Precondition: `timeline` came from simulateIteration (its ledger is the
// same configuration's).
PeakComparison comparePeaks(const Timeline &timeline);

// One or two sentences: which peak the ledger shows, which the timeline, and
// the named tensors that make the difference ("the timeline also holds
// Backward working set of layer 31 (0.03 GB), which no ledger row counts").
std::string peakComparisonText(const PeakComparison &comparison);

} // namespace memledger
