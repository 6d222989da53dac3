// SPDX-License-Identifier: MIT
// strategy.tensor_policies: a fate per saved tensor (store, recompute,
// offload, quantize_fp8, quantize_fp8+offload), checked against Korthikanti
// et al.'s per-tensor counts (sbh(34 + 5as/h) for a GPT layer without tensor
// parallelism), fp8 with block scales counted by hand, and the per-tensor
// planner's frontier with quantise as a fate.
#include "core/check/validate.h"
#include "core/config/efficiency.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "core/model/activations.h"
#include "core/model/tensorpolicy.h"
#include "core/planner/tensorplan.h"
#include "core/reports/report.h"
#include "core/time/steptime.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;

namespace {

// GPT-3's layer (h = 12288, a = 96, s = 2048, b = 1) without tensor
// parallelism or FlashAttention: 34·sbh + 5·a·s²·b bytes per layer.
Config gpt3(const std::vector<std::string> &sets = {})
{
    std::vector<std::string> all
        = {"parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1"};
    all.insert(all.end(), sets.begin(), sets.end());
    return test::scenario("gpt-3-175b-64gpus-tp-only", all);
}

constexpr Bytes kSbh = 2048LL * 1 * 12288;

Config withPolicies(Config c, std::vector<TensorPolicy> policies)
{
    c.strategy.tensor_policies = std::move(policies);
    return c;
}

const SavedTensor &tensorNamed(const LayerActivations &la, const std::string &name)
{
    for (const SavedTensor &s : la.tensors)
        if (s.name == name)
            return s;
    FAIL("no tensor " << name);
    return la.tensors.front();
}

bool hasError(const Problems &ps, const std::string &path)
{
    for (const Problem &p : ps)
        if (p.path == path && p.severity == Problem::Severity::Error)
            return true;
    return false;
}

} // namespace

TEST_CASE("tensor policies: an exact name beats a glob, the longer glob beats the shorter", "[tensorpolicy]")
{
    CHECK(globMatch("attention.*", "attention.softmax_output"));
    CHECK(globMatch("*", "mlp.fc1.output"));
    CHECK(globMatch("mlp.fc?.input", "mlp.fc2.input"));
    CHECK_FALSE(globMatch("mlp.fc?.input", "mlp.fc1.output"));
    CHECK_FALSE(globMatch("attention.*", "mlp.fc1.output"));
    const std::vector<TensorPolicy> rules
        = {{"*", TensorFate::Offload}, {"mlp.*", TensorFate::Recompute}, {"mlp.fc1.output", TensorFate::QuantizeFp8}};
    CHECK(policyFor(rules, "mlp.fc1.output") == TensorFate::QuantizeFp8);
    CHECK(policyFor(rules, "mlp.fc2.input") == TensorFate::Recompute);
    CHECK(policyFor(rules, "attention.q") == TensorFate::Offload);
    CHECK_FALSE(policyFor({{"mlp.*", TensorFate::Recompute}}, "attention.q").has_value());
}

TEST_CASE("tensor policies: recomputing the attention core by name is Megatron's selective recompute", "[tensorpolicy]")
{
    // Korthikanti et al. 2022, Table 2: selective recompute keeps 34·sbh of
    // the 34·sbh + 5·a·s²·b, dropping softmax output, its dropout mask and output.
    const Config none = gpt3({"strategy.norm_stats_dtype=none"});
    const Config byName = withPolicies(none, {{"attention.softmax_output", TensorFate::Recompute},
                                              {"attention.softmax_dropout_mask", TensorFate::Recompute},
                                              {"attention.dropout_output", TensorFate::Recompute}});
    const LayerActivations la = layerActivations(byName, false, true);
    CHECK(la.total == 34 * kSbh + 5LL * 96 * 2048 * 2048);
    CHECK(la.kept == 34 * kSbh);
    CHECK(la.recomputed == 5LL * 96 * 2048 * 2048);
    Config selective = none;
    selective.strategy.recompute_granularity = RecomputeGranularity::Selective;
    CHECK(layerActivations(selective, false, false).kept == la.kept);
    // A policy refines the coarse knob: under selective, storing the softmax output keeps it.
    const Config refined = withPolicies(selective, {{"attention.softmax_output", TensorFate::Store}});
    CHECK(layerActivations(refined, false, false).kept == 34 * kSbh + 2LL * 96 * 2048 * 2048);
    CHECK(validate(byName).empty());
}

TEST_CASE("tensor policies: fp8 activations are one byte per element plus one scale per block", "[tensorpolicy]")
{
    // GeLU's input, mlp.fc1.output: s·b·4h elements of 2 bytes = 8·sbh bytes.
    const Config base = gpt3();
    const Config q = withPolicies(base, {{"mlp.fc1.output", TensorFate::QuantizeFp8}});
    const LayerActivations la = layerActivations(q, false, true);
    const Bytes elements = 4 * kSbh;
    // fp8 e4m3: 1 B each, one fp32 scale per 128 elements (DeepSeek-V3's 1×128 tiles).
    const Bytes fp8 = elements + elements / 128 * 4;
    CHECK(tensorNamed(la, "mlp.fc1.output").placed == fp8);
    CHECK(la.quantizedFrom == 8 * kSbh);
    CHECK(la.quantized == fp8);
    CHECK(la.kept == layerActivations(base, false, false).kept - 8 * kSbh + fp8);
    // 1 + 4/128 = 1.03125 bytes per element instead of 2: 48 % saved.
    CHECK(double(fp8) / double(8 * kSbh) == Approx(1.03125 / 2));
    // A power-of-two (E8M0) byte per 32 elements, as MXFP8: 1 + 1/32 bytes per element.
    Config mx = q;
    mx.strategy.activation_quant_scale_dtype = QuantScale::E8M0;
    mx.strategy.activation_quant_block_size = 32;
    CHECK(tensorNamed(layerActivations(mx, false, true), "mlp.fc1.output").placed == elements + elements / 32);
    // 1-byte dropout masks and fp32 norm statistics keep their size.
    const Config masks
        = withPolicies(base, {{"*dropout_mask", TensorFate::QuantizeFp8}, {"*.stats", TensorFate::QuantizeFp8}});
    const LayerActivations lm = layerActivations(masks, false, true);
    CHECK(lm.kept == layerActivations(base, false, false).kept);
    CHECK(tensorNamed(lm, "mlp.dropout_mask").placed == kSbh);
    CHECK(tensorNamed(lm, "input_norm.stats").placed == 2 * 4 * 2048);
}

TEST_CASE("tensor policies: E5M6 activations are 12 bits per element plus one scale per block", "[tensorpolicy]")
{
    // DeepSeek-V3 (report §3.3.3) caches the attention output projection's
    // input in E5M6: 1 sign, 5 exponent and 6 mantissa bits, packed, with the
    // 1×128 tiles' scales. GPT-3's attention output is s·b·h elements.
    const Config q = withPolicies(gpt3(), {{"attention.proj.input", TensorFate::QuantizeE5M6}});
    const LayerActivations la = layerActivations(q, false, true);
    const Bytes elements = kSbh;
    CHECK(tensorNamed(la, "attention.proj.input").placed == elements * 12 / 8 + elements / 128 * 4);
    CHECK(la.quantizedFrom == 2 * kSbh);
    // Named in a preset, and written back.
    nlohmann::json doc = test::scenarioDoc("gpt-3-175b-64gpus-tp-only");
    doc["strategy"]["tensor_policies"] = {{"attention.proj.input", "quantize_e5m6"}};
    const auto c = presetFromJson(doc).config;
    REQUIRE(c.has_value());
    CHECK(c->strategy.tensor_policies.front().fate == TensorFate::QuantizeE5M6);
    CHECK(presetToJson(*c)["strategy"]["tensor_policies"]["attention.proj.input"] == "quantize_e5m6");
}

TEST_CASE("tensor policies: bytes move, they do not vanish", "[tensorpolicy]")
{
    const Config c = withPolicies(gpt3(), {{"attention.*", TensorFate::Recompute},
                                           {"attention.q", TensorFate::QuantizeFp8Offload},
                                           {"mlp.fc2.input", TensorFate::Offload},
                                           {"mlp.fc1.output", TensorFate::QuantizeFp8},
                                           {"input_norm.input", TensorFate::Offload}});
    const LayerActivations la = layerActivations(c, false, true);
    // Everything saved is kept, rebuilt, sent to the host, or shrunk by quantisation.
    CHECK(la.kept + la.recomputed + la.offloaded + (la.quantizedFrom - la.quantized) == la.total);
    Bytes placed = 0;
    for (const SavedTensor &s : la.tensors)
        placed += s.placed;
    CHECK(placed == la.kept + la.offloaded);
    // A glob never recomputes the layer's own input: nothing in the layer could rebuild it.
    Config glob = withPolicies(gpt3(), {{"*", TensorFate::Recompute}});
    CHECK(tensorNamed(layerActivations(glob, false, true), "input_norm.input").fate == TensorFate::Store);
}

TEST_CASE("tensor policies: the ledger keeps, offloads and moves the bytes, and says so", "[tensorpolicy]")
{
    // Llama-3-70B on 128 H100s (t = 8, p = 4, SP): mlp.fc2.input is s·b·f/t
    // elements (f = 28672) of 2 bytes.
    const Config base = test::scenario("llama-3-70b-128xh100");
    const Config c = withPolicies(base, {{"mlp.fc2.input", TensorFate::Offload}});
    REQUIRE(validate(c).empty());
    const Ledger before = computeLedger(base), after = computeLedger(c);
    const std::int64_t s = base.training.seq_length, b = base.training.micro_batch_size;
    const Bytes fc2 = 2 * s * b * 28672 / 8;
    for (std::size_t r = 0; r < after.ranks.size(); ++r) {
        const RankLedger &rb = before.ranks[r], &ra = after.ranks[r];
        const Bytes hostRow
            = test::entryBytes(ra, Category::Activations, "Tensors offloaded by tensor_policies", Placement::Host);
        // Every in-flight micro-batch of every layer on the rank leaves its fc2 input on the host.
        CHECK(hostRow == static_cast<Bytes>(ra.in_flight_microbatches * double(ra.layers)) * fc2);
        CHECK(test::entryBytes(ra, Category::Activations, "Offloaded tensors in transit") == 2 * fc2);
        CHECK(ra.device_total_bytes == rb.device_total_bytes - hostRow + 2 * fc2);
        CHECK(ra.host_total_bytes == rb.host_total_bytes + hostRow);
    }
    CHECK(after.peak_bytes < before.peak_bytes);
    bool explained = false;
    for (const std::string &line : after.choices)
        explained = explained || line.find("mlp.fc2.input → offload") != std::string::npos;
    CHECK(explained);
    // The markdown's per-layer table gives each tensor's fate; the JSON lists them.
    const std::string md = ledgerToMarkdown(c, after);
    CHECK(md.find("| mlp.fc2.input | ") != std::string::npos);
    CHECK(md.find(" | offload | ") != std::string::npos);
    const auto json = ledgerToJson(c, after);
    bool listed = false;
    for (const auto &t : json["layer_tensors"])
        listed = listed || (t["name"] == "mlp.fc2.input" && t["fate"] == "offload" && t["placed_bytes"] == fc2);
    CHECK(listed);
}

TEST_CASE("tensor policies: the step time pays the quantise passes at the achieved HBM bandwidth", "[tensorpolicy]")
{
    const Config base = gpt3();
    const Config q = withPolicies(base, {{"mlp.fc1.output", TensorFate::QuantizeFp8}});
    // Forward: read 8·sbh 16-bit bytes, write the fp8 copy; backward: the reverse.
    const Bytes fp8 = 4 * kSbh + 4 * kSbh / 128 * 4;
    const double pass = double(8 * kSbh + fp8);
    const double rate = base.hardware.hbm_bytes_per_s * efficiencyAt(base.hardware.hbm_efficiency, pass);
    const double perLayer = 2 * pass / rate;
    const StepTime t0 = estimateStepTime(base), t1 = estimateStepTime(q);
    const StepInputs in = stepInputsOf(base);
    CHECK(t1.recompute - t0.recompute == Approx(perLayer * in.layersOnRank * in.microBatches).epsilon(1e-6));
}

TEST_CASE("tensor policies: the timeline shows offloaded tensors in transit and recomputed tensors rebuilt",
          "[tensorpolicy]")
{
    const Config base = test::scenario("llama-3-70b-128xh100");
    const Config c
        = withPolicies(base, {{"mlp.fc2.input", TensorFate::Offload}, {"mlp.fc1.output", TensorFate::Recompute}});
    const Timeline tl = simulateIteration(c);
    const Bytes fc2 = 2 * base.training.seq_length * base.training.micro_batch_size * 28672 / 8;
    const Bytes fc1 = 2 * fc2; // SwiGLU's gate and up
    // Selective recompute (the scenario's) rebuilds the attention core too:
    // FlashAttention's fp32 log-sum-exp, s·b·a/t values.
    const Bytes lse = 4 * base.training.seq_length * base.training.micro_batch_size * 64 / 8;
    // Each half's rebuilt tensors are a piece of their own: the MLP's are freed
    // as the MLP's backward ends, the attention's at the layer's end.
    bool transit = false, rebuiltMlp = false, rebuiltAttention = false;
    for (const Lifetime &l : tl.ranks.front().lifetimes) {
        transit = transit || (l.kind == LifetimeKind::TensorOffloadTransit && l.bytes == fc2);
        const bool rebuilt = l.kind == LifetimeKind::TensorRecompute;
        rebuiltMlp = rebuiltMlp || (rebuilt && l.piece == SavedPiece::Mlp && l.bytes == fc1);
        rebuiltAttention = rebuiltAttention || (rebuilt && l.piece == SavedPiece::Attention && l.bytes == lse);
    }
    CHECK(transit);
    CHECK(rebuiltMlp);
    CHECK(rebuiltAttention);
    CHECK(tl.ranks.front().peak_bytes < simulateIteration(base).ranks.front().peak_bytes);
}

TEST_CASE("tensor policies: bad rules are refused naming the field and the choices", "[tensorpolicy]")
{
    const Config base = gpt3();
    CHECK(hasError(validate(withPolicies(base, {{"mlp.fc3.output", TensorFate::Recompute}})),
                   "strategy.tensor_policies.mlp.fc3.output"));
    CHECK(hasError(validate(withPolicies(base, {{"input_norm.input", TensorFate::Recompute}})),
                   "strategy.tensor_policies.input_norm.input"));
    Config fp32 = withPolicies(base, {{"mlp.fc1.output", TensorFate::QuantizeFp8}});
    fp32.training.params_dtype = Dtype::FP32;
    CHECK(hasError(validate(fp32), "strategy.tensor_policies.mlp.fc1.output"));
    Config full = withPolicies(base, {{"mlp.fc1.output", TensorFate::Offload}});
    full.strategy.recompute_granularity = RecomputeGranularity::Full;
    CHECK(hasError(validate(full), "strategy.tensor_policies"));
    // A glob that matches nothing is only a warning.
    const Problems glob = validate(withPolicies(base, {{"moe.*", TensorFate::Recompute}}));
    REQUIRE(glob.size() == 1);
    CHECK(glob.front().severity == Problem::Severity::Warning);

    // In a preset: a fate that is not one of the five, and a list instead of an object.
    nlohmann::json doc = test::scenarioDoc("gpt-3-175b-64gpus-tp-only");
    doc["strategy"]["tensor_policies"] = {{"mlp.fc1.output", "squash"}};
    LoadResult bad = presetFromJson(doc);
    CHECK_FALSE(bad.config.has_value());
    REQUIRE_FALSE(bad.problems.empty());
    CHECK(bad.problems.front().path == "strategy.tensor_policies.mlp.fc1.output");
    CHECK(bad.problems.front().message.find("\"quantize_fp8+offload\"") != std::string::npos);
    doc["strategy"]["tensor_policies"] = nlohmann::json::array({"mlp.fc1.output"});
    bad = presetFromJson(doc);
    CHECK_FALSE(bad.config.has_value());
    REQUIRE_FALSE(bad.problems.empty());
    CHECK(bad.problems.front().path == "strategy.tensor_policies");
}

TEST_CASE("tensor policies: a preset writes them back as it read them", "[tensorpolicy]")
{
    nlohmann::json doc = test::scenarioDoc("gpt-3-175b-64gpus-tp-only");
    doc["strategy"]["tensor_policies"] = {{"attention.*", "recompute"}, {"mlp.fc1.output", "quantize_fp8+offload"}};
    doc["strategy"]["activation_quant_block_size"] = 32;
    doc["strategy"]["activation_quant_scale_dtype"] = "e8m0";
    const auto c = presetFromJson(doc).config;
    REQUIRE(c.has_value());
    REQUIRE(c->strategy.tensor_policies.size() == 2);
    const auto again = presetFromJson(presetToJson(*c)).config;
    REQUIRE(again.has_value());
    CHECK(*again == *c);
    CHECK(again->strategy.activation_quant_scale_dtype == QuantScale::E8M0);
}

TEST_CASE("tensor frontier: the dynamic programme finds the enumeration's frontier", "[tensorpolicy]")
{
    for (const char *hw : {"H100-SXM-80GB", "A100-SXM-80GB"}) {
        const LayerGraph g = layerGraph(gpt3({std::string("hardware=") + hw}));
        for (TensorCost cost : {TensorCost::Roofline, TensorCost::Flops}) {
            const auto enumerated = tensorFrontierEnumerated(g, cost, true);
            const auto dp = tensorFrontierOf(g, cost, {Fate::Store, Fate::Recompute, Fate::Offload});
            REQUIRE(dp.size() == enumerated.size());
            for (std::size_t i = 0; i < dp.size(); ++i) {
                CHECK(dp[i].deviceBytes == enumerated[i].deviceBytes);
                CHECK(dp[i].overhead == Approx(enumerated[i].overhead).epsilon(1e-12));
            }
        }
    }
}

TEST_CASE("tensor frontier: quantise as a fourth fate reaches cheaper points, and each is a preset", "[tensorpolicy]")
{
    const Config c = gpt3({"hardware=H100-SXM-80GB", "strategy.flash_attention=true"});
    const LayerGraph g = layerGraph(c);
    // Store / recompute against store / recompute / quantise: a GEMM output
    // costs its GEMM again to recompute, two memory passes to quantise.
    const auto three = tensorFrontier(g, TensorCost::Roofline, false);
    const auto five = tensorFrontier(g, TensorCost::Roofline, false, true);
    int better = 0;
    for (const TensorPlan &p : three) {
        CHECK(test::minOverheadAt(five, p.deviceBytes) <= p.overhead + 1e-12);
        better += test::minOverheadAt(five, p.deviceBytes) < p.overhead - 1e-9;
    }
    CHECK(better > 0);
    // The layer input, which no plan recomputes, may be quantised: fewer bytes than any store/recompute plan.
    CHECK(five.front().deviceBytes < three.front().deviceBytes);
    CHECK(five.front().deviceBytes == g.nodes[0].quantizedBytes);
    // With offload too, every plan of the five fates.
    const auto all = tensorFrontier(g, TensorCost::Roofline, true, true);
    for (const TensorPlan &p : tensorFrontier(g, TensorCost::Roofline, true))
        CHECK(test::minOverheadAt(all, p.deviceBytes) <= p.overhead + 1e-12);
    bool quantises = false;
    for (const TensorPlan &p : all) {
        for (Fate f : p.fates)
            quantises = quantises || quantizes(f);
        // Applied as a preset, the ledger keeps per layer what the planner said.
        const Config applied = withTensorPlan(c, g, p.fates);
        REQUIRE(validate(applied).empty());
        CHECK(layerActivations(applied, false, false).kept == p.deviceBytes);
        CHECK(layerActivations(applied, false, false).offloaded == p.offloadedBytes);
        const auto back = presetFromJson(presetToJson(applied)).config;
        REQUIRE(back.has_value());
        CHECK(back->strategy.tensor_policies == applied.strategy.tensor_policies);
    }
    CHECK(quantises);
}
