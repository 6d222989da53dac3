// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/time/steptime.h"
#include "core/timeline/timeline.h"

#include <array>
#include <string>
#include <string_view>

namespace memledger {

// Why the simulated iteration (simulateIteration: every rank's ops one by
// one, each waiting for its neighbour's output) and the step-time model
// (estimateStepTime: the busiest rank's work plus the schedule's bubble
// formula on an average rank) give one plan two iteration times. Both price
// every pass with the same costs (core/time/costmodel.h) and the same overlaps
// (DualPipe's pairs included), so what remains is what one can see and the
// other averages away. The two figures split into three parts that add up
// to each:
//  - "work": the busiest rank's passes, their exposed communication and
//    stalls (model: compute, recompute, TP/CP/EP communication, offload and
//    balance stalls; simulation: the largest busy time of a rank);
//  - "pipeline_wait": what the pipeline adds to that rank's work (model: the
//    bubble formula and the pipeline sends; simulation: the pipeline's span,
//    first op to last backward, less that busy time): with uneven stages
//    (pipeline_layout, dense and MoE layers, the embedding and the output
//    layer) the simulation waits on the slowest neighbours where the formula
//    takes an average rank, and it pays each send's latency on the critical
//    path rather than as a blocking send;
//  - "after_pipeline": the data-parallel reduction and the optimizer step
//    (model: the last rank's; simulation: from the end of the pipeline to the
//    latest rank's optimizer end, which may be another rank's, e.g. the first
//    rank's with the embedding).
struct StepTimeGapPart
{
    std::string_view name;
    double model_s = 0;
    double simulated_s = 0;
};

struct StepTimeGap
{
    double model_s = 0; // estimateStepTime's total
    double simulated_s = 0; // Timeline::step_time
    std::array<StepTimeGapPart, 3> parts; // work, pipeline_wait, after_pipeline
    int busiest_rank = 0; // the simulation's rank with the most busy time
    int last_rank = 0; // the rank whose optimizer step ends last
    double relative() const { return model_s > 0 ? simulated_s / model_s - 1.0 : 0.0; }
    // One or two sentences for a caption: the two figures, and the parts
    // that differ by more than 1 % of the model's total, largest first, each
    // with why; "they agree" within 1 %.
    std::string explanation;
    // The same in a few words, for a caption beside the simulated figure:
    // "step-time model 16.08 s: 4.7 % longer, in the pipeline's waits", or
    // "step-time model 39.43 s: within 1 %".
    std::string caption;
};

StepTimeGap stepTimeGap(const Config &config, const StepTime &model, const Timeline &simulated);

} // namespace memledger
