// SPDX-License-Identifier: MIT
// Megatron's --overlap-grad-reduce and --overlap-param-gather with the
// distributed optimizer (ZeRO-1): the gradients are reduce-scattered bucket by
// bucket under the last backward, and the updated weights all-gathered bucket
// by bucket under the next iteration's first forward (Megatron-LM
// param_and_grad_buffer.py: each bucket's gather is waited for in the forward
// pre-hook of the layers it holds). Each overlap leaves exposed only what
// outlasts the compute it hides under, and at least one bucket. The figures
// below are counted by hand on a link of exactly 50 GB/s (efficiency 1, no
// latency), so every collective is bytes · (n − 1)/n / 50e9.
#include "core/reports/steptimereport.h"
#include "core/time/steptime.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

HardwareConfig flatLink()
{
    HardwareConfig hw;
    hw.network_bytes_per_s = 50e9;
    hw.network_efficiency = {{1.0, 1.0}};
    hw.collective_latency_s = 0;
    return hw;
}

// 1e9 parameters on the rank, fp32 gradients, bf16 weights, 8 data-parallel
// ranks across nodes; 10 layers of 2 ms forward and 4 ms backward per
// micro-batch, so one micro-batch's forward is 20 ms and its backward 40 ms.
StepInputs zeroOne(bool overlapGrad, bool overlapParam)
{
    StepInputs in;
    in.layersOnRank = 10;
    in.microBatches = 4;
    in.layer.forward.seconds = 0.002;
    in.layer.backward.seconds = 0.004;
    in.dataParallel = 8;
    in.dataOnNvlink = false;
    in.paramsOnRank = 1e9;
    in.gradBytes = 4;
    in.weightBytes = 2;
    in.zeroStage = 1;
    in.bucketParams = 4e7;
    in.overlapGradReduce = overlapGrad;
    in.overlapParamGather = overlapParam;
    return in;
}

} // namespace

TEST_CASE("ZeRO-1's weight all-gather follows the optimizer step unless overlap_param_gather hides it under the "
          "first forward",
          "[time][zero]")
{
    const HardwareConfig hw = flatLink();
    // Reduce-scatter of 4e9 gradient bytes: 4e9 · 7/8 / 50e9 = 0.070 s.
    // All-gather of 2e9 weight bytes:       2e9 · 7/8 / 50e9 = 0.035 s.
    SECTION("neither overlap: both exposed")
    {
        const StepTime st = stepTime(zeroOne(false, false), hw);
        CHECK(st.dataComm == Approx(0.070 + 0.035));
        CHECK(st.paramGather == Approx(0.035));
    }
    SECTION("overlap_grad_reduce: the reduce-scatter hides under the 40 ms backward, the gather does not")
    {
        const StepTime st = stepTime(zeroOne(true, false), hw);
        CHECK(st.dataComm == Approx((0.070 - 0.040) + 0.035));
        CHECK(st.paramGather == Approx(0.035));
    }
    SECTION("both: the gather outlasts the 20 ms forward by 15 ms")
    {
        const StepTime st = stepTime(zeroOne(true, true), hw);
        CHECK(st.dataComm == Approx(0.030 + 0.015));
        CHECK(st.paramGather == Approx(0.015));
        // The parts still sum to the total.
        double sum = 0;
        for (const StepTimePart &p : stepTimeParts(st))
            sum += p.seconds;
        CHECK(sum == Approx(st.total));
    }
    SECTION("a forward long enough to hide it leaves the first bucket: 4e7 · 2 · 7/8 / 50e9 = 1.4 ms")
    {
        StepInputs in = zeroOne(true, true);
        in.layer.forward.seconds = 0.01; // 100 ms forward, 200 ms backward
        in.layer.backward.seconds = 0.02;
        const StepTime st = stepTime(in, hw);
        CHECK(st.paramGather == Approx(0.0014));
        // And the last gradient bucket, reduce-scattered: 4e7 · 4 · 7/8 / 50e9 = 2.8 ms.
        CHECK(st.dataComm == Approx(0.0028 + 0.0014));
    }
    SECTION("ZeRO 0 has no gather: one all-reduce, 2 · 4e9 · 7/8 / 50e9 = 0.140 s, less the backward")
    {
        StepInputs in = zeroOne(true, false);
        in.zeroStage = 0;
        const StepTime st = stepTime(in, hw);
        CHECK(st.dataComm == Approx(0.140 - 0.040));
        CHECK(st.paramGather == 0);
    }
}

TEST_CASE("Interleaved, chunk k's weights are needed only after k·p chunk forwards", "[time][zero]")
{
    // p 8, v 4, 0.2 ms forward per layer: F = 2 ms for one micro-batch through
    // the rank's 10 layers, 0.5 ms per chunk; G = 35 ms, 8.75 ms per chunk.
    // Chunk k's gather ends at (k + 1) · 8.75 ms and its first forward starts
    // after k · 8 + 1 chunk forwards have hidden it:
    //   k 0: 8.75 − 0.5 = 8.25, k 1: 17.5 − 4.5 = 13.0, k 2: 26.25 − 8.5 = 17.75,
    //   k 3: 35 − 12.5 = 22.5 ms, the most; without interleaving 35 − 2 = 33 ms.
    StepInputs in = zeroOne(true, true);
    in.layer.forward.seconds = 0.0002;
    in.p = 8;
    const HardwareConfig hw = flatLink();
    CHECK(stepTime(in, hw).paramGather == Approx(0.033));
    in.v = 4;
    in.schedule = PipelineSchedule::Interleaved;
    CHECK(stepTime(in, hw).paramGather == Approx(0.0225));
}

TEST_CASE("The step time's JSON and explanation say which parameter-gather choice is in force", "[time][report]")
{
    Config c = scenario("llama-3-70b-128xh100");
    REQUIRE(c.parallelism.zero_stage == 1);
    c.strategy.overlap_grad_reduce = true;
    const StepTime off = estimateStepTime(c);
    const nlohmann::json jOff = stepTimeToJson(c, off);
    CHECK(jOff["data_comm"]["param_gather_exposed_s"].get<double>() == Approx(off.paramGather));
    CHECK(jOff["data_comm"]["grad_reduce_exposed_s"].get<double>() + off.paramGather
          == Approx(jOff["parts_s"]["data_comm_exposed"].get<double>()));
    CHECK(jOff.dump().find("overlap_param_gather off") != std::string::npos);

    c.strategy.overlap_param_gather = true;
    const StepTime on = estimateStepTime(c);
    CHECK(on.paramGather < off.paramGather);
    CHECK(on.total == Approx(off.total - (off.paramGather - on.paramGather)));
    CHECK(stepTimeToJson(c, on).dump().find("overlap_param_gather: ZeRO") != std::string::npos);
}
