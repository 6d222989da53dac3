// SPDX-License-Identifier: MIT
#include "core/parameters.h"

#include "core/muon.h"

namespace memledger {

namespace {

ParamCount matrix(std::int64_t rows, std::int64_t cols)
{
    return {rows * cols,
            rows + cols,
            rows * cols,
            rows * cols,
            1,
            newtonSchulzIterationFlops(rows, cols),
            newtonSchulzWorkingElements(rows, cols)};
}

ParamCount vector(std::int64_t n)
{
    return {n, n, n};
}

ParamCount norm(const ModelConfig &m, std::int64_t n)
{
    // LayerNorm has a weight and a bias, RMSNorm only a weight.
    ParamCount c = vector(n);
    if (m.normalization == Normalization::LayerNorm)
        c += vector(n);
    return c;
}

// A (Swi)GLU or GeLU MLP of width f, split over `split` ranks.
ParamCount mlp(const ModelConfig &m, std::int64_t f, std::int64_t split, bool bias)
{
    const std::int64_t up = m.swiglu ? 2 * f : f;
    ParamCount c = matrix(m.hidden_size, up / split);
    c += matrix(f / split, m.hidden_size);
    if (bias) {
        c += vector(up / split);
        c += vector(m.hidden_size); // row-parallel bias: replicated
    }
    return c;
}

ParamCount attention(const ModelConfig &m, std::int64_t t)
{
    const std::int64_t h = m.hidden_size;
    const std::int64_t a = m.num_attention_heads;
    ParamCount c = norm(m, h);
    if (m.multi_latent_attention) {
        const std::int64_t qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
        if (m.q_lora_rank > 0) {
            c += matrix(h, m.q_lora_rank); // down-projection: duplicated across TP
            c += norm(m, m.q_lora_rank);
            c += matrix(m.q_lora_rank, a * qk / t);
        } else {
            c += matrix(h, a * qk / t);
        }
        c += matrix(h, m.kv_lora_rank + m.qk_pos_emb_head_dim);
        c += norm(m, m.kv_lora_rank);
        c += matrix(m.kv_lora_rank, a * (m.qk_head_dim + m.v_head_dim) / t);
        c += matrix(a * m.v_head_dim / t, h);
        if (m.add_bias_linear)
            c += vector(h);
        return c;
    }
    const std::int64_t d = m.headDim();
    const std::int64_t g = m.queryGroups();
    const std::int64_t qkv = (a + 2 * g) * d;
    c += matrix(h, qkv / t);
    if (m.add_bias_linear || m.add_qkv_bias)
        c += vector(qkv / t);
    c += matrix(a * d / t, h);
    if (m.add_bias_linear)
        c += vector(h);
    return c;
}

} // namespace

std::int64_t paddedVocab(const ModelConfig &model, std::int64_t t)
{
    const std::int64_t multiple = model.make_vocab_size_divisible_by * t;
    return (model.vocab_size + multiple - 1) / multiple * multiple;
}

LayerParams layerParams(const ModelConfig &m, bool moeLayer, std::int64_t t, std::int64_t e, std::int64_t etp)
{
    LayerParams lp;
    lp.dense = attention(m, t);
    const std::int64_t attentionHalf = lp.dense.params;
    lp.dense += norm(m, m.hidden_size);
    if (!moeLayer) {
        lp.dense += mlp(m, m.ffn(), t, m.add_bias_linear);
    } else {
        lp.dense += matrix(m.hidden_size, m.num_experts); // router: replicated
        if (m.moe_shared_expert_intermediate_size > 0)
            lp.dense += mlp(m, m.moe_shared_expert_intermediate_size, t, m.add_bias_linear);
        lp.expert = mlp(m, m.moeFfn(), etp, m.add_bias_linear).scaled(m.num_experts / e);
    }
    lp.mlpDense = lp.dense.params - attentionHalf;
    return lp;
}

EmbeddingParams embeddingParams(const ModelConfig &m, std::int64_t seqLength, std::int64_t t, std::int64_t p)
{
    EmbeddingParams ep;
    const std::int64_t vocab = paddedVocab(m, t);
    ep.word = matrix(vocab / t, m.hidden_size);
    if (m.position_embedding_type == PositionEmbedding::LearnedAbsolute) {
        const std::int64_t positions = m.max_position_embeddings > 0 ? m.max_position_embeddings : seqLength;
        ep.position = matrix(positions, m.hidden_size);
    }
    // Tied weights share one tensor on a single stage; with p > 1 Megatron keeps
    // a copy on the last stage and all-reduces their gradients.
    if (m.untie_embeddings_and_output_weights || p > 1)
        ep.output = matrix(vocab / t, m.hidden_size);
    ep.finalNorm = norm(m, m.hidden_size);
    return ep;
}

std::int64_t totalParameters(const Config &config)
{
    const ModelConfig &m = config.model;
    const LayerParams dense = layerParams(m, false, 1, 1, 1);
    const LayerParams moe = m.isMoe() ? layerParams(m, true, 1, 1, 1) : dense;
    std::int64_t total = 0;
    for (std::int64_t l = 0; l < m.num_layers; ++l) {
        const LayerParams &lp = m.isMoeLayer(l) ? moe : dense;
        total += lp.dense.params + lp.expert.params;
    }
    // The whole model once: tied embeddings count one matrix.
    const EmbeddingParams ep = embeddingParams(m, config.training.seq_length, 1, 1);
    total += ep.word.params + ep.position.params + ep.output.params + ep.finalNorm.params;
    return total;
}

} // namespace memledger
