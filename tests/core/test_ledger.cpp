// SPDX-License-Identifier: MIT
// Structural properties of the ledger that follow from how frameworks place state.
#include "testutil.h"

#include "core/report.h"

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
        for (const RankLedger &r : computeLedger(c).ranks)
            w = std::max(w, r.device[int(Category::Weights)]);
        return w;
    };
    CHECK(maxWeights(scenario("llama-3-70b-128xh100", {"parallelism.tensor_model_parallel_size=4", "parallelism.data_parallel_size=8"}))
          > maxWeights(scenario("llama-3-70b-128xh100")));
    CHECK(maxWeights(scenario("llama-3-70b-128xh100", {"parallelism.pipeline_model_parallel_size=8", "parallelism.data_parallel_size=2"}))
          < maxWeights(scenario("llama-3-70b-128xh100")));
}

TEST_CASE("Recompute and offload move bytes the documented way", "[ledger]")
{
    const RankLedger none = computeLedger(scenario("llama-3-70b-128xh100", {"strategy.recompute_granularity=none"})).ranks[0];
    const RankLedger sel = computeLedger(scenario("llama-3-70b-128xh100")).ranks[0];
    const RankLedger full = computeLedger(scenario("llama-3-70b-128xh100", {"strategy.recompute_granularity=full"})).ranks[0];
    // With FlashAttention, selective recompute only drops the log-sum-exp rows.
    CHECK(sel.device[int(Category::Activations)] < none.device[int(Category::Activations)]);
    CHECK(full.device[int(Category::Activations)] < sel.device[int(Category::Activations)]);

    const RankLedger offload = computeLedger(scenario("llama-3-70b-128xh100", {"strategy.optimizer_offload=cpu"})).ranks[0];
    CHECK(offload.device[int(Category::OptimizerStates)] == 0);
    CHECK(offload.host[int(Category::OptimizerStates)] == sel.device[int(Category::OptimizerStates)]);
    CHECK(offload.device_total_bytes < sel.device_total_bytes);
}

TEST_CASE("MoE all-to-all buffers: worst case is e times the balanced receive (seed 004)", "[ledger][moe]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "mixtral-8x7b";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 64}};
    doc["parallelism"] = {{"tensor_model_parallel_size", 1}, {"pipeline_model_parallel_size", 4},
                          {"data_parallel_size", 8}, {"expert_model_parallel_size", 8}};
    const Config dropless = configFrom(doc);
    const Config capped = configFrom(doc, {"strategy.moe_expert_capacity_factor=1.0"});
    const Bytes worst = entryBytes(computeLedger(dropless).ranks[0], Category::Communication, "MoE all-to-all buffers");
    const Bytes balanced = entryBytes(computeLedger(capped).ranks[0], Category::Communication, "MoE all-to-all buffers");
    // send s·b·k·h·2 plus receive: e · s·b·min(k, E/e) · h · 2 (one expert per rank) against s·b·k·h·2.
    const Bytes tokenCopy = 4096LL * 2 * 4096 * 2; // s · k · h · 2 bytes
    CHECK(balanced == 2 * tokenCopy);
    CHECK(worst == tokenCopy + 8 * 4096LL * 1 * 4096 * 2);
    // Experts are held once per expert-parallel group: E/e = 1 expert per GPU.
    const RankLedger &r = computeLedger(dropless).ranks[0];
    CHECK(modelStatesOf(r, "Routed experts") > 0);
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
    CHECK(ledgerToCsv(l).find("pipeline_rank,weights,gradients,optimizer_states,activations,communication,runtime") == 0);
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
