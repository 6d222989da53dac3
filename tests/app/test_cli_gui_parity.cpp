// SPDX-License-Identifier: MIT
// Answers the CLI gives the same way the GUI does, from the same core rule:
// the host-memory verdict (RankLedger::host_fits).
#include "clirun.h"

#include <nlohmann/json.hpp>
#include <string>

using namespace memledger::test;

namespace {

std::string scenarioPath(const std::string &name)
{
    return std::string(MEMLEDGER_PRESET_DIR) + "/scenarios/" + name + ".json";
}

// Llama-2-7B's 6,738,415,616 parameters (2 · 32000 · 4096 embedding and
// output, 32 layers of 4 · 4096² + 3 · 4096 · 11008 + 2 · 4096, a final
// norm) at ZeRO-Offload's 12 host bytes each (fp32 master, two fp32 moments).
constexpr std::int64_t kOffloadedBytes = 12LL * 6738415616LL; // 80,860,987,392

} // namespace

TEST_CASE("eval reports the host-memory verdict under the added key host_fits", "[cli][host]")
{
    const std::string plan = shellQuote(scenarioPath("seed-000-7b-c-offload"));
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
    const CliRun plain = runCli("eval " + shellQuote(scenarioPath("seed-000-7b-a-plain")) + " --format markdown");
    CHECK(plain.out.find("- Host:") == std::string::npos);
    const nlohmann::json pj = nlohmann::json::parse(
        runCli("eval " + shellQuote(scenarioPath("seed-000-7b-a-plain")) + " --format json").out);
    CHECK(pj["host_fits"] == true);
}
