// SPDX-License-Identifier: MIT
// Random VALID configurations for the property tests: small shapes (so that
// thousands of ledgers and timelines run in seconds, under ASan too) drawn
// across dense, MoE and multi-latent attention, every schedule, ZeRO stage,
// recompute and offload option. Shapes are drawn so that doubling t or p
// usually stays valid, which the monotonicity properties need.
#pragma once

#include "core/check/validate.h"
#include "core/config/config.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace memledger::test {

class RandomConfigs
{
public:
    explicit RandomConfigs(std::uint64_t seed)
        : m_rng(seed)
    { }

    // The next configuration that validate() accepts; `rejected` counts the draws it refused.
    Config next()
    {
        for (;;) {
            Config c = draw();
            if (!hasErrors(validate(c))) {
                c.name = "random-" + std::to_string(m_drawn++);
                return c;
            }
            ++rejected;
        }
    }

    std::int64_t rejected = 0;

private:
    template<class T>
    T pick(std::initializer_list<T> options)
    {
        std::uniform_int_distribution<std::size_t> u(0, options.size() - 1);
        return *(options.begin() + static_cast<std::ptrdiff_t>(u(m_rng)));
    }
    std::int64_t between(std::int64_t lo, std::int64_t hi)
    {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(m_rng);
    }
    bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(m_rng); }

    Config draw()
    {
        Config c;
        ModelConfig &m = c.model;
        TrainingConfig &tr = c.training;
        ParallelismConfig &par = c.parallelism;
        StrategyConfig &st = c.strategy;

        const int arch = static_cast<int>(between(0, 2)); // 0 dense, 1 MoE, 2 MLA (+ MoE half the time)
        par.tensor_model_parallel_size = pick<std::int64_t>({1, 1, 2, 4});
        par.pipeline_model_parallel_size = pick<std::int64_t>({1, 1, 2, 4});
        const std::int64_t t = par.tensor_model_parallel_size, p = par.pipeline_model_parallel_size;
        // What each schedule needs (core/check/validate.cpp): GPipe and 1F1B run on any p; the others need a
        // pipeline (p ≥ 2), DualPipe an even p (p is 2 or 4 here). Interleaving runs v ≥ 2 chunks per rank,
        // ZB-V, DualPipe and DualPipeV exactly two; the rest one.
        using S = PipelineSchedule;
        const S sched
            = p >= 2
                  ? pick({S::GPipe, S::OneFOneB, S::Interleaved, S::ZbH1, S::ZbH2, S::ZbV, S::DualPipe, S::DualPipeV})
                  : pick({S::GPipe, S::OneFOneB});
        par.pipeline_schedule = sched;
        const bool twoChunks = sched == S::ZbV || sched == S::DualPipe || sched == S::DualPipeV;
        par.virtual_pipeline_model_parallel_size = sched == S::Interleaved ? pick<std::int64_t>({2, 3})
                                                   : twoChunks             ? 2
                                                                           : 1;
        const std::int64_t v = par.virtual_pipeline_model_parallel_size;
        // Layers divisible by 2p·v, so that doubling p stays valid: the p·v stages (p for DualPipe, whose two
        // chunks per rank are one stage of each direction), and the V's 2p equal chunks, divide them.
        m.num_layers = 2 * p * v * between(1, 2);

        m.num_attention_heads = pick<std::int64_t>({8, 16, 32});
        m.hidden_size = m.num_attention_heads * pick<std::int64_t>({16, 32, 64});
        m.num_query_groups = pick<std::int64_t>({0, 8, m.num_attention_heads});
        m.ffn_hidden_size = 256 * between(1, 8);
        m.swiglu = coin();
        m.normalization = coin() ? Normalization::RMSNorm : Normalization::LayerNorm;
        m.add_bias_linear = coin();
        m.position_embedding_type = coin() ? PositionEmbedding::Rope : PositionEmbedding::LearnedAbsolute;
        m.untie_embeddings_and_output_weights = coin();
        m.vocab_size = between(500, 40000);
        if (arch == 2) {
            m.multi_latent_attention = true;
            m.q_lora_rank = pick<std::int64_t>({0, 128});
            m.kv_lora_rank = pick<std::int64_t>({64, 128});
            m.qk_head_dim = 32;
            m.qk_pos_emb_head_dim = 16;
            m.v_head_dim = 32;
            m.position_embedding_type = PositionEmbedding::Rope;
        }
        if (arch == 1 || (arch == 2 && coin())) {
            m.num_experts = pick<std::int64_t>({4, 8, 16});
            m.moe_router_topk = pick<std::int64_t>({1, 2, 4});
            m.moe_ffn_hidden_size = 256 * between(0, 4);
            m.moe_shared_expert_intermediate_size = coin(0.3) ? 512 : 0;
            m.moe_layer_freq = pick<std::int64_t>({1, 1, 2});
            m.first_k_dense_replace = coin(0.3) ? 1 : 0;
            par.sequence_parallel = t > 1 || coin();
        } else {
            par.sequence_parallel = t > 1 && coin();
        }

        par.data_parallel_size = pick<std::int64_t>({1, 2, 4, 8});
        par.context_parallel_size = pick<std::int64_t>({1, 1, 2});
        if (m.isMoe()) {
            par.expert_model_parallel_size = pick<std::int64_t>({1, 2, 4});
            par.expert_tensor_parallel_size = pick<std::int64_t>({0, 0, 1});
        }
        tr.seq_length = pick<std::int64_t>({256, 512, 1024});
        tr.micro_batch_size = pick<std::int64_t>({1, 2});
        // Micro-batches per iteration: interleaving needs a multiple of p, DualPipe and DualPipeV at least 2p
        // (DualPipe an even number); 2p or 4p meet both, and 4p still does once p is doubled.
        const bool multipleOfP = sched == S::Interleaved || sched == S::DualPipe || sched == S::DualPipeV;
        const std::int64_t micro = multipleOfP ? 2 * p * between(1, 2) : between(1, 8);
        tr.global_batch_size = micro * tr.micro_batch_size * par.data_parallel_size;
        tr.params_dtype = pick({Dtype::BF16, Dtype::BF16, Dtype::FP16, Dtype::FP32});
        tr.main_params_fp32 = tr.params_dtype != Dtype::FP32 ? coin(0.8) : true;
        tr.main_grads_dtype = tr.params_dtype == Dtype::FP32 ? Dtype::FP32 : pick({Dtype::FP32, Dtype::BF16});
        tr.optimizer = pick({Optimizer::Adam, Optimizer::AdamW, Optimizer::SGD, Optimizer::Adafactor,
                             Optimizer::Adam8bit, Optimizer::Muon});

        par.zero_stage = static_cast<int>(between(0, 3));
        st.recompute_granularity
            = pick({RecomputeGranularity::None, RecomputeGranularity::Selective, RecomputeGranularity::Full});
        st.recompute_method = coin() ? RecomputeMethod::Uniform : RecomputeMethod::Block;
        st.recompute_num_layers = between(1, 2);
        st.flash_attention = coin(0.8);
        st.dropout_mask_dtype = coin() ? DropoutMaskDtype::Bool : DropoutMaskDtype::Activation;
        st.norm_stats_dtype = pick({NormStatsDtype::FP32, NormStatsDtype::Activation, NormStatsDtype::None});
        st.sp_linear_saves = coin() ? SpLinearSaves::Shard : SpLinearSaves::Gathered;
        st.optimizer_offload
            = pick({OffloadTarget::None, OffloadTarget::None, OffloadTarget::CPU, OffloadTarget::NVMe});
        st.grad_offload
            = st.optimizer_offload != OffloadTarget::None && coin(0.5) ? OffloadTarget::CPU : OffloadTarget::None;
        st.param_offload = par.zero_stage == 3 && coin(0.3) ? OffloadTarget::CPU : OffloadTarget::None;
        st.activation_offload = coin(0.3) ? OffloadTarget::CPU : OffloadTarget::None;
        st.activation_offload_buffers = between(1, 3);
        st.grad_buffer = coin() ? GradBuffer::Contiguous : GradBuffer::OnDemand;
        st.cross_entropy = coin() ? CrossEntropy::VocabParallel : CrossEntropy::Unfused;
        st.optimizer_kernel = pick({OptimizerKernel::Fused, OptimizerKernel::Foreach, OptimizerKernel::SingleTensor});
        st.gradient_accumulation_fusion = coin(0.7);
        st.moe_expert_capacity_factor = coin(0.3) ? 1.25 : 0.0;
        st.ddp_bucket_size = pick<std::int64_t>({1000000, 40000000});
        // The architecture variants of Nemotron-4, BLOOM and Qwen3, drawn last so that the draws above stay as
        // they were.
        m.squared_relu = !m.swiglu && coin(0.3);
        m.apply_layernorm_1p = m.normalization == Normalization::LayerNorm && coin(0.3);
        m.qk_layernorm = coin(0.3);
        m.embed_layernorm = coin(0.2);
        if (!m.multi_latent_attention && coin(0.2))
            m.position_embedding_type = PositionEmbedding::Alibi;
        // The runtime reserve in named parts (core/model/runtimereserve.h), drawn after the rest.
        c.hardware.runtime_reserve = coin(0.3) ? RuntimeReserveMode::Modelled : RuntimeReserveMode::Bytes;
        return c;
    }

    std::mt19937_64 m_rng;
    std::int64_t m_drawn = 0;
};

// The same draws as a Catch2 generator: GENERATE(take(N, randomConfigs(seed))).
class RandomConfigGenerator : public Catch::Generators::IGenerator<Config>
{
public:
    explicit RandomConfigGenerator(std::uint64_t seed)
        : m_configs(seed)
        , m_current(m_configs.next())
    { }
    const Config &get() const override { return m_current; }
    bool next() override
    {
        m_current = m_configs.next();
        return true;
    }

private:
    RandomConfigs m_configs;
    Config m_current;
};

inline Catch::Generators::GeneratorWrapper<Config> randomConfigs(std::uint64_t seed)
{
    return Catch::Generators::GeneratorWrapper<Config>(std::make_unique<RandomConfigGenerator>(seed));
}

} // namespace memledger::test
