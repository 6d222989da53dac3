// SPDX-License-Identifier: MIT
// One test per validation rule: the field path, the reason and a suggestion.
#include "core/check/validate.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

Config base()
{
    return scenario("llama-3-70b-128xh100");
}

// A copy, so that callers may pass a temporary list.
std::optional<Problem> find(const Problems &problems, const std::string &path,
                            Problem::Severity severity = Problem::Severity::Error, const std::string &containing = {})
{
    for (const Problem &p : problems)
        if (p.path == path && p.severity == severity && p.toString().find(containing) != std::string::npos)
            return p;
    return std::nullopt;
}

} // namespace

TEST_CASE("The default scenario is valid", "[validate]")
{
    CHECK(validate(base()).empty());
}

TEST_CASE("Heads and query groups must divide by t", "[validate]")
{
    Config c = base();
    c.parallelism.tensor_model_parallel_size = 3;
    const Problems p = validate(c);
    const auto heads = find(p, "parallelism.tensor_model_parallel_size");
    REQUIRE(heads);
    CHECK(heads->message.find("num_attention_heads (64)") != std::string::npos);
    CHECK(heads->suggestion.find("2 or 4") != std::string::npos);

    c = base();
    c.parallelism.tensor_model_parallel_size = 16; // 64 heads divide, 8 query groups do not
    const auto groups = find(validate(c), "parallelism.tensor_model_parallel_size");
    REQUIRE(groups);
    CHECK(groups->message.find("num_query_groups (8)") != std::string::npos);
}

TEST_CASE("Every rule on t gives the same advice: a degree that divides them all", "[validate]")
{
    // Llama-3-70B: 64 heads, 8 query groups, FFN 28672 (divisible by 7), SP on.
    // t = 5 once gave "4 or 8" for the heads and "4 or 7" for the FFN.
    Config c = base();
    c.parallelism.tensor_model_parallel_size = 5;
    const Problems p = validate(c);
    int rules = 0;
    for (const Problem &q : p)
        if (q.path == "parallelism.tensor_model_parallel_size" || q.path == "training.seq_length") {
            ++rules;
            CAPTURE(q.toString());
            CHECK(q.suggestion.find("use tensor_model_parallel_size 4 or 8") != std::string::npos);
        }
    CHECK(rules >= 3); // heads, query groups, FFN (and the sequence under SP)
}

TEST_CASE("Heads must divide by query groups", "[validate]")
{
    Config c = base();
    c.model.num_query_groups = 5;
    CHECK(find(validate(c), "model.num_query_groups"));
}

TEST_CASE("Layers must divide by p * v", "[validate]")
{
    Config c = base();
    c.parallelism.pipeline_model_parallel_size = 3;
    c.parallelism.data_parallel_size = 4;
    const auto p = find(validate(c), "model.num_layers");
    REQUIRE(p);
    CHECK(p->message.find("80") != std::string::npos);
    CHECK_FALSE(p->suggestion.empty());

    c = base();
    c.parallelism.virtual_pipeline_model_parallel_size = 3; // 4 x 3 = 12 does not divide 80
    c.parallelism.pipeline_schedule = PipelineSchedule::Interleaved;
    CHECK(find(validate(c), "model.num_layers"));
}

TEST_CASE("Experts must divide by e, and the expert grid must tile the GPUs", "[validate]")
{
    Config c = scenario("llama-3-70b-128xh100", {"model.num_experts=8", "model.moe_router_topk=2"});
    c.parallelism.expert_model_parallel_size = 3;
    CHECK(find(validate(c), "parallelism.expert_model_parallel_size"));
    c.parallelism.expert_model_parallel_size = 64; // 8 experts cannot spread over 64 ranks either
    CHECK(find(validate(c), "parallelism.expert_model_parallel_size"));
    c.parallelism.expert_model_parallel_size = 4;
    CHECK_FALSE(hasErrors(validate(c)));
    c.parallelism.sequence_parallel = false; // Megatron: MoE + TP needs SP
    CHECK(find(validate(c), "parallelism.sequence_parallel"));
    Config dense = base();
    dense.parallelism.expert_model_parallel_size = 2;
    CHECK(find(validate(dense), "parallelism.expert_model_parallel_size"));
}

TEST_CASE("Context parallelism needs the sequence divisible by 2c", "[validate]")
{
    Config c = base();
    c.parallelism.context_parallel_size = 3;
    const auto p = find(validate(c), "training.seq_length", Problem::Severity::Error, "2·c");
    REQUIRE(p);
    CHECK(p->message.find("not divisible by 6") != std::string::npos);
    c.parallelism.context_parallel_size = 4;
    CHECK_FALSE(hasErrors(validate(c)));
}

TEST_CASE("Sequence parallelism needs the local sequence divisible by t", "[validate]")
{
    Config c = base();
    c.training.seq_length = 8196;
    CHECK(find(validate(c), "training.seq_length"));
}

TEST_CASE("Micro-batches: global batch divisible by b*d — fewer than p warns — interleaved needs a multiple of p",
          "[validate]")
{
    Config c = base();
    c.training.global_batch_size = 510;
    CHECK(find(validate(c), "training.global_batch_size"));
    c.training.global_batch_size = 8; // 2 micro-batches for 4 stages
    CHECK(find(validate(c), "training.global_batch_size", Problem::Severity::Warning));
    CHECK_FALSE(hasErrors(validate(c)));
    c.parallelism.virtual_pipeline_model_parallel_size = 2;
    c.parallelism.pipeline_schedule = PipelineSchedule::Interleaved;
    c.training.global_batch_size = 24; // 6 micro-batches, not a multiple of 4
    CHECK(find(validate(c), "training.global_batch_size"));
}

TEST_CASE("Schedules and virtual stages must agree", "[validate]")
{
    Config c = base();
    c.parallelism.virtual_pipeline_model_parallel_size = 2;
    c.parallelism.pipeline_schedule = PipelineSchedule::OneFOneB;
    CHECK(find(validate(c), "parallelism.pipeline_schedule"));
    c.parallelism.virtual_pipeline_model_parallel_size = 1;
    c.parallelism.pipeline_schedule = PipelineSchedule::Interleaved;
    CHECK(find(validate(c), "parallelism.virtual_pipeline_model_parallel_size"));
}

TEST_CASE("Hidden size must divide by heads unless kv_channels is given", "[validate]")
{
    Config c = base();
    c.model.hidden_size = 8200;
    CHECK(find(validate(c), "model.hidden_size"));
    c.model.kv_channels = 128;
    CHECK_FALSE(find(validate(c), "model.hidden_size"));
}

TEST_CASE("Learned positions bound the sequence", "[validate]")
{
    Config c = scenario("gpt-3-175b-64gpus-tp-only");
    c.training.seq_length = 4096;
    CHECK(find(validate(c), "training.seq_length"));
}

TEST_CASE("Parameter offload needs ZeRO-3", "[validate]")
{
    Config c = base();
    c.strategy.param_offload = OffloadTarget::CPU;
    CHECK(find(validate(c), "strategy.param_offload"));
    c.parallelism.zero_stage = 3;
    CHECK_FALSE(find(validate(c), "strategy.param_offload"));
}

TEST_CASE("overlap_param_gather needs the distributed optimizer and overlap_grad_reduce, as Megatron's arguments",
          "[validate][time]")
{
    Config c = base();
    c.parallelism.zero_stage = 0;
    c.strategy.overlap_grad_reduce = true;
    c.strategy.overlap_param_gather = true;
    CHECK(find(validate(c), "strategy.overlap_param_gather", Problem::Severity::Error, "zero_stage"));
    c.parallelism.zero_stage = 1;
    CHECK_FALSE(find(validate(c), "strategy.overlap_param_gather"));
    c.strategy.overlap_grad_reduce = false;
    CHECK(find(validate(c), "strategy.overlap_param_gather", Problem::Severity::Error, "overlap_grad_reduce"));
}

TEST_CASE("Negative and zero sizes in a hand-built configuration", "[validate]")
{
    Config c = base();
    c.model.num_layers = 0;
    c.training.micro_batch_size = -2;
    c.model.ffn_hidden_size = -1;
    const Problems p = validate(c);
    CHECK(find(p, "model.num_layers"));
    CHECK(find(p, "training.micro_batch_size"));
    CHECK(find(p, "model.ffn_hidden_size"));
}

TEST_CASE("Sizes that would overflow are refused", "[validate]")
{
    Config c = base();
    c.training.seq_length = 16'000'000;
    c.training.micro_batch_size = 64;
    CHECK(find(validate(c), "training.seq_length"));
    Config huge = base();
    huge.model.num_layers = 100000;
    huge.model.hidden_size = 1 << 20;
    CHECK(find(validate(huge), "model.num_layers"));
    Config many = base();
    many.parallelism.data_parallel_size = 1 << 20;
    CHECK(find(validate(many), "parallelism.data_parallel_size"));
}

TEST_CASE("Warnings do not block the ledger", "[validate]")
{
    Config c = base();
    c.parallelism.tensor_model_parallel_size = 1;
    c.parallelism.data_parallel_size = 1;
    c.parallelism.zero_stage = 1;
    const Problems p = validate(c);
    CHECK(find(p, "parallelism.sequence_parallel", Problem::Severity::Warning));
    CHECK(find(p, "parallelism.zero_stage", Problem::Severity::Warning));
    CHECK_FALSE(hasErrors(p));
    CHECK(computeLedger(c).warnings.size() >= 2);
}

TEST_CASE("Efficiency tables: empty, above 1, falling or unordered are refused, naming the entry", "[validate][time]")
{
    const auto check = [](EfficiencyTable table, const std::string &path, const std::string &words) {
        Config c = base();
        c.hardware.gemm_efficiency = std::move(table);
        const Problems p = validate(c);
        CAPTURE(path, words);
        for (const Problem &q : p)
            UNSCOPED_INFO(q.toString());
        CHECK(find(p, path, Problem::Severity::Error, words));
    };
    check({}, "hardware.gemm_efficiency", "at least one");
    check({{1e9, 0.5}, {1e10, 1.2}}, "hardware.gemm_efficiency[1]", "(0, 1]");
    check({{1e9, 0.0}}, "hardware.gemm_efficiency[0]", "(0, 1]");
    check({{1e9, 0.8}, {1e10, 0.6}}, "hardware.gemm_efficiency[1]", "must not fall");
    check({{1e10, 0.5}, {1e9, 0.6}}, "hardware.gemm_efficiency[1]", "strictly ascending");
    check({{-1, 0.5}}, "hardware.gemm_efficiency[0]", "positive");

    Config c = base();
    c.hardware.network_efficiency = {{1e6, 0.9}, {1e7, 0.4}};
    CHECK(find(validate(c), "hardware.network_efficiency[1]"));
    // The shipped tables are valid, and a single point is a constant fraction.
    CHECK_FALSE(hasErrors(validate(base())));
    c = base();
    c.hardware.gemm_efficiency = {{1e9, 0.7}};
    CHECK_FALSE(hasErrors(validate(c)));
}

TEST_CASE("Efficiency tables interpolate in log size and hold at the ends", "[time]")
{
    const EfficiencyTable t = {{1e6, 0.2}, {1e8, 0.6}};
    CHECK(efficiencyAt(t, 1.0) == 0.2);
    CHECK(efficiencyAt(t, 1e6) == 0.2);
    CHECK(efficiencyAt(t, 1e7) == Approx(0.4)); // halfway in log(size)
    CHECK(efficiencyAt(t, 1e8) == Approx(0.6));
    CHECK(efficiencyAt(t, 1e12) == 0.6);
    CHECK(efficiencyAt({}, 1e7) == 1.0);
}

TEST_CASE("A sequence beyond a learned position table suggests a shorter sequence, not another model", "[validate]")
{
    // GPT-3 learned 2,048 positions (Brown et al. 2020, §2.1: n_ctx = 2048): a 4,096-token sequence has no
    // embedding for half its positions. The sequence is the plan's to change; the model's table is not.
    Config c = scenario("gpt-3-175b-64gpus-tp-only");
    c.training.seq_length = 4096;
    const auto p = find(validate(c), "training.seq_length");
    REQUIRE(p);
    CHECK(p->suggestion == "use seq_length 2048 or less");
}
