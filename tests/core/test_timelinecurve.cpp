// SPDX-License-Identifier: MIT
// The memory curve against its definition: at every instant, the bytes of the
// lifetimes alive then (start ≤ t < end), summed one lifetime at a time. The
// timeline gets there by sorting start and end events (computeCurve); this
// count needs no sort, so an ordering slip in the fast path shows here.
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace memledger;

namespace {

Bytes aliveAt(const RankTimeline &rt, double t)
{
    Bytes sum = 0;
    for (const Lifetime &l : rt.lifetimes)
        if (l.start <= t && t < l.end)
            sum += l.bytes;
    return sum;
}

} // namespace

TEST_CASE("The memory curve is, at each of its instants, the sum of the lifetimes alive then", "[timeline][curve]")
{
    // Llama-3-70B, p = 4, 16 micro-batches: a thousand lifetimes a rank,
    // many of them starting or ending where another does. ZB-V adds deferred
    // W operands and two chunks a rank; selective and full recompute add
    // working sets that end where the next begins.
    for (const char *schedule : {"1f1b", "zb-v", "dualpipe"}) {
        for (const char *recompute : {"selective", "full"}) {
            const bool two = std::string(schedule) != "1f1b";
            const Config c = test::scenario(
                "llama-3-70b-128xh100",
                {"training.global_batch_size=64", std::string("parallelism.pipeline_schedule=") + schedule,
                 std::string("parallelism.virtual_pipeline_model_parallel_size=") + (two ? "2" : "1"),
                 std::string("strategy.recompute_granularity=") + recompute});
            TimelineOptions all;
            all.curve_points = std::size_t(1) << 30; // no downsampling: every instant
            const Timeline tl = simulateIteration(c, all);
            for (const RankTimeline &rt : tl.ranks) {
                INFO(schedule << " " << recompute << " rank " << rt.pipeline_rank);
                REQUIRE(rt.lifetimes.size() > 500);
                // Every start and end is an instant of the curve, in increasing time.
                std::vector<double> instants;
                for (const Lifetime &l : rt.lifetimes) {
                    instants.push_back(l.start);
                    instants.push_back(l.end);
                }
                std::sort(instants.begin(), instants.end());
                instants.erase(std::unique(instants.begin(), instants.end()), instants.end());
                REQUIRE(rt.curve.size() == instants.size());
                Bytes most = 0;
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < instants.size(); ++i) {
                    const Bytes expected = aliveAt(rt, instants[i]);
                    wrong += rt.curve[i].time != instants[i] || rt.curve[i].bytes != expected;
                    most = std::max(most, expected);
                }
                CHECK(wrong == 0);
                CHECK(rt.peak_bytes == most);
                CHECK(aliveAt(rt, rt.peak_time) == most);
            }
        }
    }
}
