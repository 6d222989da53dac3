// SPDX-License-Identifier: MIT
// Hugging Face config import: the published configs in tests/data/hf import to
// the built-in model presets, and what cannot be mapped is named.
#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/hfimport.h"
#include "core/formats/preset.h"
#include "core/model/parameters.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

ImportResult importFile(const std::string &name)
{
    return importHfConfigFile(std::string(MEMLEDGER_TEST_DATA) + "/hf/" + name + ".json");
}

ModelConfig builtinModel(const std::string &name)
{
    const BuiltinPreset *b = findBuiltin("models", name);
    REQUIRE(b != nullptr);
    const LoadResult r = presetFromText(b->text, name);
    REQUIRE(r.config.has_value());
    return r.config->model;
}

std::vector<std::string> paths(const Problems &problems, Problem::Severity severity)
{
    std::vector<std::string> out;
    for (const Problem &p : problems)
        if (p.severity == severity)
            out.push_back(p.path);
    return out;
}

std::vector<std::string> warnings(const ImportResult &r)
{
    return paths(r.problems, Problem::Severity::Warning);
}

std::vector<std::string> errors(const ImportResult &r)
{
    return paths(r.problems, Problem::Severity::Error);
}

bool contains(const std::vector<std::string> &v, const std::string &s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

// Field by field, so a mismatch names the field.
void checkSameModel(const ModelConfig &got, const ModelConfig &want)
{
#define MEMLEDGER_SAME(field)                                                                                          \
    do {                                                                                                               \
        INFO(#field);                                                                                                  \
        CHECK(got.field == want.field);                                                                                \
    } while (0)
    MEMLEDGER_SAME(num_layers);
    MEMLEDGER_SAME(hidden_size);
    MEMLEDGER_SAME(num_attention_heads);
    MEMLEDGER_SAME(num_query_groups);
    MEMLEDGER_SAME(kv_channels);
    MEMLEDGER_SAME(sliding_window);
    MEMLEDGER_SAME(ffn_hidden_size);
    MEMLEDGER_SAME(vocab_size);
    MEMLEDGER_SAME(make_vocab_size_divisible_by);
    MEMLEDGER_SAME(swiglu);
    MEMLEDGER_SAME(normalization);
    MEMLEDGER_SAME(add_bias_linear);
    MEMLEDGER_SAME(add_qkv_bias);
    MEMLEDGER_SAME(position_embedding_type);
    MEMLEDGER_SAME(max_position_embeddings);
    MEMLEDGER_SAME(untie_embeddings_and_output_weights);
    MEMLEDGER_SAME(attention_dropout);
    MEMLEDGER_SAME(hidden_dropout);
    MEMLEDGER_SAME(num_experts);
    MEMLEDGER_SAME(moe_router_topk);
    MEMLEDGER_SAME(moe_ffn_hidden_size);
    MEMLEDGER_SAME(moe_shared_expert_intermediate_size);
    MEMLEDGER_SAME(moe_layer_pattern);
    MEMLEDGER_SAME(moe_layer_freq);
    MEMLEDGER_SAME(first_k_dense_replace);
    MEMLEDGER_SAME(multi_latent_attention);
    MEMLEDGER_SAME(q_lora_rank);
    MEMLEDGER_SAME(kv_lora_rank);
    MEMLEDGER_SAME(qk_head_dim);
    MEMLEDGER_SAME(qk_pos_emb_head_dim);
    MEMLEDGER_SAME(v_head_dim);
#undef MEMLEDGER_SAME
    // And nothing else differs (fields added to ModelConfig later included).
    CHECK(got == want);
}

// A small Llama config to vary in the tests below.
nlohmann::json llama()
{
    return {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"hidden_size", 1024},
            {"num_hidden_layers", 4},
            {"num_attention_heads", 16},
            {"num_key_value_heads", 4},
            {"intermediate_size", 2816},
            {"vocab_size", 32000},
            {"hidden_act", "silu"},
            {"rms_norm_eps", 1e-5},
            {"tie_word_embeddings", false},
            {"max_position_embeddings", 4096}};
}

ModelConfig imported(const nlohmann::json &hf)
{
    const ImportResult r = importHfConfig(hf);
    for (const Problem &p : r.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(r.config.has_value());
    return r.config->model;
}

} // namespace

TEST_CASE("Published Hugging Face configs import to the built-in model presets", "[hfimport][reference]")
{
    const auto [file, preset] = GENERATE(table<std::string, std::string>({
        {"Llama-2-7b-hf", "llama-2-7b"},
        {"Llama-2-70b-hf", "llama-2-70b"},
        {"Meta-Llama-3.1-405B", "llama-3.1-405b"},
        {"Mistral-7B-v0.1", "mistral-7b"},
        {"Mixtral-8x7B-v0.1", "mixtral-8x7b"},
        {"Qwen2.5-7B", "qwen2.5-7b"},
        {"Qwen2.5-72B", "qwen2.5-72b"},
        {"DeepSeek-V3", "deepseek-v3"},
    }));
    CAPTURE(file, preset);
    const ImportResult r = importFile(file);
    for (const Problem &p : r.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(r.config.has_value());
    CHECK_FALSE(hasErrors(r.problems));
    checkSameModel(r.config->model, builtinModel(preset));

    // Everything else is the documented default, and the result is a usable preset.
    Config defaults;
    defaults.model = r.config->model;
    defaults.name = r.config->name;
    defaults.description = r.config->description;
    CHECK(*r.config == defaults);
    CHECK_FALSE(r.config->description.empty());
    CHECK_FALSE(hasErrors(validate(*r.config)));
    const LoadResult back = presetFromText(presetToText(*r.config), "round trip");
    REQUIRE(back.config.has_value());
    CHECK(*back.config == *r.config);
    CHECK(computeLedger(*r.config).total_parameters > 0);
    // The checkpoint dtype is read and explained, never taken as the training precision.
    REQUIRE_FALSE(r.notes.empty());
    CHECK(r.notes[0].find("torch_dtype") != std::string::npos);
    CHECK(r.config->training.params_dtype == Dtype::BF16);
}

TEST_CASE("Each import warns exactly about what it cannot carry over", "[hfimport]")
{
    using V = std::vector<std::string>;
    CHECK(warnings(importFile("Llama-2-7b-hf")).empty());
    CHECK(warnings(importFile("Llama-2-70b-hf")).empty());
    CHECK(warnings(importFile("Meta-Llama-3.1-405B")).empty()); // rope_scaling changes no memory
    CHECK(warnings(importFile("Mixtral-8x7B-v0.1")).empty()); // sliding_window: null
    CHECK(warnings(importFile("Qwen2.5-7B")).empty()); // a window, but use_sliding_window: false
    CHECK(warnings(importFile("Qwen2.5-72B")).empty());
    CHECK(warnings(importFile("Mistral-7B-v0.1")) == V{"hf.sliding_window"});
    CHECK(warnings(importFile("DeepSeek-V3")) == V{"hf.quantization_config"});
}

TEST_CASE("Names come from _name_or_path, else the architecture", "[hfimport]")
{
    CHECK(importFile("Llama-2-7b-hf").config->name == "Llama-2-7b-hf");
    CHECK(importFile("DeepSeek-V3").config->name == "DeepseekV3ForCausalLM");
    nlohmann::json hf = llama();
    hf["_name_or_path"] = "/home/me/checkpoints/my-llama/";
    CHECK(importHfConfig(hf).config->name == "my-llama");
}

TEST_CASE("Qwen2MoeForCausalLM: experts, shared expert and QKV biases", "[hfimport][reference]")
{
    const ImportResult r = importFile("Qwen1.5-MoE-A2.7B");
    REQUIRE(r.config.has_value());
    CHECK(warnings(r).empty());
    const ModelConfig &m = r.config->model;
    CHECK(m.num_layers == 24);
    CHECK(m.hidden_size == 2048);
    CHECK(m.num_attention_heads == 16);
    CHECK(m.num_query_groups == 16);
    CHECK(m.kv_channels == 0);
    CHECK(m.ffn_hidden_size == 5632);
    CHECK(m.vocab_size == 151936);
    CHECK(m.add_qkv_bias);
    CHECK_FALSE(m.add_bias_linear);
    CHECK(m.untie_embeddings_and_output_weights);
    CHECK(m.num_experts == 60);
    CHECK(m.moe_router_topk == 4);
    CHECK(m.moe_ffn_hidden_size == 1408);
    CHECK(m.moe_shared_expert_intermediate_size == 5632);
    CHECK(m.moe_layer_freq == 1);
    CHECK(m.moe_layer_pattern.empty());
    CHECK(m.max_position_embeddings == 8192);
    // Qwen's model card: 14.3 B parameters in total (2.7 B activated).
    CHECK(double(totalParameters(*r.config)) == Approx(14.3e9).epsilon(0.005));
    // The shared expert's gate is too small to count, and said so.
    REQUIRE(r.notes.size() == 2);
    CHECK(r.notes[1].find("gate") != std::string::npos);

    // decoder_sparse_step and mlp_only_layers follow transformers: layer i is
    // sparse when (i + 1) % step == 0 and i is not listed.
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/hf/Qwen1.5-MoE-A2.7B.json");
    nlohmann::json hf = nlohmann::json::parse(in);
    hf["num_hidden_layers"] = 8;
    hf["decoder_sparse_step"] = 2;
    hf["mlp_only_layers"] = {3, 42};
    const ImportResult sparse = importHfConfig(hf);
    REQUIRE(sparse.config.has_value());
    CHECK(sparse.config->model.moe_layer_pattern == std::vector<int>{0, 1, 0, 0, 0, 1, 0, 1});
    CHECK(warnings(sparse) == std::vector<std::string>{"hf.mlp_only_layers[1]"}); // there is no layer 42
    CHECK_FALSE(hasErrors(validate(*sparse.config)));
}

TEST_CASE("DeepseekV3ForCausalLM: MLA, routed and shared experts, dense first layers", "[hfimport]")
{
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/hf/DeepSeek-V3.json");
    nlohmann::json hf = nlohmann::json::parse(in);
    // Published count without the multi-token-prediction module: 671 B; the
    // module itself is num_nextn_predict_layers.
    const ImportResult r = importHfConfig(hf);
    REQUIRE(r.config.has_value());
    CHECK(r.config->model.mtp_num_layers == 1);
    Config mainOnly = *r.config;
    mainOnly.model.mtp_num_layers = 0;
    CHECK(double(totalParameters(mainOnly)) == Approx(671e9).epsilon(0.005));

    SECTION("n_shared_experts x moe_intermediate_size is the shared expert's width")
    {
        hf["n_shared_experts"] = 2;
        CHECK(imported(hf).moe_shared_expert_intermediate_size == 4096);
        hf["n_shared_experts"] = nullptr;
        CHECK(imported(hf).moe_shared_expert_intermediate_size == 0);
    }
    SECTION("moe_layer_freq follows transformers (i >= k and i % freq == 0), as a list when Megatron's rule differs")
    {
        hf["num_hidden_layers"] = 8;
        hf["first_k_dense_replace"] = 1;
        hf["moe_layer_freq"] = 2;
        const ModelConfig m = imported(hf);
        CHECK(m.moe_layer_pattern == std::vector<int>{0, 0, 1, 0, 1, 0, 1, 0});
        CHECK(m.first_k_dense_replace == 0);
    }
    SECTION("q_lora_rank null projects queries directly; absent is an error")
    {
        hf["q_lora_rank"] = nullptr;
        CHECK(imported(hf).q_lora_rank == 0);
        hf.erase("q_lora_rank");
        CHECK(errors(importHfConfig(hf)) == std::vector<std::string>{"hf.q_lora_rank"});
    }
    SECTION("no routed experts is a dense MLA model")
    {
        hf["n_routed_experts"] = nullptr;
        CHECK(imported(hf).num_experts == 0);
    }
    SECTION("no multi-token prediction, no module")
    {
        hf["num_nextn_predict_layers"] = 0;
        hf.erase("quantization_config");
        CHECK(warnings(importHfConfig(hf)).empty());
        CHECK(imported(hf).mtp_num_layers == 0);
    }
}

TEST_CASE("Head size, biases and activation are mapped, never guessed", "[hfimport]")
{
    nlohmann::json hf = llama();
    SECTION("head_dim becomes kv_channels only when it is not hidden / heads")
    {
        hf["head_dim"] = 64;
        CHECK(imported(hf).kv_channels == 0);
        hf["head_dim"] = 128; // Mistral-NeMo style: wider heads than h / a
        CHECK(imported(hf).kv_channels == 128);
    }
    SECTION("no num_key_value_heads means multi-head attention, as in transformers")
    {
        hf.erase("num_key_value_heads");
        CHECK(imported(hf).num_query_groups == 16);
    }
    SECTION("tied embeddings")
    {
        hf["tie_word_embeddings"] = true;
        CHECK_FALSE(imported(hf).untie_embeddings_and_output_weights);
    }
    SECTION("Llama's attention_bias and mlp_bias")
    {
        hf["attention_bias"] = true;
        hf["mlp_bias"] = true;
        CHECK(imported(hf).add_bias_linear);
        hf["mlp_bias"] = false;
        const ImportResult r = importHfConfig(hf);
        REQUIRE(r.config.has_value());
        CHECK(r.config->model.add_qkv_bias);
        CHECK_FALSE(r.config->model.add_bias_linear);
        CHECK(warnings(r) == std::vector<std::string>{"hf.attention_bias"});
    }
    SECTION("a gated MLP keeps SwiGLU's shapes whatever the activation, with a warning")
    {
        hf["hidden_act"] = "gelu";
        const ImportResult r = importHfConfig(hf);
        REQUIRE(r.config.has_value());
        CHECK(r.config->model.swiglu);
        CHECK(warnings(r) == std::vector<std::string>{"hf.hidden_act"});
    }
    SECTION("Qwen2's QKV biases")
    {
        hf["architectures"] = {"Qwen2ForCausalLM"};
        CHECK(imported(hf).add_qkv_bias);
        CHECK_FALSE(imported(hf).add_bias_linear);
    }
    SECTION("no architectures: model_type names the class")
    {
        hf.erase("architectures");
        hf["model_type"] = "mistral";
        CHECK(importHfConfig(hf).config.has_value());
    }
}

TEST_CASE("Fields that change memory but cannot be mapped are warnings naming them", "[hfimport]")
{
    nlohmann::json hf = llama();
    SECTION("a field of another architecture")
    {
        hf["num_local_experts"] = 8; // Mixtral's; a Llama never reads it
        const ImportResult r = importHfConfig(hf);
        REQUIRE(r.config.has_value());
        CHECK(r.config->model.num_experts == 0);
        CHECK(warnings(r) == std::vector<std::string>{"hf.num_local_experts"});
        CHECK(r.problems[0].message == "not understood; check the import");
    }
    SECTION("a field nobody knows")
    {
        hf["attn_logit_softcapping"] = 50.0;
        hf["unknown_flag_off"] = false; // switched off: nothing to account for
        hf["unknown_null"] = nullptr;
        CHECK(warnings(importHfConfig(hf)) == std::vector<std::string>{"hf.attn_logit_softcapping"});
    }
    SECTION("sliding windows, quantised checkpoints, hybrid layer types")
    {
        hf["architectures"] = {"Qwen2ForCausalLM"};
        hf["sliding_window"] = 1024;
        hf["use_sliding_window"] = true;
        hf["max_window_layers"] = 2;
        hf["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
        hf["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "sliding_attention"};
        const ImportResult r = importHfConfig(hf);
        REQUIRE(r.config.has_value());
        const std::vector<std::string> w = warnings(r);
        CHECK(w.size() == 3);
        CHECK(contains(w, "hf.sliding_window"));
        CHECK(contains(w, "hf.quantization_config"));
        CHECK(contains(w, "hf.layer_types"));
        // Warnings stay with the preset: its description lists them.
        CHECK(r.config->description.find("hf.quantization_config") != std::string::npos);
    }
    SECTION("a window as long as the longest sequence never applies")
    {
        hf["architectures"] = {"MistralForCausalLM"};
        hf["sliding_window"] = 4096; // = max_position_embeddings
        CHECK(importHfConfig(hf).problems.empty());
        hf["sliding_window"] = 1024;
        CHECK(warnings(importHfConfig(hf)) == std::vector<std::string>{"hf.sliding_window"});
    }
    SECTION("fields that change no memory are read silently")
    {
        hf["rope_theta"] = 500000.0;
        hf["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
        hf["bos_token_id"] = 1;
        hf["initializer_range"] = 0.02;
        hf["use_cache"] = true;
        hf["pretraining_tp"] = 1;
        hf["transformers_version"] = "4.43.0";
        CHECK(importHfConfig(hf).problems.empty());
    }
}

TEST_CASE("Unsupported architectures and malformed configs are errors naming the field", "[hfimport][input]")
{
    SECTION("an unsupported architecture is named, with the supported list")
    {
        nlohmann::json hf = llama();
        hf["architectures"] = {"GPT2LMHeadModel"};
        const ImportResult r = importHfConfig(hf);
        CHECK_FALSE(r.config.has_value());
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].path == "hf.architectures");
        CHECK(r.problems[0].message.find("GPT2LMHeadModel") != std::string::npos);
        for (std::string_view a : supportedHfArchitectures())
            CHECK(r.problems[0].suggestion.find(a) != std::string::npos);
        CHECK(supportedHfArchitectures().size() == 9);

        hf.erase("architectures");
        hf["model_type"] = "gpt2";
        CHECK(errors(importHfConfig(hf)) == std::vector<std::string>{"hf.architectures"});
        hf.erase("model_type");
        CHECK(errors(importHfConfig(hf)) == std::vector<std::string>{"hf.architectures"});
        hf["architectures"] = "LlamaForCausalLM"; // a string, not a list
        CHECK(errors(importHfConfig(hf)) == std::vector<std::string>{"hf.architectures"});
    }
    SECTION("wrong types, missing sizes and bad values, all at once")
    {
        nlohmann::json hf = llama();
        hf["hidden_size"] = "1024";
        hf.erase("num_hidden_layers");
        hf["num_key_value_heads"] = -4;
        hf["tie_word_embeddings"] = "no";
        hf["attention_dropout"] = 1.5;
        hf["intermediate_size"] = 2816.5;
        const ImportResult r = importHfConfig(hf);
        CHECK_FALSE(r.config.has_value());
        const std::vector<std::string> e = errors(r);
        CHECK(e.size() == 6);
        for (const char *field : {"hf.hidden_size", "hf.num_hidden_layers", "hf.num_key_value_heads",
                                  "hf.tie_word_embeddings", "hf.attention_dropout", "hf.intermediate_size"})
            CHECK(contains(e, field));
    }
    SECTION("an architecture's own sizes are required")
    {
        nlohmann::json hf = llama();
        hf["architectures"] = {"MixtralForCausalLM"};
        hf["num_experts_per_tok"] = 2;
        CHECK(errors(importHfConfig(hf)) == std::vector<std::string>{"hf.num_local_experts"});
    }
    SECTION("not JSON, not an object")
    {
        const ImportResult text = importHfConfigText("{\"hidden_size\": 4096,", "config.json");
        REQUIRE(text.problems.size() == 1);
        CHECK(text.problems[0].path == "config.json");
        CHECK(text.problems[0].message.rfind("not valid JSON", 0) == 0);
        CHECK(errors(importHfConfigText("[1, 2]")) == std::vector<std::string>{"hf"});
        const ImportResult missing = importHfConfigFile("/nonexistent/config.json");
        CHECK_FALSE(missing.config.has_value());
        CHECK(errors(missing) == std::vector<std::string>{"/nonexistent/config.json"});
    }
}
