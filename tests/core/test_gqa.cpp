// SPDX-License-Identifier: MIT
// Grouped-query attention without FlashAttention: the batched matmuls save K
// and V expanded to every head, but under selective recompute the expansion
// happens inside the checkpointed core (Megatron's DotProductAttention
// repeat_interleave, transformers' repeat_kv), so the checkpoint keeps K and V
// at their group width and rebuilds the expanded copies with the scores.
#include "core/model/activations.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

namespace {

// Llama-2-70B (64 query heads in 8 groups of head size 128), t = 8, one
// 4,096-token sequence, bf16, unfused attention.
Config llama70bUnfused(const char *recompute)
{
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-2-70b";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}};
    doc["parallelism"] = {{"tensor_model_parallel_size", 8}, {"data_parallel_size", 1}};
    doc["strategy"] = {{"flash_attention", false}, {"recompute_granularity", recompute}};
    return test::configFrom(doc);
}

const SavedTensor *tensor(const LayerActivations &la, const std::string &name)
{
    for (const SavedTensor &s : la.tensors)
        if (s.name == name)
            return &s;
    return nullptr;
}

} // namespace

TEST_CASE("GQA without FlashAttention: K and V at group width under selective recompute, expanded without it",
          "[activations][gqa]")
{
    const Bytes perHead = 2 * 4096 * 128; // bytes of one head's K (or V) for the sequence, bf16
    const Config plain = llama70bUnfused("none");
    REQUIRE(plain.model.queryGroups() == 8);
    const LayerActivations kept = layerActivations(plain, false, true);
    // No recompute: the matmuls' saved K and V have all 64 heads, 8 on each rank.
    REQUIRE(tensor(kept, "attention.k") != nullptr);
    CHECK(tensor(kept, "attention.k")->bytes == 64 / 8 * perHead);
    CHECK(tensor(kept, "attention.v")->bytes == 64 / 8 * perHead);
    CHECK(tensor(kept, "attention.k_expanded") == nullptr);

    // Selective: the checkpoint's K and V inputs have the 8 groups, one on each rank.
    const Config selective = llama70bUnfused("selective");
    const LayerActivations sel = layerActivations(selective, false, true);
    REQUIRE(tensor(sel, "attention.k") != nullptr);
    CHECK(tensor(sel, "attention.k")->bytes == 8 / 8 * perHead);
    CHECK(tensor(sel, "attention.v")->bytes == 8 / 8 * perHead);
    CHECK_FALSE(tensor(sel, "attention.k")->attentionCore);
    // The expanded copies are the core's, rebuilt in the backward.
    REQUIRE(tensor(sel, "attention.k_expanded") != nullptr);
    CHECK(tensor(sel, "attention.k_expanded")->attentionCore);
    CHECK(tensor(sel, "attention.v_expanded")->bytes == 64 / 8 * perHead);
    // Kept under selective: everything of the plain layer but the core, with
    // K and V at group width instead of expanded (7 heads each fewer per rank).
    CHECK(sel.kept == kept.kept - kept.attentionCore - 2 * (64 - 8) / 8 * perHead);
}
