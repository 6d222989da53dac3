// SPDX-License-Identifier: MIT
// Korthikanti et al. 2022: Table 2's per-layer closed forms must come out of
// the per-tensor account as special cases, and Figure 1 through the ledger.
#include "core/model/activations.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

// A GPT layer as the paper counts it: unfused attention, dropout 0.1 with
// 1-byte masks, LayerNorm statistics ignored.
Config gptLayer(std::int64_t s, std::int64_t b, std::int64_t h, std::int64_t a, std::int64_t t, bool sp,
                const char *recompute)
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 8},
                    {"hidden_size", h},
                    {"num_attention_heads", a},
                    {"vocab_size", 51200},
                    {"max_position_embeddings", s},
                    {"attention_dropout", 0.1},
                    {"hidden_dropout", 0.1}};
    doc["training"] = {{"seq_length", s}, {"micro_batch_size", b}};
    doc["parallelism"] = {{"tensor_model_parallel_size", t}, {"sequence_parallel", sp}};
    doc["strategy"] = {{"flash_attention", false}, {"norm_stats_dtype", "none"}, {"recompute_granularity", recompute}};
    return configFrom(doc);
}

Bytes stored(const Config &c)
{
    return layerActivations(c, false).kept;
}

} // namespace

TEST_CASE("Korthikanti Table 2: per-layer activations are sums of the per-tensor account", "[activations][reference]")
{
    // Shapes where every closed form is an exact integer of bytes.
    const auto [s, b, h, a, t] = GENERATE(
        table<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>({{2048, 4, 6144, 64, 8},
                                                                                     {2048, 1, 12288, 96, 8},
                                                                                     {4096, 1, 4096, 32, 1},
                                                                                     {2048, 2, 8192, 64, 4},
                                                                                     {1024, 8, 2048, 16, 2}}));
    CAPTURE(s, b, h, a, t);
    const std::int64_t sbh = s * b * h;
    const std::int64_t scores = 5 * a * s * s * b; // 5as^2b

    SECTION("no parallelism: sbh(34 + 5as/h)")
    {
        CHECK(stored(gptLayer(s, b, h, a, 1, false, "none")) == 34 * sbh + scores);
    }
    SECTION("TP: sbh(10 + 24/t + 5as/(ht))")
    {
        CHECK(stored(gptLayer(s, b, h, a, t, false, "none")) == 10 * sbh + 24 * sbh / t + scores / t);
    }
    SECTION("TP + SP: sbh(34/t + 5as/(ht))")
    {
        if (t > 1)
            CHECK(stored(gptLayer(s, b, h, a, t, true, "none")) == 34 * sbh / t + scores / t);
    }
    SECTION("TP + selective recompute: sbh(10 + 24/t)")
    {
        CHECK(stored(gptLayer(s, b, h, a, t, false, "selective")) == 10 * sbh + 24 * sbh / t);
    }
    SECTION("TP + SP + selective recompute: sbh 34/t")
    {
        if (t > 1)
            CHECK(stored(gptLayer(s, b, h, a, t, true, "selective")) == 34 * sbh / t);
    }
    SECTION("full recompute keeps the layer input: 2sbh, /t with SP")
    {
        CHECK(layerActivations(gptLayer(s, b, h, a, t, false, "full"), false).checkpoint == 2 * sbh);
        if (t > 1)
            CHECK(layerActivations(gptLayer(s, b, h, a, t, true, "full"), false).checkpoint == 2 * sbh / t);
    }
}

TEST_CASE("Korthikanti's breakdown: attention 11sbh + 5as^2b, MLP 19sbh, LayerNorms 4sbh", "[activations][reference]")
{
    const std::int64_t s = 2048, b = 1, h = 4096, a = 32;
    const LayerActivations la = layerActivations(gptLayer(s, b, h, a, 1, false, "none"), false);
    Bytes attention = 0, mlp = 0, norms = 0;
    for (const SavedTensor &st : la.tensors) {
        if (st.name.rfind("attention", 0) == 0)
            attention += st.bytes;
        else if (st.name.rfind("mlp", 0) == 0)
            mlp += st.bytes;
        else if (st.name.find("norm") != std::string::npos)
            norms += st.bytes;
        else
            FAIL("unexpected tensor " << st.name);
    }
    CHECK(attention == 11 * s * b * h + 5 * a * s * s * b);
    CHECK(mlp == 19 * s * b * h);
    CHECK(norms == 4 * s * b * h);
    CHECK(la.attentionCore == 5 * a * s * s * b);
}

TEST_CASE("Korthikanti Figure 1 through the ledger (GiB, first pipeline stage)", "[ledger][reference]")
{
    for (const nlohmann::json &k : referenceCases()["korthikanti_figure1"]["cases"]) {
        const std::string model = k["model"];
        CAPTURE(model);
        const std::int64_t L = k["L"], h = k["h"], t = k["t"], p = k["p"], m = k["m"];
        nlohmann::json doc = emptyDoc();
        doc["model"] = model;
        doc["training"] = {
            {"seq_length", k["s"]}, {"micro_batch_size", k["b"]}, {"global_batch_size", std::int64_t(k["b"]) * p * 8}};
        doc["parallelism"] = {{"tensor_model_parallel_size", t},
                              {"pipeline_model_parallel_size", p},
                              {"virtual_pipeline_model_parallel_size", m}};
        doc["strategy"] = {{"flash_attention", false}, {"norm_stats_dtype", "none"}};
        const Config tpOnly = configFrom(doc);
        const Ledger ledger = computeLedger(tpOnly);
        const RankLedger &first = ledger.ranks.front();

        // Model states: 18 bytes on 12 L h^2 / (t p) parameters. Our layers also
        // carry biases and LayerNorms (13h per layer): within 0.1 %.
        const double paperStates = 18.0 * 12.0 * L * h * h / static_cast<double>(t * p);
        CHECK(paperStates / kGiB == Approx(double(k["model_states_gib"])).epsilon(1e-9));
        CHECK(modelStatesOf(first, "Transformer layers") / kGiB == Approx(double(k["model_states_gib"])).epsilon(1e-3));

        // Activations of the transformer layers: exact to the byte.
        const Bytes act = entryBytes(first, Category::Activations, "Transformer layers");
        CHECK(static_cast<double>(act) / kGiB == Approx(double(k["act_tp_gib"])).epsilon(1e-12));

        const Config sel
            = configFrom(doc, {"parallelism.sequence_parallel=true", "strategy.recompute_granularity=selective"});
        const Bytes actSel = entryBytes(computeLedger(sel).ranks.front(), Category::Activations, "Transformer layers");
        CHECK(static_cast<double>(actSel) / kGiB == Approx(double(k["act_tp_sp_selective_gib"])).epsilon(1e-12));

        // With the default fp32 LayerNorm statistics the figure moves by well under 0.1 %.
        const Config withStats = configFrom(doc, {"strategy.norm_stats_dtype=fp32"});
        const Bytes actStats
            = entryBytes(computeLedger(withStats).ranks.front(), Category::Activations, "Transformer layers");
        CHECK(actStats > act);
        CHECK(static_cast<double>(actStats) / kGiB == Approx(double(k["act_tp_gib"])).epsilon(1e-3));
    }
}

TEST_CASE("Seed 002 exercise 1: sbh x 194 per layer, 82 % attention, 0.57 GB selective", "[activations][reference]")
{
    const nlohmann::json &ex = referenceCases()["seed_002_exercise_1"];
    const std::int64_t s = ex["s"], b = ex["b"], h = ex["h"], a = ex["a"];
    const Config c = gptLayer(s, b, h, a, 1, false, "none");
    const LayerActivations la = layerActivations(c, false);
    CHECK(la.total == std::int64_t(ex["coefficient"]) * s * b * h);
    CHECK(la.total / kGB == Approx(double(ex["layer_gb"])).epsilon(0.005));
    CHECK(double(la.attentionCore) / double(la.total) == Approx(double(ex["attention_share"])).epsilon(0.01));
    CHECK((la.total - la.attentionCore) / kGB == Approx(double(ex["selective_gb"])).epsilon(0.01));
}

TEST_CASE("Seed 002: GPT-3 175B on 64 GPUs, first-stage activations and model states (GB)", "[ledger][reference]")
{
    const nlohmann::json &ref = referenceCases()["seed_002_gpt3"];
    const Ledger tp = computeLedger(scenario("gpt-3-175b-64gpus-tp-only"));
    const Ledger sel = computeLedger(scenario("gpt-3-175b-64gpus-tp-sp-selective"));
    CHECK(entryBytes(tp.ranks[0], Category::Activations, "Transformer layers") / kGB
          == Approx(double(ref["first_stage_act_tp_gb"])).epsilon(0.005));
    CHECK(entryBytes(sel.ranks[0], Category::Activations, "Transformer layers") / kGB
          == Approx(double(ref["first_stage_act_tp_sp_selective_gb"])).epsilon(0.005));
    // 16 x 174e9 / 64: the middle ranks hold only transformer layers.
    CHECK(modelStatesOf(tp.ranks[3], "Transformer layers") / kGB
          == Approx(double(ref["model_states_gb"])).epsilon(0.005));
    CHECK(tp.total_parameters == Approx(double(ref["parameters"])).epsilon(0.005));
    CHECK_FALSE(tp.ranks[0].fits);
    CHECK(sel.fits());
}
