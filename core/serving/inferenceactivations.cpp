// SPDX-License-Identifier: MIT
#include "core/serving/inferenceactivations.h"

#include "core/model/parameters.h"
#include "core/serving/inference.h"

#include <algorithm>

namespace memledger {

namespace {

// Serving computes in 16-bit whatever the weights are stored in: int4/int8
// kernels dequantise into bf16/fp16 GEMMs (W4A16, W8A16), and fp8 GEMMs
// write 16-bit outputs.
constexpr Bytes kActBytes = 2;

std::string num(std::int64_t v)
{
    return formatThousands(v);
}

} // namespace

ForwardShape prefillShape(const Config &config, const InferenceConfig &resolved)
{
    (void)config;
    const std::int64_t ctx = resolved.context_length.value_or(1);
    const std::int64_t all = resolved.batch_size * ctx;
    const std::int64_t n = resolved.prefill_chunk_tokens > 0 ? std::min(resolved.prefill_chunk_tokens, all) : all;
    ForwardShape s;
    s.tokens = n;
    s.sequences = std::min(resolved.batch_size, (n + ctx - 1) / ctx);
    s.query_length = std::min(n, ctx);
    // The chunk's last tokens attend to the whole context; unfused attention
    // materialises full rows even under a sliding-window mask.
    s.key_length = ctx;
    return s;
}

ForwardShape decodeShape(const Config &config, const InferenceConfig &resolved)
{
    ForwardShape s;
    s.tokens = resolved.batch_size;
    s.sequences = resolved.batch_size;
    s.query_length = 1;
    s.key_length = cachedTokens(config.model, resolved.context_length.value_or(1));
    return s;
}

WorkingSet forwardWorkingSet(const Config &config, const ForwardShape &shape, bool denseLayers, bool moeLayers,
                             bool lastStage)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t e = std::max<std::int64_t>(1, par.expert_model_parallel_size);
    const std::int64_t etp = std::max<std::int64_t>(1, par.expertTensorParallel());
    const std::int64_t n = shape.tokens;
    const std::int64_t h = m.hidden_size;
    const std::int64_t headsT = std::max<std::int64_t>(1, m.num_attention_heads / t);
    WorkingSet w;
    w.shape = shape;
    w.residual = 2 * n * h * kActBytes;

    // Attention: the projections' outputs and the attention output alive
    // together; without FlashAttention the scores and their softmax too
    // (eager attention), with it only on-chip tiles (Dao et al. 2022).
    std::int64_t attn = 0;
    if (m.multi_latent_attention) {
        const std::int64_t qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
        attn = n * headsT * qk + n * (m.kv_lora_rank + m.qk_pos_emb_head_dim) + n * headsT * m.v_head_dim;
        if (shape.query_length > 1) // prefill up-projects the latent of the attended keys (vLLM's MLA prefill)
            attn += shape.sequences * shape.key_length * headsT * (qk + m.v_head_dim);
        else // decode absorbs the up-projections: queries in the latent space
            attn += n * headsT * (m.kv_lora_rank + m.qk_pos_emb_head_dim);
    } else {
        const std::int64_t d = m.headDim();
        attn = n * (headsT + 2 * kvHeadsPerRank(m, t)) * d + n * headsT * d;
    }
    if (!config.strategy.flash_attention)
        attn += 2 * shape.sequences * headsT * shape.query_length * shape.key_length;
    w.attention = attn * kActBytes;

    // MLP: gate and up (2f) and the activation (f) for SwiGLU, fc1's output
    // and GeLU's for a plain MLP, split by t.
    const auto mlpWidth = [&](std::int64_t f, std::int64_t split) { return (m.swiglu ? 3 * f : 2 * f) / split; };
    if (denseLayers)
        w.mlp = n * mlpWidth(m.ffn(), t) * kActBytes;
    if (moeLayers) {
        const std::int64_t k = m.moe_router_topk;
        // Balanced routing: this rank's experts see their share n·k/e of the token copies.
        const std::int64_t local = (n * k + e - 1) / e;
        Bytes experts = local * mlpWidth(m.moeFfn(), etp) * kActBytes;
        if (m.moe_shared_expert_intermediate_size > 0)
            experts += n * mlpWidth(m.moe_shared_expert_intermediate_size, t) * kActBytes;
        w.mlp = std::max(w.mlp, experts);
        // fp32 router logits, int32 ids and fp32 weights of the top k, the
        // permuted token copies sent out and the expert outputs coming back.
        w.moe_routing = n * m.num_experts * 4 + n * k * 8 + 2 * n * k * h * kActBytes;
    }
    // The sampler reads fp32 logits of each sequence's last position only
    // (vLLM computes no logits for the other prompt tokens), gathered to the
    // whole vocabulary.
    if (lastStage)
        w.logits = shape.sequences * paddedVocab(m, t) * 4;

    const Bytes layer = w.residual + std::max(w.attention, w.mlp + w.moe_routing);
    const Bytes head = n * h * kActBytes + w.logits;
    w.total = std::max(layer, head);
    w.formula = num(n) + " tokens: residual 2·n·h " + formatGB(double(w.residual)) + " + max(attention "
                + formatGB(double(w.attention)) + ", MLP " + formatGB(double(w.mlp))
                + (moeLayers ? " + MoE routing " + formatGB(double(w.moe_routing)) : std::string()) + ")"
                + (lastStage ? "; logits " + formatGB(double(w.logits)) : std::string())
                + (config.strategy.flash_attention ? "; FlashAttention: no s×s scores" : "; eager attention scores");
    return w;
}

} // namespace memledger
