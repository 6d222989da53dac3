// SPDX-License-Identifier: MIT
// Structural properties of the ledger that follow from how frameworks place state.
#include "core/base/stats.h"
#include "core/formats/builtins.h"
#include "core/model/activations.h"
#include "core/reports/report.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("Totals are the sums of their rows, and every entry explains itself", "[ledger]")
{
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const Ledger l = computeLedger(scenario(name));
        Bytes peak = 0;
        for (const RankLedger &r : l.ranks) {
            Bytes device = 0, host = 0;
            ByCategory perCategory{};
            for (const LedgerEntry &e : r.entries) {
                CHECK(e.bytes > 0);
                CHECK_FALSE(e.formula.empty());
                (e.placement == Placement::Device ? device : host) += e.bytes;
                if (e.placement == Placement::Device)
                    perCategory[int(e.category)] += e.bytes;
            }
            CHECK(device == r.device_total_bytes);
            CHECK(host == r.host_total_bytes);
            CHECK(perCategory == r.device);
            CHECK(r.fits == (r.device_total_bytes <= l.capacity_bytes));
            peak = std::max(peak, r.device_total_bytes);
        }
        CHECK(l.peak_bytes == peak);
        CHECK(l.ranks[std::size_t(l.peak_rank)].device_total_bytes == peak);
        CHECK_FALSE(l.choices.empty());
    }
}

TEST_CASE("Embeddings sit on the first stage, the output layer and loss on the last", "[ledger]")
{
    const Ledger l = computeLedger(scenario("llama-3-70b-128xh100"));
    REQUIRE(l.ranks.size() == 4);
    CHECK(modelStatesOf(l.ranks[0], "Embeddings") > 0);
    CHECK(modelStatesOf(l.ranks[1], "Embeddings") == 0);
    CHECK(modelStatesOf(l.ranks[3], "Output layer and final norm") > 0);
    CHECK(modelStatesOf(l.ranks[2], "Output layer and final norm") == 0);
    CHECK(entryBytes(l.ranks[3], Category::Activations, "Output layer and loss") > 0);
    CHECK(entryBytes(l.ranks[0], Category::Activations, "Output layer and loss") == 0);
    // The middle ranks are identical.
    CHECK(l.ranks[1].parameters == l.ranks[2].parameters);
}

TEST_CASE("More tensor or pipeline parallelism never raises a rank's weights", "[ledger]")
{
    const auto maxWeights = [](const Config &c) {
        Bytes w = 0;
        const Ledger l = computeLedger(c);
        for (const RankLedger &r : l.ranks)
            w = std::max(w, r.device[int(Category::Weights)]);
        return w;
    };
    CHECK(maxWeights(scenario("llama-3-70b-128xh100",
                              {"parallelism.tensor_model_parallel_size=4", "parallelism.data_parallel_size=8"}))
          > maxWeights(scenario("llama-3-70b-128xh100")));
    CHECK(maxWeights(scenario("llama-3-70b-128xh100",
                              {"parallelism.pipeline_model_parallel_size=8", "parallelism.data_parallel_size=2"}))
          < maxWeights(scenario("llama-3-70b-128xh100")));
}

TEST_CASE("Recompute and offload move bytes the documented way", "[ledger]")
{
    const RankLedger none
        = computeLedger(scenario("llama-3-70b-128xh100", {"strategy.recompute_granularity=none"})).ranks[0];
    const RankLedger sel = computeLedger(scenario("llama-3-70b-128xh100")).ranks[0];
    const RankLedger full
        = computeLedger(scenario("llama-3-70b-128xh100", {"strategy.recompute_granularity=full"})).ranks[0];
    // With FlashAttention, selective recompute only drops the log-sum-exp rows.
    CHECK(sel.device[int(Category::Activations)] < none.device[int(Category::Activations)]);
    CHECK(full.device[int(Category::Activations)] < sel.device[int(Category::Activations)]);

    const RankLedger offload
        = computeLedger(scenario("llama-3-70b-128xh100", {"strategy.optimizer_offload=cpu"})).ranks[0];
    CHECK(offload.device[int(Category::OptimizerStates)] == 0);
    CHECK(offload.host[int(Category::OptimizerStates)] == sel.device[int(Category::OptimizerStates)]);
    CHECK(offload.device_total_bytes < sel.device_total_bytes);
}

TEST_CASE("MoE all-to-all buffers: worst case is e times the balanced receive (seed 004)", "[ledger][moe]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "mixtral-8x7b";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 64}};
    doc["parallelism"] = {{"tensor_model_parallel_size", 1},
                          {"pipeline_model_parallel_size", 4},
                          {"data_parallel_size", 8},
                          {"expert_model_parallel_size", 8}};
    const Config dropless = configFrom(doc);
    const Config capped = configFrom(doc, {"strategy.moe_expert_capacity_factor=1.0"});
    const Bytes worst = entryBytes(computeLedger(dropless).ranks[0], Category::Communication, "MoE all-to-all buffers");
    const Bytes balanced
        = entryBytes(computeLedger(capped).ranks[0], Category::Communication, "MoE all-to-all buffers");
    // send s·b·k·h·2 plus receive: e · s·b·min(k, E/e) · h · 2 (one expert per rank) against s·b·k·h·2.
    const Bytes tokenCopy = 4096LL * 2 * 4096 * 2; // s · k · h · 2 bytes
    CHECK(balanced == 2 * tokenCopy);
    CHECK(worst == tokenCopy + 8 * 4096LL * 1 * 4096 * 2);
    // Experts are held once per expert-parallel group: E/e = 1 expert per GPU.
    const Ledger ledger = computeLedger(dropless);
    CHECK(modelStatesOf(ledger.ranks[0], "Routed experts") > 0);
}

TEST_CASE("Reports carry the contract's keys", "[report]")
{
    const Config c = scenario("gpt-3-175b-64gpus-tp-sp-selective");
    const Ledger l = computeLedger(c);
    const nlohmann::json j = ledgerToJson(c, l);
    for (const char *key : {"total_parameters", "ranks", "peak_rank", "peak_bytes", "capacity_bytes"})
        CHECK(j.contains(key));
    for (const nlohmann::json &r : j["ranks"]) {
        for (const char *key : {"pipeline_rank", "device_bytes", "device_total_bytes", "host_bytes", "fits",
                                "in_flight_microbatches", "layer_activation_bytes"})
            CHECK(r.contains(key));
        for (Category cat : kCategories) {
            CHECK(r["device_bytes"][std::string(categoryKey(cat))].is_number_integer());
            CHECK(r["host_bytes"][std::string(categoryKey(cat))].is_number_integer());
        }
    }
    const std::string md = ledgerToMarkdown(c, l);
    CHECK(md.find("attention.softmax_output (attention core)") != std::string::npos);
    CHECK(md.find("## Choices in force") != std::string::npos);
    CHECK(ledgerToCsv(l).find("pipeline_rank,weights,gradients,optimizer_states,activations,communication,runtime")
          == 0);
}

TEST_CASE("Shares: an entry of its rank's total in the same place, a rank of the capacity", "[ledger]")
{
    const Ledger l = computeLedger(scenario("seed-000-7b-c-offload"));
    const RankLedger &r = l.ranks[0];
    double device = 0, host = 0;
    for (const LedgerEntry &e : r.entries)
        (e.placement == Placement::Device ? device : host) += shareOfRank(r, e);
    CHECK(device == Approx(1.0));
    CHECK(host == Approx(1.0));
    // 59.9 GB of an 80 GiB (85.9 GB) device.
    CHECK(shareOfCapacity(l, r) == Approx(double(r.device_total_bytes) / (80.0 * kGiB)));
}

TEST_CASE("MoE layers save per routed token: top-k copies on the expert side", "[ledger][moe][activations]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "mixtral-8x7b";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 8}};
    doc["parallelism"] = {{"data_parallel_size", 8}, {"expert_model_parallel_size", 8}};
    doc["strategy"] = {{"flash_attention", true}};
    const LayerActivations top2 = layerActivations(configFrom(doc), true);
    const LayerActivations top4 = layerActivations(configFrom(doc, {"model.moe_router_topk=4"}), true);
    // Per token copy, as Megatron-LM's TEGroupedMLP saves since core 0.13: fc1
    // input h, SwiGLU fc1 output 2f, fc2 input f (2 bytes each), and the fp32
    // routing probability weighted_bias_swiglu multiplies in.
    const Bytes perCopy = 2 * (4096 + 2 * 14336 + 14336) + 4;
    CHECK(top4.total - top2.total == 2 * 4096 * perCopy);
    // Probabilities applied to the expert outputs as they are combined (earlier
    // Megatron-LM's unpermute, DeepSpeed, transformers): the scaled output h is
    // saved instead of the probability; torchtitan's combine keeps it in fp32.
    const auto perCopyUnder = [&](const char *probs) {
        const std::string set = std::string("strategy.moe_apply_probs=") + probs;
        return (layerActivations(configFrom(doc, {"model.moe_router_topk=4", set}), true).total
                - layerActivations(configFrom(doc, {set}), true).total)
               / (2 * 4096);
    };
    CHECK(perCopyUnder("output") == 2 * (4096 + 2 * 14336 + 14336 + 4096));
    CHECK(perCopyUnder("output_fp32") == 2 * (4096 + 2 * 14336 + 14336) + 4 * 4096);
    // The attention half is the same as in a dense layer of the same shape.
    const LayerActivations dense
        = layerActivations(configFrom(doc, {"model.num_experts=0", "parallelism.expert_model_parallel_size=1"}), false);
    Bytes denseAttention = 0, moeAttention = 0;
    for (const SavedTensor &t : dense.tensors)
        denseAttention += t.name.rfind("attention", 0) == 0 || t.name.rfind("input_norm", 0) == 0 ? t.bytes : 0;
    for (const SavedTensor &t : top2.tensors)
        moeAttention += t.name.rfind("attention", 0) == 0 || t.name.rfind("input_norm", 0) == 0 ? t.bytes : 0;
    CHECK(moeAttention == denseAttention);
}

TEST_CASE("Experts are sharded over e and their states over the expert-data-parallel group", "[ledger][moe]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "deepseek-v3";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 2048}};
    // 61 layers and the multi-token prediction module's layer on one stage,
    // 64-way expert parallelism inside d = 128, distributed optimizer.
    doc["parallelism"] = {{"data_parallel_size", 128}, {"expert_model_parallel_size", 64}, {"zero_stage", 1}};
    const RankLedger r = computeLedger(configFrom(doc)).ranks[0];
    // 58 + 1 MoE layers (the module's is built as the last layer, an MoE
    // layer) x 256/64 experts x 3 h f_moe (SwiGLU: gate, up, down) x 2 bytes.
    const Bytes expertWeights = 59LL * 4 * 3 * 7168 * 2048 * 2;
    CHECK(entryBytes(r, Category::Weights, "Routed experts") == expertWeights);
    // Adam + master: 12 bytes, sharded over t*c*d/(etp*e) = 128/64 = 2.
    CHECK(entryBytes(r, Category::OptimizerStates, "Routed experts") == 59LL * 4 * 3 * 7168 * 2048 * 12 / 2);
}

TEST_CASE("Full recompute: uniform groups keep one input each, block keeps the first n layers' inputs",
          "[ledger][recompute]")
{
    const auto act = [](std::vector<std::string> sets) {
        sets.push_back("strategy.recompute_granularity=full");
        const RankLedger r = computeLedger(scenario("gpt-3-175b-64gpus-tp-only", sets)).ranks[7];
        return std::pair{entryBytes(r, Category::Activations, "Transformer layers"),
                         entryBytes(r, Category::Activations, "Recompute working set")};
    };
    const Config c = scenario("gpt-3-175b-64gpus-tp-only");
    const LayerActivations la = layerActivations(c, false);
    // The last rank holds one micro-batch of 12 layers.
    CHECK(act({}).first == 12 * la.checkpoint);
    CHECK(act({}).second == la.total);
    CHECK(act({"strategy.recompute_num_layers=4"}).first == 3 * la.checkpoint);
    CHECK(act({"strategy.recompute_num_layers=4"}).second == 4 * la.total);
    CHECK(act({"strategy.recompute_method=block", "strategy.recompute_num_layers=4"}).first
          == 4 * la.checkpoint + 8 * la.total);
    CHECK(act({"strategy.recompute_method=block", "strategy.recompute_num_layers=4"}).second == la.total);
}

TEST_CASE("Chart axes end at a 1-2-5 ceiling", "[units]")
{
    const auto [value, ceiling] = GENERATE(table<double, double>({{0.7, 1.0},
                                                                  {1.0, 1.0},
                                                                  {1.2, 2.0},
                                                                  {3.0, 5.0},
                                                                  {5.0, 5.0},
                                                                  {7.5, 10.0},
                                                                  {85.9, 100.0},
                                                                  {101.0, 200.0},
                                                                  {0.0, 1.0}}));
    CHECK(niceCeiling(value) == Approx(ceiling));
}

TEST_CASE("Chart value axes hold the value with 1-2-5 ticks", "[units]")
{
    const auto [value, max, step] = GENERATE(table<double, double, double>(
        {{85.9, 100.0, 20.0}, {140.0, 150.0, 50.0}, {45.1, 50.0, 10.0}, {8.0, 8.0, 2.0}, {1200.0, 1200.0, 200.0}}));
    const NiceAxis axis = niceAxis(value);
    CHECK(axis.max == Approx(max));
    CHECK(axis.step == Approx(step));
    CHECK(axis.max >= value);
}

TEST_CASE("Tick labels get the decimals their step needs", "[units]")
{
    CHECK(niceAxis(85.9).decimals() == 0);
    CHECK(niceAxis(2.6).decimals() == 1); // step 0.5
    CHECK(niceAxis(0.26).decimals() == 2); // step 0.05
    CHECK(niceAxis(1.04).decimals() == 1); // step 0.2
}

TEST_CASE("Percentiles by nearest rank", "[units]")
{
    std::vector<double> samples;
    for (int i = 100; i >= 1; --i)
        samples.push_back(double(i));
    CHECK(percentile(samples, 0.50) == 50);
    CHECK(percentile(samples, 0.99) == 99);
    CHECK(percentile(samples, 1.0) == 100);
    CHECK(percentile(samples, 0.0) == 1);
    CHECK(percentile({}, 0.5) == 0);
    CHECK(percentile({7.0}, 0.99) == 7);
}

TEST_CASE("The plan's parallel summary names every degree above 1", "[report]")
{
    // DeepSeek-V3's published plan (DeepSeek-V3 technical report, section 3.2):
    // 16-way pipeline, 64-way expert parallelism, ZeRO-1 data parallelism.
    const Config c = scenario("deepseek-v3-2048xh100-p16-v4");
    const std::string s = parallelSummary(c);
    CHECK(s.rfind("t=1 p=16 v=4 d=", 0) == 0);
    CHECK(s.find(" e=64") != std::string::npos);
    CHECK(s.find("ZeRO-1") != std::string::npos);
    Config cp = scenario("llama-3-70b-128xh100");
    cp.parallelism.context_parallel_size = 2;
    CHECK(parallelSummary(cp) == "t=8 p=4 d=4 c=2 +SP ZeRO-1");
}
