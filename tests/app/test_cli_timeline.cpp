// SPDX-License-Identifier: MIT
// memledger-cli timeline as a user runs it.
#include "clirun.h"

#include <nlohmann/json.hpp>

using namespace memledger::test;

TEST_CASE("timeline --format json carries the contract's keys for every rank", "[cli][timeline]")
{
    const CliRun r = runCli("timeline " + scenarioArg("gpt-3-175b-64gpus-tp-only"));
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j["ranks"].size() == 8);
    CHECK(j["step_time_s"].get<double>() > 0);
    CHECK(j["bubble_fraction"].get<double>() > 0);
    CHECK(j["peak_rank"] == 0);
    for (const nlohmann::json &rank : j["ranks"]) {
        CHECK(rank["peak_bytes"].is_number_integer());
        CHECK(rank["peak_time"].is_number());
        REQUIRE_FALSE(rank["alive_at_peak"].empty());
        for (const nlohmann::json &a : rank["alive_at_peak"])
            CHECK((a.contains("label") && a.contains("category") && a["bytes"].is_number_integer()));
        REQUIRE_FALSE(rank["curve"].empty());
        CHECK(rank["curve"][0].size() == 2);
        for (const nlohmann::json &l : rank["lifetimes"])
            CHECK((l.contains("start") && l.contains("end") && l.contains("category") && l.contains("label")
                   && l["bytes"].is_number_integer()));
    }
    // The staircase of 1F1B, as the simulation found it.
    for (std::size_t i = 0; i < 8; ++i)
        CHECK(j["ranks"][i]["max_alive_microbatches"] == 8 - int(i));
}

TEST_CASE("timeline --format json says how its iteration differs from eval's step time", "[cli][timeline]")
{
    // step_time_gap: eval's step_time.total_s beside the simulated step_time_s,
    // three parts that add up to each, and a sentence for a caption.
    const std::string preset = scenarioArg("deepseek-v3-2048xh100-dualpipe");
    const CliRun tl = runCli("timeline " + preset + " --format json");
    const CliRun ev = runCli("eval " + preset + " --format json");
    REQUIRE(tl.code == 0);
    REQUIRE(ev.code == 0);
    const nlohmann::json j = nlohmann::json::parse(tl.out);
    const nlohmann::json e = nlohmann::json::parse(ev.out);
    const nlohmann::json &gap = j["step_time_gap"];
    CHECK(gap["model_s"].get<double>() == Approx(e["step_time"]["total_s"].get<double>()));
    CHECK(gap["simulated_s"].get<double>() == Approx(j["step_time_s"].get<double>()));
    double model = 0, simulated = 0;
    for (const char *part : {"work", "pipeline_wait", "after_pipeline"}) {
        model += gap["parts"][part]["model_s"].get<double>();
        simulated += gap["parts"][part]["simulated_s"].get<double>();
    }
    CHECK(model == Approx(gap["model_s"].get<double>()));
    CHECK(simulated == Approx(gap["simulated_s"].get<double>()));
    CHECK(gap["explanation"].get<std::string>().find("pipeline's waits") != std::string::npos);
}

TEST_CASE("timeline --rank keeps one rank — csv lists the lifetimes", "[cli][timeline]")
{
    const CliRun one = runCli("timeline gpt-3-175b-64gpus-tp-only --rank 3 --format json");
    REQUIRE(one.code == 0);
    const nlohmann::json j = nlohmann::json::parse(one.out);
    REQUIRE(j["ranks"].size() == 1);
    CHECK(j["ranks"][0]["pipeline_rank"] == 3);

    const CliRun csv = runCli("timeline gpt-3-175b-64gpus-tp-only --rank=7 --format csv");
    REQUIRE(csv.code == 0);
    CHECK(csv.out.rfind("rank,start,end,category,label,bytes\n", 0) == 0);
    CHECK(csv.out.find("\n7,") != std::string::npos);
    CHECK(csv.out.find("\n6,") == std::string::npos);
}

TEST_CASE("timeline refuses bad input like eval: exit 2, the field named, nothing on stdout", "[cli][timeline][input]")
{
    for (const auto &[args, mentions] : std::vector<std::pair<std::string, std::string>>{
             {"timeline", "PRESET"},
             {"timeline gpt-3-175b-64gpus-tp-only --rank 8", "--rank"},
             {"timeline gpt-3-175b-64gpus-tp-only --rank x", "--rank"},
             {"timeline gpt-3-175b-64gpus-tp-only --format table", "--format"},
             {"timeline gpt-3-175b-64gpus-tp-only --set parallelism.pipeline_model_parallel_size=5",
              "model.num_layers"},
             {"timeline /no/such/file.json", "/no/such/file.json"}})
        checkRefused(args, mentions);
}

TEST_CASE("eval and timeline say what PyTorch's caching allocator reserves, beside the ledger and the timeline",
          "[cli][timeline][allocator]")
{
    const std::string preset = scenarioArg("llama-3-70b-128xh100");
    const CliRun ev = runCli("eval " + preset + " --format json");
    const CliRun tl = runCli("timeline " + preset + " --format json");
    REQUIRE(ev.code == 0);
    REQUIRE(tl.code == 0);
    const nlohmann::json e = nlohmann::json::parse(ev.out), t = nlohmann::json::parse(tl.out);
    CHECK(e["allocator"]["expandable_segments"] == false);
    CHECK(e["allocator"]["max_split_size_mb"].is_null());
    std::int64_t most = 0;
    for (std::size_t i = 0; i < e["ranks"].size(); ++i) {
        const nlohmann::json &r = e["ranks"][i];
        CAPTURE(i);
        const std::int64_t reserved = r["reserved_bytes"], allocated = r["allocated_peak_bytes"];
        // The timeline's peak less the runtime reserve is what the tensors ask for; blocks and segments hold more.
        const std::int64_t runtime = r["device_bytes"]["runtime"];
        CHECK(allocated >= t["ranks"][i]["peak_bytes"].get<std::int64_t>() - runtime);
        CHECK(reserved
              >= allocated - r["fragmentation_bytes"].get<std::int64_t>() - r["cached_free_bytes"].get<std::int64_t>());
        CHECK(r["device_peak_bytes"] == reserved + runtime);
        CHECK(r["reserved_fits"] == true);
        CHECK(t["ranks"][i]["reserved_bytes"] == reserved);
        CHECK(t["ranks"][i]["reserved_curve"].back()[1].get<std::int64_t>() <= reserved);
        most = std::max(most, r["device_peak_bytes"].get<std::int64_t>());
    }
    CHECK(e["reserved_peak_bytes"] == most);
    CHECK(e["reserved_fits"] == true);
    // The table and the markdown say it in words.
    CHECK(runCli("eval " + preset).out.find("reserved by PyTorch's caching allocator") != std::string::npos);
    CHECK(runCli("eval " + preset + " --format markdown").out.find("## Reserved memory") != std::string::npos);
    // Expandable segments through --set reach the simulation.
    const CliRun ex = runCli("eval " + preset + " --set strategy.allocator.expandable_segments=true --format json");
    REQUIRE(ex.code == 0);
    CHECK(nlohmann::json::parse(ex.out)["allocator"]["expandable_segments"] == true);
}

TEST_CASE("One peak: eval's rank totals are timeline's peaks on every shipped scenario, and check says eval's verdict",
          "[cli][timeline][onepeak]")
{
    for (const auto &file : std::filesystem::directory_iterator(std::string(MEMLEDGER_PRESET_DIR) + "/scenarios")) {
        const std::string preset = shellQuote(file.path().string());
        CAPTURE(preset);
        const CliRun eval = runCli("eval " + preset + " --format json");
        const CliRun timeline = runCli("timeline " + preset + " --format json");
        REQUIRE(eval.code == 0);
        REQUIRE(timeline.code == 0);
        const nlohmann::json e = nlohmann::json::parse(eval.out);
        const nlohmann::json t = nlohmann::json::parse(timeline.out);
        REQUIRE(e["ranks"].size() == t["ranks"].size());
        bool allFit = true;
        for (std::size_t r = 0; r < e["ranks"].size(); ++r) {
            CAPTURE(r);
            const std::int64_t total = e["ranks"][r]["device_total_bytes"].get<std::int64_t>();
            CHECK(total == t["ranks"][r]["peak_bytes"].get<std::int64_t>());
            allFit = allFit && total <= e["capacity_bytes"].get<std::int64_t>();
            // Reserved memory holds at least what is allocated at the peak: all
            // but the Runtime rows (the runtime reserve, DeepEP's buffers), which
            // the caching allocator never sees.
            std::int64_t runtime = 0;
            for (const nlohmann::json &entry : e["ranks"][r]["entries"])
                if (entry["category"] == "runtime" && entry["placement"] == "device")
                    runtime += entry["bytes"].get<std::int64_t>();
            CHECK(e["ranks"][r]["reserved_bytes"].get<std::int64_t>() >= total - runtime);
        }
        CHECK(e["allocated_peak_rank"] == t["peak_rank"]);
        CHECK(e["allocated_fits"] == allFit);
        // check's verdict is eval's: what runs out, reserved memory with the runtime reserve. One plan that
        // fits and one that does not (each check simulates the plan again: a minute under ASan for all 15).
        const std::string name = file.path().stem().string();
        if (name == "llama-3-70b-128xh100" || name == "gpt-3-175b-64gpus-tp-only")
            CHECK(runCli("check " + preset).code == (e["fits"].get<bool>() ? 0 : 3));
    }
}
