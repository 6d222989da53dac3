// SPDX-License-Identifier: MIT
#include "core/trace/tensorcatalog.h"

#include "core/ledger/ledger.h"
#include "core/model/activations.h"
#include "core/model/parameters.h"

#include <functional>

namespace memledger {

namespace {

struct Param
{
    std::string name;
    std::int64_t elements = 0;
};

// One dense GPT layer's parameter tensors on one tensor-parallel rank, as
// Megatron's ParallelTransformerLayer holds them (fused QKV, fc1 of width
// ffn or 2 ffn with SwiGLU).
std::vector<Param> layerTensors(const ModelConfig &m, std::int64_t t)
{
    const std::int64_t h = m.hidden_size;
    const std::int64_t qkv = (m.num_attention_heads + 2 * m.queryGroups()) * m.headDim() / t;
    const std::int64_t up = (m.swiglu ? 2 : 1) * m.ffn() / t;
    const bool layerNorm = m.normalization == Normalization::LayerNorm;
    std::vector<Param> p = {{"attention.qkv.weight", h * qkv},
                            {"attention.proj.weight", m.num_attention_heads * m.headDim() / t * h},
                            {"mlp.fc1.weight", h * up},
                            {"mlp.fc2.weight", m.ffn() / t * h},
                            {"norm.weight", h}};
    if (m.add_bias_linear || m.add_qkv_bias)
        p.push_back({"attention.qkv.bias", qkv});
    if (m.add_bias_linear) {
        p.push_back({"mlp.fc1.bias", up});
        p.push_back({"linear.bias (h)", h});
    }
    if (layerNorm)
        p.push_back({"norm.bias", h});
    if (m.qk_layernorm && !m.multi_latent_attention)
        p.push_back({"q_layernorm.weight (head_dim)", m.headDim()}); // k_layernorm's: the same size
    return p;
}

std::string dtypeTag(Dtype d)
{
    return " (" + std::string(dtypeName(d)) + ")";
}

} // namespace

std::vector<CatalogTensor> tensorCatalog(const Config &config)
{
    std::vector<CatalogTensor> out;
    const std::int64_t t = config.parallelism.tensor_model_parallel_size;
    const std::int64_t p = config.parallelism.pipeline_model_parallel_size;
    const Dtype weights = config.training.params_dtype;
    const int A = activationBytes(config);
    const std::int64_t tokens
        = config.training.seq_length / config.parallelism.context_parallel_size * config.training.micro_batch_size;
    const std::int64_t vocab = paddedVocab(config.model, t);

    // Activations first: a forward allocates far more of them than anything else.
    for (const SavedTensor &s : layerActivations(config, false, true).tensors)
        out.push_back({s.bytes, "Saved activation: " + s.name});
    const StageActivations stage = stageActivations(config);
    for (const SavedTensor &s : stage.first)
        out.push_back({s.bytes, "Saved activation: " + s.name});
    for (const SavedTensor &s : stage.last)
        out.push_back({s.bytes, "Saved activation: " + s.name});
    out.push_back({tokens * vocab / t * A, "Logits"});
    out.push_back({tokens * vocab / t * 4, "Logits in fp32 (loss)"});

    std::vector<Param> params = layerTensors(config.model, t);
    const EmbeddingParams emb = embeddingParams(config.model, config.training.seq_length, t, p);
    const std::int64_t embedNorm = config.model.embed_layernorm ? 2 * config.model.hidden_size : 0;
    params.push_back({"embedding.word", emb.word.params - embedNorm});
    if (embedNorm > 0)
        params.push_back({"embedding.layernorm.weight", config.model.hidden_size}); // its bias: the same size
    if (emb.position.params > 0)
        params.push_back({"embedding.position", emb.position.params});
    if (emb.output.params > 0)
        params.push_back({"output_layer.weight", emb.output.params});
    for (const Param &q : params)
        out.push_back({q.elements * 4, "fp32 copy of " + q.name + " (main weight, gradient or Adam moment)", true});
    for (const Param &q : params)
        out.push_back({q.elements * dtypeBytes(weights), "Weights: " + q.name + dtypeTag(weights), true});
    if (dtypeBytes(config.training.main_grads_dtype) != 4)
        for (const Param &q : params)
            out.push_back({q.elements * dtypeBytes(config.training.main_grads_dtype), "Gradient: " + q.name, true});

    // The whole rank's parameters in one buffer: Megatron's contiguous grad
    // buffer (and, with fp32 masters, its DistributedOptimizer shards at d = 1).
    const std::int64_t rankParams = computeLedger(config).ranks.front().parameters;
    out.push_back({rankParams * dtypeBytes(config.training.main_grads_dtype), "Gradients: contiguous buffer", true});

    // Activation gradients of the layer in backward.
    out.push_back({tokens * config.model.hidden_size * A, "Activation gradient (s·b·h)"});
    out.push_back({tokens * config.model.hidden_size * 4, "fp32 tensor of s·b·h"});
    return out;
}

const CatalogTensor *matchBySize(const std::vector<CatalogTensor> &catalog, Bytes bytes, bool optimizerStack)
{
    if (bytes <= 0)
        return nullptr;
    const auto exact = [&](const CatalogTensor &c) { return c.bytes == bytes; };
    const auto rounded = [&](const CatalogTensor &c) { return c.bytes > 0 && (c.bytes + 511) / 512 * 512 == bytes; };
    for (const auto &fits :
         {std::function<bool(const CatalogTensor &)>(exact), std::function<bool(const CatalogTensor &)>(rounded)}) {
        if (optimizerStack)
            for (const CatalogTensor &c : catalog)
                if (c.parameterShaped && fits(c))
                    return &c;
        for (const CatalogTensor &c : catalog)
            if (fits(c))
                return &c;
    }
    return nullptr;
}

} // namespace memledger
