// SPDX-License-Identifier: MIT
// memledger-cli import and export (issue 33): a Megatron-LM launch in, a preset
// that `eval` accepts out, every unused argument named on stderr; bad launches
// exit 2 naming the argument with nothing on stdout; export and import give
// the plan back.
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
