// SPDX-License-Identifier: MIT
// Pipeline op orders: GPipe, 1F1B and Megatron's interleaved 1F1B.
#include "core/schedule/schedule.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace memledger;

namespace {

std::string render(const std::vector<PipelineOp> &ops)
{
    std::string s;
    for (const PipelineOp &op : ops)
        s += (s.empty() ? "" : " ") + std::string(op.kind == OpKind::Forward ? "F" : "B") + std::to_string(op.chunk)
             + "." + std::to_string(op.microbatch);
    return s;
}

} // namespace

TEST_CASE("1F1B: p - r - 1 warm-up forwards, then one forward one backward, then the cool-down", "[schedule]")
{
    const ParallelismConfig par = test::pipelineOf(4, 1, PipelineSchedule::OneFOneB);
    CHECK(render(scheduleOps(par, 6, 0)) == "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 F0.5 B0.2 B0.3 B0.4 B0.5");
    CHECK(render(scheduleOps(par, 6, 3)) == "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 F0.4 B0.4 F0.5 B0.5");
    CHECK(render(scheduleOps(par, 2, 0)) == "F0.0 F0.1 B0.0 B0.1");
}

TEST_CASE("GPipe: all forwards, then all backwards", "[schedule]")
{
    CHECK(render(scheduleOps(test::pipelineOf(4, 1, PipelineSchedule::GPipe), 3, 1))
          == "F0.0 F0.1 F0.2 B0.2 B0.1 B0.0");
}

TEST_CASE("Interleaved 1F1B follows Megatron's schedules.py", "[schedule]")
{
    // p = 2, v = 2, m = 4 on rank 0: warm-up (p-r-1)*2 + (v-1)*p = 4 chunk forwards;
    // forward k runs chunk (k mod 4)/2 on micro-batch (k/4)*2 + k mod 2, backward k the mirrored chunk.
    const ParallelismConfig par = test::pipelineOf(2, 2, PipelineSchedule::Interleaved);
    CHECK(render(scheduleOps(par, 4, 0))
          == "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
    // Rank 1 warms up with (v-1)p = 2.
    CHECK(render(scheduleOps(par, 4, 1))
          == "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
}

TEST_CASE("Every schedule runs each forward and backward once, forward first", "[schedule]")
{
    for (PipelineSchedule s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved}) {
        for (std::int64_t p : {2, 4, 8}) {
            const std::int64_t v = s == PipelineSchedule::Interleaved ? 3 : 1;
            for (std::int64_t m : {p, 2 * p, 5 * p}) {
                const ParallelismConfig par = test::pipelineOf(p, v, s);
                for (std::int64_t r = 0; r < p; ++r) {
                    CAPTURE(scheduleName(s), p, m, r);
                    const std::vector<PipelineOp> ops = scheduleOps(par, m, r);
                    REQUIRE(ops.size() == std::size_t(2 * m * v));
                    std::vector<int> state(std::size_t(m * v), 0);
                    for (const PipelineOp &op : ops) {
                        int &st = state[std::size_t(op.chunk * m + op.microbatch)];
                        CHECK(st == (op.kind == OpKind::Forward ? 0 : 1));
                        st += 1;
                    }
                }
            }
        }
    }
}
