// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// What else changes when a user edits one pipeline knob, so that a plan edited
// in the GUI (or by the CLI's --set) stays one a framework runs: the rules the
// control panel applies, kept here so that they are tested without a window.

// The chunks per rank a schedule runs, for a user switching to it from `v`:
// 2 for ZB-V, DualPipe and DualPipeV, 1 for GPipe, 1F1B, ZB-H1 and ZB-H2,
// and `v` (at least 2) for interleaved 1F1B.
std::int64_t chunksPerRankFor(PipelineSchedule schedule, std::int64_t v);

// A pipeline_layout lists one layer count per virtual stage (p·v entries); after
// p or v changes it describes another pipeline. Clears it then, so the even
// split takes over (validation explains when the layers do not divide), and
// says whether it did. The control panel and the CLI's --set both apply it.
bool dropStaleLayout(ParallelismConfig &parallelism);

// p changes: a layout for the old p goes.
void setPipelineSize(ParallelismConfig &parallelism, std::int64_t p);
// v changes: interleaved exactly when v > 1, unless a two-chunk schedule
// (ZB-V, DualPipe, DualPipeV) keeps its two; a layout for the old v goes.
void setVirtualStages(ParallelismConfig &parallelism, std::int64_t v);
// The schedule changes: it brings its chunks per rank along (chunksPerRankFor),
// and a layout for the old v goes with them.
void setSchedule(ParallelismConfig &parallelism, PipelineSchedule schedule);

// The most even pipeline_layout of `layers` over `stages` virtual stages, in
// stage order: each stage holds layers / stages, and the remainder goes one
// layer each to the inner stages first, then to the first and the last, which
// also hold the embedding and the loss. Where layers + 2 divides by the stages
// this is the split of Megatron's --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split (Llama 3 405B's 126 layers on 16
// stages: 7, fourteen times 8, 7; Llama 3 report §3.3.2). Empty for no stages.
std::vector<std::int64_t> balancedLayout(std::int64_t layers, std::int64_t stages);

// A layout as a person reads and types it: counts separated by commas, a run
// of equal counts as count×run ("7, 8×14, 7"); empty: no layout (the even split).
std::string layoutText(const std::vector<std::int64_t> &layout);
// Reads what layoutText writes, and also plain lists ("[7, 8, 8, 7]", counts
// separated by commas or spaces, runs written N×k, N*k or Nxk). nullopt when
// the text is not such a list (or lists more than 100,000 stages); an empty or
// blank text is the empty layout.
std::optional<std::vector<std::int64_t>> layoutFromText(std::string_view text);

// "Keep the GPU count" (issue 34): `after` is `before` with one edit applied.
// When the edit changed t, p or c (not d), d becomes gpus / (t·p·c), so the
// plan still runs on `gpus` GPUs. Returns an empty string when the count is
// kept or d was the edit (a new count is the user's choice); otherwise why it
// cannot be kept, naming the nearest values that would keep it, with d left
// as the edit left it.
std::string keepGpuCount(const ParallelismConfig &before, ParallelismConfig &after, std::int64_t gpus);

} // namespace memledger
