// SPDX-License-Identifier: MIT
// The sizes MemLedger promises (models up to 10 T parameters on up to 100 k
// GPUs, and up to its hard limits of 100 T parameters and 1 M GPUs) evaluate
// without overflow; beyond the limits a named field refuses them. Under the
// asan preset UBSan turns any signed overflow here into a failure.
#include "core/check/validate.h"
#include "core/model/parameters.h"
#include "core/reports/report.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

// A dense model of about 12 T parameters: 200 swiglu layers of h = 65536.
Config tenTrillionDense()
{
    Config c = scenario("llama-3.1-405b-16k-h100");
    c.model.num_layers = 200;
    c.model.hidden_size = 65536;
    c.model.num_attention_heads = 512;
    c.model.num_query_groups = 64;
    c.model.ffn_hidden_size = 4 * 65536;
    c.parallelism.tensor_model_parallel_size = 8;
    c.parallelism.pipeline_model_parallel_size = 8;
    c.parallelism.data_parallel_size = 1600; // 102,400 GPUs
    c.parallelism.zero_stage = 3;
    c.training.global_batch_size = 1600 * 16;
    return c;
}

// DeepSeek-V3's shape with 4096 routed experts: about 10 T parameters.
Config tenTrillionMoe()
{
    Config c = configFrom(emptyDoc(),
                          {"model=deepseek-v3", "model.num_layers=64", "model.num_experts=4096",
                           "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=16",
                           "parallelism.data_parallel_size=800", "parallelism.expert_model_parallel_size=32",
                           "parallelism.sequence_parallel=true", "parallelism.zero_stage=1", "training.seq_length=4096",
                           "training.global_batch_size=12800"});
    return c;
}

std::string overflowSigns(const Ledger &l)
{
    if (l.peak_bytes <= 0 || l.total_parameters <= 0)
        return "non-positive totals";
    for (const RankLedger &r : l.ranks) {
        Bytes device = 0;
        for (const LedgerEntry &e : r.entries) {
            if (e.bytes < 0)
                return "negative row " + e.label;
            if (e.placement == Placement::Device)
                device += e.bytes;
        }
        if (device != r.device_total_bytes || r.device_total_bytes < r.device[static_cast<int>(Category::Weights)])
            return "device total is not the sum of its rows";
    }
    return {};
}

// No negative, non-finite or null number anywhere in a JSON report.
bool noNegativeNumber(const nlohmann::json &j)
{
    if (j.is_null() || (j.is_number() && !(j.get<double>() >= 0 && std::isfinite(j.get<double>()))))
        return false;
    if (j.is_object() || j.is_array())
        for (const nlohmann::json &x : j)
            if (!noNegativeNumber(x))
                return false;
    return true;
}

bool refusedAt(const Config &c, const std::string &path)
{
    for (const Problem &p : validate(c))
        if (p.isError() && p.path == path)
            return true;
    return false;
}

} // namespace

TEST_CASE("10 T parameters on 100 k GPUs evaluate without overflow", "[limits]")
{
    for (const Config &c : {tenTrillionDense(), tenTrillionMoe()}) {
        INFO(c.model.num_experts);
        REQUIRE_FALSE(hasErrors(validate(c)));
        const Ledger l = computeLedger(c);
        CHECK(l.total_parameters >= 9'500'000'000'000);
        CHECK(l.gpus >= 100'000);
        CHECK(overflowSigns(l) == "");
        // Weights alone: at least the bf16 parameters spread over every model-parallel rank.
        Bytes weights = 0;
        for (const RankLedger &r : l.ranks)
            weights = std::max(weights, r.device[static_cast<int>(Category::Weights)]
                                            + r.host[static_cast<int>(Category::Weights)]);
        CHECK(weights > 0);
        CHECK(l.peak_bytes > weights); // gradients and activations come on top, in 64 bits
        CHECK(noNegativeNumber(ledgerToJson(c, l)));
        const Timeline tl = simulateIteration(c, {200});
        CHECK(std::isfinite(tl.step_time));
        for (const RankTimeline &r : tl.ranks)
            CHECK(r.peak_bytes > 0);
    }
}

TEST_CASE("Up to the hard limits (100 T parameters, 1 M GPUs) still no overflow", "[limits]")
{
    Config c = tenTrillionDense();
    c.model.num_layers = 1536; // ≈ 94 T parameters (swiglu)
    c.parallelism.pipeline_model_parallel_size = 64;
    c.parallelism.data_parallel_size = 1953; // 8·64·1953 = 999,936 GPUs
    c.training.global_batch_size = 1953 * 64;
    c.parallelism.pipeline_schedule = PipelineSchedule::GPipe; // every micro-batch in flight
    for (const Problem &p : validate(c))
        UNSCOPED_INFO(p.toString());
    REQUIRE_FALSE(hasErrors(validate(c)));
    const Ledger l = computeLedger(c);
    CHECK(l.total_parameters > 90'000'000'000'000);
    CHECK(l.gpus == 999'936);
    CHECK(overflowSigns(l) == "");
}

TEST_CASE("Beyond the limits a named field refuses the plan", "[limits]")
{
    SECTION("more than 100 T parameters")
    {
        Config c = tenTrillionDense();
        c.model.num_layers = 2400; // ≈ 147 T
        c.parallelism.pipeline_model_parallel_size = 8;
        CHECK(refusedAt(c, "model.num_layers"));
    }
    SECTION("wide heads count against the parameter limit (kv_channels is free of hidden_size)")
    {
        Config c = tenTrillionDense();
        c.model.num_layers = 1000;
        c.model.hidden_size = 8192;
        c.model.ffn_hidden_size = 8192;
        c.model.num_attention_heads = 65536;
        c.model.num_query_groups = 0;
        c.model.kv_channels = 65536;
        c.parallelism.pipeline_model_parallel_size = 1;
        CHECK(refusedAt(c, "model.num_layers"));
    }
    SECTION("more than a million GPUs")
    {
        Config c = tenTrillionDense();
        c.parallelism.data_parallel_size = 1954; // 8·64·1954 > 1 M
        c.parallelism.pipeline_model_parallel_size = 64;
        CHECK(refusedAt(c, "parallelism.data_parallel_size"));
    }
    SECTION("GPipe with so many micro-batches in flight that activations would overflow")
    {
        Config c = scenario("llama-3-70b-128xh100", {"parallelism.pipeline_schedule=\"gpipe\"",
                                                     "parallelism.virtual_pipeline_model_parallel_size=1",
                                                     "parallelism.data_parallel_size=1", "training.seq_length=65536"});
        c.training.global_batch_size = std::int64_t(1) << 34;
        CHECK(refusedAt(c, "training.seq_length"));
    }
}
