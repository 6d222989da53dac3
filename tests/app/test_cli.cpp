// SPDX-License-Identifier: MIT
// memledger-cli as a user runs it: the real binary, its exit codes, stdout and stderr.
#include "clirun.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger::test;

namespace {

nlohmann::json reference()
{
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/reference_cases.json");
    return nlohmann::json::parse(in);
}

std::string writeTemp(const std::string &name, const std::string &text)
{
    const auto path = tempPath(name);
    std::ofstream(path) << text;
    return path.string();
}

} // namespace

TEST_CASE("eval --format json carries the contract and the seed 000 figures", "[cli][reference]")
{
    const nlohmann::json seed = reference()["seed_000_7b"];
    for (const nlohmann::json &plan : seed["plans"]) {
        const std::string name = plan["preset"];
        CAPTURE(name);
        const CliRun r = runCli("eval " + scenarioArg(name) + " --format json");
        REQUIRE(r.code == 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        const nlohmann::json &rank = j["ranks"][0];
        const double params = j["total_parameters"];
        CHECK(params == Approx(double(seed["published_parameters"])).epsilon(0.005));
        // Host: the offloaded optimizer, 12 bytes per parameter (84 GB at the seed's 7e9).
        const double host = rank["host_total_bytes"];
        CHECK((host == 0 ? 0.0 : host * 7e9 / params) / 1e9 == Approx(double(plan["cpu_gb"])).margin(0.01));
        CHECK(rank["fits"].get<bool>() == (host > 0));
        // The verdict's peak is what runs out: reserved memory with the runtime
        // reserve; the allocated peak beside it is the rank's total.
        CHECK(j["peak_bytes"] == rank["device_peak_bytes"]);
        CHECK(j["allocated_peak_bytes"] == rank["device_total_bytes"]);
        CHECK(rank["device_peak_bytes"].get<std::int64_t>()
              == rank["reserved_bytes"].get<std::int64_t>() + j["capacity_bytes"].get<std::int64_t>()
                     - j["usable_bytes"].get<std::int64_t>());
        CHECK(rank["in_flight_microbatches"] == 1);
        CHECK(rank["layer_activation_bytes"].is_number_integer());
    }
}

TEST_CASE("eval reproduces Korthikanti Figure 1 with --set", "[cli][reference]")
{
    const nlohmann::json cases = reference()["korthikanti_figure1"]["cases"];
    for (const nlohmann::json &k : cases) {
        const std::string model = k["model"];
        CAPTURE(model);
        const std::int64_t p = k["p"], m = k["m"], b = k["b"];
        std::string doc
            = R"({"format": "memledger-preset", "version": 1, "name": "fig1", "model": ")" + model + R"("})";
        const std::string path = writeTemp(model + ".json", doc);
        const std::string sets = " --set training.seq_length=2048 --set training.micro_batch_size=" + std::to_string(b)
                                 + " --set training.global_batch_size=" + std::to_string(b * p * 8)
                                 + " --set parallelism.tensor_model_parallel_size=8"
                                 + " --set parallelism.pipeline_model_parallel_size=" + std::to_string(p)
                                 + " --set parallelism.virtual_pipeline_model_parallel_size=" + std::to_string(m)
                                 + " --set strategy.flash_attention=false --set strategy.norm_stats_dtype=none";
        const CliRun r = runCli("eval " + shellQuote(path) + sets + " --format json");
        REQUIRE(r.code == 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        // layer_activation_bytes x the layers' worth the first stage holds = Figure 1's activations.
        const nlohmann::json &first = j["ranks"][0];
        const double layersHeld = double(first["in_flight_chunks"]) * double(k["L"]) / double(p * m);
        CHECK(double(first["layer_activation_bytes"]) * layersHeld / 1073741824.0
              == Approx(double(k["act_tp_gib"])).epsilon(1e-9));
        std::filesystem::remove(path);
    }
}

TEST_CASE("The staircase through the CLI", "[cli][reference]")
{
    const nlohmann::json st = reference()["staircase"];
    const CliRun r = runCli("eval " + scenarioArg("gpt-3-175b-64gpus-tp-only") + " --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<double> got;
    for (const nlohmann::json &rank : j["ranks"])
        got.push_back(rank["in_flight_microbatches"]);
    CHECK(got == st["one_f_one_b"].get<std::vector<double>>());

    const CliRun v2 = runCli("eval " + scenarioArg("gpt-3-175b-64gpus-tp-only")
                             + " --set parallelism.virtual_pipeline_model_parallel_size=2 --set "
                               "parallelism.pipeline_schedule=interleaved --format json");
    REQUIRE(v2.code == 0);
    CHECK(double(nlohmann::json::parse(v2.out)["ranks"][0]["in_flight_microbatches"])
          == Approx(double(st["interleaved_rank0"])));
}

TEST_CASE("check exits 0 when every rank fits and 3 when one does not", "[cli]")
{
    const CliRun fits = runCli("check " + scenarioArg("seed-000-7b-c-offload"));
    CHECK(fits.code == 0);
    CHECK(fits.out.find("worst rank 0") != std::string::npos);
    const CliRun overflows = runCli("check " + scenarioArg("seed-000-7b-a-plain"));
    CHECK(overflows.code == 3);
    CHECK(overflows.out.find("does not fit") != std::string::npos);
    // A built-in scenario can be named instead of a file.
    CHECK(runCli("check gpt-3-175b-64gpus-tp-only").code == 3);
    CHECK(runCli("check gpt-3-175b-64gpus-tp-sp-selective").code == 0);
}

TEST_CASE("Every output format renders", "[cli]")
{
    const std::string preset = scenarioArg("llama-3-70b-128xh100");
    const CliRun table = runCli("eval " + preset);
    CHECK(table.code == 0);
    CHECK(table.out.find("Peak: rank 0") != std::string::npos);
    const CliRun csv = runCli("eval " + preset + " --format csv");
    CHECK(csv.code == 0);
    CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 5); // header + 4 ranks
    const CliRun md = runCli("eval " + preset + " --format markdown");
    CHECK(md.code == 0);
    CHECK(md.out.find("| Category | Where | Entry | Bytes | How it is computed |") != std::string::npos);
    CHECK(md.out.find("Activations of one layer") != std::string::npos);
}

TEST_CASE("Bad input exits 2 with one line per problem naming the field, never a partial result", "[cli][input]")
{
    struct Case
    {
        std::string args;
        std::string mentions;
    };
    const std::string good = scenarioArg("llama-3-70b-128xh100");
    const std::string malformed
        = writeTemp("malformed.json", "{\"format\": \"memledger-preset\", \"version\": 1, \"model\": {");
    const std::string wrongType
        = writeTemp("type.json", R"({"format": "memledger-preset", "version": 1, "model": {"num_layers": "many"}})");
    const std::string unknown = writeTemp(
        "unknown.json", R"({"format": "memledger-preset", "version": 1, "strategy": {"recompute": "full"}})");
    const std::vector<Case> cases = {
        {"eval /nonexistent/plan.json", "/nonexistent/plan.json"},
        {"eval " + shellQuote(malformed), "not valid JSON"},
        {"eval " + shellQuote(wrongType), "model.num_layers"},
        {"eval " + shellQuote(unknown), "strategy.recompute"},
        {"eval " + good + " --set training.micro_batch_size=-1", "training.micro_batch_size"},
        {"eval " + good + " --set model.hidden_size=0", "model.hidden_size"},
        {"eval " + good + " --set parallelism.tensor_model_parallel_size=3", "parallelism.tensor_model_parallel_size"},
        {"eval " + good + " --set parallelism.pipeline_model_parallel_size=3", "model.num_layers"},
        {"eval " + good + " --set parallelism.colour=blue", "parallelism.colour"},
        {"eval " + good + " --set nonsense", "nonsense"},
        {"eval " + good + " --format yaml", "--format"},
        {"eval", "PRESET"},
        {"frobnicate " + good, "unknown command"},
        {"check " + good + " --set training.params_dtype=fp64", "training.params_dtype"},
        {"eval " + good + " --set 'hardware.gemm_efficiency=[[1e9,0.8],[1e10,0.6]]'", "hardware.gemm_efficiency[1]"},
        {"eval " + good + " --set 'hardware.nvlink_efficiency=[[1e6,1.5]]'", "hardware.nvlink_efficiency[0]"},
        {"eval " + good + " --set 'hardware.hbm_efficiency=[]'", "hardware.hbm_efficiency"},
    };
    for (const Case &c : cases)
        checkRefused(c.args, c.mentions);
    for (const std::string &p : {malformed, wrongType, unknown})
        std::filesystem::remove(p);
}

TEST_CASE("eval reports the step time, its parts and MFU — GPT-3 175B lands on Korthikanti's measured 13.75 s",
          "[cli][time]")
{
    // Korthikanti et al. 2022: GPT-3 175B on 64 A100s, t 8, p 8 with 3 interleaved
    // stages, SP + selective recompute, batch 64: 13.75 s measured per iteration.
    const CliRun r = runCli("eval " + scenarioArg("gpt-3-175b-64gpus-tp-sp-selective")
                            + " --set parallelism.virtual_pipeline_model_parallel_size=3"
                              " --set parallelism.pipeline_schedule=interleaved --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json &st = j.at("step_time");
    const double total = st.at("total_s").get<double>();
    CHECK(total == Approx(13.75).epsilon(0.10));
    double sum = 0;
    for (const auto &[name, seconds] : st.at("parts_s").items()) {
        CHECK(seconds.get<double>() >= 0);
        sum += seconds.get<double>();
    }
    CHECK(sum == Approx(total));
    for (const char *part : {"compute", "recompute", "bubble", "tensor_comm", "pipeline_comm", "optimizer"})
        CHECK(st.at("parts_s").contains(part));
    CHECK(st.at("parts_s").at("recompute").get<double>() > 0); // selective recompute of the unfused core
    // Megatron-LM's README: 51.4 % MFU for this run at its measured time.
    CHECK(st.at("mfu").get<double>() * total / 13.75 == Approx(0.514).margin(0.003));
    CHECK(st.at("choices").size() >= 3);

    const CliRun md = runCli("eval " + scenarioArg("gpt-3-175b-64gpus-tp-sp-selective") + " --format markdown");
    CHECK(md.out.find("## Step time (estimate)") != std::string::npos);
    CHECK(md.out.find("Unfused attention") != std::string::npos);
    const CliRun table = runCli("eval " + scenarioArg("gpt-3-175b-64gpus-tp-sp-selective"));
    CHECK(table.out.find("Step time ≈") != std::string::npos);
}

TEST_CASE("Balancing activations across pipeline ranks through the CLI", "[cli][balance]")
{
    // GPT-3 175B, t = 8, p = 8, 1F1B: rank 0's 8 in-flight micro-batches do not fit
    // (above); parked on the later ranks the rows even out under 80 GB. But the
    // network carries them: rank 0 parks 25.8 GB, 3.2 GB per micro-batch, 129 ms
    // at 25 GB/s against a 70 ms forward, so at the end of its warm-up most of
    // them are still on the device. The plan's peak (its simulated iteration's)
    // drops, but not under 80 GB, and check says so.
    const std::string balance = " --set strategy.pipeline_activation_balance=auto";
    CHECK(runCli("check gpt-3-175b-64gpus-tp-only" + balance).code == 3);
    const CliRun r = runCli("eval gpt-3-175b-64gpus-tp-only" + balance + " --format json");
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json &first = j["ranks"][0];
    CHECK(first["parked_out_bytes"].get<double>() == Approx(25.76e9).epsilon(0.01));
    CHECK(j["peak_bytes"].get<std::int64_t>() < j["activation_balance"]["unbalanced_peak_bytes"].get<std::int64_t>());
    CHECK(j["peak_bytes"].get<std::int64_t>() > j["capacity_bytes"].get<std::int64_t>());
    const nlohmann::json &atPeak = first["entries"].back();
    CHECK(atPeak["at_peak"] == true);
    CHECK(atPeak["note"].get<std::string>().find("still under way") != std::string::npos);
    std::int64_t out = 0, in = 0;
    for (const nlohmann::json &rank : j["ranks"]) {
        out += rank["parked_out_bytes"].get<std::int64_t>();
        in += rank["parked_in_bytes"].get<std::int64_t>();
    }
    CHECK(out > 0);
    CHECK(out == in);
    // t = 8 fills an 8-GPU node: every pipeline rank in its own, so the network carries it.
    for (const nlohmann::json &t : j["activation_balance"]["transfers"])
        CHECK(t["link"] == "network");
    // The A100 preset's network: 25 GB/s per GPU and direction.
    CHECK(j["activation_balance"]["transfers"][0]["link_bytes_per_s"].get<double>() == 25e9);
    CHECK(j["step_time"]["activation_balance"]["link_bytes_per_s"].get<double>() == Approx(25e9));
    CHECK(j["step_time"]["parts_s"]["activation_balance"].get<double>() > 0);

    // Without a pipeline the field is refused by name.
    const CliRun p1 = runCli("eval " + scenarioArg("seed-000-7b-a-plain") + balance);
    CHECK(p1.code == 2);
    CHECK(p1.err.find("strategy.pipeline_activation_balance") != std::string::npos);
}
