// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/category.h"
#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// FP8 training's bytes, as Transformer Engine stores its formats
// (training.fp8_recipe). Only the GEMMs of the transformer layers' linear
// layers run in FP8: Megatron keeps the embedding, the output layer, the
// router and the attention core in bf16, and the bf16 weights and fp32
// master weights stay where they are.
//
// Each quantised tensor has a rowwise copy (forward GEMM, dgrad's output
// gradient) and a columnwise one (wgrad, dgrad's weight). Hopper reads FP8
// only rowwise, so the columnwise copy is a physical transpose; Blackwell
// reads either way, so a per-tensor-scaled tensor serves both from one copy,
// but MXFP8 and 1-D blockwise scales run along the reduction dimension and
// the two copies differ ("Handling transposes", TE docs, Performance
// considerations; MXFP8; FP8 blockwise scaling).
struct Fp8Format
{
    bool on = false; // a recipe in force
    bool transformerEngine = false; // TE saves FP8 inputs and caches FP8 weights; torchao does neither
    double copies = 0; // copies of a quantised tensor kept for its two usages
    double weightBytes = 0; // bytes per weight element per copy, scales included
    double inputBytes = 0; // bytes per activation (or gradient) element per copy, scales included
    // The same as a fraction for the activation formulas: inputNum / inputDen bytes.
    const char *inputSymbol = "1";
    std::int64_t inputNum = 1, inputDen = 1;
    std::string weightWhy; // "2 copies (rowwise + columnwise transpose) × 1 B"
    std::string inputWhy; // "1 B + an E8M0 scale per 32 elements"
};
Fp8Format fp8Format(const Config &config);

// The FP8 GEMMs' weights of one transformer layer on one rank (after t, e
// and ETP): elements of the linear layers' weight matrices (no norms, biases
// or router), and the GEMMs, as TE's modules count them (LayerNormMLP two,
// GroupedLinear one per local expert).
struct Fp8LayerWeights
{
    std::int64_t dense = 0; // attention and dense MLP (or shared experts)
    std::int64_t expert = 0; // routed experts on this rank
    std::int64_t gemms = 0;
    std::int64_t largest = 0; // elements of the largest weight matrix
};
Fp8LayerWeights fp8LayerWeights(const ModelConfig &model, bool moeLayer, std::int64_t t, std::int64_t e,
                                std::int64_t etp);

// Elements of the widest tensor one GEMM quantises at once, for one
// micro-batch on one rank: the largest linear input or output gradient
// (usually fc1's output gradient, 2·f/t wide with SwiGLU), or with torchao
// the largest weight, which it casts at every GEMM.
std::int64_t fp8LargestQuantised(const Config &config);

// The ledger rows FP8 adds on a rank holding `denseLayers` dense and
// `moeLayers` MoE transformer layers: the FP8 weight copies (weights, alive
// through the iteration), the delayed recipe's amax history, and the
// quantisation buffer (communication: one GEMM's operands, counted for the
// whole iteration as the other buffers). `group` and `expertGroup` shard the
// copies under ZeRO-3 as the weights they come from.
struct Fp8Row
{
    Category category = Category::Weights;
    std::string label;
    Bytes bytes = 0;
    std::string formula;
    std::string note;
};
std::vector<Fp8Row> fp8LedgerRows(const Config &config, std::int64_t denseLayers, std::int64_t moeLayers,
                                  std::int64_t group, std::int64_t expertGroup);

// FP8 primary weights: fp8_param_gather in force under Transformer Engine
// (Megatron's --fp8-param-gather builds the linear layers under
// fp8_model_init), so the linear weights have no 16-bit copy.
bool fp8PrimaryWeights(const Config &config);

// strategy.fp8_param_gather in force: an FP8 recipe, and ZeRO ≥ 1 (the
// distributed optimizer's or FSDP's all-gather of the weights; plain
// data parallelism gathers nothing).
bool fp8ParamGatherInForce(const Config &config);
// Bytes per parameter those gathers move with it in force: the FP8 linear
// weights (the model's share of them) one copy each, scales included
// (Fp8Format::weightBytes; Megatron gathers the rowwise data and TE makes
// the transpose after), the rest (embeddings, norms, biases, router) in
// their own dtype. Megatron-LM's --fp8-param-gather builds the model under
// Transformer Engine's fp8_model_init; torchtitan's
// enable_fsdp_float8_all_gather casts the shards before FSDP's gather.
double fp8GatherBytesPerParam(const Config &config);

// The ledger's sentence on the recipe in force ("" without one).
std::string fp8Choice(const Config &config);

} // namespace memledger
