// SPDX-License-Identifier: MIT
// memledger-cli import and export (issue 33): a Megatron-LM launch, a
// torchtitan TOML or a DeepSpeed config in, a preset that `eval` accepts out,
// every unused argument named on stderr; bad launches exit 2 naming the
// argument with nothing on stdout; export and import give the plan back.
#include "clirun.h"

#include <nlohmann/json.hpp>

using namespace memledger::test;

namespace {

std::string launchFile(const std::string &name)
{
    return shellQuote(std::string(MEMLEDGER_TEST_DATA) + "/launch/" + name);
}

} // namespace

TEST_CASE("import reads a Megatron-LM example script into a preset eval accepts", "[cli][launch]")
{
    const CliRun r = runCli("import " + launchFile("megatron-llama3-8b-fp8.sh"));
    REQUIRE(r.code == 0);
    const nlohmann::json preset = nlohmann::json::parse(r.out);
    // The script's own numbers (tests/data/launch/megatron-llama3-8b-fp8.sh).
    CHECK(preset["model"]["num_query_groups"] == 8);
    CHECK(preset["model"]["ffn_hidden_size"] == 14336);
    CHECK(preset["model"]["vocab_size"] == 128256);
    CHECK(preset["training"]["seq_length"] == 8192);
    CHECK(preset["training"]["global_batch_size"] == 128);
    CHECK(preset["parallelism"]["data_parallel_size"] == 8);
    // Every argument it did not use, on stderr.
    CHECK(r.err.find("unused: --lr 0.00015") != std::string::npos);
    CHECK(r.err.find("unused: --empty-unused-memory-level 1") != std::string::npos);
    CHECK(r.err.find("not understood") != std::string::npos);
    const TempFile saved("llama3-8b.json", r.out);
    const CliRun eval = runCli("eval " + saved.quoted() + " --format json");
    CHECK(eval.code == 0);
}

TEST_CASE("import takes the world size from --gpus", "[cli][launch]")
{
    checkRefused("import " + launchFile("megatron-gpt3-175b.sh"), "world size");
    const CliRun r = runCli("import " + launchFile("megatron-gpt3-175b.sh") + " --gpus 128");
    REQUIRE(r.code == 0);
    const nlohmann::json preset = nlohmann::json::parse(r.out);
    CHECK(preset["model"]["num_layers"] == 96);
    CHECK(preset["parallelism"]["tensor_model_parallel_size"] == 8);
    CHECK(preset["parallelism"]["pipeline_model_parallel_size"] == 16);
    CHECK(preset["training"]["global_batch_size"] == 1536);
    checkRefused("import " + launchFile("megatron-gpt3-175b.sh") + " --gpus many", "--gpus");
}

TEST_CASE("import refuses a bad launch naming the argument", "[cli][launch][input]")
{
    const TempFile heads("heads.sh", "torchrun --nproc_per_node 6 pretrain_gpt.py --num-layers 4 --hidden-size 256 "
                                     "--num-attention-heads 8 --max-position-embeddings 512 --seq-length 512 "
                                     "--micro-batch-size 1 --vocab-size 1000 --tensor-model-parallel-size 3\n");
    checkRefused("import " + heads.quoted(), "--tensor-model-parallel-size");
    const TempFile value("value.sh", "python pretrain_gpt.py --num-layers $NUM_LAYERS --hidden-size 256\n");
    checkRefused("import " + value.quoted() + " --gpus 8", "$NUM_LAYERS is not set");
    const TempFile entry("entry.sh", "torchrun pretrain_bert.py --num-layers 4\n");
    checkRefused("import " + entry.quoted(), "pretrain_bert.py");
    checkRefused("import " + launchFile("megatron-llama3-8b-fp8.sh") + " --set parallelism.zero_stage=9",
                 "parallelism.zero_stage");
}

TEST_CASE("export --to megatron and import give the scenario back", "[cli][launch][roundtrip]")
{
    for (const char *scenario : {"gpt-3-175b-64gpus-tp-sp-selective", "deepseek-v3-2048xh100-p16-v4"}) {
        CAPTURE(scenario);
        const CliRun exported = runCli(std::string("export ") + scenario + " --to megatron");
        REQUIRE(exported.code == 0);
        CHECK(exported.err.empty());
        const TempFile script(std::string(scenario) + ".sh", exported.out);
        const CliRun imported = runCli("import " + script.quoted());
        REQUIRE(imported.code == 0);
        const TempFile preset(std::string(scenario) + ".json", imported.out);
        // The same plan: the same peak, rank by rank.
        const CliRun a = runCli("eval " + preset.quoted() + " --format json");
        const CliRun b = runCli(std::string("eval ") + scenario + " --format json");
        REQUIRE(a.code == b.code);
        const nlohmann::json ranks = nlohmann::json::parse(b.out)["ranks"];
        REQUIRE(ranks.size() > 0);
        CHECK(nlohmann::json::parse(a.out)["ranks"] == ranks);
    }
    checkRefused("export llama-3-70b-128xh100 --to slurm", "--to");
}

TEST_CASE("import reads a DeepSpeed config with a model into a preset eval accepts", "[cli][launch][deepspeed]")
{
    const CliRun r = runCli("import " + launchFile("hf-ds-config-zero2.json") + " --model llama-3.1-8b --gpus 8");
    REQUIRE(r.code == 0);
    const nlohmann::json preset = nlohmann::json::parse(r.out);
    // The file's own numbers (tests/data/launch/hf-ds-config-zero2.json).
    CHECK(preset["strategy"]["framework"] == "deepspeed");
    CHECK(preset["parallelism"]["zero_stage"] == 2);
    CHECK(preset["strategy"]["optimizer_offload"] == "cpu");
    CHECK(preset["strategy"]["ddp_bucket_size"] == 200000000);
    CHECK(preset["parallelism"]["data_parallel_size"] == 8);
    // --model llama-3.1-8b: written as the built-in's name
    CHECK(preset["model"] == "llama-3.1-8b");
    // The auto keys and the unused ones, on stderr with why.
    CHECK(r.err.find("note: train_micro_batch_size_per_gpu: \"auto\"") != std::string::npos);
    CHECK(r.err.find("unused: zero_optimization.allgather_bucket_size") != std::string::npos);
    CHECK(r.err.find("unused: scheduler.type WarmupLR (no effect on memory") != std::string::npos);
    const TempFile saved("zero2.json", r.out);
    const CliRun eval = runCli("eval " + saved.quoted() + " --format json");
    CHECK(eval.code == 0);
}

TEST_CASE("import refuses a bad DeepSpeed config naming the key", "[cli][launch][deepspeed][input]")
{
    checkRefused("import " + launchFile("hf-ds-config-zero3.json") + " --gpus 8", "--model");
    checkRefused("import " + launchFile("hf-ds-config-zero3.json") + " --model llama-3.1-8b", "--gpus");
    checkRefused("import " + launchFile("dse-megatron-zero2.json") + " --model llama-3.1-8b --gpus 6",
                 "train_batch_size");
    const TempFile stage("stage.json", R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": "3"}})");
    checkRefused("import " + stage.quoted() + " --model llama-3.1-8b --gpus 8", "zero_optimization.stage");
    checkRefused("import " + launchFile("megatron-gpt3-175b.sh") + " --model llama-3.1-8b", "--model");
}

TEST_CASE("export --to deepspeed and import give the scenario back", "[cli][launch][deepspeed][roundtrip]")
{
    for (const char *scenario : {"zero-7.5b-64gpus-stage-3", "llama-3-70b-128xh100", "seed-000-7b-c-offload"}) {
        CAPTURE(scenario);
        const CliRun exported = runCli(std::string("export ") + scenario + " --to deepspeed");
        REQUIRE(exported.code == 0);
        CHECK(exported.err.empty());
        REQUIRE(nlohmann::json::accept(exported.out));
        const TempFile config(std::string(scenario) + ".json", exported.out);
        const CliRun imported = runCli("import " + config.quoted());
        REQUIRE(imported.code == 0);
        const TempFile preset(std::string(scenario) + "-plan.json", imported.out);
        // The same plan: the same peak, rank by rank.
        const CliRun a = runCli("eval " + preset.quoted() + " --format json");
        const CliRun b = runCli(std::string("eval ") + scenario + " --format json");
        REQUIRE(a.code == b.code);
        const nlohmann::json ranks = nlohmann::json::parse(b.out)["ranks"];
        REQUIRE(ranks.size() > 0);
        CHECK(nlohmann::json::parse(a.out)["ranks"] == ranks);
    }
}

TEST_CASE("The usage text knows torchtitan and DeepSpeed configs both ways", "[cli][launch][deepspeed]")
{
    const CliRun help = runCli("--help");
    CHECK(help.code == 0);
    CHECK(help.out.find("--to megatron|torchtitan|deepspeed") != std::string::npos);
    CHECK(help.out.find("torchtitan TOML job") != std::string::npos);
    CHECK(help.out.find("[--model MODEL]") != std::string::npos);
}

TEST_CASE("import reads a torchtitan TOML job config into a preset eval accepts", "[cli][launch][torchtitan]")
{
    // The 2025 llama3_405b.toml on the 128 H100s its NOTE names.
    const CliRun r = runCli("import " + launchFile("torchtitan-202509-llama3_405b.toml") + " --gpus 128");
    REQUIRE(r.code == 0);
    const nlohmann::json preset = nlohmann::json::parse(r.out);
    // The file's own numbers (tests/data/launch/torchtitan-202509-llama3_405b.toml).
    CHECK(preset["strategy"]["framework"] == "torchtitan");
    CHECK(preset["model"] == "llama-3.1-405b"); // flavor = "405B", written as the built-in's name
    CHECK(preset["parallelism"]["tensor_model_parallel_size"] == 8);
    CHECK(preset["parallelism"]["data_parallel_size"] == 16); // shard -1: 128 / 8
    CHECK(preset["parallelism"]["zero_stage"] == 3);
    CHECK(preset["training"]["seq_length"] == 8192);
    CHECK(preset["training"]["micro_batch_size"] == 2);
    CHECK(preset["training"]["fp8_recipe"] == "tensorwise"); // converters = ["float8"]
    CHECK(preset["strategy"]["recompute_granularity"] == "full");
    // The keys it did not use, on stderr with their lines and why.
    CHECK(r.err.find("unused: optimizer.lr 8e-05 (line 25; no effect on memory: a hyperparameter)")
          != std::string::npos);
    CHECK(preset["strategy"]["torch_compile"] == true); // [compile] enable = true
    CHECK(r.err.find("note: parallelism.data_parallel_shard_degree: -1: 128 GPUs / 8 = 16") != std::string::npos);
    const TempFile saved("llama3-405b.json", r.out);
    CHECK(runCli("eval " + saved.quoted() + " --format json").code == 0);
}

TEST_CASE("import refuses a bad torchtitan config naming the key", "[cli][launch][torchtitan][input]")
{
    checkRefused("import " + launchFile("torchtitan-202509-llama3_8b.toml"), "--gpus");
    checkRefused("import " + launchFile("torchtitan-202509-llama3_8b.toml")
                     + " --gpus 12 --set "
                       "parallelism.tensor_model_parallel_size=5",
                 "parallelism.tensor_model_parallel_size");
    const TempFile schedule("schedule.toml",
                            "[parallelism]\npipeline_parallel_degree = 2\ndata_parallel_shard_degree = 1\n"
                            "pipeline_parallel_schedule = \"LoopedBFS\"\n");
    checkRefused("import " + schedule.quoted(), "parallelism.pipeline_parallel_schedule");
    const TempFile broken("broken.toml", "[training\nseq_len = 8192\n");
    checkRefused("import " + broken.quoted() + " --gpus 8", "not valid TOML");
}

TEST_CASE("export --to torchtitan and import give the scenario back", "[cli][launch][torchtitan][roundtrip]")
{
    for (const char *scenario : {"llama-3-70b-128xh100", "deepseek-v3-2048xh100-p16-v4", "seed-000-7b-c-offload"}) {
        CAPTURE(scenario);
        const CliRun exported = runCli(std::string("export ") + scenario + " --to torchtitan");
        REQUIRE(exported.code == 0);
        CHECK(exported.err.empty());
        const TempFile config(std::string(scenario) + ".toml", exported.out);
        const CliRun imported = runCli("import " + config.quoted());
        REQUIRE(imported.code == 0);
        const TempFile preset(std::string(scenario) + "-plan.json", imported.out);
        // The same plan: the same peak, rank by rank.
        const CliRun a = runCli("eval " + preset.quoted() + " --format json");
        const CliRun b = runCli(std::string("eval ") + scenario + " --format json");
        REQUIRE(a.code == b.code);
        const nlohmann::json ranks = nlohmann::json::parse(b.out)["ranks"];
        REQUIRE(ranks.size() > 0);
        CHECK(nlohmann::json::parse(a.out)["ranks"] == ranks);
    }
}
