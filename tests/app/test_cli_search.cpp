// SPDX-License-Identifier: MIT
// memledger-cli search as a user runs it: the CLI contract (README.md), plans that
// `eval` accepts, and exit 2 naming the option for bad input.
#include "clirun.h"

#include <nlohmann/json.hpp>

using namespace memledger::test;

namespace {

const char *kSevenB = R"({"format": "memledger-preset", "version": 1, "name": "7b-search",
  "model": "llama-2-7b", "hardware": "H100-SXM-80GB",
  "training": {"seq_length": 4096, "global_batch_size": 256},
  "strategy": {"flash_attention": true}})";

} // namespace

TEST_CASE("search --format json: plans best first, each a preset eval accepts", "[cli][search]")
{
    const TempFile preset("search-7b.json", kSevenB);
    const CliRun r = runCli("search " + preset.quoted() + " --gpus 8 --top 4 --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["candidates"].get<std::int64_t>() > 1000);
    CHECK(j["seconds"].is_number());
    REQUIRE(j["plans"].size() == 4);
    const std::int64_t limit = j["limit_bytes"];
    double previous = 0;
    for (const nlohmann::json &plan : j["plans"]) {
        CHECK(plan["fits"] == true);
        CHECK(plan["peak_bytes"].get<std::int64_t>() <= limit);
        CHECK(plan["step_time_s"].get<double>() >= previous);
        previous = plan["step_time_s"];
        // The preset round-trips through eval with the same (simulated, allocated) peak.
        const TempFile again("search-plan.json", plan["preset"].dump());
        const CliRun e = runCli("eval " + again.quoted() + " --format json");
        REQUIRE(e.code == 0);
        CHECK(nlohmann::json::parse(e.out)["allocated_peak_bytes"] == plan["peak_bytes"]);
    }
    const nlohmann::json &best = j["plans"][0]["preset"]["parallelism"];
    CHECK(best["data_parallel_size"] == 8);
}

TEST_CASE("search --margin tightens the limit — table format lists the plans", "[cli][search]")
{
    const TempFile preset("search-7b-margin.json", kSevenB);
    const CliRun loose = runCli("search " + preset.quoted() + " --gpus 8 --top 1 --format json");
    const CliRun tight = runCli("search " + preset.quoted() + " --gpus=8 --top=1 --margin=0.5 --format json");
    REQUIRE(loose.code == 0);
    REQUIRE(tight.code == 0);
    const auto a = nlohmann::json::parse(loose.out), b = nlohmann::json::parse(tight.out);
    CHECK(b["limit_bytes"].get<std::int64_t>() < a["limit_bytes"].get<std::int64_t>());
    REQUIRE(b["plans"].size() == 1);
    CHECK(b["plans"][0]["peak_bytes"].get<std::int64_t>() <= b["limit_bytes"].get<std::int64_t>());

    const CliRun table = runCli("search " + preset.quoted() + " --gpus 8 --top 3");
    REQUIRE(table.code == 0);
    CHECK(table.out.find("candidate plans on 8 GPUs") != std::string::npos);
    CHECK(table.out.find("step (s)") != std::string::npos);
}

TEST_CASE("search: bad input exits 2 and names the option", "[cli][search]")
{
    const TempFile preset("search-7b-bad.json", kSevenB);
    const auto expect = [&](const std::string &args, const std::string &named) {
        const CliRun r = runCli("search " + preset.quoted() + " " + args);
        INFO(args << " → " << r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find(named) != std::string::npos);
        CHECK(r.out.empty());
    };
    expect("", "--gpus");
    expect("--gpus eight", "--gpus");
    expect("--gpus 0", "--gpus");
    expect("--gpus 8 --top 0", "--top");
    expect("--gpus 8 --margin 1.5", "--margin");
    expect("--gpus 8 --margin lots", "--margin");
    expect("--gpus 8 --format csv", "--format");
    expect("--gpus 8 --set training.seq_length=-1", "training.seq_length");
    expect("--gpus", "--gpus");
}

TEST_CASE("search: nothing fits is an answer, not an error", "[cli][search]")
{
    const TempFile preset("search-70b.json", R"({"format": "memledger-preset", "version": 1, "name": "70b",
      "model": "llama-2-70b", "hardware": "H100-SXM-80GB", "training": {"global_batch_size": 8}})");
    const CliRun r = runCli("search " + preset.quoted() + " --gpus 1 --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["plans"].empty());
    CHECK_FALSE(j["notes"].empty());
}

TEST_CASE("search: every dimension's values come with a verdict in json, and a Why not section in the table",
          "[cli][search]")
{
    const TempFile preset("search-7b-why.json", kSevenB);
    const CliRun r = runCli("search " + preset.quoted() + " --gpus 8 --top 3 --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j.contains("dimensions"));
    for (const char *name :
         {"t", "p", "v", "d", "c", "e", "micro_batch_size", "zero_stage", "recompute_granularity", "offload",
          "pipeline_schedule", "pipeline_activation_balance", "grad_offload", "fp8_recipe"})
        CHECK(!j["dimensions"][name].empty());
    // The schedules are named as the preset names them, all eight of them; the
    // search never tries GPipe (1F1B has its bubble with fewer activations) and says so.
    REQUIRE(j["dimensions"]["pipeline_schedule"].size() == 8);
    const nlohmann::json &gpipe = j["dimensions"]["pipeline_schedule"][0];
    CHECK(gpipe["value"] == "gpipe");
    CHECK(gpipe["verdict"] == "structural");
    CHECK(gpipe["reason"].get<std::string>().find("does not try the gpipe schedule") != std::string::npos);
    // The strategies' values as the preset names them; mxfp8 is Blackwell's, so never valid on an H100.
    bool mxfp8 = false;
    for (const nlohmann::json &v : j["dimensions"]["fp8_recipe"])
        if (v["value"] == "mxfp8") {
            mxfp8 = true;
            CHECK(v["verdict"] == "structural");
            CHECK(v["reason"].get<std::string>().find("Blackwell") != std::string::npos);
        }
    CHECK(mxfp8);
    // Llama-2-7B's 32 heads do not split 3 ways.
    bool t3 = false;
    for (const nlohmann::json &v : j["dimensions"]["t"])
        if (v["value"] == 3) {
            t3 = true;
            CHECK(v["verdict"] == "structural");
            CHECK(v["reason"].get<std::string>().find("32 attention heads") != std::string::npos);
        }
    CHECK(t3);
    // The best plan's values are in the top 3.
    const nlohmann::json &best = j["plans"][0]["preset"]["parallelism"];
    for (const nlohmann::json &v : j["dimensions"]["t"])
        if (v["value"] == best["tensor_model_parallel_size"])
            CHECK(v["verdict"] == "top");

    const CliRun table = runCli("search " + preset.quoted() + " --gpus 8 --top 3");
    REQUIRE(table.code == 0);
    CHECK(table.out.find("Why not") != std::string::npos);
    CHECK(table.out.find("t = 3 does not divide the 32 attention heads") != std::string::npos);
    CHECK(table.out.find("pipeline_schedule gpipe: ") != std::string::npos);
    CHECK(table.out.find(" schedule ") != std::string::npos); // the plans' column
}

TEST_CASE("search: a preset whose own split is invalid is searched from, one whose model is wrong is not",
          "[cli][search]")
{
    const TempFile preset("search-7b-split.json", kSevenB);
    // 32 layers do not split over 3 stages, nor 32 heads over t = 5: the search chooses both itself.
    const CliRun r = runCli("search " + preset.quoted()
                            + " --gpus 8 --format json --set parallelism.pipeline_model_parallel_size=3"
                              " --set parallelism.tensor_model_parallel_size=5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE_FALSE(j["plans"].empty());
    // eval still holds the preset to its own split.
    CHECK(runCli("eval " + preset.quoted() + " --set parallelism.pipeline_model_parallel_size=3").code == 2);
    // 32 heads in 5 query groups is the model's own error, whatever the split: refused, naming the field.
    const CliRun model = runCli("search " + preset.quoted() + " --gpus 8 --set model.num_query_groups=5");
    CHECK(model.code == 2);
    CHECK(model.err.find("model.num_query_groups") != std::string::npos);
}
