// SPDX-License-Identifier: MIT
// The search keeps a plan by what runs out (issue 31): what PyTorch's caching
// allocator reserves over the iteration plus the runtime reserve, within
// --margin × HBM, not by its allocated peak. Llama 3 70B on 128 H100s: split
// as t 4, p 2, d 16 under ZB-V (v = 2), ZeRO-3, its allocated peak is under
// 80 % of the device but, with a cudaMalloc'd segment per block size, what
// the allocator reserves is not; with expandable segments it is under both.
#include "core/ledger/ledger.h"
#include "core/planner/confirm.h"
#include "core/planner/search.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/reserved.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

const std::vector<std::string> kZbvSplit = {"parallelism.tensor_model_parallel_size=4",
                                            "parallelism.pipeline_model_parallel_size=2",
                                            "parallelism.virtual_pipeline_model_parallel_size=2",
                                            "parallelism.data_parallel_size=16",
                                            "parallelism.zero_stage=3",
                                            "parallelism.pipeline_schedule=zb-v",
                                            "training.micro_batch_size=1",
                                            "strategy.recompute_granularity=none"};

std::vector<std::string> with(std::vector<std::string> sets, const std::string &more)
{
    sets.push_back(more);
    return sets;
}

Bytes eightyPercent(const Config &c)
{
    return static_cast<Bytes>(std::floor(0.8 * double(c.hardware.hbm_bytes)));
}

} // namespace

TEST_CASE("A plan under the limit by its allocated peak but over it by reserved memory is not kept",
          "[search][reserved]")
{
    const Config c = scenario("llama-3-70b-128xh100", kZbvSplit);
    const Bytes limit = eightyPercent(c); // 68.72 GB
    const PlanPeak plan = planPeak(c);
    const PlanReserved reserved = simulateReserved(c, plan.timeline);
    // The premise, from eval's own figures: allocated under, reserved + the runtime reserve over.
    REQUIRE(plan.ledger.peak_bytes <= limit);
    REQUIRE(reserved.peak_bytes > limit);

    const plansearch::LedgerUnder under = plansearch::ledgerUnder(c, limit);
    CHECK_FALSE(under.fits);
    CHECK(under.deviceBytes == reserved.peak_bytes);
    CHECK(under.ledger.peak_bytes == plan.ledger.peak_bytes);
    // Judged by the simulated peak alone (the verdicts' plans), it would fit.
    CHECK(plansearch::ledgerUnder(c, limit, false).fits);

    // Expandable segments map pages as requests need them: reserved is what is allocated, and it fits.
    const Config expandable
        = scenario("llama-3-70b-128xh100", with(kZbvSplit, "strategy.allocator.expandable_segments=true"));
    const plansearch::LedgerUnder both = plansearch::ledgerUnder(expandable, limit);
    CHECK(both.fits);
    CHECK(both.deviceBytes <= limit);
    CHECK(both.deviceBytes >= both.ledger.peak_bytes);
}

TEST_CASE("The search offers ZB-V where reserved memory fits and not where only the allocated peak does",
          "[search][reserved][zb]")
{
    SearchOptions opt;
    opt.gpus = 128;
    opt.top = 5;
    opt.maxVirtual = 4;
    opt.margin = 0.8;
    const auto zbvListed = [](const SearchResult &r) {
        return std::any_of(r.plans.begin(), r.plans.end(), [](const SearchPlan &p) {
            return p.config.parallelism.schedule() == PipelineSchedule::ZbV;
        });
    };
    const SearchResult segments = searchPlans(scenario("llama-3-70b-128xh100"), opt);
    REQUIRE_FALSE(segments.plans.empty());
    CHECK_FALSE(zbvListed(segments));
    for (const SearchPlan &p : segments.plans) {
        CHECK(p.reservedBytes <= segments.limitBytes);
        CHECK(p.reservedBytes >= p.ledger.peak_bytes);
    }
    const auto note = std::find_if(segments.notes.begin(), segments.notes.end(),
                                   [](const std::string &n) { return n.rfind("Schedule zb-v: ", 0) == 0; });
    REQUIRE(note != segments.notes.end());
    CHECK_THAT(*note, Catch::Contains("over"));

    const SearchResult expandable
        = searchPlans(scenario("llama-3-70b-128xh100", {"strategy.allocator.expandable_segments=true"}), opt);
    REQUIRE_FALSE(expandable.plans.empty());
    CHECK(zbvListed(expandable));
    CHECK(expandable.plans.front().config.parallelism.schedule() == PipelineSchedule::ZbV);
    CHECK(expandable.plans.front().reservedBytes <= expandable.limitBytes);
}

TEST_CASE("With the modelled reserve the search's bound still equals the ledger rows' peak for dense models",
          "[search][reserved][runtimereserve]")
{
    // The bound counts each candidate's own communicators (its t, p, v, d, c, e),
    // as the ledger's runtime rows do, so it stays exact.
    nlohmann::json doc = emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 512}};
    doc["strategy"] = {{"flash_attention", true}};
    const Config base = configFrom(doc, {"hardware.runtime_reserve=modelled"});
    SearchOptions opt;
    opt.gpus = 16;
    opt.top = 40;
    const SearchResult r = searchPlans(base, opt);
    REQUIRE(r.plans.size() == 40);
    bool communicators = false;
    for (const SearchPlan &p : r.plans) {
        CHECK(p.estimateBytes == computeLedger(p.config).peak_bytes);
        communicators |= p.config.parallelism.tensor_model_parallel_size > 1
                         || p.config.parallelism.pipeline_model_parallel_size > 1;
    }
    CHECK(communicators);
}
