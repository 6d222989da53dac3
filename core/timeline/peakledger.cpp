// SPDX-License-Identifier: MIT
#include "core/timeline/peakledger.h"

#include "core/base/textcat.h"
#include "core/base/units.h"
#include "core/timeline/lifetimelabels.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace memledger {

namespace {

// Lifetimes that are a ledger row or a saved-activation group: what the rows
// already count (at their maximum). Everything else lives for a moment.
bool countedByRows(LifetimeKind kind)
{
    switch (kind) {
    case LifetimeKind::Persistent:
    case LifetimeKind::Gradients:
    case LifetimeKind::Activations:
    case LifetimeKind::ParkedActivations:
    case LifetimeKind::CollectiveBuffers:
        return true;
    default:
        return false;
    }
}

struct AliveAtPeak
{
    ByCategory bytes{}; // everything alive then, by category (sums to the peak)
    ByCategory counted{}; // of which rows' tensors and saved activations
    std::map<std::int32_t, Bytes> byEntry; // alive bytes of each row placed by index (Lifetime::entry)
    std::vector<std::pair<std::string, Bytes>> momentary; // the momentary ones in words, largest first
    std::vector<Category> momentaryCategory; // beside `momentary`
};

AliveAtPeak aliveAt(const Timeline &tl, const RankTimeline &rt)
{
    AliveAtPeak out;
    std::map<std::string, std::pair<Bytes, Category>> byLabel;
    for (const Lifetime &l : rt.lifetimes) {
        if (!(l.start <= rt.peak_time && rt.peak_time < l.end) || l.bytes == 0)
            continue;
        const std::size_t c = static_cast<std::size_t>(l.category);
        out.bytes[c] += l.bytes;
        if (l.entry >= 0)
            out.byEntry[l.entry] += l.bytes;
        if (countedByRows(l.kind)) {
            out.counted[c] += l.bytes;
            continue;
        }
        auto &[bytes, category] = byLabel[lifetimeLabel(tl, rt, l)];
        bytes += l.bytes;
        category = l.category;
    }
    std::vector<std::tuple<std::string, Bytes, Category>> items;
    for (const auto &[label, v] : byLabel)
        items.emplace_back(label, v.first, v.second);
    std::stable_sort(items.begin(), items.end(),
                     [](const auto &a, const auto &b) { return std::get<1>(a) > std::get<1>(b); });
    for (auto &[label, bytes, category] : items) {
        out.momentary.emplace_back(std::move(label), bytes);
        out.momentaryCategory.push_back(category);
    }
    return out;
}

// "optimizer states" in a sentence.
std::string lowerFirst(std::string_view label)
{
    std::string out(label);
    if (!out.empty())
        out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
    return out;
}

// Up to four of `items` in words ("name (1.2 GB); ...; and 3 others").
std::string namedList(const std::vector<std::pair<std::string, Bytes>> &items)
{
    constexpr std::size_t kNamed = 4;
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < kNamed; ++i)
        append(out, out.empty() ? "" : "; ", items[i].first, " (", formatGB(double(items[i].second)), ")");
    if (items.size() > kNamed)
        append(out, "; and ", countOf(double(items.size() - kNamed), "other", "others"));
    return out;
}

// A category above its rows at the peak: what is alive then for a moment,
// and saved activations (or a parked slice whose copy has not left) above the rows.
std::string aboveNote(const RankTimeline &rt, const RankLedger &rank, const AliveAtPeak &alive, Category c)
{
    std::vector<std::pair<std::string, Bytes>> items;
    for (std::size_t i = 0; i < alive.momentary.size(); ++i)
        if (alive.momentaryCategory[i] == c)
            items.push_back(alive.momentary[i]);
    const std::size_t ci = static_cast<std::size_t>(c);
    std::string note = cat("The simulated iteration peaks at ", formatSeconds(rt.peak_time), " with ",
                           formatGB(double(rt.peak_bytes)), "; its ", lowerFirst(categoryLabel(c)),
                           " then: ", formatGB(double(alive.bytes[ci])), " against ", formatGB(double(rank.device[ci])),
                           " in the rows (each a maximum on its own)");
    if (!items.empty())
        append(note, ". Alive then for a moment: ", namedList(items));
    if (c == Category::Activations && alive.counted[ci] > rank.device[ci])
        append(note, ". Saved activations on the device then: ", formatGB(double(alive.counted[ci])),
               " (a copy to the host or another rank still under way)");
    note += '.';
    return note;
}

// A category below its rows at the peak: which rows are not (wholly) allocated then.
std::string belowNote(const RankTimeline &rt, const RankLedger &rank, const AliveAtPeak &alive, Category c)
{
    const std::size_t ci = static_cast<std::size_t>(c);
    std::string note = cat(
        "The simulated iteration peaks at ", formatSeconds(rt.peak_time), " with ", formatGB(double(rt.peak_bytes)),
        "; its ", lowerFirst(categoryLabel(c)), " then: ", formatGB(double(alive.bytes[ci])), " of the rows' ",
        formatGB(double(rank.device[ci])), ", which are each a maximum and are not all allocated at once");
    std::string partly;
    for (std::size_t e = 0; e < rank.entries.size(); ++e) {
        const LedgerEntry &entry = rank.entries[e];
        if (entry.category != c || entry.placement != Placement::Device || entry.atPeak)
            continue;
        const auto it = alive.byEntry.find(static_cast<std::int32_t>(e));
        const Bytes then = it == alive.byEntry.end() ? 0 : it->second;
        if (c != Category::Activations && then < entry.bytes)
            append(partly, partly.empty() ? "" : "; ", entry.label, " (", formatGB(double(then)), " of ",
                   formatGB(double(entry.bytes)), " allocated then)");
    }
    if (!partly.empty())
        append(note, ": ", partly);
    else if (c == Category::Activations)
        append(note, ": the saved activations of fewer micro-batches, or no recompute group rebuilt, at that moment");
    note += '.';
    return note;
}

} // namespace

void carrySimulatedPeak(Ledger &ledger, const Timeline &timeline)
{
    bool carried = false;
    for (RankLedger &rank : ledger.ranks) {
        const std::size_t r = static_cast<std::size_t>(rank.pipeline_rank);
        if (r >= timeline.ranks.size())
            continue;
        const RankTimeline &rt = timeline.ranks[r];
        if (rt.peak_bytes == rank.device_total_bytes)
            continue;
        const AliveAtPeak alive = aliveAt(timeline, rt);
        // One row per category whose bytes at the peak differ from its rows':
        // each category then shows what is allocated at that moment.
        for (const Category c : kCategories) {
            const std::size_t ci = static_cast<std::size_t>(c);
            const Bytes adjust = alive.bytes[ci] - rank.device[ci];
            if (adjust == 0)
                continue;
            LedgerEntry row;
            row.category = c;
            row.placement = Placement::Device;
            row.label = adjust > 0 ? "Working set at the simulated peak" : "Not allocated at the simulated peak";
            row.bytes = adjust;
            row.formula
                = cat("at the peak ", formatGB(double(alive.bytes[ci])), " − rows ", formatGB(double(rank.device[ci])));
            row.note = adjust > 0 ? aboveNote(rt, rank, alive, c) : belowNote(rt, rank, alive, c);
            row.atPeak = true;
            rank.device[ci] = alive.bytes[ci];
            // Last, after the rows it is measured against; appended, so a lifetime's
            // index into the rows (Lifetime::entry) still names the same row.
            rank.entries.push_back(std::move(row));
        }
        rank.device_total_bytes = 0;
        for (const Bytes b : rank.device)
            rank.device_total_bytes += b;
        rank.fits = rank.device_total_bytes <= ledger.capacity_bytes;
        carried = true;
    }
    if (!carried)
        return;
    ledger.peak_bytes = 0;
    for (const RankLedger &rank : ledger.ranks)
        if (rank.device_total_bytes > ledger.peak_bytes) {
            ledger.peak_bytes = rank.device_total_bytes;
            ledger.peak_rank = rank.pipeline_rank;
        }
    ledger.choices.push_back(
        "Peak: each rank's total is the peak of its simulated iteration (the schedule's ops in order, every tensor "
        "from its allocation to its release), and each category holds what is allocated then: rows \"at the "
        "simulated peak\" add what is alive only for a moment and take off what the rows, each a maximum on its "
        "own, do not hold at that moment.");
}

PlanPeak planPeak(const Config &config, const TimelineOptions &options)
{
    PlanPeak out;
    out.timeline = simulateIteration(config, options);
    out.ledger = out.timeline.ledger;
    carrySimulatedPeak(out.ledger, out.timeline);
    return out;
}

Ledger peakLedger(const Config &config)
{
    // The curve is not read: a short one saves its downsampling.
    return planPeak(config, TimelineOptions{.curve_points = 16}).ledger;
}

} // namespace memledger
