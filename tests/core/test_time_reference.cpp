// SPDX-License-Identifier: MIT
// The calibrated time model against published, measured iteration times
// (tests/data/time_reference, where every figure's source is recorded):
// Korthikanti et al. 2022 (measured end-to-end iteration times of 22B–1T GPT
// models on A100, full recompute vs sequence parallelism + selective
// recompute) and Narayanan et al. 2021 Table 1 (achieved TFLOP/s of 1.7B–1T
// GPT models on up to 3072 A100s; time = the paper's FLOPs / throughput). The
// A100 efficiency tables were set against the Korthikanti cases; the Narayanan
// cases are a held-out check. Target (issue 17): each within 10 %, the mean
// of the absolute errors within 5 %.
#include "core/time/steptime.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using nlohmann::json;

namespace {

const json &timeCases()
{
    static const json cases = [] {
        std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/time_reference/cases.json");
        return json::parse(in);
    }();
    return cases;
}

bool starts(const std::string &s, const char *prefix)
{
    return s.rfind(prefix, 0) == 0;
}

// The case as a user would write it: a GPT of the paper's shape (LayerNorm,
// GeLU MLP of 4h, learned positions, biases, tied embeddings, dropout 0.1,
// Megatron's unfused attention of the time) on the A100 built-in.
Config caseConfig(const json &c)
{
    const json &m = c["model"];
    const json &par = c["parallelism"];
    const std::string id = c["id"];
    const bool selective = id.find("seqsel") != std::string::npos;
    const bool narayanan = starts(id, "narayanan");
    const std::int64_t vocab = m["vocab"].is_null() ? 51200 : m["vocab"].get<std::int64_t>();
    json doc = test::emptyDoc();
    doc["model"] = {{"num_layers", m["layers"]},         {"hidden_size", m["hidden"]},
                    {"num_attention_heads", m["heads"]}, {"vocab_size", vocab},
                    {"normalization", "LayerNorm"},      {"position_embedding_type", "learned_absolute"}};
    doc["training"] = {{"seq_length", m["seq_length"]},
                       {"micro_batch_size", par["micro_batch"]},
                       {"global_batch_size", c["global_batch"]},
                       {"params_dtype", "fp16"}};
    doc["parallelism"]
        = {{"tensor_model_parallel_size", par["t"]},
           {"pipeline_model_parallel_size", par["p"]},
           {"virtual_pipeline_model_parallel_size", par["virtual_stages"].is_null() ? json(1) : par["virtual_stages"]},
           {"data_parallel_size", par["d"]},
           {"sequence_parallel", selective},
           {"zero_stage", 0}};
    doc["strategy"] = {{"recompute_granularity", selective ? "selective" : "full"},
                       {"recompute_method", "uniform"},
                       {"recompute_num_layers", 1},
                       {"flash_attention", false},
                       // PyTorch DDP (the smaller Table 1 runs) reduces buckets under the backward.
                       {"overlap_grad_reduce", narayanan && par["ddp_impl"] == "torch"},
                       // The Megatron-LM of 2021–22 had no overlap_p2p_comm and
                       // waited for each transfer: every send is exposed.
                       {"overlap_p2p_comm", false}};
    doc["hardware"] = "A100-SXM-80GB";
    return test::configFrom(doc);
}

double measuredSeconds(const json &c)
{
    if (c["measured"].contains("iteration_time_s"))
        return c["measured"]["iteration_time_s"];
    return c["derived"]["iteration_time_s"];
}

struct Outcome
{
    std::string id;
    double modelled, measured;
    double error() const { return modelled / measured - 1.0; }
};

std::vector<Outcome> outcomes(const char *prefix)
{
    std::vector<Outcome> out;
    for (const json &c : timeCases()["cases"]) {
        const std::string id = c["id"];
        if (!starts(id, prefix))
            continue;
        const Config config = caseConfig(c);
        out.push_back({id, estimateStepTime(config).total, measuredSeconds(c)});
    }
    return out;
}

void checkWithinTargets(const std::vector<Outcome> &cases, std::size_t expected)
{
    REQUIRE(cases.size() == expected);
    double sum = 0;
    for (const Outcome &o : cases) {
        INFO(o.id << ": modelled " << o.modelled << " s, measured " << o.measured << " s, error " << 100.0 * o.error()
                  << " %");
        CHECK(std::fabs(o.error()) <= 0.10);
        sum += std::fabs(o.error());
    }
    INFO("mean absolute error " << 100.0 * sum / double(cases.size()) << " %");
    CHECK(sum / double(cases.size()) <= 0.05);
}

} // namespace

TEST_CASE("time model: Korthikanti et al. 2022 measured iteration times, 22B to 1T on A100")
{
    checkWithinTargets(outcomes("korthikanti2022_"), 8);
}

TEST_CASE("time model: Narayanan et al. 2021 Table 1, 1.7B to 1T on up to 3072 A100 (held out)")
{
    checkWithinTargets(outcomes("narayanan2021_t1_"), 10);
}

TEST_CASE("time model: every A100 case together stays within the issue's targets")
{
    std::vector<Outcome> all = outcomes("korthikanti2022_");
    const std::vector<Outcome> held = outcomes("narayanan2021_t1_");
    all.insert(all.end(), held.begin(), held.end());
    checkWithinTargets(all, 18);
}

TEST_CASE("time model: selective recompute with SP saves what Korthikanti et al. measured")
{
    // The paper's point: full recompute costs ~30 % over SP + selective; the
    // measured ratios are 1.29 (22B), 1.32 (175B), 1.30 (530B), 1.32 (1T).
    // The model's ratios agree within 6 % (22B: 1.36, the largest gap).
    const std::vector<Outcome> cases = outcomes("korthikanti2022_");
    for (std::size_t i = 0; i + 1 < cases.size(); i += 2) {
        const Outcome &full = cases[i], &sel = cases[i + 1];
        REQUIRE(full.id.find("full") != std::string::npos);
        REQUIRE(sel.id.find("seqsel") != std::string::npos);
        INFO(full.id);
        CHECK(full.modelled / sel.modelled == Approx(full.measured / sel.measured).epsilon(0.06));
    }
}

TEST_CASE("time model: MFU of the measured times is the Megatron-LM README's")
{
    // Megatron-LM's README (for these four runs, data-parallel size one):
    // MFU 41.5 %, 51.4 %, 56.0 %, 56.3 % against 312 TFLOP/s. Our model FLOPs
    // over the measured time must give the same figures (the 22B differs by
    // 0.2 points in the README's own arithmetic, see tests/data).
    const std::vector<std::pair<std::string, double>> readme = {{"korthikanti2022_22b_seqsel", 0.415},
                                                                {"korthikanti2022_175b_seqsel", 0.514},
                                                                {"korthikanti2022_530b_seqsel", 0.560},
                                                                {"korthikanti2022_1t_seqsel", 0.563}};
    for (const auto &[id, mfu] : readme) {
        for (const json &c : timeCases()["cases"]) {
            if (c["id"] != id)
                continue;
            const Config config = caseConfig(c);
            const StepTime st = estimateStepTime(config);
            const double measuredMfu = st.modelFlopsPerGpu / (measuredSeconds(c) * 312e12);
            INFO(id << " MFU " << measuredMfu);
            CHECK(measuredMfu == Approx(mfu).margin(0.003));
            // And the modelled MFU is the same ratio over the modelled time.
            CHECK(st.mfu == Approx(st.modelFlopsPerGpu / (st.total * 312e12)));
        }
    }
}

namespace {

// Megatron-LM's README (H100, strong scaling): GPT-3 175B with a 131,072
// vocabulary, 4096-token sequences and batch 1152 throughout, with
// --overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap. The
// layouts are only in an image, so the tests try every split the model
// would fit.
struct LayoutMfu
{
    int t, p, v;
    double mfu;
};

std::vector<LayoutMfu> megatronReadmeGpt3(int gpus, const std::vector<int> &virtualStages)
{
    json doc = test::emptyDoc();
    doc["model"]
        = {{"num_layers", 96},     {"hidden_size", 12288},         {"num_attention_heads", 96},
           {"vocab_size", 131072}, {"normalization", "LayerNorm"}, {"position_embedding_type", "learned_absolute"}};
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 1152}};
    doc["strategy"] = {{"recompute_granularity", "selective"},
                       {"overlap_grad_reduce", true},
                       {"overlap_param_gather", true},
                       {"tp_comm_overlap", true}};
    doc["hardware"] = "H100-SXM-80GB";
    std::vector<LayoutMfu> out;
    for (int t : {4, 8})
        for (int p : {2, 3, 4, 6, 8, 12, 16, 24})
            for (int v : virtualStages) {
                if (gpus % (t * p) != 0 || 96 % (p * v) != 0 || 1152 % (gpus / (t * p)) != 0)
                    continue;
                json d = doc;
                d["parallelism"] = {{"tensor_model_parallel_size", t},
                                    {"pipeline_model_parallel_size", p},
                                    {"virtual_pipeline_model_parallel_size", v},
                                    {"data_parallel_size", gpus / (t * p)},
                                    {"sequence_parallel", true},
                                    {"zero_stage", 1}};
                const Config config = test::configFrom(d);
                if (!computeLedger(config).fits())
                    continue;
                out.push_back({t, p, v, estimateStepTime(config).mfu});
            }
    return out;
}

} // namespace

TEST_CASE("time model: GPT-3 175B on 96 H100s lands on Megatron-LM's published 47 % MFU for every layout that fits")
{
    // The Hopper GEMM table was scaled to this figure, so this test keeps it there.
    const std::vector<LayoutMfu> layouts = megatronReadmeGpt3(96, {1});
    for (const LayoutMfu &l : layouts) {
        INFO("t " << l.t << " p " << l.p << ": MFU " << 100 * l.mfu << " %");
        CHECK(l.mfu == Approx(0.47).margin(0.04));
    }
    CHECK(layouts.size() >= 3);
}

namespace {

// The fastest layout the model finds for the 4608-GPU run, as an outcome:
// MFU is model FLOPs over time, so measured time over modelled time is the
// modelled MFU over the README's 42 %.
Outcome megatronReadme4608(LayoutMfu *fastest = nullptr)
{
    const std::vector<LayoutMfu> layouts = megatronReadmeGpt3(4608, {1, 2, 3, 4});
    REQUIRE(layouts.size() >= 3);
    const LayoutMfu best
        = *std::max_element(layouts.begin(), layouts.end(), [](auto &a, auto &b) { return a.mfu < b.mfu; });
    if (fastest != nullptr)
        *fastest = best;
    return {"megatron_readme_gpt3_4608xh100", 0.42 / best.mfu, 1.0};
}

} // namespace

TEST_CASE("time model: the same GPT-3 strong-scaled to 4608 H100s is within 10 % of Megatron-LM's published 42 % MFU")
{
    // Held out (the table was set at 96 GPUs): at 4608 GPUs and the same batch
    // each data-parallel rank runs only 1152 / d micro-batches, so the bubble
    // and the exposed gradient reduction grow and MFU falls; the README
    // reports 42 %. Megatron's engineers picked the layout, so the fastest one
    // the model finds is compared.
    LayoutMfu best{};
    const Outcome o = megatronReadme4608(&best);
    INFO("fastest: t " << best.t << " p " << best.p << " v " << best.v << ", MFU " << 100 * best.mfu << " %");
    CHECK(std::fabs(o.error()) <= 0.10);
    // Strong scaling costs MFU in the model as in the README (47 % → 42 %).
    const std::vector<LayoutMfu> small = megatronReadmeGpt3(96, {1, 2, 3, 4});
    const double bestSmall
        = std::max_element(small.begin(), small.end(), [](auto &a, auto &b) { return a.mfu < b.mfu; })->mfu;
    CHECK(best.mfu < bestSmall);
}

namespace {

// One row of NVIDIA Megatron Bridge's DGX-H100 pre-training table (NeMo
// 25.11, FP8 with current scaling; tests/data/time_reference/
// megatron_bridge_h100.json). The page gives the layout and the throughput,
// not the shapes: those are the models' published configs (the built-in
// llama-3.1-8b, llama-3-70b and llama-3.1-405b presets, from Meta's Hugging
// Face configs).
Config bridgeConfig(const json &row, const std::string &model)
{
    const int gpus = row[1], gbs = row[3], mbs = row[4], seq = row[5], fsdp = row[6], t = row[7], p = row[8],
              c = row[9], e = row[11];
    const int v = row[10].is_number() ? row[10].get<int>() : 1;
    const int d = gpus / (t * p * c);
    json doc = test::emptyDoc();
    doc["model"] = model;
    doc["training"] = {{"seq_length", seq},
                       {"micro_batch_size", mbs},
                       {"global_batch_size", gbs},
                       // Bridge's "FP8-CS": Transformer Engine's current (per-tensor) scaling.
                       {"fp8_recipe", "tensorwise"}};
    doc["parallelism"] = {{"tensor_model_parallel_size", t},
                          {"pipeline_model_parallel_size", p},
                          {"virtual_pipeline_model_parallel_size", v},
                          {"context_parallel_size", c},
                          {"expert_model_parallel_size", e},
                          {"data_parallel_size", d},
                          {"sequence_parallel", t > 1},
                          // FSDP 1: parameters, gradients and optimizer states sharded (ZeRO-3);
                          // otherwise Megatron's distributed optimizer.
                          {"zero_stage", fsdp == 1 ? 3 : 1},
                          {"pipeline_schedule", v > 1 ? "interleaved" : "1f1b"}};
    // Bridge's CommOverlapConfig defaults (its communication-overlap guide):
    // overlap_grad_reduce and overlap_param_gather on, gradients reduced in fp32.
    // Its FP8-CS precision (mixed_precision.py, bf16_with_fp8_current_scaling_mixed)
    // sets fp8_param_gather: the linear weights are FP8 primary weights.
    doc["strategy"] = {{"recompute_granularity", "none"}, {"flash_attention", true},  {"overlap_grad_reduce", true},
                       {"overlap_param_gather", true},    {"tp_comm_overlap", t > 1}, {"fp8_param_gather", true}};
    doc["hardware"] = "H100-SXM-80GB";
    json unsplit = doc;
    unsplit["parallelism"]["pipeline_model_parallel_size"] = 1;
    unsplit["parallelism"]["virtual_pipeline_model_parallel_size"] = 1;
    unsplit["parallelism"]["pipeline_schedule"] = "1f1b";
    const std::int64_t layers = test::configFrom(unsplit).model.num_layers;
    if (layers % (p * v) != 0) {
        // Llama-3.1-405B's 126 layers over 8 × 8 virtual stages: Megatron
        // Bridge counts the embedding and the loss as a layer each
        // (account_for_embedding/loss_in_pipeline_split), so the first and
        // the last stage hold one transformer layer fewer.
        const std::int64_t each = (layers + 2) / (p * v);
        REQUIRE(each * p * v == layers + 2);
        json layout = json::array();
        for (int s = 0; s < p * v; ++s)
            layout.push_back(s == 0 || s == p * v - 1 ? each - 1 : each);
        doc["parallelism"]["pipeline_layout"] = layout;
    }
    return test::configFrom(doc);
}

// Every dense row of the Bridge table: modelled against GBS · sequence /
// (tokens per second per GPU · GPUs), from the page's throughput column.
std::vector<Outcome> bridgeOutcomes()
{
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/time_reference/megatron_bridge_h100.json");
    const json table = json::parse(in);
    const std::map<std::string, std::string> models
        = {{"LLAMA3_8B", "llama-3.1-8b"}, {"LLAMA3_70B", "llama-3-70b"}, {"LLAMA3.1_405B", "llama-3.1-405b"}};
    std::vector<Outcome> cases;
    for (const json &row : table["rows"]) {
        const auto model = models.find(row[0].get<std::string>());
        if (model == models.end())
            continue; // the MoE rows: force-balanced routing is not modelled
        const Config config = bridgeConfig(row, model->second);
        // Iteration time = GBS · sequence / (tokens per second per GPU · GPUs),
        // from the page's throughput column.
        const double gpus = row[1], tokens = double(row[3]) * double(row[5]);
        const double measured = tokens / (double(row[13]) * gpus);
        cases.push_back({row[0], estimateStepTime(config).total, measured});
    }
    return cases;
}

} // namespace

TEST_CASE("time model: FP8 dense Llama runs on DGX-H100 (Megatron Bridge) within 10 %")
{
    const std::vector<Outcome> cases = bridgeOutcomes();
    REQUIRE(cases.size() == 3);
    for (const Outcome &o : cases) {
        INFO(o.id << ": modelled " << o.modelled << " s, measured " << o.measured << " s, error " << 100.0 * o.error()
                  << " %");
        CHECK(std::fabs(o.error()) <= 0.10);
    }
}

namespace {

Outcome mlperfOutcome(double *mfu = nullptr, Config *plan = nullptr)
{
    // tests/data/time_reference/mlperf_gpt3_h100.json: the submission's
    // layout (t 4, p 8, 4 virtual stages, d 16, micro-batch 2, 72 micro-batches
    // per rank), FP8 delayed scaling, the distributed optimizer reducing bf16
    // gradients in 200 MB buckets with both overlaps, TP communication overlap,
    // no recompute, no dropout; measured 10.90 s per step (119.92 s per
    // 11-step block of the result log).
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/time_reference/mlperf_gpt3_h100.json");
    const json c = json::parse(in);
    const json &m = c["model"], &par = c["parallelism"];
    json doc = test::emptyDoc();
    doc["model"] = {{"num_layers", m["layers"]},
                    {"hidden_size", m["hidden"]},
                    {"num_attention_heads", m["heads"]},
                    {"ffn_hidden_size", m["ffn"]},
                    {"vocab_size", 51200},
                    {"normalization", "LayerNorm"},
                    {"position_embedding_type", "learned_absolute"},
                    {"attention_dropout", 0.0},
                    {"hidden_dropout", 0.0}};
    doc["training"] = {{"seq_length", m["seq_length"]},
                       {"micro_batch_size", par["micro_batch"]},
                       {"global_batch_size", c["logged"]["global_batch_size"]},
                       // grad_sync_dtype bf16: the gradient buffer and its reduce-scatter in bf16.
                       {"main_grads_dtype", "bf16"},
                       {"fp8_recipe", "delayed"},
                       {"fp8_amax_history_len", 1024}};
    doc["parallelism"] = {{"tensor_model_parallel_size", par["t"]},
                          {"pipeline_model_parallel_size", par["p"]},
                          {"virtual_pipeline_model_parallel_size", par["virtual_stages"]},
                          {"data_parallel_size", par["d"]},
                          {"sequence_parallel", true},
                          {"zero_stage", 1},
                          {"pipeline_schedule", "interleaved"}};
    doc["strategy"] = {{"recompute_granularity", "none"},
                       {"flash_attention", true},
                       {"overlap_grad_reduce", true},
                       {"overlap_param_gather", true},
                       {"tp_comm_overlap", true},
                       // custom.yaml's overlap_p2p_comm True; config_common.sh's FP8_PARAMS=True
                       // (the weights kept and gathered in FP8).
                       {"overlap_p2p_comm", true},
                       {"fp8_param_gather", true},
                       {"ddp_bucket_size", 200 * 1024 * 1024 / 2}}; // BUCKET_CAP_MB=200 of bf16 gradients
    doc["hardware"] = "H100-SXM-80GB";
    const Config config = test::configFrom(doc);
    REQUIRE(config.microBatches() == c["logged"]["gradient_accumulation_steps"].get<std::int64_t>());
    if (plan != nullptr)
        *plan = config;
    const double measured = c["derived"]["step_time_s"];
    const StepTime st = estimateStepTime(config);
    if (mfu != nullptr)
        *mfu = st.mfu;
    return {c["id"], st.total, measured};
}

} // namespace

TEST_CASE("time model: MLPerf Training v4.0 GPT-3 175B on 512 H100s (NVIDIA, Eos) within 10 %")
{
    double mfu = 0;
    const Outcome o = mlperfOutcome(&mfu);
    INFO("modelled " << o.modelled << " s, measured " << o.measured << " s, MFU " << 100 * mfu << " %");
    CHECK(std::fabs(o.error()) <= 0.10);
}

TEST_CASE("time model: all 23 published cases, A100 and H100, each within 10 % and within 5 % on average")
{
    // The target over the whole reference set: the 18 A100 runs, the
    // three Megatron Bridge FP8 rows, MLPerf's GPT-3 and the 4608-GPU README
    // run (the 96-GPU one set the Hopper table and is not counted).
    std::vector<Outcome> all = outcomes("korthikanti2022_");
    for (const std::vector<Outcome> &more : {outcomes("narayanan2021_t1_"), bridgeOutcomes()})
        all.insert(all.end(), more.begin(), more.end());
    all.push_back(mlperfOutcome());
    all.push_back(megatronReadme4608());
    checkWithinTargets(all, 23);
}

TEST_CASE("Every published run of the time references fits its device by every view, with one peak",
          "[ledger][reference][published]")
{
    // They ran: Narayanan et al. 2021's Table 1 and Korthikanti et al. 2022's
    // runs on A100-80GB, Megatron Bridge's dense Llama rows and MLPerf v4.0's
    // GPT-3 175B on H100-80GB. Each rank's simulated peak is its ledger total
    // (one peak), and the caching allocator's reserve with the runtime
    // reserve stays within the device.
    std::vector<std::pair<std::string, Config>> runs;
    for (const json &c : timeCases()["cases"])
        if (starts(c["id"], "narayanan2021_t1_") || starts(c["id"], "korthikanti2022_"))
            runs.emplace_back(c["id"].get<std::string>(), caseConfig(c));
    std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/time_reference/megatron_bridge_h100.json");
    const json table = json::parse(in);
    const std::map<std::string, std::string> models
        = {{"LLAMA3_8B", "llama-3.1-8b"}, {"LLAMA3_70B", "llama-3-70b"}, {"LLAMA3.1_405B", "llama-3.1-405b"}};
    for (const json &row : table["rows"])
        if (const auto model = models.find(row[0].get<std::string>()); model != models.end())
            runs.emplace_back(row[0].get<std::string>(), bridgeConfig(row, model->second));
    Config mlperf;
    mlperfOutcome(nullptr, &mlperf);
    runs.emplace_back("mlperf-gpt3-175b", mlperf);
    REQUIRE(runs.size() == 22);
    for (const auto &[id, config] : runs) {
        CAPTURE(id);
        const PlanPeak plan = planPeak(config);
        CHECK(plan.ledger.fits());
        REQUIRE(plan.ledger.ranks.size() == plan.timeline.ranks.size());
        for (std::size_t r = 0; r < plan.ledger.ranks.size(); ++r)
            CHECK(plan.ledger.ranks[r].device_total_bytes == plan.timeline.ranks[r].peak_bytes);
        const PlanReserved reserved = simulateReserved(config, plan.timeline);
        CHECK(reserved.fits());
    }
}
