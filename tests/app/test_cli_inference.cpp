// SPDX-License-Identifier: MIT
// memledger-cli inference as a user runs it.
#include "clirun.h"

#include <nlohmann/json.hpp>

using namespace memledger::test;

TEST_CASE("inference --format json carries the contract's keys and the training peak", "[cli][inference]")
{
    // Llama-3-70B served as the 128-GPU plan splits it (t = 8, p = 4): 8 × 8K tokens.
    const std::string plan = scenarioArg("llama-3-70b-128xh100");
    const CliRun r = runCli("inference " + plan
                            + " --set inference.batch_size=8 --set inference.context_length=8192 --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["kv_cache_bytes_per_token"] == 327680); // 2 · 80 layers · 8 KV heads · 128 · 2 B
    REQUIRE(j["ranks"].size() == 4);
    std::int64_t peak = 0;
    for (const nlohmann::json &rank : j["ranks"]) {
        const nlohmann::json &d = rank["device_bytes"];
        CHECK(d.size() == 4);
        // 20 layers on each stage, one KV head per tensor-parallel rank.
        CHECK(d["kv_cache"] == std::int64_t(20) * 2 * 128 * 2 * 8192 * 8);
        CHECK(d["weights"].get<std::int64_t>() + d["kv_cache"].get<std::int64_t>()
                  + d["activations"].get<std::int64_t>() + d["runtime"].get<std::int64_t>()
              == rank["device_total_bytes"].get<std::int64_t>());
        CHECK(rank["fits"].is_boolean());
        peak = std::max(peak, rank["device_total_bytes"].get<std::int64_t>());
    }
    CHECK(j["peak_bytes"] == peak);
    const CliRun eval = runCli("eval " + plan + " --format json");
    REQUIRE(eval.code == 0);
    CHECK(j["training_peak_bytes"] == nlohmann::json::parse(eval.out)["allocated_peak_bytes"]);
    CHECK(j["training_peak_bytes"].get<std::int64_t>() > peak);

    const CliRun table = runCli("inference " + plan);
    CHECK(table.code == 0);
    CHECK(table.out.find("kv cache") != std::string::npos);
    CHECK(table.out.find("training this plan needs") != std::string::npos);
}

TEST_CASE("inference refuses bad input with the field named and nothing on stdout", "[cli][inference]")
{
    const std::string plan = scenarioArg("llama-3-70b-128xh100");
    checkRefused("inference " + plan + " --set inference.context_length=0", "inference.context_length");
    checkRefused("inference " + plan + " --set inference.batch_size=0", "inference.batch_size");
    checkRefused("inference " + plan + " --set inference.kv_cache_dtype=int4", "inference.kv_cache_dtype");
    checkRefused("inference " + plan + " --set inference.weights_dtype=int3", "inference.weights_dtype");
    checkRefused("inference " + plan + " --set inference.beams=2", "inference.beams");
    checkRefused("inference " + plan + " --format csv", "--format");
    checkRefused("inference", "PRESET");

    // Longer than Llama-3-70B's 8192 positions: served, with a warning.
    const CliRun longer = runCli("inference " + plan + " --set inference.context_length=16384 --format json");
    CHECK(longer.code == 0);
    CHECK(longer.err.find("warning: inference.context_length") != std::string::npos);
}

TEST_CASE("timeline --inference lays one serving forward out as a timeline", "[cli][inference][timeline]")
{
    const std::string plan = scenarioArg("llama-3-70b-128xh100");
    const std::string sets = " --set inference.batch_size=8 --set inference.context_length=8192";
    const CliRun prefill = runCli("timeline " + plan + sets + " --inference prefill --rank 3");
    REQUIRE(prefill.code == 0);
    const nlohmann::json j = nlohmann::json::parse(prefill.out);
    CHECK(j["serving_pass"] == "prefill");
    REQUIRE(j["ranks"].size() == 1);
    const nlohmann::json &rank = j["ranks"][0];
    CHECK(rank["pipeline_rank"] == 3);
    const CliRun served = runCli("inference " + plan + sets + " --format json");
    REQUIRE(served.code == 0);
    // Rank 3 holds dense layers only: the prefill peaks at the inference ledger's total.
    CHECK(rank["peak_bytes"] == nlohmann::json::parse(served.out)["ranks"][3]["device_total_bytes"]);
    bool kv = false;
    for (const nlohmann::json &l : rank["lifetimes"])
        kv = kv || l["label"].get<std::string>().rfind("KV cache of layer", 0) == 0;
    CHECK(kv);
    CHECK(runCli("timeline " + plan + " --inference decode --format csv").code == 0);
    checkRefused("timeline " + plan + " --inference beam", "--inference");
}
