// SPDX-License-Identifier: MIT
#include "core/timeline/peakcompare.h"

#include "core/base/units.h"
#include "core/timeline/lifetimelabels.h"

#include <algorithm>

namespace memledger {

namespace {

// Lifetimes that stand for a ledger row (or a piece of one): what the ledger
// counts. Everything else on the timeline is a transient it leaves out. An
// optimizer temporary with an entry is a ledger row marked `transient`.
bool isLedgerRow(const Lifetime &l)
{
    switch (l.kind) {
    case LifetimeKind::Persistent:
    case LifetimeKind::Gradients:
    case LifetimeKind::Activations:
    case LifetimeKind::ParkedActivations:
    case LifetimeKind::KvCache:
    case LifetimeKind::CollectiveBuffers:
        return true;
    case LifetimeKind::OptimizerTemporaries:
        return l.entry >= 0;
    default:
        return false;
    }
}

std::string gb(Bytes bytes)
{
    return formatGB(static_cast<double>(bytes < 0 ? -bytes : bytes));
}

} // namespace

PeakComparison comparePeaks(const Timeline &timeline)
{
    PeakComparison c;
    c.ledger_rank = timeline.ledger.peak_rank;
    c.ledger_bytes = timeline.ledger.peak_bytes;
    if (timeline.ranks.empty())
        return c;
    const RankTimeline &rt = timeline.ranks[static_cast<std::size_t>(timeline.peak_rank)];
    c.timeline_rank = rt.pipeline_rank;
    c.timeline_bytes = rt.peak_bytes;
    c.timeline_time = rt.peak_time;

    ByCategory alive{};
    for (const Lifetime &l : rt.lifetimes) {
        // Alive at the peak as simulateIteration counts it: start <= t < end.
        if (!(l.start <= rt.peak_time && rt.peak_time < l.end) || l.bytes == 0)
            continue;
        if (isLedgerRow(l)) {
            alive[static_cast<std::size_t>(l.category)] += l.bytes;
            continue;
        }
        c.transient_bytes += l.bytes;
        c.transients.push_back({lifetimeLabel(timeline, rt, l), l.category, l.bytes});
    }
    std::stable_sort(c.transients.begin(), c.transients.end(),
                     [](const AliveItem &a, const AliveItem &b) { return a.bytes > b.bytes; });

    const auto rank = std::find_if(timeline.ledger.ranks.begin(), timeline.ledger.ranks.end(),
                                   [&](const RankLedger &r) { return r.pipeline_rank == rt.pipeline_rank; });
    if (rank != timeline.ledger.ranks.end()) {
        Bytes aliveTotal = 0, largestGap = 0;
        for (Category cat : kCategories) {
            const auto i = static_cast<std::size_t>(cat);
            aliveTotal += alive[i];
            if (rank->device[i] - alive[i] > largestGap) {
                largestGap = rank->device[i] - alive[i];
                c.largest_absent_category = cat;
            }
        }
        c.ledger_rows_not_alive_bytes = rank->device_total_bytes - aliveTotal;
    }
    return c;
}

std::string peakComparisonText(const PeakComparison &c)
{
    std::string out = "The ledger's rows add up to " + formatGB(static_cast<double>(c.ledger_bytes)) + " on rank "
                      + std::to_string(c.ledger_rank) + ", each at its largest; the peak, "
                      + formatGB(static_cast<double>(c.timeline_bytes)) + " on rank " + std::to_string(c.timeline_rank)
                      + ", is what the simulated iteration holds at its fullest moment";
    out += " (" + formatSeconds(c.timeline_time, 3) + " into the iteration)";
    if (c.difference() == 0)
        return out + ". They agree.";
    out += c.difference() > 0 ? ", " + gb(c.difference()) + " more. " : ", " + gb(c.difference()) + " less. ";
    if (!c.transients.empty()) {
        out += "At that moment the timeline also holds " + c.transients.front().label + " ("
               + gb(c.transients.front().bytes) + ")";
        if (c.transients.size() > 1)
            out += " and " + std::to_string(c.transients.size() - 1) + " other short-lived tensor"
                   + (c.transients.size() > 2 ? "s" : "") + ", " + gb(c.transient_bytes) + " in all";
        out += ", which no ledger row counts.";
    }
    if (c.ledger_rows_not_alive_bytes > 0)
        out += std::string(c.transients.empty() ? "" : " ") + "Of its ledger rows, " + gb(c.ledger_rows_not_alive_bytes)
               + " are not alive then, most of it " + std::string(categoryLabel(c.largest_absent_category))
               + " (the ledger counts each row at its largest, not all at one instant).";
    if (c.timeline_rank != c.ledger_rank)
        out += " The two peaks are on different ranks.";
    return out;
}

} // namespace memledger
