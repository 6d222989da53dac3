// SPDX-License-Identifier: MIT
// memledger-cli import-hf: a Hugging Face config.json in, a preset that
// `eval` accepts out; warnings on stderr, errors exit 2 naming the field.
#include "clirun.h"

#include <nlohmann/json.hpp>

using namespace memledger::test;

namespace {

std::string hfConfig(const std::string &name)
{
    return shellQuote(std::string(MEMLEDGER_TEST_DATA) + "/hf/" + name + ".json");
}

} // namespace

TEST_CASE("import-hf prints a preset that eval accepts", "[cli][hfimport]")
{
    const auto [file, model] = GENERATE(table<std::string, std::string>({
        {"Llama-2-7b-hf", "llama-2-7b"},
        {"Meta-Llama-3.1-405B", "llama-3.1-405b"},
        {"Mixtral-8x7B-v0.1", "mixtral-8x7b"},
        {"Qwen2.5-7B", "qwen2.5-7b"},
        {"Qwen3-32B", "qwen3-32b"},
        {"DeepSeek-V3", "deepseek-v3"},
    }));
    CAPTURE(file);
    const CliRun imported = runCli("import-hf " + hfConfig(file));
    REQUIRE(imported.code == 0);
    const nlohmann::json preset = nlohmann::json::parse(imported.out);
    CHECK(preset["format"] == "memledger-preset");
    CHECK(preset["model"].is_object());
    CHECK(imported.err.find("note: ") != std::string::npos); // the checkpoint dtype, explained

    const TempFile saved(file + ".preset.json", imported.out);
    const CliRun eval = runCli("eval " + saved.quoted() + " --format json");
    REQUIRE(eval.code == 0);
    // The same parameter count as the built-in model preset.
    const TempFile builtin(file + ".builtin.json",
                           R"({"format": "memledger-preset", "version": 1, "model": ")" + model + R"("})");
    const CliRun reference = runCli("eval " + builtin.quoted() + " --format json");
    REQUIRE(reference.code == 0);
    CHECK(nlohmann::json::parse(eval.out)["total_parameters"]
          == nlohmann::json::parse(reference.out)["total_parameters"]);
}

TEST_CASE("import-hf prints warnings on stderr and still succeeds", "[cli][hfimport]")
{
    const CliRun mistral = runCli("import-hf " + hfConfig("Mistral-7B-v0.1"));
    CHECK(mistral.code == 0);
    CHECK(mistral.err.find("warning: hf.sliding_window") != std::string::npos);
    CHECK(nlohmann::json::parse(mistral.out)["model"]["num_query_groups"] == 8);

    const CliRun deepseek = runCli("import-hf " + hfConfig("DeepSeek-V3"));
    CHECK(deepseek.code == 0);
    CHECK(nlohmann::json::parse(deepseek.out)["model"]["mtp_num_layers"] == 1);
    CHECK(deepseek.err.find("warning: hf.quantization_config") != std::string::npos);
}

TEST_CASE("import-hf applies --set to the preset it prints", "[cli][hfimport]")
{
    const CliRun r
        = runCli("import-hf " + hfConfig("Llama-2-70b-hf")
                 + " --set parallelism.tensor_model_parallel_size=8 --set parallelism.pipeline_model_parallel_size=4"
                 + " --set training.seq_length=4096 --set strategy.recompute_granularity=selective");
    REQUIRE(r.code == 0);
    const nlohmann::json preset = nlohmann::json::parse(r.out);
    CHECK(preset["parallelism"]["tensor_model_parallel_size"] == 8);
    CHECK(preset["parallelism"]["pipeline_model_parallel_size"] == 4);
    CHECK(preset["training"]["seq_length"] == 4096);
    CHECK(preset["strategy"]["recompute_granularity"] == "selective");
    CHECK(preset["model"]["num_layers"] == 80);
    const TempFile saved("llama-2-70b-tp8pp4.json", r.out);
    const CliRun check = runCli("check " + saved.quoted());
    CHECK((check.code == 0 || check.code == 3));
    CHECK(check.out.find("worst rank") != std::string::npos);
}

TEST_CASE("import-hf exits 2 naming the field, and prints no preset", "[cli][hfimport][input]")
{
    const TempFile gpt2("gpt2.json", R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_layer": 12})");
    const TempFile malformed("malformed-config.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": )");
    const TempFile wrongType("wrong-type-config.json",
                             R"({"architectures": ["LlamaForCausalLM"], "hidden_size": "4096", "num_hidden_layers": 32,
                                 "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000})");
    struct Case
    {
        std::string args;
        std::string mentions;
    };
    const std::vector<Case> cases = {
        {"import-hf " + gpt2.quoted(), "hf.architectures"},
        {"import-hf " + gpt2.quoted(), "LlamaForCausalLM"}, // the supported list
        {"import-hf " + malformed.quoted(), "not valid JSON"},
        {"import-hf " + wrongType.quoted(), "hf.hidden_size"},
        {"import-hf /nonexistent/config.json", "/nonexistent/config.json"},
        {"import-hf " + hfConfig("Llama-2-7b-hf") + " --set parallelism.tensor_model_parallel_size=3",
         "parallelism.tensor_model_parallel_size"},
        {"import-hf " + hfConfig("Llama-2-7b-hf") + " --set model.colour=blue", "model.colour"},
        {"import-hf " + hfConfig("Llama-2-7b-hf") + " --set nonsense", "nonsense"},
        {"import-hf " + hfConfig("Llama-2-7b-hf") + " --format json", "--format"},
        {"import-hf", "CONFIG.json"},
    };
    for (const Case &c : cases)
        checkRefused(c.args, c.mentions);
}

TEST_CASE("The usage text and the preset list know import-hf and decks", "[cli]")
{
    const CliRun help = runCli("--help");
    CHECK(help.code == 0);
    CHECK(help.out.find("import-hf CONFIG.json") != std::string::npos);
    const CliRun presets = runCli("presets");
    CHECK(presets.code == 0);
    CHECK(presets.out.find("decks:") != std::string::npos);
}

TEST_CASE("The version option prints the version project() declares", "[cli]")
{
    const CliRun version = runCli("--version");
    CHECK(version.code == 0);
    CHECK(version.out == std::string("memledger-cli ") + MEMLEDGER_VERSION + "\n");
    CHECK(version.err.empty());
    CHECK(runCli("--help").out.find("--version") != std::string::npos);
}
