// SPDX-License-Identifier: MIT
#include "core/model/fp8.h"

#include "core/model/modelstates.h"
#include "core/model/parameters.h"

#include <algorithm>
#include <cmath>

namespace memledger {

namespace {

// Scale granularities (TE docs): MXFP8 one E8M0 byte per 32 elements;
// blockwise (DeepSeek-V3 report §3.3.1) one fp32 per 1×128 activation tile
// and per 128×128 weight block; delayed and tensorwise one fp32 per tensor,
// which is nothing per element.
constexpr double kMxBlock = 32.0;
constexpr double kTile = 128.0;

Bytes ceilBytes(double v)
{
    return static_cast<Bytes>(std::ceil(v));
}

} // namespace

Fp8Format fp8Format(const Config &config)
{
    Fp8Format f;
    if (config.training.fp8_recipe == Fp8Recipe::None)
        return f;
    f.on = true;
    f.transformerEngine = config.strategy.fp8_implementation == Fp8Implementation::TransformerEngine;
    switch (config.training.fp8_recipe) {
    case Fp8Recipe::None:
        break;
    case Fp8Recipe::Delayed:
    case Fp8Recipe::Tensorwise:
        f.copies = config.hardware.mx_tensor_cores ? 1 : 2;
        f.weightBytes = f.inputBytes = 1;
        f.weightWhy = config.hardware.mx_tensor_cores
                          ? "1 copy × 1 B (Blackwell reads FP8 column-wise: no transpose)"
                          : "2 copies (rowwise + columnwise transpose for dgrad, Hopper) × 1 B";
        f.inputWhy = "1 B (one fp32 scale per tensor)";
        break;
    case Fp8Recipe::MXFP8:
        f.copies = 2;
        f.weightBytes = f.inputBytes = 1 + 1 / kMxBlock;
        f.inputSymbol = "(1+1/32)";
        f.inputNum = 33;
        f.inputDen = 32;
        f.weightWhy = "2 copies (rowwise 1×32 and columnwise 32×1 blocks) × (1 B + 1 E8M0 scale byte per 32 elements)";
        f.inputWhy = "1 B + 1 E8M0 scale byte per 32 elements";
        break;
    case Fp8Recipe::Blockwise:
        f.copies = 2;
        f.weightBytes = 1 + 4 / (kTile * kTile);
        f.inputBytes = 1 + 4 / kTile;
        f.inputSymbol = "(1+4/128)";
        f.inputNum = 33;
        f.inputDen = 32;
        f.weightWhy = "2 copies (rowwise + columnwise transpose) × (1 B + 4 B fp32 scale per 128×128 block)";
        f.inputWhy = "1 B + 4 B fp32 scale per 1×128 tile";
        break;
    }
    return f;
}

Fp8LayerWeights fp8LayerWeights(const ModelConfig &m, bool moeLayer, std::int64_t t, std::int64_t e, std::int64_t etp)
{
    Fp8LayerWeights w;
    const auto matrix = [&](std::int64_t rows, std::int64_t cols, std::int64_t copies, bool expert) {
        const std::int64_t n = rows * cols;
        (expert ? w.expert : w.dense) += n * copies;
        w.gemms += copies;
        w.largest = std::max(w.largest, n);
    };
    const std::int64_t h = m.hidden_size, a = m.num_attention_heads;
    if (m.multi_latent_attention) {
        const std::int64_t qk = m.qk_head_dim + m.qk_pos_emb_head_dim;
        if (m.q_lora_rank > 0) {
            matrix(h, m.q_lora_rank, 1, false);
            matrix(m.q_lora_rank, a * qk / t, 1, false);
        } else {
            matrix(h, a * qk / t, 1, false);
        }
        matrix(h, m.kv_lora_rank + m.qk_pos_emb_head_dim, 1, false);
        matrix(m.kv_lora_rank, a * (m.qk_head_dim + m.v_head_dim) / t, 1, false);
        matrix(a * m.v_head_dim / t, h, 1, false);
    } else {
        const std::int64_t d = m.headDim();
        matrix(h, (a + 2 * m.queryGroups()) * d / t, 1, false);
        matrix(a * d / t, h, 1, false);
    }
    const auto mlp = [&](std::int64_t f, std::int64_t split, std::int64_t copies, bool expert) {
        matrix(h, (m.swiglu ? 2 * f : f) / split, copies, expert);
        matrix(f / split, h, copies, expert);
    };
    if (!moeLayer) {
        mlp(m.ffn(), t, 1, false);
    } else {
        if (m.moe_shared_expert_intermediate_size > 0)
            mlp(m.moe_shared_expert_intermediate_size, t, 1, false);
        mlp(m.moeFfn(), etp, m.num_experts / e, true);
    }
    return w;
}

std::int64_t fp8LargestQuantised(const Config &config)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size, etp = par.expertTensorParallel();
    const bool sp = par.sequence_parallel && t > 1;
    // A linear layer sees the whole (gathered) local sequence.
    const std::int64_t tokens
        = config.training.seq_length / par.context_parallel_size * config.training.micro_batch_size;
    const std::int64_t gate = m.swiglu ? 2 : 1;
    const std::int64_t qkDim = m.multi_latent_attention ? m.qk_head_dim + m.qk_pos_emb_head_dim : m.headDim();
    std::int64_t widest = std::max<std::int64_t>(m.hidden_size, m.num_attention_heads * qkDim / t);
    if (!m.multi_latent_attention)
        widest = std::max(widest, (m.num_attention_heads + 2 * m.queryGroups()) * m.headDim() / t);
    bool anyDense = false;
    for (std::int64_t l = 0; l < m.num_layers && !anyDense; ++l)
        anyDense = !m.isMoeLayer(l);
    if (anyDense)
        widest = std::max(widest, gate * m.ffn() / t);
    std::int64_t largest = tokens * widest;
    if (m.isMoe()) {
        // The grouped GEMM quantises every token copy this rank's experts receive at once.
        const std::int64_t copies = tokens / (sp ? t : 1) * m.moe_router_topk * etp;
        largest = std::max(largest, copies * gate * m.moeFfn() / etp);
        if (m.moe_shared_expert_intermediate_size > 0)
            largest = std::max(largest, tokens * gate * m.moe_shared_expert_intermediate_size / t);
    }
    if (config.strategy.fp8_implementation == Fp8Implementation::Torchao) {
        const Fp8LayerWeights w = fp8LayerWeights(m, m.isMoe(), t, par.expert_model_parallel_size, etp);
        largest = std::max(largest, w.largest);
    }
    return largest;
}

std::vector<Fp8Row> fp8LedgerRows(const Config &config, std::int64_t denseLayers, std::int64_t moeLayers,
                                  std::int64_t group, std::int64_t expertGroup)
{
    const Fp8Format f = fp8Format(config);
    std::vector<Fp8Row> rows;
    if (!f.on || denseLayers + moeLayers <= 0)
        return rows;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size, e = par.expert_model_parallel_size;
    const std::int64_t etp = par.expertTensorParallel();
    const Fp8LayerWeights dense = fp8LayerWeights(config.model, false, t, e, etp);
    const Fp8LayerWeights moe = config.model.isMoe() ? fp8LayerWeights(config.model, true, t, e, etp) : dense;
    const bool zero3 = par.zero_stage >= 3;
    if (f.transformerEngine) {
        const auto copies = [&](const char *label, std::int64_t elements, std::int64_t shard) {
            if (elements <= 0)
                return;
            const std::int64_t by = zero3 ? std::max<std::int64_t>(1, shard) : 1;
            rows.push_back({Category::Weights, label,
                            ceilBytes(double(elements) * f.copies * f.weightBytes / double(by)),
                            formatThousands(elements) + " linear weight elements × " + f.weightWhy
                                + (by > 1 ? " / " + formatThousands(by) + " (ZeRO-3)" : ""),
                            fp8PrimaryWeights(config)
                                ? "fp8_param_gather: the linear weights are FP8 primary weights (Transformer "
                                  "Engine's fp8_model_init) and their transpose, with no 16-bit copy; the fp32 "
                                  "master copy stays with the optimizer"
                                : "Transformer Engine casts each linear weight once per iteration and keeps the FP8 "
                                  "copy from the first micro-batch to the optimizer step (is_first_microbatch), beside "
                                  "the 16-bit weights and the fp32 master copy"});
        };
        copies("FP8 weight copies", denseLayers * dense.dense + moeLayers * moe.dense, group);
        copies("FP8 weight copies (routed experts)", moeLayers * moe.expert, expertGroup);
        if (config.training.fp8_recipe == Fp8Recipe::Delayed) {
            // TE's DelayedScaling: per module an fp32 amax_history of shape
            // (amax_history_len, 3 per GEMM) for input, weight and output and
            // (amax_history_len, 2 per GEMM) for the gradients, plus one scale per tensor.
            const std::int64_t gemms = denseLayers * dense.gemms + moeLayers * moe.gemms;
            const std::int64_t len = config.training.fp8_amax_history_len;
            rows.push_back({Category::Weights, "FP8 amax history and scales", gemms * 5 * (len + 1) * 4,
                            formatThousands(gemms) + " FP8 GEMMs × 5 tensors (input, weight, output; two gradients) × ("
                                + formatThousands(len) + " amax_history_len + 1 scale) × 4 B",
                            "delayed scaling: each scale comes from the largest amax of the last "
                            "amax_history_len iterations (Transformer Engine's DelayedScaling)"});
        }
    }
    const std::int64_t widest = fp8LargestQuantised(config);
    const double copies = f.transformerEngine ? f.copies : 2.0;
    const double bytes = f.transformerEngine ? f.inputBytes : 1.0;
    rows.push_back({Category::Communication, "FP8 quantisation buffer", ceilBytes(double(widest) * copies * bytes),
                    formatThousands(widest) + " elements (the widest tensor one GEMM quantises) × "
                        + (copies == 1 ? std::string("1 copy") : "2 copies (rowwise + columnwise)") + " × "
                        + (f.transformerEngine ? f.inputWhy : std::string("1 B")),
                    "transient: a GEMM's quantised operand, alive while it runs; counted for the whole iteration "
                    "like the other buffers"});
    return rows;
}

bool fp8ParamGatherInForce(const Config &config)
{
    return config.strategy.fp8_param_gather && config.training.fp8_recipe != Fp8Recipe::None
           && config.parallelism.zero_stage >= 1;
}

bool fp8PrimaryWeights(const Config &config)
{
    return fp8ParamGatherInForce(config) && config.strategy.fp8_implementation == Fp8Implementation::TransformerEngine;
}

double fp8GatherBytesPerParam(const Config &config)
{
    const double weight = double(stateBytes(config.training).weight);
    const double total = double(totalParametersWide(config));
    if (!fp8ParamGatherInForce(config) || total <= 0)
        return weight;
    const ModelConfig &m = config.model;
    const Fp8LayerWeights dense = fp8LayerWeights(m, false, 1, 1, 1);
    const Fp8LayerWeights moe = m.isMoe() ? fp8LayerWeights(m, true, 1, 1, 1) : dense;
    double fp8 = 0;
    for (std::int64_t l = 0; l < m.num_layers; ++l) {
        const Fp8LayerWeights &w = m.isMoeLayer(l) ? moe : dense;
        fp8 += double(w.dense + w.expert);
    }
    fp8 = std::min(fp8, total);
    return (fp8 * fp8Format(config).weightBytes + (total - fp8) * weight) / total;
}

std::string fp8Choice(const Config &config)
{
    const Fp8Format f = fp8Format(config);
    if (!f.on)
        return {};
    std::string s = "FP8: the transformer layers' linear GEMMs run in FP8 ("
                    + std::string(fp8RecipeName(config.training.fp8_recipe))
                    + " recipe) at the FP8 peak; embedding, output layer, router and attention core stay 16-bit. ";
    if (f.transformerEngine)
        s += "As Transformer Engine: FP8 weight copies (" + f.weightWhy
             + ") live through the iteration, and each linear layer saves its input's columnwise FP8 copy ("
             + f.inputWhy
             + ") instead of the 16-bit input; with FlashAttention the projection's FP8 input is kept beside the "
               "16-bit "
               "attention output the kernel saves.";
    else
        s += "As torchao's Float8Linear (torchtitan): inputs and weights are saved in high precision and cast again in "
             "backward.";
    if (fp8ParamGatherInForce(config))
        s += " fp8_param_gather: ZeRO's all-gathers move the linear layers' weights in FP8 (Megatron "
             "--fp8-param-gather, torchtitan's enable_fsdp_float8_all_gather).";
    return s;
}

} // namespace memledger
