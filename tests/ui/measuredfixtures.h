// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/compare.h"

// A hand-built comparison for the GUI tests: every figure chosen so that each
// color and each formatting path shows up once.
namespace memledger::test {

inline TraceComparison handBuiltComparison()
{
    TraceComparison c;
    c.format = TraceFormat::Snapshot;
    c.device = 0;
    c.events = 12345;
    c.measured_peak_allocated_bytes = 20'000'000'000;
    c.measured_steady_allocated_bytes = 8'000'000'000;
    c.measured_peak_phase = IterationPhase::Backward;
    c.measured_iteration_s = 1.25;
    c.pipeline_rank = 0;
    c.modelled_peak_bytes = 20'200'000'000; // +1.0 %: good
    c.modelled_steady_bytes = 8'400'000'000; // +5.0 %: fair
    c.modelled_peak_phase = IterationPhase::Backward;
    c.modelled_iteration_s = 0.98;
    c.peak_error = 0.01;
    c.steady_error = 0.05;
    c.phases = {
        {IterationPhase::Forward, 15'000'000'000, 12'000'000'000, -0.2}, // -20 %: poor
        {IterationPhase::Backward, 20'000'000'000, 20'200'000'000, 0.01},
        {IterationPhase::Optimizer, 0, 9'000'000'000, 0}, // nothing measured
    };
    PeakAllocation weights;
    weights.bytes = 4'000'000'000;
    weights.count = 2;
    weights.frames = {{"/home/u/train/model.py", 42, "forward"},
                      {"/home/u/train/train.py", 7, "step"},
                      {"/usr/lib/python3/torch/nn/module.py", 1500, "_call_impl"}};
    weights.matched = "Weights (bf16)";
    PeakAllocation mystery;
    mystery.bytes = 512'000'000;
    mystery.frames = {{"/home/u/train/loss.py", 9, "cross_entropy"}};
    c.alive_at_peak = {weights, mystery};
    c.unexplained = {mystery};
    c.measured_curve = {{0.0, 8'000'000'000}, {0.3, 15'000'000'000}, {0.6, 20'000'000'000}, {1.0, 8'000'000'000}};
    c.modelled_curve = {{0.0, 8'400'000'000}, {0.35, 12'000'000'000}, {0.6, 20'200'000'000}, {1.0, 8'400'000'000}};
    c.notes = {"Iteration boundaries from ProfilerStep#2.", "Modelled figures leave out the runtime reserve."};
    return c;
}

} // namespace memledger::test
