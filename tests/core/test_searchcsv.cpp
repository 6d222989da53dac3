// SPDX-License-Identifier: MIT
// The Find plans view's CSV export (searchToCsv): a small result written out
// by hand, field by field.
#include "core/planner/search.h"
#include "core/reports/searchreport.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

TEST_CASE("searchToCsv: one row per plan, best first, against a hand-written file", "[search][csv]")
{
    SearchResult r;
    r.limitBytes = 72'000'000'000;
    SearchPlan a;
    a.config.parallelism.tensor_model_parallel_size = 8;
    a.config.parallelism.pipeline_model_parallel_size = 4;
    a.config.parallelism.virtual_pipeline_model_parallel_size = 2;
    a.config.parallelism.data_parallel_size = 4;
    a.config.parallelism.zero_stage = 1;
    a.config.training.micro_batch_size = 1;
    a.config.strategy.recompute_granularity = RecomputeGranularity::Selective;
    a.ledger.peak_bytes = 45'090'000'000;
    a.ledger.ranks.resize(1);
    a.ledger.ranks[0].fits = true;
    a.time.total = 12.5;
    a.time.mfu = 0.41234;
    SearchPlan b;
    b.config.parallelism.tensor_model_parallel_size = 4;
    b.config.parallelism.pipeline_model_parallel_size = 8;
    b.config.parallelism.data_parallel_size = 4;
    b.config.training.micro_batch_size = 2;
    b.config.strategy.recompute_granularity = RecomputeGranularity::Full;
    b.config.strategy.optimizer_offload = OffloadTarget::CPU;
    b.config.parallelism.pipeline_schedule = PipelineSchedule::ZbH1; // a: unset, interleaved since v = 2
    b.config.strategy.grad_offload = OffloadTarget::CPU; // ZeRO-Offload, tried on the answer
    b.config.strategy.pipeline_activation_balance = ActivationBalance::Auto;
    b.config.training.fp8_recipe = Fp8Recipe::Tensorwise;
    b.ledger.peak_bytes = 75'000'000'000; // over the 72 GB limit: fits is false
    b.ledger.ranks.resize(1);
    b.ledger.ranks[0].fits = true;
    b.time.total = 14.25;
    b.time.mfu = 0.3;
    r.plans = {a, b};

    const std::string expected = "rank,t,p,v,d,c,e,micro_batch_size,zero_stage,recompute,offload,peak_bytes,"
                                 "step_time_s,mfu,fits,pipeline_schedule,pipeline_activation_balance,grad_offload,"
                                 "fp8_recipe\n"
                                 "1,8,4,2,4,1,1,1,1,selective,none,45090000000,12.5,0.4123,true,interleaved,none,none,"
                                 "none\n"
                                 "2,4,8,1,4,1,1,2,0,full,optimizer,75000000000,14.25,0.3000,false,zb-h1,auto,cpu,"
                                 "tensorwise\n";
    CHECK(searchToCsv(r) == expected);
    CHECK(searchToCsv(SearchResult{}) == expected.substr(0, expected.find('\n') + 1)); // the header alone
}

TEST_CASE("searchToCsv: a real search's rows are its plans in order", "[search][csv]")
{
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 256}};
    SearchOptions opt;
    opt.gpus = 8;
    opt.top = 5;
    const SearchResult r = searchPlans(test::configFrom(doc), opt);
    REQUIRE(r.plans.size() == 5);
    const std::string csv = searchToCsv(r);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 6);
    const std::string first = csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1);
    const ParallelismConfig &par = r.plans[0].config.parallelism;
    CHECK(first.rfind("1," + std::to_string(par.tensor_model_parallel_size) + ","
                          + std::to_string(par.pipeline_model_parallel_size) + ",",
                      0)
          == 0);
    CHECK(first.find("," + std::to_string(r.plans[0].ledger.peak_bytes) + ",") != std::string::npos);
}
