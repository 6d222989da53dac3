// SPDX-License-Identifier: MIT
// Multi-token prediction (model.mtp_num_layers): the modules Megatron-LM's
// MultiTokenPredictionLayer builds (multi_token_prediction.py: enorm, hnorm,
// eh_proj of 2h inputs and h outputs, a transformer layer built as the
// decoder's last, final_layernorm) on the last pipeline stage, sharing the
// embedding and the output layer (DeepSeek-V3 §2.2), counted by hand.
#include "core/ledger/ledger.h"
#include "core/model/activations.h"
#include "core/model/parameters.h"
#include "core/serving/inference.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace memledger;
using test::configFrom;
using test::emptyDoc;

namespace {

nlohmann::json smallDoc()
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 4},        {"hidden_size", 256},         {"num_attention_heads", 8},
                    {"vocab_size", 1000},     {"normalization", "RMSNorm"}, {"swiglu", true},
                    {"ffn_hidden_size", 512}, {"attention_dropout", 0.0},   {"hidden_dropout", 0.0}};
    doc["training"] = {{"seq_length", 512}, {"micro_batch_size", 1}, {"global_batch_size", 8}};
    doc["parallelism"] = {{"pipeline_model_parallel_size", 2}};
    return doc;
}

} // namespace

TEST_CASE("Multi-token prediction runs on the last stage with its projection, norms and an embedding copy",
          "[mtp][ledger]")
{
    const Config without = configFrom(smallDoc());
    const Config with = configFrom(smallDoc(), {"model.mtp_num_layers=1"});
    const Ledger l0 = computeLedger(without), l1 = computeLedger(with);
    // The module's transformer layer joins the last stage's two.
    CHECK(l1.ranks[0].layers == 2);
    CHECK(l1.ranks[1].layers == 3);
    // Last stage, bf16 weights: the output layer's copy of the tied
    // embedding (1,024 padded rows × 256) and the final RMSNorm (256), then
    // eh_proj (256 × 512), enorm, hnorm and the final norm (3 × 256), and the
    // module's own copy of the word embedding (1,024 × 256): rank 1 does not
    // hold the first stage.
    const Bytes output = (1024 * 256 + 256) * 2;
    const Bytes module = (256 * 512 + 3 * 256 + 1024 * 256) * 2;
    CHECK(test::entryBytes(l0.ranks[1], Category::Weights, "Output layer and final norm") == output);
    CHECK(test::entryBytes(l1.ranks[1], Category::Weights, "Output layer, final norm and MTP projection")
          == output + module);
    CHECK(test::entryBytes(l1.ranks[0], Category::Weights, "Embeddings")
          == test::entryBytes(l0.ranks[0], Category::Weights, "Embeddings"));
}

TEST_CASE("Multi-token prediction keeps its norms' inputs, eh_proj's input and a second loss per micro-batch",
          "[mtp][activations]")
{
    const Config without = configFrom(smallDoc());
    const Config with = configFrom(smallDoc(), {"model.mtp_num_layers=1"});
    Bytes before = 0, after = 0;
    for (const SavedTensor &t : stageActivations(without).last)
        before += t.bytes;
    for (const SavedTensor &t : stageActivations(with).last)
        after += t.bytes;
    // s·b = 512 tokens, h = 256, 2-byte activations, fp32 rstd per token:
    // enorm, hnorm and the final norm 3 × (2·512·256 + 4·512), eh_proj's
    // concatenated input 2·512·512, the output layer's input 2·512·256 and
    // the loss's fp32 softmax 4·512·1,024.
    CHECK(after - before == 3 * (2 * 512 * 256 + 4 * 512) + 2 * 512 * 512 + 2 * 512 * 256 + 4 * 512 * 1024);
}

TEST_CASE("Serving runs the decoder alone: multi-token prediction adds no weights", "[mtp][inference]")
{
    nlohmann::json doc = smallDoc();
    doc["inference"] = nlohmann::json::object();
    const InferenceLedger a = computeInference(configFrom(doc));
    const InferenceLedger b = computeInference(configFrom(doc, {"model.mtp_num_layers=1"}));
    REQUIRE(a.ranks.size() == b.ranks.size());
    for (std::size_t r = 0; r < a.ranks.size(); ++r)
        CHECK(a.ranks[r].device_total_bytes == b.ranks[r].device_total_bytes);
}
