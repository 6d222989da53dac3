// SPDX-License-Identifier: MIT
// "Find plans that fit": exactness of the pruning, order, and one search an
// engineer can check by hand.
#include "core/check/validate.h"
#include "core/config/editrules.h"
#include "core/planner/confirm.h"
#include "core/planner/enumerate.h"
#include "core/planner/search.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

using namespace memledger;
using namespace memledger::test;

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
        // One peak: the plan's peak is its simulated iteration's.
        const Timeline tl = simulateIteration(p.config);
        CHECK(p.ledger.peak_bytes == tl.ranks[std::size_t(tl.peak_rank)].peak_bytes);
        // The bound the search pruned with never exceeds the ledger's peak.
        CHECK(p.estimateBytes <= p.ledger.peak_bytes);
        if (k > 0)
            CHECK(r.plans[k - 1].time.total <= p.time.total);
        // The reported time is the model's for that configuration.
        CHECK(estimateStepTime(p.config).total == Approx(p.time.total));
    }
}

TEST_CASE("search: the pruning bound equals the ledger rows' peak for dense models, never exceeds it for MoE",
          "[search]")
{
    // Dense layers: every ledger term is in the bound (model states, stored
    // activations, full recompute's one-layer working set, embedding and loss
    // activations, the gradient bucket, ZeRO-3's gathered layers, the reserve).
    SearchOptions opt;
    opt.gpus = 16;
    opt.top = 300;
    const SearchResult dense = searchPlans(llama7bOnH100(512), opt);
    REQUIRE(dense.plans.size() == 300);
    for (const SearchPlan &p : dense.plans) {
        // The bound is the rows' sum; the plan's peak (its simulated
        // iteration's, core/timeline/peakledger.h) is at least that.
        CHECK(p.estimateBytes == computeLedger(p.config).peak_bytes);
        CHECK(p.estimateBytes <= p.ledger.peak_bytes);
        // What decides, what the caching allocator reserves with the runtime reserve on top, is at
        // least the allocated peak and at most the limit. The rows reject no plan the bound keeps;
        // reserved memory may (dense.rejectedByLedger counts those).
        CHECK(p.reservedBytes >= p.ledger.peak_bytes);
        CHECK(p.reservedBytes <= dense.limitBytes);
    }

    // Activation offload keeps 1 + staging-buffer groups on the device, in the bound as in the ledger.
    nlohmann::json big = test::emptyDoc();
    big["model"] = "llama-3-70b";
    big["hardware"] = "H100-SXM-80GB";
    big["training"] = {{"seq_length", 8192}, {"global_batch_size", 512}};
    // The candidates the bound keeps, taken from the enumeration itself: a
    // search confirms its plans by what the caching allocator reserves
    // (20–170 ms a plan), and the offloaded plans come after hundreds of
    // faster ones.
    SearchOptions many;
    many.gpus = 64;
    const Config base70 = test::configFrom(big);
    const ModelConfig &m = base70.model;
    const plansearch::Facts facts{.N = many.gpus,
                                  .G = many.gpusPerNode,
                                  .L = m.num_layers,
                                  .s = base70.training.seq_length,
                                  .GB = base70.globalBatch(),
                                  .heads = m.num_attention_heads,
                                  .groups = m.queryGroups(),
                                  .ffn = m.ffn(),
                                  .sharedFfn = m.moe_shared_expert_intermediate_size,
                                  .moeFfn = m.moeFfn(),
                                  .etp = base70.parallelism.expert_tensor_parallel_size,
                                  .moe = m.isMoe(),
                                  .etpFixed = false};
    const Bytes limit70 = static_cast<Bytes>(0.8 * double(base70.hardware.hbm_bytes));
    plansearch::Enumeration en = plansearch::enumerateCandidates(base70, many, facts, limit70);
    std::sort(en.kept.begin(), en.kept.end(), [](const plansearch::Candidate &a, const plansearch::Candidate &b) {
        return plansearch::rankKey(a) < plansearch::rankKey(b);
    });
    int offloaded = 0;
    for (const plansearch::Candidate &x : en.kept) {
        if (!(x.offload & 2) || offloaded > 100)
            continue;
        const Config cfg = plansearch::configOf(base70, x, facts.GB);
        if (hasErrors(validate(cfg)))
            continue;
        ++offloaded;
        CHECK(x.bound == computeLedger(cfg).peak_bytes);
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
    // The 16-bit plan: FP8 recipes are tried on the answer afterwards
    // (trystrategies.h) and may lead it, ZeRO-3 making room for the FP8
    // weight copies Transformer Engine caches.
    const auto bf16 = std::find_if(r.plans.begin(), r.plans.end(),
                                   [](const SearchPlan &p) { return p.config.training.fp8_recipe == Fp8Recipe::None; });
    REQUIRE(bf16 != r.plans.end());
    const Config &best = bf16->config;
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

namespace {

const ValueVerdict &verdictOf(const SearchResult &r, SearchDimension d, std::int64_t value)
{
    for (const ValueVerdict &v : r.verdicts(d).values)
        if (v.value == value)
            return v;
    FAIL("no verdict for " << dimensionName(d) << " = " << value);
    throw 0;
}

} // namespace

TEST_CASE("search verdicts: divisibility, the NVLink node and the batch are named", "[search][verdicts]")
{
    const Config base = llama7bOnH100();
    // Llama-2-7B: 32 heads, 32 layers; 3 divides neither the heads nor 8 GPUs.
    REQUIRE(base.model.num_attention_heads == 32);
    REQUIRE(base.model.num_layers == 32);
    SearchOptions opt;
    opt.gpus = 8;
    const SearchResult r = searchPlans(base, opt);
    REQUIRE(r.dimensions.size() == kSearchDimensions.size());
    const ValueVerdict &t3 = verdictOf(r, SearchDimension::T, 3);
    CHECK(t3.kind == VerdictKind::Structural);
    CHECK_THAT(t3.reason, Catch::Contains("t = 3") && Catch::Contains("32 attention heads"));
    CHECK(!t3.example);

    // 16 GPUs: t = 16 would span two 8-GPU nodes. On 64 the pipeline sizes
    // tried stop at the 32 layers (a stage holds one); p = 3 on 48 splits them 11, 11, 10.
    opt.gpus = 16;
    const SearchResult r16 = searchPlans(base, opt);
    const ValueVerdict &t16 = verdictOf(r16, SearchDimension::T, 16);
    CHECK(t16.kind == VerdictKind::Structural);
    CHECK_THAT(t16.reason, Catch::Contains("8-GPU NVLink node"));
    opt.gpus = 64;
    const SearchResult r64 = searchPlans(llama7bOnH100(64), opt);
    for (const ValueVerdict &v : r64.verdicts(SearchDimension::P).values)
        CHECK(v.value <= 32);
    CHECK(verdictOf(r64, SearchDimension::P, 32).kind != VerdictKind::Structural);
    opt.gpus = 48;
    const SearchResult r48 = searchPlans(llama7bOnH100(48), opt);
    CHECK(verdictOf(r48, SearchDimension::P, 3).kind != VerdictKind::Structural);

    // A global batch of 16 sequences cannot be cut into micro-batches of 32 on any replica.
    opt.gpus = 8;
    opt.maxMicroBatch = 32;
    const SearchResult small = searchPlans(llama7bOnH100(16), opt);
    const ValueVerdict &b32 = verdictOf(small, SearchDimension::MicroBatch, 32);
    CHECK(b32.kind == VerdictKind::Structural);
    CHECK_THAT(b32.reason,
               Catch::Contains("micro-batch 32 does not divide the global batch per data-parallel replica"));
}

TEST_CASE("search verdicts: the values of the returned plans are in the top K, and only those", "[search][verdicts]")
{
    SearchOptions opt;
    opt.gpus = 8;
    opt.top = 7;
    const SearchResult r = searchPlans(llama7bOnH100(), opt);
    REQUIRE(r.plans.size() == 7);
    for (const DimensionVerdicts &dv : r.dimensions) {
        for (const ValueVerdict &v : dv.values) {
            INFO(dimensionName(dv.dimension) << " = " << v.label << ": " << v.reason);
            bool inPlans = false;
            for (const SearchPlan &p : r.plans) {
                const ParallelismConfig &par = p.config.parallelism;
                const StrategyConfig &st = p.config.strategy;
                const std::int64_t planValue = std::array<std::int64_t, kSearchDimensions.size()>{
                    par.tensor_model_parallel_size,
                    par.pipeline_model_parallel_size,
                    par.virtual_pipeline_model_parallel_size,
                    par.data_parallel_size,
                    par.context_parallel_size,
                    par.expert_model_parallel_size,
                    p.config.training.micro_batch_size,
                    par.zero_stage,
                    static_cast<std::int64_t>(st.recompute_granularity),
                    (st.optimizer_offload != OffloadTarget::None ? 1 : 0)
                        | (st.activation_offload != OffloadTarget::None ? 2 : 0),
                    static_cast<std::int64_t>(par.schedule()),
                    static_cast<std::int64_t>(st.pipeline_activation_balance),
                    st.grad_offload != OffloadTarget::None ? 1 : 0,
                    static_cast<std::int64_t>(p.config.training.fp8_recipe)}[static_cast<std::size_t>(dv.dimension)];
                inPlans = inPlans || planValue == v.value;
            }
            CHECK((v.kind == VerdictKind::InTop) == inPlans);
            if (inPlans)
                CHECK_THAT(v.reason, Catch::Contains("in the top 7"));
        }
    }
}

TEST_CASE("search verdicts: a memory verdict states the least peak any plan with that value needs",
          "[search][verdicts]")
{
    // A 4 GB device: 7B parameters in bf16 alone are 14 GB, 1.75 GB per GPU even
    // sharded 8 ways, and fp32 states add 12 bytes per parameter more (on 8 GB
    // gradient offload brings a plan under the limit: test_trystrategies.cpp).
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["hardware"] = {{"hbm_bytes", 4000000000}};
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 256}};
    const Config base = test::configFrom(doc);
    SearchOptions opt;
    opt.gpus = 8;
    const SearchResult r = searchPlans(base, opt);
    CHECK(r.limitBytes == 4000000000); // the margin's default: the device itself
    CHECK(r.plans.empty());
    const ValueVerdict &p1 = verdictOf(r, SearchDimension::P, 1);
    REQUIRE(p1.kind == VerdictKind::Memory);
    CHECK(p1.leastPeakBytes > r.limitBytes);
    CHECK_THAT(p1.reason,
               Catch::Contains("needs at least") && Catch::Contains("the limit is 4.000 GB (100 % of 4.000 GB)"));
    // The plan that needs the least: its own ledger peak is the bound (dense layers: the bound is exact).
    REQUIRE(p1.example);
    CHECK(p1.example->parallelism.pipeline_model_parallel_size == 1);
    CHECK(!hasErrors(validate(*p1.example)));
    CHECK(computeLedger(*p1.example).peak_bytes == p1.leastPeakBytes);
    // And the leanest p = 1 plans one would try by hand need at least as much.
    for (const int zero : {1, 2, 3})
        for (const auto granularity : {RecomputeGranularity::Selective, RecomputeGranularity::Full}) {
            Config c = base;
            c.parallelism.data_parallel_size = 8;
            c.parallelism.zero_stage = zero;
            c.strategy.recompute_granularity = granularity;
            c.strategy.optimizer_offload = OffloadTarget::CPU;
            REQUIRE(!hasErrors(validate(c)));
            CHECK(computeLedger(c).peak_bytes >= p1.leastPeakBytes);
        }
}

TEST_CASE("search verdicts: ZeRO 0 is slower than the best sharded plan, by the model's own step times",
          "[search][verdicts]")
{
    // 141 GB per GPU holds a 7B model on 8 GPUs: sharding the optimizer step
    // (ZeRO >= 1) shortens it, and sharding the gradients too (ZeRO 2) makes room
    // for micro-batches of 4, whose larger GEMMs run nearer the device's peak.
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["hardware"] = "H200-141GB";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 256}};
    const Config base = test::configFrom(doc);
    SearchOptions opt;
    opt.gpus = 8;
    opt.top = 1;
    const SearchResult r = searchPlans(base, opt);
    REQUIRE(r.plans.size() == 1);
    REQUIRE(r.plans.front().config.parallelism.zero_stage >= 1);
    const ValueVerdict &z0 = verdictOf(r, SearchDimension::ZeroStage, 0);
    REQUIRE(z0.kind == VerdictKind::Slower);
    CHECK(z0.slowerPercent > 0);
    CHECK_THAT(z0.reason, Catch::Contains("% slower than the best"));
    REQUIRE(z0.example);
    CHECK(z0.example->parallelism.zero_stage == 0);
    CHECK(!hasErrors(validate(*z0.example)));
    CHECK(computeLedger(*z0.example).peak_bytes <= r.limitBytes);
    const double best = estimateStepTime(r.plans.front().config).total;
    const double mine = estimateStepTime(*z0.example).total;
    CHECK(z0.stepTimeSeconds == Approx(mine));
    CHECK(z0.slowerPercent == Approx((mine / best - 1) * 100).margin(1e-6));

    // It is the fastest ZeRO 0 plan: the first one in the ranking (the 60th of
    // 12,629 here; every confirmed plan is simulated, so not all are ranked).
    opt.top = 200;
    const SearchResult all = searchPlans(base, opt);
    const auto first0 = std::find_if(all.plans.begin(), all.plans.end(),
                                     [](const SearchPlan &p) { return p.config.parallelism.zero_stage == 0; });
    REQUIRE(first0 != all.plans.end());
    CHECK(first0->time.total == Approx(mine));
    CHECK(verdictOf(all, SearchDimension::ZeroStage, 0).kind == VerdictKind::InTop);
}

TEST_CASE("paretoPlans keeps the plans no other beats on both peak and step time, fastest first", "[search]")
{
    // Hand-made: (time, peak) = A (1, 70), B (1, 60), C (2, 65), D (3, 50), E (3, 50).
    SearchResult r;
    const std::vector<std::pair<double, Bytes>> plans = {{1.0, 70}, {1.0, 60}, {2.0, 65}, {3.0, 50}, {3.0, 50}};
    for (const auto &[time, peak] : plans) {
        SearchPlan p;
        p.time.total = time;
        p.ledger.peak_bytes = peak;
        r.plans.push_back(p);
    }
    // A loses to B (as fast, less memory); C to B (slower, more memory); E ties D and comes second.
    CHECK(paretoPlans(r) == std::vector<std::size_t>{1, 3});
    CHECK(paretoPlans(SearchResult{}).empty());
}

TEST_CASE("percentSlower: 19.35 s against 19.147 s is about 1.06 % slower — nothing against a zero", "[search]")
{
    CHECK(percentSlower(19.35, 19.147) == Approx(100.0 * (19.35 - 19.147) / 19.147));
    CHECK(percentSlower(2.0, 1.0) == Approx(100.0));
    CHECK(percentSlower(1.0, 0.0) == 0.0);
}

TEST_CASE("search: where p does not divide the layers, the edge stages are the lighter ones", "[search][uneven]")
{
    // Llama 3 405B trained on 126 layers with 16 pipeline stages, the first
    // and the last one layer lighter (Llama 3 report §3.3.2; Megatron's
    // account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split).
    CHECK(plansearch::unevenChunks(126, 16, 1));
    CHECK(plansearch::unevenLayout(126, 16)
          == std::vector<std::int64_t>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
    CHECK_FALSE(plansearch::unevenChunks(126, 14, 1)); // 14 divides 126: even
    // DeepSeek-V3's 61 layers on its 16 ranks: the inner stages take the
    // remainder first (3, 4×13, 3, 3), as Megatron's layout strings can place it.
    CHECK(plansearch::unevenChunks(61, 16, 1));
    CHECK(plansearch::unevenLayout(61, 16)
          == std::vector<std::int64_t>{3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3});
    CHECK(plansearch::unevenChunks(32, 3, 1)); // 11, 11, 10
    CHECK_FALSE(plansearch::splitsLayers(32, 8, 5)); // 40 stages for 32 layers: one would be empty
    // stageLayers reads the same split stage by stage, without building it.
    for (const auto &[layers, stages] :
         {std::pair<std::int64_t, std::int64_t>{61, 16}, {126, 16}, {126, 128}, {32, 3}, {33, 2}, {7, 1}, {80, 24}}) {
        CAPTURE(layers, stages);
        const std::vector<std::int64_t> layout = balancedLayout(layers, stages);
        for (std::int64_t k = 0; k < stages; ++k)
            CHECK(plansearch::stageLayers(layers, stages, k) == layout[static_cast<std::size_t>(k)]);
    }

    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-3.1-405b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 8192}, {"micro_batch_size", 1}, {"global_batch_size", 2048}};
    doc["strategy"] = {{"flash_attention", true}};
    SearchOptions opt;
    opt.gpus = 8192;
    opt.top = 3;
    const SearchResult r = searchPlans(test::configFrom(doc), opt);
    const ValueVerdict &p16 = verdictOf(r, SearchDimension::P, 16);
    INFO(p16.reason);
    CHECK(p16.kind != VerdictKind::Structural);
    // A plan with p = 16: among the answer's, or the verdict's example; its layout the lighter-edge split of its
    // p·v stages (one chunk a rank: 7, fourteen times 8, 7).
    std::optional<Config> withP16 = p16.example;
    for (const SearchPlan &plan : r.plans)
        if (!withP16 && plan.config.parallelism.pipeline_model_parallel_size == 16)
            withP16 = plan.config;
    REQUIRE(withP16.has_value());
    const std::int64_t v = withP16->parallelism.virtual_pipeline_model_parallel_size;
    CHECK(withP16->parallelism.pipeline_layout == plansearch::unevenLayout(126, 16, v));
    CHECK(validate(*withP16).empty());
    const ValueVerdict &p32 = verdictOf(r, SearchDimension::P, 32);
    CHECK(p32.kind != VerdictKind::Structural); // 128 = 126 + 2 splits into 32 stages of 4, the edges 3
}

TEST_CASE("search: a global batch no split can cut gets the nearest ones that can, not just 0 plans", "[search][batch]")
{
    // Llama 3.1 405B on 98,304 = 2^15 · 3 GPUs: t at most 8 (one NVLink node),
    // c at most 8 (the next degree the search tries, 12, does not split 8,192
    // tokens into 2c chunks) and p at most 96 (a stage holds a layer: p ≤ 126
    // and p divides 98,304), so every split has d ≥ 98,304 / (8 · 8 · 96) = 16
    // replicas: d is 2^k or 3 · 2^k. No such d divides a global batch of
    // 1,000 sequences; 992 = 31 · 32 (d = 32 with p = 48) and 1,008 = 21 · 48
    // are the nearest that do.
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-3.1-405b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 8192}, {"micro_batch_size", 1}, {"global_batch_size", 1000}};
    SearchOptions opt;
    opt.gpus = 98304;
    const SearchResult r = searchPlans(test::configFrom(doc), opt);
    CHECK(r.candidates == 0);
    CHECK(r.plans.empty());
    CHECK(r.nearestGlobalBatches == std::vector<std::int64_t>{992, 1008});
    REQUIRE_FALSE(r.notes.empty());
    CHECK_THAT(r.notes.back(), Catch::Contains("the nearest that do: 992 or 1008"));

    // At one of them the search has plans.
    doc["training"]["global_batch_size"] = 1152;
    const SearchResult ok = searchPlans(test::configFrom(doc), opt);
    CHECK(ok.candidates > 0);
    CHECK(ok.nearestGlobalBatches.empty());
}

TEST_CASE("search: a plan whose own split is invalid can still be searched from, its model's errors cannot", "[search]")
{
    // 80 layers over p = 3 do not split: the search chooses p itself, so nothing stops it, and every plan it
    // finds uses the 128 GPUs asked for and validates.
    Config split = test::scenario("llama-3-70b-128xh100");
    split.parallelism.pipeline_model_parallel_size = 3;
    REQUIRE(hasErrors(validate(split)));
    CHECK(searchBlockers(split).empty());
    SearchOptions options;
    options.gpus = 128;
    options.top = 3;
    const SearchResult r = searchPlans(split, options);
    REQUIRE_FALSE(r.plans.empty());
    for (const SearchPlan &plan : r.plans) {
        CHECK(plan.config.parallelism.gpus() == 128);
        CHECK_FALSE(hasErrors(validate(plan.config)));
    }

    // GPT-3's learned position table holds 2,048 positions: a 4,096-token sequence is wrong whatever the split,
    // and that error (its own words) stops the search; the bad split beside it does not.
    Config sequence = test::scenario("gpt-3-175b-64gpus-tp-only");
    sequence.training.seq_length = 4096;
    sequence.parallelism.tensor_model_parallel_size = 5; // does not divide the 96 heads
    REQUIRE(hasErrors(validate(sequence)));
    const Problems blockers = searchBlockers(sequence);
    REQUIRE(blockers.size() == 1);
    CHECK(blockers.front().path == "training.seq_length");
    CHECK(blockers.front().message.find("4096") != std::string::npos);
}
