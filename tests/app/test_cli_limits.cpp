// SPDX-License-Identifier: MIT
// The size limits through the CLI: a 10 T-parameter model on 100 k GPUs
// prints non-negative integer byte counts; past the limits the named field
// is refused with exit code 2.
#include "clirun.h"

#include <nlohmann/json.hpp>

using namespace memledger::test;

namespace {

const std::string kTenTrillion
    = shellQuote(std::string(MEMLEDGER_PRESET_DIR) + "/scenarios/llama-3.1-405b-16k-h100.json")
      + " --set model.num_layers=200 --set model.hidden_size=65536 --set model.num_attention_heads=512"
        " --set model.num_query_groups=64 --set model.ffn_hidden_size=262144"
        " --set parallelism.pipeline_model_parallel_size=8 --set parallelism.data_parallel_size=1600"
        " --set parallelism.zero_stage=3 --set training.global_batch_size=25600";

bool byteCountsSound(const nlohmann::json &j, const std::string &key = "")
{
    if (key.find("bytes") != std::string::npos && !(j.is_object() || j.is_number_integer()))
        return false;
    if (j.is_number() && !(j.get<double>() >= 0))
        return false;
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!byteCountsSound(*it, it.key()))
                return false;
    } else if (j.is_array()) {
        for (const nlohmann::json &x : j)
            if (!byteCountsSound(x, key))
                return false;
    }
    return true;
}

} // namespace

TEST_CASE("eval of 10 T parameters on 100 k GPUs prints sound byte counts", "[cli][limits]")
{
    const CliRun r = runCli("eval " + kTenTrillion + " --format json");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["total_parameters"].get<double>() > 1e13);
    CHECK(j["gpus"] == 102400);
    CHECK(byteCountsSound(j));
    CHECK(j["peak_bytes"].get<std::int64_t>() > j["capacity_bytes"].get<std::int64_t>());

    const CliRun check = runCli("check " + kTenTrillion);
    CHECK(check.code == 3);
    const CliRun timeline = runCli("timeline " + kTenTrillion + " --rank 0");
    CHECK(timeline.code == 0);
}

TEST_CASE("Past the limits the CLI names the field and exits 2", "[cli][limits]")
{
    const CliRun params = runCli("eval " + kTenTrillion + " --set model.num_layers=2400");
    CHECK(params.code == 2);
    CHECK(params.err.find("model.num_layers") != std::string::npos);
    const CliRun gpus = runCli("eval " + kTenTrillion + " --set parallelism.data_parallel_size=16000");
    CHECK(gpus.code == 2);
    CHECK(gpus.err.find("parallelism.data_parallel_size") != std::string::npos);
}
