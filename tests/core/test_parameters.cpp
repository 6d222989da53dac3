// SPDX-License-Identifier: MIT
// Parameter counts of the shipped model presets against published figures (within 0.5 %).
#include "core/parameters.h"
#include "testutil.h"

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
    const Config c = configFrom(doc);
    CHECK(double(totalParameters(c)) == Approx(published).epsilon(0.005));
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
