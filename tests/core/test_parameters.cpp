// SPDX-License-Identifier: MIT
// Parameter counts of the shipped model presets against published figures (within 0.5 %).
#include "core/model/parameters.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("Model presets have their published parameter counts", "[parameters][reference]")
{
    // Sources: the model cards / papers (Llama 2, Llama 3.1, Mixtral, GPT-3, DeepSeek-V3
    // without its multi-token-prediction module, Mistral 7B, Qwen2.5).
    const auto [name, published] = GENERATE(table<std::string, double>({{"llama-2-7b", 6.74e9},
                                                                        {"llama-2-13b", 13.0e9},
                                                                        {"llama-2-70b", 69.0e9},
                                                                        {"llama-3.1-8b", 8.03e9},
                                                                        {"llama-3.1-70b", 70.6e9},
                                                                        {"llama-3.1-405b", 405.9e9},
                                                                        {"mistral-7b", 7.24e9},
                                                                        {"mixtral-8x7b", 46.7e9},
                                                                        {"mixtral-8x22b", 141e9},
                                                                        {"qwen2.5-7b", 7.62e9},
                                                                        {"qwen2.5-72b", 72.7e9},
                                                                        {"gpt-3-175b", 175e9},
                                                                        {"deepseek-v3", 671e9}}));
    CAPTURE(name);
    nlohmann::json doc = emptyDoc();
    doc["model"] = name;
    // The main model: DeepSeek-V3's 671 B leave its multi-token prediction module out (tested below).
    const Config c = configFrom(doc, {"model.mtp_num_layers=0"});
    CHECK(double(totalParameters(c)) == Approx(published).epsilon(0.005));
}

TEST_CASE("DeepSeek-V3 with its multi-token prediction module: the 685 B of its released weights", "[parameters][mtp]")
{
    // deepseek-ai/DeepSeek-V3's model card: 685 B, the main model's 671 B and
    // the MTP module, whose checkpoint stores its own copies of the embedding
    // and the output head (shared in training, counted once here).
    nlohmann::json doc = emptyDoc();
    doc["model"] = "deepseek-v3";
    const Config c = configFrom(doc);
    REQUIRE(c.model.mtp_num_layers == 1);
    const Config mainOnly = configFrom(doc, {"model.mtp_num_layers=0"});
    const EmbeddingParams emb = embeddingParams(c.model, c.training.seq_length, 1, 1);
    const std::int64_t module = totalParameters(c) - totalParameters(mainOnly);
    // One MoE layer, eh_proj (2h x h) and three RMSNorms of h.
    const LayerParams moe = layerParams(c.model, true, 1, 1, 1);
    CHECK(module == moe.dense.params + moe.expert.params + 2LL * 7168 * 7168 + 3 * 7168);
    CHECK(double(totalParameters(c) + emb.word.params + emb.output.params) == Approx(685e9).epsilon(0.001));
}

TEST_CASE("Vocabulary is padded like Megatron: to a multiple of 128 t", "[parameters]")
{
    ModelConfig m;
    m.vocab_size = 50257;
    CHECK(paddedVocab(m, 1) == 50304);
    CHECK(paddedVocab(m, 8) == 51200);
    m.vocab_size = 32000;
    CHECK(paddedVocab(m, 1) == 32000);
    CHECK(paddedVocab(m, 8) == 32768);
}

TEST_CASE("Tensor parallelism splits matrices, not norms or row-parallel biases", "[parameters]")
{
    ModelConfig m; // GPT: LayerNorm, biases, 4h GeLU
    m.hidden_size = 1024;
    m.num_attention_heads = 16;
    const std::int64_t h = 1024;
    const LayerParams one = layerParams(m, false, 1, 1, 1);
    CHECK(one.dense.params == 12 * h * h + 13 * h);
    const LayerParams eight = layerParams(m, false, 8, 1, 1);
    // Replicated: two LayerNorms (4h) and the two row-parallel biases (2h).
    CHECK(eight.dense.params == (12 * h * h + 7 * h) / 8 + 6 * h);
}

TEST_CASE("Tied embeddings are one tensor on one stage and two with a pipeline", "[parameters]")
{
    ModelConfig m;
    const EmbeddingParams single = embeddingParams(m, 2048, 1, 1);
    CHECK(single.output.params == 0);
    const EmbeddingParams piped = embeddingParams(m, 2048, 1, 4);
    CHECK(piped.output.params == piped.word.params);
    m.untie_embeddings_and_output_weights = true;
    CHECK(embeddingParams(m, 2048, 1, 1).output.params == single.word.params);
}

TEST_CASE("MoE layers are counted without visiting each layer", "[parameters]")
{
    // DeepSeek-V3 (technical report §4.2): every FFN but the first three
    // layers' is an MoE layer, 61 − 3 = 58 of them.
    nlohmann::json doc = emptyDoc();
    doc["model"] = "deepseek-v3";
    const ModelConfig ds = configFrom(doc).model;
    CHECK(moeLayerCount(ds) == 58);
    // By hand: 10 layers, the first dense, then every third: layers 1, 4, 7.
    ModelConfig m;
    m.num_layers = 10;
    m.num_experts = 8;
    m.first_k_dense_replace = 1;
    m.moe_layer_freq = 3;
    CHECK(moeLayerCount(m) == 3);
    // Megatron's list form: the ones in [0, 1, 1, 0].
    m.num_layers = 4;
    m.moe_layer_pattern = {0, 1, 1, 0};
    CHECK(moeLayerCount(m) == 2);
    m.num_experts = 0; // a dense model has none
    CHECK(moeLayerCount(m) == 0);
}

TEST_CASE("The long-double parameter count is the ledger's count, and no size overflows it", "[parameters][limits]")
{
    for (const char *name : {"llama-3.1-405b", "mixtral-8x22b", "deepseek-v3", "gpt-3-175b"}) {
        CAPTURE(name);
        nlohmann::json doc = emptyDoc();
        doc["model"] = name;
        const Config c = configFrom(doc);
        CHECK(totalParametersWide(c) == static_cast<long double>(totalParameters(c)));
    }
    // A GPT layer of width h has 12h² + 13h parameters (4h² attention, 8h² MLP,
    // biases and two LayerNorms). With h = 2^32 one layer alone holds
    // 12·2^64 ≈ 2.2e20, beyond 64 bits.
    Config c;
    c.model.num_layers = 1;
    c.model.hidden_size = std::int64_t(1) << 32;
    c.model.num_attention_heads = 1;
    c.model.vocab_size = 1;
    c.model.make_vocab_size_divisible_by = 1;
    const long double h = std::ldexp(1.0L, 32);
    CHECK(double(totalParametersWide(c)) == Approx(double(12 * h * h)).epsilon(1e-6));
}

TEST_CASE("Parameter tensors one by one: a GPT layer is PyTorch's module list, and the lists add up to the counts",
          "[parameters][allocator]")
{
    // Megatron's GPT layer (LayerNorm, biases, 4h GeLU): input norm weight and
    // bias, QKV weight and bias, projection weight and bias, pre-MLP norm
    // weight and bias, fc1 weight and bias, fc2 weight and bias: 12 tensors.
    ModelConfig m;
    m.hidden_size = 1024;
    m.num_attention_heads = 16;
    const std::int64_t h = 1024;
    const ParameterTensors gpt = layerParameterTensors(m, false, 1, 1, 1);
    CHECK(gpt.dense
          == std::vector<std::int64_t>{h, h, h * 3 * h, 3 * h, h * h, h, h, h, h * 4 * h, 4 * h, 4 * h * h, h});
    CHECK(gpt.expert.empty());
    const ParameterTensors split = layerParameterTensors(m, false, 8, 1, 1);
    CHECK(split.dense[2] == h * 3 * h / 8); // QKV column-parallel
    CHECK(split.dense[5] == h); // the projection's bias replicated

    // Every shipped model, dense and MoE layers, split over t and e as its scenarios run it:
    // the tensors add up to the counts the ledger uses.
    for (const std::string name : {"llama-3.1-70b", "mixtral-8x22b", "deepseek-v3", "gpt-3-175b", "qwen2.5-72b"}) {
        nlohmann::json doc = emptyDoc();
        doc["model"] = name;
        const ModelConfig model = configFrom(doc).model;
        for (const bool moe : {false, true}) {
            if (moe && !model.isMoe())
                continue;
            CAPTURE(name, moe);
            const std::int64_t t = 8, e = model.isMoe() ? 8 : 1;
            const LayerParams counts = layerParams(model, moe, t, e, 1);
            const ParameterTensors tensors = layerParameterTensors(model, moe, t, e, 1);
            CHECK(std::accumulate(tensors.dense.begin(), tensors.dense.end(), std::int64_t(0)) == counts.dense.params);
            CHECK(std::accumulate(tensors.expert.begin(), tensors.expert.end(), std::int64_t(0))
                  == counts.expert.params);
        }
        const EmbeddingParams counts = embeddingParams(model, 4096, 8, 4);
        const EmbeddingTensors tensors = embeddingParameterTensors(model, 4096, 8, 4);
        const auto sum
            = [](const std::vector<std::int64_t> &v) { return std::accumulate(v.begin(), v.end(), std::int64_t(0)); };
        CHECK(sum(tensors.word) == counts.word.params);
        CHECK(sum(tensors.output) == counts.output.params);
        CHECK(sum(tensors.finalNorm) == counts.finalNorm.params);
    }
}
