// SPDX-License-Identifier: MIT
// Megatron-LM's overlap_p2p_comm (on unless --no-overlap-p2p-communication;
// the argument parser turns it off without the interleaved schedule). In
// forward_backward_pipelining_with_interleaving (schedules.py) the steady
// 1F1B phase issues every send and receive asynchronously and waits for it
// only before the pass that needs it, while the warm-up and cool-down send
// blocking; Megatron Bridge's communication-overlap guide says the same ("The
// PP communications in pipeline fill and flush stages are still exposed").
// Counted by hand below: two sends per micro-batch and chunk, the last rank's
// warm-up (v − 1)·p chunk forwards.
#include "core/check/validate.h"
#include "core/formats/preset.h"
#include "core/reports/steptimereport.h"
#include "core/time/steptime.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("overlap_p2p_comm leaves only the warm-up and cool-down sends exposed", "[time][pipeline]")
{
    // p 8, v 4, 72 micro-batches (the MLPerf GPT-3 layout), 1 ms per send.
    const double p2p = 0.001;
    SECTION("off: all 2 · 4 · 72 = 576 sends wait")
    {
        CHECK(pipelineSendSeconds(p2p, 8, 4, 72, false, 0.010) == Approx(0.576));
    }
    SECTION("on, sends shorter than a chunk pass: the (4 − 1) · 8 = 24 warm-up forwards and 24 cool-down "
            "backwards, 48 ms")
    {
        CHECK(pipelineSendSeconds(p2p, 8, 4, 72, true, 0.010) == Approx(0.048));
    }
    SECTION("on, sends longer than a chunk pass (0.4 ms): the other 528 leave 0.6 ms each")
    {
        // 48 · 1 ms + 528 · 0.6 ms = 48 + 316.8 = 364.8 ms.
        CHECK(pipelineSendSeconds(p2p, 8, 4, 72, true, 0.0004) == Approx(0.3648));
    }
    SECTION("on, as many micro-batches as ranks: every pass is warm-up or cool-down, nothing hides")
    {
        CHECK(pipelineSendSeconds(p2p, 8, 2, 8, true, 0.010) == Approx(2 * 2 * 8 * p2p));
    }
    SECTION("no pipeline, no sends")
    {
        CHECK(pipelineSendSeconds(p2p, 1, 1, 72, true, 0.010) == 0.0);
    }
}

TEST_CASE("The step time prices pipeline sends with overlap_p2p_comm", "[time][pipeline]")
{
    StepInputs in;
    in.layersOnRank = 12;
    in.microBatches = 72;
    in.p = 8;
    in.v = 4;
    in.schedule = PipelineSchedule::Interleaved;
    in.layer.forward.seconds = 0.002; // a chunk of 3 layers: 6 ms forward
    in.layer.backward.seconds = 0.004;
    in.p2pSeconds = 0.001;
    const HardwareConfig hw;
    CHECK(stepTime(in, hw).pipelineComm == Approx(0.576));
    in.overlapP2p = true;
    const StepTime on = stepTime(in, hw);
    CHECK(on.pipelineComm == Approx(0.048));
    in.overlapP2p = false;
    CHECK(stepTime(in, hw).total - on.total == Approx(0.576 - 0.048));
}

TEST_CASE("overlap_p2p_comm is in force only with the interleaved schedule, as Megatron's argument parser",
          "[time][pipeline]")
{
    Config c = scenario("gpt-3-175b-64gpus-tp-sp-selective");
    c.parallelism.pipeline_model_parallel_size = 8;
    c.parallelism.virtual_pipeline_model_parallel_size = 4;
    c.parallelism.pipeline_schedule = PipelineSchedule::Interleaved;
    CHECK(c.strategy.overlap_p2p_comm); // Megatron-LM's default
    CHECK(overlapP2pInForce(c));
    const std::string on = stepTimeToJson(c, estimateStepTime(c)).dump();
    CHECK(on.find("overlap_p2p_comm: the interleaved") != std::string::npos);
    c.strategy.overlap_p2p_comm = false;
    CHECK_FALSE(overlapP2pInForce(c));
    CHECK(stepTimeToJson(c, estimateStepTime(c)).dump().find("overlap_p2p_comm off") != std::string::npos);
    c.strategy.overlap_p2p_comm = true;
    c.parallelism.virtual_pipeline_model_parallel_size = 1;
    c.parallelism.pipeline_schedule = PipelineSchedule::OneFOneB;
    c.parallelism.pipeline_layout.clear();
    CHECK_FALSE(overlapP2pInForce(c));
    CHECK(stepTimeToJson(c, estimateStepTime(c)).dump().find("overlap_p2p_comm not in force") != std::string::npos);
}

TEST_CASE("Without overlap_p2p_comm Megatron refuses the interleaved schedule on two pipeline ranks",
          "[time][pipeline][validate]")
{
    Config c = scenario("gpt-3-175b-64gpus-tp-sp-selective");
    c.parallelism.pipeline_model_parallel_size = 2;
    c.parallelism.data_parallel_size = 4;
    c.parallelism.virtual_pipeline_model_parallel_size = 2;
    c.parallelism.pipeline_schedule = PipelineSchedule::Interleaved;
    c.parallelism.pipeline_layout.clear();
    const auto has = [](const Problems &ps) {
        for (const Problem &p : ps)
            if (p.path == "strategy.overlap_p2p_comm" && p.isError())
                return true;
        return false;
    };
    CHECK_FALSE(has(validate(c)));
    c.strategy.overlap_p2p_comm = false;
    CHECK(has(validate(c)));
    c.parallelism.pipeline_model_parallel_size = 4;
    c.parallelism.data_parallel_size = 2;
    CHECK_FALSE(has(validate(c)));
}

TEST_CASE("overlap_p2p_comm and fp8_param_gather are written back and read again", "[preset][time]")
{
    Config c = scenario("gpt-3-175b-64gpus-tp-sp-selective");
    c.strategy.overlap_p2p_comm = false;
    c.strategy.fp8_param_gather = true;
    const nlohmann::json doc = presetToJson(c);
    CHECK(doc["strategy"]["overlap_p2p_comm"] == false);
    CHECK(doc["strategy"]["fp8_param_gather"] == true);
    const LoadResult back = presetFromText(presetToText(c), "round trip");
    REQUIRE(back.config.has_value());
    CHECK_FALSE(back.config->strategy.overlap_p2p_comm);
    CHECK(back.config->strategy.fp8_param_gather);
}
