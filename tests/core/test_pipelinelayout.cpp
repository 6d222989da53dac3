// SPDX-License-Identifier: MIT
// Uneven pipeline stages (parallelism.pipeline_layout): Megatron's
// --pipeline-model-parallel-layout / --decoder-first/last-pipeline-num-layers,
// how DeepSeek-V3's 61 layers are split. The in-flight rule per chunk is the
// schedule's own (1F1B: rank r holds p - r micro-batches), so a rank's layer
// activations scale with the layers its chunks hold.
#include "core/check/validate.h"
#include "core/config/editrules.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

Config dense(std::int64_t p, std::int64_t v, std::int64_t microBatches, std::vector<std::int64_t> layout = {})
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 8}, {"hidden_size", 1024}, {"num_attention_heads", 16}};
    doc["training"] = {{"seq_length", 1024}, {"micro_batch_size", 1}, {"global_batch_size", microBatches}};
    doc["parallelism"] = {{"pipeline_model_parallel_size", p}, {"virtual_pipeline_model_parallel_size", v}};
    if (!layout.empty())
        doc["parallelism"]["pipeline_layout"] = layout;
    // Read, not validated: some cases here are meant to be refused.
    LoadResult r = presetFromJson(doc);
    REQUIRE(r.config.has_value());
    return *r.config;
}

bool names(const Problems &problems, const std::string &path)
{
    for (const Problem &p : problems)
        if (p.path == path && p.isError())
            return true;
    return false;
}

} // namespace

TEST_CASE("A layout equal to the even split changes nothing", "[pipeline_layout]")
{
    const Ledger even = computeLedger(dense(4, 2, 16));
    const Ledger listed = computeLedger(dense(4, 2, 16, {1, 1, 1, 1, 1, 1, 1, 1}));
    REQUIRE(even.ranks.size() == listed.ranks.size());
    for (std::size_t r = 0; r < even.ranks.size(); ++r) {
        CHECK(listed.ranks[r].device == even.ranks[r].device);
        CHECK(listed.ranks[r].layers == 2);
    }
}

TEST_CASE("1F1B with stages of 3 and 5 layers: activations follow the layers each rank holds",
          "[pipeline_layout][reference]")
{
    // p = 2: rank 0 holds 2 micro-batches in flight, rank 1 holds 1 (p - r).
    const Ledger even = computeLedger(dense(2, 1, 8));
    const Ledger uneven = computeLedger(dense(2, 1, 8, {3, 5}));
    CHECK(uneven.ranks[0].layers == 3);
    CHECK(uneven.ranks[1].layers == 5);
    const Bytes evenRank0 = entryBytes(even.ranks[0], Category::Activations, "Transformer layers"); // 2 mb × 4 layers
    const Bytes evenRank1 = entryBytes(even.ranks[1], Category::Activations, "Transformer layers"); // 1 mb × 4 layers
    CHECK(evenRank0 == 2 * evenRank1);
    CHECK(entryBytes(uneven.ranks[0], Category::Activations, "Transformer layers") * 4 == evenRank0 * 3);
    CHECK(entryBytes(uneven.ranks[1], Category::Activations, "Transformer layers") * 4 == evenRank1 * 5);
    // Weights follow the layers too: rank 1 holds 5 of 8 layers (and the output layer either way).
    CHECK(uneven.ranks[1].device[std::size_t(Category::Weights)]
          > even.ranks[1].device[std::size_t(Category::Weights)]);
    CHECK(uneven.ranks[0].device[std::size_t(Category::Weights)]
          < even.ranks[0].device[std::size_t(Category::Weights)]);
}

TEST_CASE("Interleaved chunks may hold different layer counts, even none", "[pipeline_layout]")
{
    // p = 2, v = 2: stages 0..3 are rank 0 chunk 0, rank 1 chunk 0, rank 0 chunk 1, rank 1 chunk 1.
    const Config c = dense(2, 2, 8, {0, 4, 3, 1});
    REQUIRE_FALSE(hasErrors(validate(c)));
    const Ledger l = computeLedger(c);
    CHECK(l.ranks[0].layers == 3);
    CHECK(l.ranks[1].layers == 5);
    const Timeline tl = simulateIteration(c);
    REQUIRE(tl.ranks.size() == 2);
    // The simulated peak holds at least what the ledger counts (test_timeline's relation),
    // and the chunks follow the interleaved staircase whatever their layers.
    for (std::size_t r = 0; r < 2; ++r) {
        CHECK(tl.ranks[r].peak_bytes >= l.ranks[r].device_total_bytes);
        CHECK(tl.ranks[r].max_alive_microbatches == Approx(2.0 + (2.0 - 2.0 * double(r) - 1.0) / 2.0));
    }
}

TEST_CASE("A layout that does not fit the pipeline is refused, naming the field", "[pipeline_layout][validate]")
{
    CHECK(names(validate(dense(2, 1, 8, {3, 3, 2})), "parallelism.pipeline_layout")); // 3 stages for p·v = 2
    CHECK(names(validate(dense(2, 1, 8, {3, 4})), "parallelism.pipeline_layout")); // 7 of 8 layers
    CHECK_FALSE(names(validate(dense(2, 1, 8, {3, 5})), "parallelism.pipeline_layout"));
    // 8 layers over 3 stages is refused without a layout and accepted with one.
    CHECK(names(validate(dense(3, 1, 9)), "model.num_layers"));
    CHECK_FALSE(hasErrors(validate(dense(3, 1, 9, {2, 3, 3}))));
}

TEST_CASE("pipeline_layout reads and writes as a list of counts", "[pipeline_layout][preset]")
{
    const Config c = dense(2, 1, 8, {3, 5});
    const LoadResult back = presetFromText(presetToText(c), "round trip");
    REQUIRE(back.config);
    CHECK(back.config->parallelism.pipeline_layout == std::vector<std::int64_t>{3, 5});
    CHECK(presetToText(dense(2, 1, 8)).find("pipeline_layout") == std::string::npos);

    nlohmann::json doc = emptyDoc();
    doc["parallelism"] = {{"pipeline_layout", "3,5"}};
    const LoadResult bad = presetFromText(doc.dump(), "bad");
    CHECK_FALSE(bad.config);
    CHECK(names(bad.problems, "parallelism.pipeline_layout"));
    doc["parallelism"] = {{"pipeline_layout", {3, -1}}};
    CHECK(names(presetFromText(doc.dump(), "negative").problems, "parallelism.pipeline_layout"));
}

TEST_CASE("The ledger says when the stages come from pipeline_layout", "[pipeline_layout][ledger]")
{
    const auto mentions = [](const Ledger &l) {
        for (const std::string &choice : l.choices)
            if (choice.find("pipeline_layout [3,5]") != std::string::npos)
                return true;
        return false;
    };
    CHECK(mentions(computeLedger(dense(2, 1, 8, {3, 5}))));
    CHECK_FALSE(mentions(computeLedger(dense(2, 1, 8))));
}

TEST_CASE("A new p or v drops a layout that lists another pipeline's stages", "[pipeline_layout]")
{
    // The control panel's p and v controls and the CLI's --set share this rule.
    ParallelismConfig par = dense(4, 2, 16, {2, 0, 1, 1, 1, 1, 1, 1}).parallelism;
    CHECK_FALSE(dropStaleLayout(par)); // 8 entries for p·v = 4·2 = 8: kept
    CHECK(par.pipeline_layout.size() == 8);

    par.pipeline_model_parallel_size = 2; // 8 entries, p·v = 2·2 = 4
    CHECK(dropStaleLayout(par));
    CHECK(par.pipeline_layout.empty());
    CHECK_FALSE(dropStaleLayout(par)); // nothing left to drop

    // v alone: 4·1 = 4 stages against 8 entries.
    ParallelismConfig byV = dense(4, 2, 16, {2, 0, 1, 1, 1, 1, 1, 1}).parallelism;
    byV.virtual_pipeline_model_parallel_size = 1;
    CHECK(dropStaleLayout(byV));
    CHECK(byV.pipeline_layout.empty());

    // A layout that still lists p·v stages stays even when p and v trade places (2·4 = 8).
    ParallelismConfig traded = dense(4, 2, 16, {2, 0, 1, 1, 1, 1, 1, 1}).parallelism;
    traded.pipeline_model_parallel_size = 2;
    traded.virtual_pipeline_model_parallel_size = 4;
    CHECK_FALSE(dropStaleLayout(traded));

    // Dropped, the even split takes over: 8 layers over p·v = 2·2 stages, 2 each, 4 per rank.
    Config config = dense(4, 2, 16, {2, 0, 1, 1, 1, 1, 1, 1});
    config.parallelism.pipeline_model_parallel_size = 2;
    CHECK(names(validate(config), "parallelism.pipeline_layout"));
    dropStaleLayout(config.parallelism);
    CHECK_FALSE(names(validate(config), "parallelism.pipeline_layout"));
    const Ledger ledger = computeLedger(config);
    REQUIRE(ledger.ranks.size() == 2);
    CHECK(ledger.ranks[0].layers == 4);
    CHECK(ledger.ranks[1].layers == 4);
}

TEST_CASE("A split that does not divide the layers suggests splits and a layout, never another layer count",
          "[pipeline_layout][validate]")
{
    // Llama 3 70B's 80 layers on 3 stages: a user cannot change a built-in model's depth; they can pick p and v
    // or list each stage's layers.
    Config c = scenario("llama-3-70b-128xh100");
    setPipelineSize(c.parallelism, 3);
    const Problems problems = validate(c);
    const Problem *split = nullptr;
    for (const Problem &p : problems)
        if (p.path == "model.num_layers" && p.isError())
            split = &p;
    REQUIRE(split != nullptr);
    INFO(split->suggestion);
    CHECK(split->suggestion.find("num_layers") == std::string::npos);
    CHECK(split->suggestion.find("p·v = 2 or 4") != std::string::npos);
    CHECK(split->suggestion.find("pipeline_layout [27, 27, 26]") != std::string::npos);
    // The layout suggested clears the error: 27 + 27 + 26 = 80.
    c.parallelism.pipeline_layout = {27, 27, 26};
    for (const Problem &p : validate(c))
        CHECK_FALSE((p.isError() && (p.path == "model.num_layers" || p.path == "parallelism.pipeline_layout")));

    // ZB-V on 3 ranks: 6 chunks of 80 layers do not divide; p = 2 or 4 (2p divides 80), or a layout of 6.
    Config v = scenario("llama-3-70b-128xh100");
    setSchedule(v.parallelism, PipelineSchedule::ZbV);
    setPipelineSize(v.parallelism, 3);
    bool named = false;
    for (const Problem &p : validate(v))
        if (p.path == "model.num_layers" && p.isError()) {
            INFO(p.suggestion);
            named = true;
            CHECK(p.suggestion.find("num_layers") == std::string::npos);
            CHECK(p.suggestion.find("pipeline_model_parallel_size 2 or 4") != std::string::npos);
            CHECK(p.suggestion.find("pipeline_layout [13, 14, 14, 13, 13, 13]") != std::string::npos);
        }
    CHECK(named);
}
