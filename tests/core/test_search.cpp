// SPDX-License-Identifier: MIT
// "Find plans that fit": exactness of the pruning, order, and one search an
// engineer can check by hand.
#include "core/planner/search.h"

#include "testutil.h"

using namespace memledger;

namespace {

// Llama-2-7B on H100s, 4096-token sequences, 256 sequences per step (1 M tokens), FlashAttention.
Config llama7bOnH100(std::int64_t globalBatch = 256)
{
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", globalBatch}};
    doc["strategy"] = {{"flash_attention", true}};
    return test::configFrom(doc);
}

} // namespace

TEST_CASE("search: every plan fits, is valid, and comes sorted", "[search]")
{
    SearchOptions opt;
    opt.gpus = 8;
    opt.top = 20;
    const SearchResult r = searchPlans(llama7bOnH100(), opt);
    INFO(r.candidates << " candidates, " << r.prunedByBound << " pruned, " << r.ledgersRun << " ledgers");
    REQUIRE(r.plans.size() == 20);
    CHECK(r.candidates > 1000);
    for (std::size_t k = 0; k < r.plans.size(); ++k) {
        const SearchPlan &p = r.plans[k];
        CHECK(p.config.parallelism.gpus() == 8);
        CHECK(p.config.globalBatch() == 256);
        for (const Problem &pr : validate(p.config))
            CHECK(!pr.isError());
        CHECK(p.ledger.peak_bytes <= r.limitBytes);
        CHECK(p.ledger.fits());
        // The bound the search pruned with never exceeds the ledger's peak.
        CHECK(p.estimateBytes <= p.ledger.peak_bytes);
        if (k > 0)
            CHECK(r.plans[k - 1].time.total <= p.time.total);
        // The reported time is the model's for that configuration.
        CHECK(estimateStepTime(p.config).total == Approx(p.time.total));
    }
}

TEST_CASE("search: the pruning bound equals the ledger's peak for dense models, never exceeds it for MoE", "[search]")
{
    // Dense layers: every ledger term is in the bound (model states, stored
    // activations, full recompute's one-layer working set, embedding and loss
    // activations, the gradient bucket, ZeRO-3's gathered layers, the reserve).
    SearchOptions opt;
    opt.gpus = 16;
    opt.top = 300;
    const SearchResult dense = searchPlans(llama7bOnH100(512), opt);
    REQUIRE(dense.plans.size() == 300);
    for (const SearchPlan &p : dense.plans)
        CHECK(p.estimateBytes == p.ledger.peak_bytes);
    CHECK(dense.rejectedByLedger == 0);

    // Activation offload keeps 1 + staging-buffer groups on the device, in the bound as in the ledger.
    nlohmann::json big = test::emptyDoc();
    big["model"] = "llama-3-70b";
    big["hardware"] = "H100-SXM-80GB";
    big["training"] = {{"seq_length", 8192}, {"global_batch_size", 512}};
    SearchOptions many;
    many.gpus = 64;
    many.top = 3000;
    const SearchResult r70 = searchPlans(test::configFrom(big), many);
    int offloaded = 0;
    for (const SearchPlan &p : r70.plans)
        if (p.config.strategy.activation_offload != OffloadTarget::None) {
            ++offloaded;
            CHECK(p.estimateBytes == p.ledger.peak_bytes);
        }
    CHECK(offloaded > 100);

    // MoE: the all-to-all buffers are left out, so the bound is below the peak.
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "mixtral-8x7b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 4096}, {"global_batch_size", 256}};
    opt.gpus = 32;
    opt.top = 100;
    const SearchResult moe = searchPlans(test::configFrom(doc), opt);
    REQUIRE(!moe.plans.empty());
    for (const SearchPlan &p : moe.plans) {
        CHECK(p.estimateBytes <= p.ledger.peak_bytes);
        CHECK(p.ledger.peak_bytes <= moe.limitBytes);
    }
}

TEST_CASE("search: 8 H100s and a 7B model, the plan an engineer would pick", "[search]")
{
    // Expected: pure data parallelism (t = p = c = 1, d = 8). A 7B model's
    // states shard well with ZeRO over 8 GPUs on one NVLink node, so tensor
    // or pipeline splits only add collectives and a bubble. ZeRO-1 keeps
    // 14 GB bf16 weights + 28 GB fp32 gradients... too much with 4096-token
    // activations (≈ 0.55 GB per layer per sequence with FlashAttention), so
    // the best plan shards gradients too (ZeRO-2: same communication volume as
    // ZeRO-1 and plain DDP, no ZeRO-3 parameter gathers), keeps every
    // activation (no recompute: it would only add time), no CPU optimizer
    // (CPU-Adam on 0.9 B parameters per GPU costs ≈ 0.2 s a step) and a
    // micro-batch as large as fits under 80 % of 80 GiB.
    SearchOptions opt;
    opt.gpus = 8;
    opt.top = 5;
    const SearchResult r = searchPlans(llama7bOnH100(), opt);
    REQUIRE(!r.plans.empty());
    const Config &best = r.plans.front().config;
    INFO(best.name);
    CHECK(best.parallelism.tensor_model_parallel_size == 1);
    CHECK(best.parallelism.pipeline_model_parallel_size == 1);
    CHECK(best.parallelism.context_parallel_size == 1);
    CHECK(best.parallelism.data_parallel_size == 8);
    CHECK(best.parallelism.zero_stage == 2);
    CHECK(best.strategy.recompute_granularity == RecomputeGranularity::None);
    CHECK(best.strategy.optimizer_offload == OffloadTarget::None);
    CHECK(best.training.micro_batch_size == 2);
}

TEST_CASE("search: nothing fits, and bad options are named", "[search]")
{
    SearchOptions opt;
    opt.gpus = 1;
    // 70B parameters in bf16 alone are 140 GB: one 80 GB GPU can hold no plan.
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-2-70b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"global_batch_size", 8}};
    const Config big = test::configFrom(doc);
    const SearchResult r = searchPlans(big, opt);
    CHECK(r.plans.empty());
    CHECK(r.candidates > 0);
    CHECK(!r.notes.empty());

    SearchOptions bad;
    bad.gpus = 0;
    bad.margin = 1.5;
    bad.top = 0;
    const Problems p = checkSearchOptions(bad);
    REQUIRE(p.size() == 3);
    CHECK(p[0].path == "--gpus");
    CHECK(p[1].path == "--top");
    CHECK(p[2].path == "--margin");
}
