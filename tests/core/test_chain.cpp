// SPDX-License-Identifier: MIT
// Chain checkpointing: the figures of seed 002 §2 (tests/data/chain_cases.json)
// and the exact dynamic programme against the exhaustive search.
#include "core/planner/chain.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

using namespace memledger;

namespace {

const nlohmann::json &chainCases()
{
    static const nlohmann::json cases = [] {
        std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/chain_cases.json");
        return nlohmann::json::parse(in);
    }();
    return cases;
}

double recomputeAtPeak(const std::vector<ChainPlan> &frontier, double peak)
{
    double best = INFINITY;
    for (const ChainPlan &p : frontier)
        if (p.peak <= peak)
            best = std::min(best, p.recompute);
    return best;
}

double peakAtRecompute(const std::vector<ChainPlan> &frontier, double rec)
{
    double best = INFINITY;
    for (const ChainPlan &p : frontier)
        if (p.recompute <= rec)
            best = std::min(best, p.peak);
    return best;
}

} // namespace

TEST_CASE("n = 1024: √n segments and the recursive scheme", "[chain]")
{
    const auto &c = chainCases()["uniform_1024"];
    const Chain chain = uniformChain(c["n"].get<int>());
    const ChainPlan u = uniformPlan(chain);
    CHECK(u.peak == c["uniform_peak"].get<double>());
    CHECK(std::round(u.forward / 1024 * 100) / 100 == c["uniform_forward_over_n"].get<double>());
    CHECK(u.forward == 2016); // 1024 + 32 segments × 31 recomputed layers
    const ChainPlan r = recursivePlan(chain);
    CHECK(r.peak == c["recursive_peak"].get<double>());
    CHECK(r.forward / 1024 == c["recursive_forward_over_n"].get<double>());
    // The exact optimum at √n's memory recomputes less than √n does.
    const ChainPlan opt = bestUnderBudget(chain, u.peak);
    CHECK(opt.peak <= u.peak);
    CHECK(opt.recompute < u.recompute);
}

TEST_CASE("16-layer unit chain: √n is not on the frontier", "[chain]")
{
    const auto &c = chainCases()["uniform_16"];
    const Chain chain = uniformChain(16);
    const ChainPlan u = uniformPlan(chain);
    CHECK(u.checkpoints == std::vector<int>{4, 8, 12});
    CHECK(u.peak == c["sqrt_peak"].get<double>());
    CHECK(u.recompute == c["sqrt_recompute"].get<double>());
    const auto frontier = frontierExhaustive(chain);
    CHECK(recomputeAtPeak(frontier, u.peak) == c["frontier_recompute_at_sqrt_peak"].get<double>());
    CHECK(frontier.front().segmentLengths() == c["min_memory_segments"].get<std::vector<int>>());
    // Later segments are shorter: the earlier checkpoints are still resident.
    const auto lengths = frontier.front().segmentLengths();
    CHECK(std::is_sorted(lengths.begin() + 1, lengths.end(), std::greater<>()));
}

TEST_CASE("16-layer alternating chain: sizes 1/4, costs 4/1", "[chain]")
{
    const auto &c = chainCases()["alternating_16"];
    const Chain chain = alternatingChain(16, c["size_odd"], c["size_even"], c["cost_odd"], c["cost_even"]);
    const ChainPlan u = uniformPlan(chain);
    CHECK(u.peak == c["sqrt_peak"].get<double>());
    CHECK(u.recompute == c["sqrt_recompute"].get<double>());
    const auto frontier = frontierExhaustive(chain);
    CHECK(recomputeAtPeak(frontier, u.peak) == c["frontier_recompute_at_sqrt_peak"].get<double>());
    CHECK(peakAtRecompute(frontier, u.recompute) == c["frontier_peak_at_sqrt_recompute"].get<double>());
    const ChainPlan g = greedyPlan(chain, c["greedy_budget"]);
    CHECK(g.peak == c["greedy_peak"].get<double>());
    CHECK(g.peak > u.peak); // the greedy split lands on the large outputs
    // The optimum at √n's recompute keeps only small outputs.
    for (const ChainPlan &p : frontier)
        if (p.peak == c["frontier_peak_at_sqrt_recompute"].get<double>())
            for (int k : p.checkpoints)
                CHECK(chain.size[k] == 1);
}

TEST_CASE("the dynamic programme agrees with the exhaustive search", "[chain]")
{
    std::mt19937 rng(20260);
    std::uniform_int_distribution<int> sz(1, 6), cost(1, 5), len(1, 13);
    for (int trial = 0; trial < 60; ++trial) {
        const int n = len(rng);
        Chain chain;
        chain.size.push_back(sz(rng));
        for (int l = 1; l <= n; ++l) {
            chain.size.push_back(sz(rng));
            chain.cost.push_back(cost(rng));
        }
        const auto ex = frontierExhaustive(chain);
        const auto dp = frontierDP(chain);
        INFO("trial " << trial << " n " << n);
        REQUIRE(ex.size() == dp.size());
        for (std::size_t k = 0; k < ex.size(); ++k) {
            CHECK(ex[k].peak == dp[k].peak);
            CHECK(ex[k].recompute == dp[k].recompute);
            const ChainPlan again = evaluateChain(chain, dp[k].checkpoints);
            CHECK(again.peak == dp[k].peak);
            CHECK(again.recompute == dp[k].recompute);
            const ChainPlan b = bestUnderBudget(chain, ex[k].peak);
            CHECK(b.recompute == ex[k].recompute);
        }
    }
    // Both seed chains, whole frontiers.
    for (const Chain &chain : {uniformChain(16), alternatingChain(16, 1, 4, 4, 1)}) {
        const auto ex = frontierExhaustive(chain);
        const auto dp = frontierDP(chain);
        REQUIRE(ex.size() == dp.size());
        for (std::size_t k = 0; k < ex.size(); ++k) {
            CHECK(ex[k].peak == dp[k].peak);
            CHECK(ex[k].recompute == dp[k].recompute);
        }
    }
}

TEST_CASE("a chain from the configured model", "[chain]")
{
    const Config config = test::scenario("seed-000-7b-a-plain");
    const Chain chain = chainFromConfig(config);
    REQUIRE(chain.layers() == 32);
    CHECK(chain.size[1] > 0);
    CHECK(chain.cost[0] > 0);
    const auto dp = frontierDP(chain);
    REQUIRE(!dp.empty());
    CHECK(dp.back().recompute == 0); // keeping everything recomputes nothing
    CHECK(dp.front().peak < uniformPlan(chain).peak + 1);
}
