// SPDX-License-Identifier: MIT
// The inference ledger against published figures: KV cache bytes per token
// of Llama 2 / Llama 3 / Mixtral (2 × layers × KV heads × head dim × 2 B, the
// figure vLLM's and NVIDIA's serving guides quote, e.g. 0.5 MiB per token for
// Llama-2-7B), DeepSeek-V3's MLA cache (DeepSeek-V2 paper, Table 1:
// (d_c + d_h^R)·l elements per token), and weights from published
// parameter counts.
#include "core/check/validate.h"
#include "core/formats/preset.h"
#include "core/reports/inferencereport.h"
#include "core/serving/inference.h"
#include "core/timeline/peakledger.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

// The loader's problems for one inference section.
Problems loadProblems(const nlohmann::json &inference)
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["inference"] = inference;
    return presetFromJson(doc).problems;
}

bool mentions(const Problems &problems, const std::string &path, const std::string &text = {})
{
    for (const Problem &p : problems)
        if (p.isError() && p.path == path && p.toString().find(text) != std::string::npos)
            return true;
    return false;
}

} // namespace

TEST_CASE("KV cache bytes per token match the published figures", "[inference][reference]")
{
    // Llama-2-7B: 32 layers, 32 KV heads × 128, bf16: 2·32·4096·2 = 524,288 B (0.5 MiB).
    CHECK(kvCacheBytesPerToken(served("llama-2-7b")) == 524288);
    // Llama-3-70B, GQA: 80 layers, 8 KV heads × 128: 327,680 B = 320 KiB.
    CHECK(kvCacheBytesPerToken(served("llama-3-70b")) == 327680);
    // Mixtral-8x7B: 32 layers, 8 KV heads × 128: 131,072 B = 128 KiB.
    CHECK(kvCacheBytesPerToken(served("mixtral-8x7b")) == 131072);
    // DeepSeek-V3, MLA: 61 layers × (kv_lora_rank 512 + rotary key 64) × 2 B = 70,272 B.
    CHECK(kvCacheBytesPerToken(served("deepseek-v3")) == 61 * (512 + 64) * 2);
    CHECK(kvCacheBytesPerToken(served("deepseek-v3")) == 70272);
    // An fp8 cache (vLLM's kv_cache_dtype fp8) halves it.
    CHECK(kvCacheBytesPerToken(served("llama-3-70b", {"inference.kv_cache_dtype=fp8"})) == 163840);
}

TEST_CASE("Weights of the served model follow the parameter count and the dtype", "[inference][reference]")
{
    // Llama-2-7B has 6.74e9 parameters (6,738,415,616 in the Hugging Face checkpoint): 13.48 GB in bf16.
    const Config c = served("llama-2-7b");
    const InferenceLedger l = computeInference(c);
    CHECK(l.total_parameters == 6738415616);
    CHECK(l.weights_bytes == 2 * l.total_parameters);
    CHECK(double(l.weights_bytes) == Approx(6.74e9 * 2).epsilon(0.001));
    REQUIRE(l.ranks.size() == 1);
    CHECK(l.ranks[0].device[0] == l.weights_bytes);

    // GPTQ/AWQ group 128: 4 bits per weight, an fp16 scale and a 4-bit zero
    // point per 128 weights: 128,000 weights -> 64,000 + 1,000 × 2 + 500 B.
    CHECK(servedWeightBytes(128000, ServingDtype::INT4) == 66500);
    CHECK(servedWeightBytes(128000, ServingDtype::INT8) == 128000 + 1000 * 2 + 1000);
    // fp8 with one fp32 scale per 128 × 128 block (DeepSeek-V3).
    CHECK(servedWeightBytes(16384 * 4, ServingDtype::FP8) == 16384 * 4 + 4 * 4);
    // Only the transformer layers are quantised; embeddings and lm_head stay bf16.
    const InferenceLedger q = computeInference(served("llama-2-7b", {"inference.weights_dtype=int4"}));
    const std::int64_t head = 2 * 32000 * 4096 + 4096; // embedding, lm_head, final norm
    CHECK(q.weights_bytes == servedWeightBytes(l.total_parameters - head, ServingDtype::INT4) + 2 * head);
    CHECK(double(q.weights_bytes) / double(l.weights_bytes) == Approx(0.29).margin(0.01));
}

TEST_CASE("Serving splits: t divides KV heads (replicating past them), p the layers, MLA stays whole", "[inference]")
{
    ModelConfig llama3;
    llama3.num_attention_heads = 64;
    llama3.num_query_groups = 8;
    llama3.hidden_size = 8192;
    CHECK(kvHeadsPerRank(llama3, 1) == 8);
    CHECK(kvHeadsPerRank(llama3, 8) == 1);
    CHECK(kvHeadsPerRank(llama3, 16) == 1); // vLLM: max(1, 8 // 16), each head on two ranks

    const auto sets = std::vector<std::string>{"inference.batch_size=8", "inference.context_length=8192",
                                               "parallelism.tensor_model_parallel_size=8"};
    const InferenceLedger whole
        = computeInference(served("llama-3-70b", {"inference.batch_size=8", "inference.context_length=8192"}));
    const InferenceLedger tp = computeInference(served("llama-3-70b", sets));
    // 8 × 8K tokens × 320 KiB = 20 GiB of KV cache, an eighth of it per rank.
    CHECK(whole.ranks[0].device[1] == std::int64_t(8) * 8192 * 327680);
    CHECK(whole.ranks[0].device[1] == std::int64_t(20) << 30);
    CHECK(tp.ranks[0].device[1] * 8 == whole.ranks[0].device[1]);
    CHECK(tp.kv_cache_bytes_per_token == whole.kv_cache_bytes_per_token); // before any split

    auto pp = sets;
    pp.push_back("parallelism.pipeline_model_parallel_size=4");
    const InferenceLedger staged = computeInference(served("llama-3-70b", pp));
    REQUIRE(staged.ranks.size() == 4);
    for (const InferenceRank &r : staged.ranks) {
        CHECK(r.layers == 20);
        CHECK(r.device[1] * 4 == tp.ranks[0].device[1]);
    }
    CHECK(staged.ranks[0].device[0] != staged.ranks[1].device[0]); // the embedding on the first stage

    // MLA: every tensor-parallel rank caches the whole latent.
    ModelConfig mla;
    mla.multi_latent_attention = true;
    CHECK(kvBytesPerTokenLayer(mla, ServingDtype::BF16, 8) == (512 + 64) * 2);
}

TEST_CASE("A sliding window caps the cached tokens (Mistral 7B's rolling buffer)", "[inference]")
{
    // Mistral 7B: window 4096 (Jiang et al. 2023, and its config.json); a 32K context caches 4096 tokens.
    const Config c = served("mistral-7b", {"inference.context_length=32768"});
    CHECK(c.model.sliding_window == 4096);
    const InferenceLedger l = computeInference(c);
    CHECK(l.cached_tokens == 4096);
    CHECK(l.ranks[0].device[1] == std::int64_t(4096) * 131072);
    CHECK(computeInference(served("mistral-7b", {"model.sliding_window=0", "inference.context_length=32768"}))
              .cached_tokens
          == 32768);
}

TEST_CASE("Seed 001: serving keeps one layer's activations, training keeps every layer's", "[inference]")
{
    // Llama-2-7B, one 4096-token sequence: training (b = 1, no recompute)
    // saves tens of GB for backward; a forward alone needs a few hundred MB.
    const Config c = served("llama-2-7b", {"training.seq_length=4096", "hardware=H100-SXM-80GB"});
    const InferenceLedger l = computeInference(c);
    const Ledger training = peakLedger(c); // the training plan's one peak
    const Bytes trainingActivations = training.ranks[0].device[static_cast<std::size_t>(Category::Activations)];
    CHECK(l.settings.context_length == 4096);
    CHECK(l.ranks[0].device[2] * 32 < trainingActivations);
    CHECK(l.training_peak_bytes == training.peak_bytes);
    CHECK(l.peak_bytes < l.training_peak_bytes);
    CHECK(l.ranks[0].fits);

    // Without FlashAttention the prefill holds the scores and their softmax,
    // 2 · b · a · s² elements (eager attention).
    auto eager = computeInference(served("llama-2-7b", {"training.seq_length=4096", "strategy.flash_attention=false"}));
    CHECK(eager.ranks[0].prefill.attention - l.ranks[0].prefill.attention == 2 * 32 * std::int64_t(4096) * 4096 * 2);
    // A decode step is one token per sequence.
    CHECK(l.ranks[0].decode.shape.tokens == 1);
    CHECK(l.ranks[0].decode.total < l.ranks[0].prefill.total);
}

TEST_CASE("MoE serving: experts split over e and routing buffers counted", "[inference]")
{
    const InferenceLedger one = computeInference(served("mixtral-8x7b", {"inference.batch_size=4"}));
    const InferenceLedger ep
        = computeInference(served("mixtral-8x7b", {"inference.batch_size=4", "parallelism.expert_model_parallel_size=8",
                                                   "parallelism.data_parallel_size=8"}));
    CHECK(one.ranks[0].prefill.moe_routing > 0);
    CHECK(ep.ranks[0].parameters < one.ranks[0].parameters / 4);
}

TEST_CASE("The inference section round-trips and is optional", "[inference][preset]")
{
    const Config c = served("llama-2-7b", {"inference.batch_size=8", "inference.kv_cache_dtype=fp8",
                                           "inference.weights_dtype=int4", "inference.context_length=1000"});
    REQUIRE(c.inference);
    CHECK(c.inference->batch_size == 8);
    const LoadResult back = presetFromText(presetToText(c), "round trip");
    REQUIRE(back.config);
    CHECK(*back.config == c);

    nlohmann::json doc = emptyDoc();
    doc["model"] = "llama-2-7b";
    const Config plain = configFrom(doc);
    CHECK_FALSE(plain.inference);
    CHECK(presetToText(plain).find("\"inference\"") == std::string::npos);
    CHECK(resolvedInference(plain).context_length == plain.training.seq_length);
}

TEST_CASE("Bad inference input names the field and the valid choices", "[inference][validate]")
{
    CHECK(mentions(loadProblems({{"context_length", 0}}), "inference.context_length"));
    CHECK(mentions(loadProblems({{"context_length", -5}}), "inference.context_length"));
    CHECK(mentions(loadProblems({{"batch_size", 0}}), "inference.batch_size"));
    CHECK(mentions(loadProblems({{"kv_cache_dtype", "int4"}}), "inference.kv_cache_dtype", "\"fp8\""));
    CHECK(mentions(loadProblems({{"weights_dtype", "int3"}}), "inference.weights_dtype", "\"int4\""));
    CHECK(mentions(loadProblems({{"beam_width", 4}}), "inference.beam_width", "unknown field"));
    CHECK(mentions(loadProblems(42), "inference", "expected an object or the name of a built-in preset"));
    CHECK(mentions(loadProblems("big"), "inference", "no built-in preset named \"big\""));
    CHECK(mentions(loadProblems("seed-000-7b-a-plain"), "inference", "has no inference section"));

    // A hand-built Config (the GUI) is caught by validate().
    Config c = served("llama-2-7b");
    c.inference->context_length = 0;
    c.inference->batch_size = 0;
    c.inference->kv_cache_dtype = ServingDtype::INT4;
    const Problems problems = validate(c);
    CHECK(mentions(problems, "inference.context_length", "at least 1 token"));
    CHECK(mentions(problems, "inference.batch_size"));
    CHECK(mentions(problems, "inference.kv_cache_dtype", "bf16, fp16, fp8"));
}

TEST_CASE("inference JSON carries the contract keys", "[inference][report]")
{
    const Config c = served("llama-3-70b", {"parallelism.tensor_model_parallel_size=8"});
    const nlohmann::json j = inferenceToJson(c, computeInference(c));
    CHECK(j["kv_cache_bytes_per_token"] == 327680);
    REQUIRE(j["ranks"].size() == 1);
    const nlohmann::json &r = j["ranks"][0];
    for (const char *key : {"weights", "kv_cache", "activations", "runtime"})
        CHECK(r["device_bytes"][key].is_number_integer());
    CHECK(r["device_bytes"].size() == 4);
    CHECK(r["device_total_bytes"].is_number_integer());
    CHECK(r["fits"].is_boolean());
    CHECK(j["peak_bytes"] == r["device_total_bytes"]);
    CHECK(j["training_peak_bytes"].is_number_integer());
}
