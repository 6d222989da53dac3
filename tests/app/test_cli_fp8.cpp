// SPDX-License-Identifier: MIT
// training.fp8_recipe through the CLI: the rows it adds, their notes, the
// choice line, and the refusal on hardware without FP8.
#include "clirun.h"

#include <nlohmann/json.hpp>
#include <string>

using namespace memledger::test;

TEST_CASE("eval shows the FP8 recipe's rows with their notes and the choice in force", "[cli][fp8]")
{
    const std::string preset = scenarioArg("llama-3-70b-128xh100");
    const CliRun r = runCli("eval " + preset + " --set training.fp8_recipe=delayed --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    bool copies = false, history = false, buffer = false;
    for (const nlohmann::json &e : j["ranks"][0]["entries"]) {
        const std::string label = e["label"];
        if (label == "FP8 weight copies") {
            copies = e["category"] == "weights" && !e["note"].get<std::string>().empty();
            CHECK(e["formula"].get<std::string>().find("columnwise") != std::string::npos);
        }
        history |= label == "FP8 amax history and scales" && e["category"] == "weights";
        buffer |= label == "FP8 quantisation buffer" && e["category"] == "communication";
    }
    CHECK(copies);
    CHECK(history);
    CHECK(buffer);
    bool choice = false;
    for (const std::string c : j["choices"])
        choice |= c.find("FP8") != std::string::npos && c.find("delayed") != std::string::npos;
    CHECK(choice);

    const CliRun md = runCli("eval " + preset + " --set training.fp8_recipe=delayed --format markdown");
    REQUIRE(md.code == 0);
    CHECK(md.out.find("FP8 weight copies") != std::string::npos);
    CHECK(md.out.find("is_first_microbatch") != std::string::npos);
}

TEST_CASE("eval refuses an FP8 recipe the hardware cannot run, naming the field", "[cli][fp8][input]")
{
    const CliRun r
        = runCli("eval " + scenarioArg("llama-3-70b-128xh100") + " --set training.fp8_recipe=mxfp8 --format json");
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("training.fp8_recipe") != std::string::npos);
    const CliRun bad = runCli("eval " + scenarioArg("llama-3-70b-128xh100") + " --set training.fp8_recipe=int4");
    CHECK(bad.code == 2);
    CHECK(bad.err.find("training.fp8_recipe") != std::string::npos);
}
