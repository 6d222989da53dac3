// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <cstdint>

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

} // namespace memledger
