// SPDX-License-Identifier: MIT
#include "core/model/parameters.h"

#include "core/model/muon.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

namespace memledger {

namespace {

ParamCount matrix(std::int64_t rows, std::int64_t cols)
{
    return {.params = rows * cols,
            .factoredState = rows + cols,
            .largest = rows * cols,
            .matrixParams = rows * cols,
            .matrices = 1,
            .nsFlops = newtonSchulzIterationFlops(rows, cols),
            .nsWorkingElements = newtonSchulzWorkingElements(rows, cols)};
}

ParamCount vector(std::int64_t n)
{
    return {.params = n, .factoredState = n, .largest = n};
}

// The same counts in long double (elements only), for a limit that must judge
// any input without overflowing: the shapes below are written once, for both.
struct WideCount
{
    long double params = 0;
    WideCount &operator+=(const WideCount &o)
    {
        params += o.params;
        return *this;
    }
    WideCount scaled(long double k) const { return {params * k}; }
};

WideCount matrix(long double rows, long double cols)
{
    return {rows * cols};
}

WideCount vector(long double n)
{
    return {n};
}

// The same shapes tensor by tensor: an element count that, given to matrix()
// and vector(), lists each tensor instead of summing them, so that the
// allocation stream (core/timeline/allocationstream.h) allocates parameters,
// gradients and optimizer states one tensor at a time as PyTorch does.
struct Listed
{
    std::int64_t n = 0;
    Listed(std::int64_t v = 0) // NOLINT(google-explicit-constructor): arithmetic with plain counts
        : n(v)
    { }
    friend Listed operator+(Listed a, Listed b) { return a.n + b.n; }
    friend Listed operator-(Listed a, Listed b) { return a.n - b.n; }
    friend Listed operator*(Listed a, Listed b) { return a.n * b.n; }
    friend Listed operator/(Listed a, Listed b) { return a.n / b.n; }
    friend bool operator>(Listed a, Listed b) { return a.n > b.n; }
};

struct TensorList
{
    std::vector<std::int64_t> tensors;
    std::int64_t params = 0;
    TensorList &operator+=(const TensorList &o)
    {
        tensors.insert(tensors.end(), o.tensors.begin(), o.tensors.end());
        params += o.params;
        return *this;
    }
    TensorList scaled(Listed k) const
    {
        TensorList out;
        for (std::int64_t i = 0; i < k.n; ++i)
            out += *this;
        return out;
    }
};

TensorList matrix(Listed rows, Listed cols)
{
    return {{rows.n * cols.n}, rows.n * cols.n};
}

TensorList vector(Listed n)
{
    return {{n.n}, n.n};
}

struct ListedLayer
{
    TensorList dense, expert;
    std::int64_t mlpDense = 0;
};

struct ListedEmbedding
{
    TensorList word, position, output, finalNorm, mtp, mtpEmbedding;
};

struct WideLayer
{
    WideCount dense, expert;
    long double mlpDense = 0;
};

struct WideEmbedding
{
    WideCount word, position, output, finalNorm, mtp, mtpEmbedding;
};

// N: std::int64_t (ParamCount) or long double (WideCount).
template<class N>
auto norm(const ModelConfig &m, N n)
{
    // LayerNorm has a weight and a bias, RMSNorm only a weight.
    auto c = vector(n);
    if (m.normalization == Normalization::LayerNorm)
        c += vector(n);
    return c;
}

// A (Swi)GLU or GeLU MLP of width f, split over `split` ranks.
template<class N>
auto mlp(const ModelConfig &m, N f, N split, bool bias)
{
    const N h = m.hidden_size;
    const N up = m.swiglu ? 2 * f : f;
    auto c = matrix(h, up / split);
    if (bias)
        c += vector(up / split);
    c += matrix(f / split, h);
    if (bias)
        c += vector(h); // row-parallel bias: replicated
    return c;
}

template<class N>
auto attention(const ModelConfig &m, N t)
{
    const N h = m.hidden_size;
    const N a = m.num_attention_heads;
    auto c = norm(m, h);
    if (m.multi_latent_attention) {
        const N qLora = m.q_lora_rank, kvLora = m.kv_lora_rank, rope = m.qk_pos_emb_head_dim;
        const N qk = N(m.qk_head_dim) + rope;
        if (m.q_lora_rank > 0) {
            c += matrix(h, qLora); // down-projection: duplicated across TP
            c += norm(m, qLora);
            c += matrix(qLora, a * qk / t);
        } else {
            c += matrix(h, a * qk / t);
        }
        c += matrix(h, kvLora + rope);
        c += norm(m, kvLora);
        c += matrix(kvLora, a * (N(m.qk_head_dim) + N(m.v_head_dim)) / t);
        c += matrix(a * N(m.v_head_dim) / t, h);
        if (m.add_bias_linear)
            c += vector(h);
        return c;
    }
    const N d = m.headDim();
    const N g = m.queryGroups();
    const N qkv = (a + 2 * g) * d;
    c += matrix(h, qkv / t);
    if (m.add_bias_linear || m.add_qkv_bias)
        c += vector(qkv / t);
    // Megatron-Core's q_layernorm and k_layernorm (--qk-layernorm): one norm of
    // head width shared by every query head and one by every key head,
    // replicated over t (Qwen3's q_norm and k_norm: 2 × 128 weights a layer).
    if (m.qk_layernorm) {
        c += norm(m, d);
        c += norm(m, d);
    }
    c += matrix(a * d / t, h);
    if (m.add_bias_linear)
        c += vector(h);
    return c;
}

template<class N>
N paddedVocabOf(const ModelConfig &model, N t)
{
    const N multiple = N(model.make_vocab_size_divisible_by) * t;
    if constexpr (!std::is_floating_point_v<N>)
        return (N(model.vocab_size) + multiple - 1) / multiple * multiple;
    else
        return std::ceil(N(model.vocab_size) / multiple) * multiple;
}

template<class Layer, class N>
Layer layerCount(const ModelConfig &m, bool moeLayer, N t, N e, N etp)
{
    Layer lp;
    lp.dense = attention(m, t);
    const auto attentionHalf = lp.dense.params;
    lp.dense += norm(m, N(m.hidden_size));
    if (!moeLayer) {
        lp.dense += mlp(m, N(m.ffn()), t, m.add_bias_linear);
    } else {
        lp.dense += matrix(N(m.hidden_size), N(m.num_experts)); // router: replicated
        if (m.moe_shared_expert_intermediate_size > 0)
            lp.dense += mlp(m, N(m.moe_shared_expert_intermediate_size), t, m.add_bias_linear);
        lp.expert = mlp(m, N(m.moeFfn()), etp, m.add_bias_linear).scaled(N(m.num_experts) / e);
    }
    lp.mlpDense = lp.dense.params - attentionHalf;
    return lp;
}

template<class Embedding, class N>
Embedding embeddingCount(const ModelConfig &m, N seqLength, N t, std::int64_t p)
{
    Embedding ep;
    const N h = m.hidden_size;
    const N vocab = paddedVocabOf(m, t);
    ep.word = matrix(vocab / t, h);
    // Megatron-DeepSpeed's --embed-layernorm: a LayerNorm inside the first
    // stage's VocabParallelEmbedding, replicated over t; the last stage's tied
    // copy has none ("don't waste memory allocating LN weights", mpu/layers.py).
    if (m.embed_layernorm) {
        ep.word += vector(h);
        ep.word += vector(h);
    }
    if (m.position_embedding_type == PositionEmbedding::LearnedAbsolute) {
        const N positions = m.max_position_embeddings > 0 ? N(m.max_position_embeddings) : seqLength;
        ep.position = matrix(positions, h);
    }
    // Tied weights share one tensor on a single stage; with p > 1 Megatron keeps
    // a copy on the last stage and all-reduces their gradients.
    if (m.untie_embeddings_and_output_weights || p > 1)
        ep.output = matrix(vocab / t, h);
    ep.finalNorm = norm(m, h);
    // Multi-token prediction on the last stage, each module: eh_proj, a
    // column-parallel linear of 2h inputs and h outputs without bias, and
    // three norms (enorm, hnorm, final_layernorm: multi_token_prediction.py);
    // its transformer layer is a stage layer (stageLayers). With p > 1 the
    // stage keeps its own copy of the word embeddings (gpt_model.py builds
    // the embedding where pre_process or mtp_process).
    for (std::int64_t i = 0; i < m.mtp_num_layers; ++i) {
        ep.mtp += matrix(h / t, N(2) * h);
        ep.mtp += norm(m, h);
        ep.mtp += norm(m, h);
        ep.mtp += norm(m, h);
    }
    if (m.mtp_num_layers > 0 && p > 1)
        ep.mtpEmbedding = matrix(vocab / t, h);
    return ep;
}

// The whole model once (t = e = 1, one stage: tied embeddings count one matrix).
template<class N, class Layer, class Embedding>
N totalCount(const Config &config)
{
    const ModelConfig &m = config.model;
    const Layer dense = layerCount<Layer>(m, false, N(1), N(1), N(1));
    const Layer moe = m.isMoe() ? layerCount<Layer>(m, true, N(1), N(1), N(1)) : dense;
    const std::int64_t moeLayers = moeLayerCount(m);
    const N denseLayers = N(std::max<std::int64_t>(0, m.num_layers) - moeLayers);
    N total = denseLayers * (dense.dense.params + dense.expert.params)
              + N(moeLayers) * (moe.dense.params + moe.expert.params);
    const Layer &mtpLayer = m.isMoeLayer(m.num_layers - 1) ? moe : dense;
    total += N(std::max<std::int64_t>(0, m.mtp_num_layers)) * (mtpLayer.dense.params + mtpLayer.expert.params);
    const Embedding ep = embeddingCount<Embedding>(m, N(config.training.seq_length), N(1), 1);
    total += ep.word.params + ep.position.params + ep.output.params + ep.finalNorm.params + ep.mtp.params;
    return total;
}

} // namespace

std::int64_t paddedVocab(const ModelConfig &model, std::int64_t t)
{
    return paddedVocabOf(model, t);
}

LayerParams layerParams(const ModelConfig &m, bool moeLayer, std::int64_t t, std::int64_t e, std::int64_t etp)
{
    return layerCount<LayerParams>(m, moeLayer, t, e, etp);
}

EmbeddingParams embeddingParams(const ModelConfig &m, std::int64_t seqLength, std::int64_t t, std::int64_t p)
{
    return embeddingCount<EmbeddingParams>(m, seqLength, t, p);
}

ParameterTensors layerParameterTensors(const ModelConfig &m, bool moeLayer, std::int64_t t, std::int64_t e,
                                       std::int64_t etp)
{
    ListedLayer lp = layerCount<ListedLayer>(m, moeLayer, Listed(t), Listed(e), Listed(etp));
    return {.dense = std::move(lp.dense.tensors), .expert = std::move(lp.expert.tensors)};
}

EmbeddingTensors embeddingParameterTensors(const ModelConfig &m, std::int64_t seqLength, std::int64_t t, std::int64_t p)
{
    ListedEmbedding ep = embeddingCount<ListedEmbedding>(m, Listed(seqLength), Listed(t), p);
    return {.word = std::move(ep.word.tensors),
            .position = std::move(ep.position.tensors),
            .output = std::move(ep.output.tensors),
            .finalNorm = std::move(ep.finalNorm.tensors),
            .mtp = std::move(ep.mtp.tensors),
            .mtpEmbedding = std::move(ep.mtpEmbedding.tensors)};
}

std::int64_t moeLayerCount(const ModelConfig &m)
{
    if (m.num_experts <= 0 || m.num_layers <= 0)
        return 0;
    if (!m.moe_layer_pattern.empty()) {
        const std::size_t n = static_cast<std::size_t>(
            std::min<std::int64_t>(m.num_layers, static_cast<std::int64_t>(m.moe_layer_pattern.size())));
        return std::count_if(m.moe_layer_pattern.begin(), m.moe_layer_pattern.begin() + static_cast<std::ptrdiff_t>(n),
                             [](auto v) { return v != 0; });
    }
    // Layers first_k_dense_replace + k·freq (k ≥ 0) that lie in [0, num_layers).
    const std::int64_t freq = m.moe_layer_freq > 0 ? m.moe_layer_freq : 1;
    const std::int64_t first
        = m.first_k_dense_replace >= 0 ? m.first_k_dense_replace : (m.first_k_dense_replace % freq + freq) % freq;
    return first < m.num_layers ? (m.num_layers - 1 - first) / freq + 1 : 0;
}

std::int64_t totalParameters(const Config &config)
{
    return totalCount<std::int64_t, LayerParams, EmbeddingParams>(config);
}

long double totalParametersWide(const Config &config)
{
    return totalCount<long double, WideLayer, WideEmbedding>(config);
}

} // namespace memledger
