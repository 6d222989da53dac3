// SPDX-License-Identifier: MIT
// The code paths the fuzz targets drive, shared with the Catch2 test that
// replays tests/data/fuzz-regressions/, so that a crash found by a fuzzer
// stays a test in the normal and ASan builds. Each returns an empty string,
// or the invariant a result broke (a crash is the other way to fail).
#pragma once

#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "core/formats/hfimport.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "core/reports/report.h"
#include "core/timeline/timeline.h"
#include "core/trace/profilertrace.h"
#include "core/trace/replay.h"
#include "core/trace/snapshot.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace memledger::fuzz {

// Byte counts are never negative and totals are the sum of their rows.
inline std::string ledgerInvariants(const Ledger &ledger)
{
    for (const RankLedger &rank : ledger.ranks) {
        ByCategory device{}, host{};
        for (const LedgerEntry &e : rank.entries) {
            if (e.bytes < 0)
                return "negative entry: " + e.label;
            (e.placement == Placement::Device ? device : host)[static_cast<std::size_t>(e.category)] += e.bytes;
        }
        if (device != rank.device || host != rank.host)
            return "category sums differ from the entries";
        Bytes d = 0, h = 0;
        for (int i = 0; i < kCategoryCount; ++i) {
            d += rank.device[static_cast<std::size_t>(i)];
            h += rank.host[static_cast<std::size_t>(i)];
        }
        if (d != rank.device_total_bytes || h != rank.host_total_bytes)
            return "rank totals differ from the sum of their rows";
    }
    return {};
}

// Timelines are simulated only when small, so that executions stay fast:
// their cost grows with ranks × micro-batches × layers.
inline bool smallEnoughForTimeline(const Config &c)
{
    const std::int64_t p = c.parallelism.pipeline_model_parallel_size;
    const std::int64_t m = c.microBatches();
    return p <= 16 && m <= 64 && c.model.num_layers <= 128 && p * m * c.model.num_layers <= 8192;
}

inline std::string timelineInvariants(const Timeline &tl)
{
    for (const RankTimeline &r : tl.ranks) {
        Bytes top = 0;
        for (const CurvePoint &pt : r.curve) {
            if (pt.bytes < 0 || !std::isfinite(pt.time))
                return "bad curve point";
            top = std::max(top, pt.bytes);
        }
        if (!r.curve.empty() && top != r.peak_bytes)
            return "peak differs from the curve's maximum";
        if (!std::isfinite(r.peak_time) || !std::isfinite(r.busy_s))
            return "non-finite time";
    }
    if (!std::isfinite(tl.step_time) || !std::isfinite(tl.bubble_fraction))
        return "non-finite step time";
    return {};
}

// Preset loader, then (when it loads) validator, ledger, reports and timeline.
inline std::string runPreset(std::string_view text)
{
    const LoadResult loaded = presetFromText(text, "fuzz");
    if (!loaded.config)
        return {};
    const Config &c = *loaded.config;
    // A loaded preset writes back to the same configuration.
    const LoadResult again = presetFromText(presetToText(c), "round-trip");
    if (!again.config || !(*again.config == c))
        return "preset does not round-trip";
    if (hasErrors(validate(c)))
        return {};
    const Ledger ledger = computeLedger(c);
    if (std::string bad = ledgerInvariants(ledger); !bad.empty())
        return bad;
    (void)ledgerToJson(c, ledger).dump();
    (void)ledgerToCsv(ledger);
    if (!smallEnoughForTimeline(c))
        return {};
    return timelineInvariants(simulateIteration(c, {200}));
}

// Hugging Face importer; an imported config goes through the preset path.
inline std::string runHfImport(std::string_view text)
{
    const ImportResult imported = importHfConfigText(text, "fuzz");
    if (!imported.config)
        return {};
    if (hasErrors(validate(*imported.config)))
        return {};
    return ledgerInvariants(computeLedger(*imported.config));
}

// Deck loader; every slide of a loaded deck is a valid configuration.
inline std::string runDeck(std::string_view text)
{
    const DeckLoadResult loaded = deckFromText(text, "fuzz");
    if (!loaded.deck)
        return {};
    for (const Config &slide : loaded.deck->slides) {
        if (hasErrors(validate(slide)))
            return "a deck slide with validation errors loaded";
        if (std::string bad = ledgerInvariants(computeLedger(slide)); !bad.empty())
            return bad;
    }
    return {};
}

// Profiler trace importer: a trace or problems, never both; what it keeps is
// ordered as documented (events by time, ranges by start) and self-consistent.
inline std::string runProfilerTrace(std::string_view text)
{
    const std::unique_ptr<ByteSource> source = ByteSource::fromMemory(text);
    const TraceLoadResult r = loadProfilerTrace(*source);
    if (r.trace.has_value() == !r.problems.empty())
        return "a trace and problems, or neither";
    if (!r.trace)
        return {};
    const MeasuredTrace &t = *r.trace;
    if (!std::is_sorted(t.devices.begin(), t.devices.end())
        || !std::binary_search(t.devices.begin(), t.devices.end(), t.device))
        return "the kept device is not among the sorted devices";
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        const TraceEvent &e = t.events[i];
        if (e.size < 0 || (e.action != TraceAction::Alloc && e.action != TraceAction::FreeCompleted))
            return "bad event";
        if (t.has_times && i > 0 && t.events[i - 1].time_us > e.time_us)
            return "events out of time order";
    }
    for (std::size_t i = 0; i < t.ranges.size(); ++i) {
        if (!(t.ranges[i].end_us >= t.ranges[i].start_us) || (i > 0 && t.ranges[i - 1].start_us > t.ranges[i].start_us))
            return "bad range";
    }
    return {};
}

// Snapshot importer (the safe unpickler under it) and the replay: a trace or
// problems, never both; stack indices in range; the replayed peak is the
// largest point of the curve (or the start) and the sum of what is alive at it.
inline std::string runSnapshot(std::string_view bytes)
{
    const std::unique_ptr<ByteSource> source = ByteSource::fromMemory(bytes);
    const TraceLoadResult r = loadSnapshot(*source);
    if (r.trace.has_value() == hasErrors(r.problems))
        return "a trace and errors, or neither";
    if (!r.trace)
        return {};
    const MeasuredTrace &t = *r.trace;
    if (!std::is_sorted(t.devices.begin(), t.devices.end())
        || (!t.devices.empty() && !std::binary_search(t.devices.begin(), t.devices.end(), t.device)))
        return "the kept device is not among the sorted devices";
    const auto badStack = [&](std::int32_t s) { return s < -1 || s >= static_cast<std::int32_t>(t.stacks.size()); };
    for (const TraceEvent &e : t.events)
        if (e.size < 0 || badStack(e.stack))
            return "bad event";
    for (const TraceBlock &b : t.live_blocks)
        if (b.size < 0 || badStack(b.stack))
            return "bad live block";
    for (std::size_t i = 0; i < t.ranges.size(); ++i)
        if (!(t.ranges[i].end_us >= t.ranges[i].start_us) || (i > 0 && t.ranges[i - 1].start_us > t.ranges[i].start_us))
            return "bad range";
    const MemoryReplay replay = replayAllocated(t);
    Bytes top = replay.initial_allocated_bytes, alive = 0;
    for (const ReplayPoint &p : replay.curve)
        top = std::max(top, p.allocated);
    bool overflow = false; // absurd sizes saturate the replay's sums: nothing to compare then
    for (const ReplayBlock &b : replay.alive_at_peak)
        overflow = overflow || __builtin_add_overflow(alive, b.size, &alive);
    if (top != replay.peak_allocated_bytes || (!overflow && alive != replay.peak_allocated_bytes))
        return "the replayed peak is not the curve's top or not what is alive at it";
    return {};
}

// Launch importers (Megatron-LM arguments, torchtitan TOML, DeepSpeed JSON,
// told apart by content as a pasted text is): a plan or an error, never both;
// a plan is valid and its ledger consistent; an export to the same framework
// that reports no problem imports back to the same plan (the contract of
// `memledger-cli export`). DeepSpeed's model and a missing world size come
// from the defaults a GUI import gives: Llama 2 7B on 8 GPUs.
inline std::string runLaunchImport(std::string_view text)
{
    LaunchOptions options;
    options.defaultGpus = 8;
    static const ModelConfig kModel = builtinConfig("models", "llama-2-7b")->model;
    options.defaultModel = kModel;
    const LaunchImport r = importLaunchText(text, "", options, {});
    if (r.config.has_value() == hasErrors(r.problems))
        return "a plan and errors, or neither";
    if (!r.config)
        return {};
    const Config &c = *r.config;
    if (hasErrors(validate(c)))
        return "an imported plan with validation errors";
    if (std::string bad = ledgerInvariants(computeLedger(c)); !bad.empty())
        return bad;
    const LaunchFormat format = detectLaunchFormat("", text);
    const LaunchExport exported = exportLaunch(c, format);
    if (!exported.problems.empty())
        return {};
    LaunchImport back = importLaunchText(exported.text, "", options, {});
    if (!back.config || !(canonicalPlan(*back.config) == canonicalPlan(c)))
        return "an export without problems does not import back to the same plan";
    return {};
}

} // namespace memledger::fuzz
