// SPDX-License-Identifier: MIT
// Answers the CLI gives the same way the GUI does, from the same core rule:
// the host-memory verdict (RankLedger::host_fits) and a stale pipeline_layout
// dropped when --set changes p or v (dropStaleLayout).
#include "clirun.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger::test;

namespace {

std::string scenarioFile(const std::string &name)
{
    return std::string(MEMLEDGER_PRESET_DIR) + "/scenarios/" + name + ".json";
}

nlohmann::json scenarioJson(const std::string &name)
{
    std::ifstream in(scenarioFile(name));
    return nlohmann::json::parse(in);
}

std::string writeTemp(const std::string &name, const nlohmann::json &doc)
{
    const auto path = tempPath(name);
    std::ofstream(path) << doc.dump(2);
    return path.string();
}

// Llama-2-7B's 6,738,415,616 parameters (2 · 32000 · 4096 embedding and
// output, 32 layers of 4 · 4096² + 3 · 4096 · 11008 + 2 · 4096, a final
// norm) at ZeRO-Offload's 12 host bytes each (fp32 master, two fp32 moments).
constexpr std::int64_t kOffloadedBytes = 12LL * 6738415616LL; // 80,860,987,392

} // namespace

TEST_CASE("eval reports the host-memory verdict under the added key host_fits", "[cli][host]")
{
    const std::string plan = shellQuote(scenarioFile("seed-000-7b-c-offload"));
    const std::string atCapacity = " --set hardware.host_bytes=" + std::to_string(kOffloadedBytes);
    const CliRun fits = runCli("eval " + plan + atCapacity + " --format json");
    REQUIRE(fits.code == 0);
    const nlohmann::json j = nlohmann::json::parse(fits.out);
    CHECK(j["ranks"][0]["host_total_bytes"] == kOffloadedBytes);
    CHECK(j["host_capacity_bytes"] == kOffloadedBytes);
    CHECK(j["host_fits"] == true);
    CHECK(j["ranks"][0]["host_fits"] == true);
    // The existing keys are unchanged: the device verdict stays its own.
    CHECK(j["fits"] == true);
    CHECK(j["ranks"][0]["fits"] == true);

    const std::string short1 = " --set hardware.host_bytes=" + std::to_string(kOffloadedBytes - 1);
    const CliRun over = runCli("eval " + plan + short1 + " --format json");
    REQUIRE(over.code == 0); // a verdict, not an error; check's exit code stays the device's
    const nlohmann::json o = nlohmann::json::parse(over.out);
    CHECK(o["host_fits"] == false);
    CHECK(o["ranks"][0]["host_fits"] == false);
    CHECK(o["fits"] == true);

    const CliRun md = runCli("eval " + plan + short1 + " --format markdown");
    REQUIRE(md.code == 0);
    CHECK(md.out.find("- Host: the fullest rank offloads 80.86 GB of 80.86 GB host memory per GPU — does NOT fit "
                      "(rank 0)")
          != std::string::npos);
    const CliRun mdFits = runCli("eval " + plan + " --format markdown");
    CHECK(mdFits.out.find("- Host: the fullest rank offloads 80.86 GB of 274.9 GB host memory per GPU — fits")
          != std::string::npos);
    // Nothing offloaded, nothing to say about the host.
    const CliRun plain = runCli("eval " + shellQuote(scenarioFile("seed-000-7b-a-plain")) + " --format markdown");
    CHECK(plain.out.find("- Host:") == std::string::npos);
    const nlohmann::json pj = nlohmann::json::parse(
        runCli("eval " + shellQuote(scenarioFile("seed-000-7b-a-plain")) + " --format json").out);
    CHECK(pj["host_fits"] == true);
}

TEST_CASE("Setting p with --set drops a pipeline_layout that no longer matches, as the GUI's p control does",
          "[cli][pipeline_layout]")
{
    // Llama 3 70B's 80 layers in four uneven stages.
    nlohmann::json doc = scenarioJson("llama-3-70b-128xh100");
    doc["parallelism"]["pipeline_layout"] = {18, 22, 22, 18};
    const std::string path = shellQuote(writeTemp("uneven-70b.json", doc));
    const nlohmann::json uneven = nlohmann::json::parse(runCli("eval " + path + " --format json").out);
    REQUIRE(uneven["ranks"].size() == 4);
    CHECK(uneven["ranks"][0]["layers"] == 18);
    CHECK(uneven["ranks"][1]["layers"] == 22);

    // p = 8: the four-stage layout is dropped and 80 layers split evenly, 80 / 8 = 10 a rank.
    const CliRun deeper = runCli("eval " + path + " --set parallelism.pipeline_model_parallel_size=8 --format json");
    REQUIRE(deeper.code == 0);
    CHECK(deeper.err.find("parallelism.pipeline_layout lists 4 stages, not p·v = 8") != std::string::npos);
    const nlohmann::json even = nlohmann::json::parse(deeper.out);
    REQUIRE(even["ranks"].size() == 8);
    for (const nlohmann::json &rank : even["ranks"])
        CHECK(rank["layers"] == 10);

    // v = 2 as well: 4 entries against 4 · 2 stages, dropped; 80 / 8 stages = 10 layers, 20 a rank.
    const CliRun chunked = runCli("eval " + path
                                  + " --set parallelism.virtual_pipeline_model_parallel_size=2"
                                    " --set parallelism.pipeline_schedule=interleaved --format json");
    REQUIRE(chunked.code == 0);
    const nlohmann::json cj = nlohmann::json::parse(chunked.out);
    REQUIRE(cj["ranks"].size() == 4);
    for (const nlohmann::json &rank : cj["ranks"])
        CHECK(rank["layers"] == 20);

    // A layout given on the same command line is the user's: kept, and checked.
    const CliRun given = runCli("eval " + path
                                + " --set parallelism.pipeline_model_parallel_size=2"
                                  " --set 'parallelism.pipeline_layout=[30,50]' --format json");
    REQUIRE(given.code == 0);
    const nlohmann::json gj = nlohmann::json::parse(given.out);
    CHECK(gj["ranks"][0]["layers"] == 30);
    CHECK(gj["ranks"][1]["layers"] == 50);

    // A layout the preset itself gets wrong is still refused by name: only a --set of p or v drops one.
    doc["parallelism"]["pipeline_layout"] = {40, 40};
    const CliRun wrong = runCli("eval " + shellQuote(writeTemp("wrong-70b.json", doc)));
    CHECK(wrong.code == 2);
    CHECK(wrong.err.find("parallelism.pipeline_layout") != std::string::npos);
}

TEST_CASE(
    "Setting p with --set on DeepSeek-V3's uneven layout: the layout goes and the layers are named, as in the GUI",
    "[cli][pipeline_layout]")
{
    // The GUI's test: p 16 -> 8 drops the 64-stage layout, and 61 layers do not
    // divide over 8 × 4 stages, so validation names model.num_layers.
    const CliRun r = runCli("eval " + shellQuote(scenarioFile("deepseek-v3-2048xh100-p16-v4"))
                            + " --set parallelism.pipeline_model_parallel_size=8");
    CHECK(r.code == 2);
    CHECK(r.err.find("model.num_layers") != std::string::npos);
    CHECK(r.err.find("\nparallelism.pipeline_layout:") == std::string::npos);
}
