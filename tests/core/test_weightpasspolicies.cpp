// SPDX-License-Identifier: MIT
// What a deferred weight pass (W of the zero-bubble schedules, Qi et al. 2023;
// DualPipe, deepseek-ai/DualPipe) holds from its B to its end when
// strategy.tensor_policies decide the fate of the linear layers' inputs: W
// computes dW = Xᵀ·dY, so it needs each input X as the backward had it — the
// FP8 copy a quantize_fp8 rule stored (1 byte an element and an fp32 scale per
// 128-element block, core/model/tensorpolicy.h), the copy an offload rule brought
// back, the whole tensor a recompute rule rebuilt — beside the 16-bit output
// gradients. Counted by hand on the Llama-2-7B shape.
#include "core/ledger/ledger.h"
#include "core/model/activations.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

namespace {

// Llama-2-7B's shape (h = 4096, a = g = 32, d = 128, SwiGLU f = 11008, bf16),
// s = 2048, b = 1, t = 1, ZB-H1 over p = 4 stages of 8 layers, 8 micro-batches.
Config llamaZbH1(const nlohmann::json &policies)
{
    nlohmann::json doc = test::scenarioDoc("seed-000-7b-a-plain");
    doc["strategy"]["tensor_policies"] = policies;
    return test::configFrom(doc, {"parallelism.pipeline_model_parallel_size=4", "parallelism.pipeline_schedule=zb-h1",
                                  "training.global_batch_size=8", "strategy.flash_attention=true",
                                  "model.attention_dropout=0", "model.hidden_dropout=0"});
}

// Per layer, in bytes, with A = 2 and s·b = 2048 tokens:
constexpr Bytes kTokens = 2048;
constexpr Bytes kQkvInput = 2 * kTokens * 4096; // attention.qkv.input, h wide: 16,777,216
constexpr Bytes kProjInput = 2 * kTokens * 32 * 128; // attention.proj.input, a·d wide: 16,777,216
constexpr Bytes kFc1Input = 2 * kTokens * 4096; // mlp.fc1.input, h wide: 16,777,216
constexpr Bytes kFc2Input = 2 * kTokens * 11008; // mlp.fc2.input, f wide: 45,088,768
// Output gradients, 16-bit: qkv (a + 2g)·d = 12,288, proj h = 4,096, fc1 (gate
// and up) 2f = 22,016, fc2 h = 4,096: 42,496 per token.
constexpr Bytes kGrads = 2 * kTokens * (96 * 128 + 4096 + 2 * 11008 + 4096); // 174,063,616
// A quantize_fp8 copy of n 16-bit elements: n bytes + ⌈n/128⌉ fp32 scales.
constexpr Bytes fp8Copy(Bytes bytes16)
{
    const Bytes n = bytes16 / 2;
    return n + (n + 127) / 128 * 4;
}

} // namespace

TEST_CASE("A deferred W holds each linear input as its tensor policy left it for the backward",
          "[activations][zb][policy]")
{
    STATIC_REQUIRE(fp8Copy(kFc1Input) == 8'388'608 + 65'536 * 4); // 8,650,752
    STATIC_REQUIRE(fp8Copy(kFc2Input) == 22'544'384 + 176'128 * 4); // 23,248,896
    const Bytes stored = kQkvInput + kProjInput + kFc1Input + kFc2Input + kGrads; // 269,484,032

    SECTION("stored: every input at its 16-bit size")
    {
        CHECK(layerActivations(llamaZbH1(nlohmann::json::object()), false, false).weightPass == stored);
    }
    SECTION("quantize_fp8 without an FP8 recipe: W holds the FP8 copy, not the 16-bit input")
    {
        const Config c = llamaZbH1({{"mlp.fc1.input", "quantize_fp8"}});
        CHECK(layerActivations(c, false, false).weightPass == stored - kFc1Input + fp8Copy(kFc1Input));
    }
    SECTION("offload: the input comes back for the backward and W holds it as it came back")
    {
        CHECK(layerActivations(llamaZbH1({{"mlp.fc2.input", "offload"}}), false, false).weightPass == stored);
        const Config c = llamaZbH1({{"mlp.fc2.input", "quantize_fp8+offload"}});
        CHECK(layerActivations(c, false, false).weightPass == stored - kFc2Input + fp8Copy(kFc2Input));
    }
    SECTION("recompute: rebuilt in the backward, held whole until W")
    {
        const Config c = llamaZbH1({{"attention.*", "recompute"}, {"mlp.fc2.input", "recompute"}});
        CHECK(layerActivations(c, false, false).weightPass == stored);
    }
}

TEST_CASE("ZB-H1's ledger row and timeline count the queued W's FP8 and offloaded inputs by hand",
          "[ledger][timeline][zb][policy]")
{
    // quantize_fp8 on fc1's input, offload on fc2's: one layer's W operands are
    //   16,777,216 (qkv) + 16,777,216 (proj) + 8,650,752 (fc1, FP8 + scales)
    //   + 45,088,768 (fc2, back from the host) + 174,063,616 (dY) = 261,357,568,
    // and a stage's 8 layers' 2,090,860,544 bytes.
    const Config c = llamaZbH1({{"mlp.fc1.input", "quantize_fp8"}, {"mlp.fc2.input", "offload"}});
    const Bytes layer = kQkvInput + kProjInput + fp8Copy(kFc1Input) + kFc2Input + kGrads;
    REQUIRE(layer == 261'357'568);
    const Bytes chunk = 8 * layer;

    const Timeline tl = simulateIteration(c);
    std::size_t queued = 0;
    for (const RankTimeline &r : tl.ranks)
        for (const Lifetime &l : r.lifetimes)
            if (l.kind == LifetimeKind::WeightPassInputs) {
                ++queued;
                CHECK(l.bytes == chunk);
            }
    CHECK(queued > 0);
    // ZB-H1 holds back rank r's first r Ws (Qi et al. 2023, Figure 3): the last
    // rank's row is a whole number of chunks' W operands, at least one.
    const Ledger l = computeLedger(c);
    const Bytes row = test::entryBytes(l.ranks[3], Category::Activations, "Inputs of deferred weight passes");
    CHECK(row >= chunk);
    CHECK(row % chunk == 0);
}

TEST_CASE("On DeepSeek-V3's MLA and MoE layers the queued W follows the router's and the experts' input policies",
          "[activations][dualpipe][policy]")
{
    // The DualPipe scenario recomputes moe.router.input (h = 7168 wide, 16-bit:
    // the router is not an FP8 GEMM), so W holds it whole: 2 · 4096 tokens ·
    // 7168 = 58,720,256 bytes. Quantised instead, W holds 29,360,128 bytes and
    // 29,360,128 / 128 = 229,376 fp32 scales: 30,277,632, 28,442,624 less.
    const auto moeW = [](const std::string &routerFate, const std::string &expertsFate) {
        nlohmann::json doc = test::scenarioDoc("deepseek-v3-2048xh100-dualpipe");
        doc["strategy"]["tensor_policies"]["moe.router.input"] = routerFate;
        doc["strategy"]["tensor_policies"]["moe.experts.fc2.input"] = expertsFate;
        return layerActivations(test::configFrom(doc), true, false).weightPass;
    };
    const Bytes scenarioW = moeW("recompute", "recompute");
    CHECK(scenarioW - moeW("quantize_fp8", "recompute") == 58'720'256 - (29'360'128 + 229'376 * 4));
    // The experts' fc2 input is already the blockwise recipe's FP8 copy (1 + 4/128
    // bytes an element): a quantize_fp8 or offload rule leaves what W holds as it is.
    CHECK(moeW("recompute", "quantize_fp8") == scenarioW);
    CHECK(moeW("recompute", "offload") == scenarioW);
}

TEST_CASE(
    "Without an FP8 recipe a queued W on an MoE layer holds the routed experts' input at 16 bits unless quantised",
    "[activations][dualpipe][policy]")
{
    // DeepSeek-V3's MoE layer with training.fp8_recipe = none: the routed
    // experts' fc2 input is 16-bit. Balanced routing sends each rank's experts
    // top-k = 8 copies of its s·b = 4096 tokens (t = 1, no sequence parallel),
    // moe_ffn_hidden_size = 2048 wide: 2 · 4096 · 8 · 2048 = 134,217,728 bytes.
    // A quantize_fp8 rule leaves W the FP8 copy, 67,108,864 bytes and
    // 67,108,864 / 128 = 524,288 fp32 scales: 69,206,016, so 65,011,712 less.
    const auto moeW = [](const std::string &expertsFate) {
        nlohmann::json doc = test::scenarioDoc("deepseek-v3-2048xh100-dualpipe");
        doc["training"]["fp8_recipe"] = "none";
        // Without FP8 the attention output is the projection's input, one tensor, and no FP8 gradient is kept.
        doc["strategy"]["tensor_policies"].erase("attention.output");
        doc["strategy"]["deferred_wgrad_grad"] = "activation";
        doc["strategy"]["tensor_policies"]["moe.experts.fc2.input"] = expertsFate;
        return layerActivations(test::configFrom(doc), true, false).weightPass;
    };
    constexpr Bytes kInput16 = 2LL * 4096 * 8 * 2048;
    constexpr Bytes kInputFp8 = kInput16 / 2 + kInput16 / 2 / 128 * 4;
    STATIC_REQUIRE(kInput16 == 134'217'728);
    STATIC_REQUIRE(kInputFp8 == 69'206'016);
    const Bytes stored = moeW("store");
    CHECK(stored - moeW("quantize_fp8") == kInput16 - kInputFp8);
    CHECK(stored - moeW("quantize_fp8+offload") == kInput16 - kInputFp8);
    // Offloaded, it comes back whole for the backward; recomputed, it is rebuilt whole.
    CHECK(moeW("offload") == stored);
    CHECK(moeW("recompute") == stored);
}
