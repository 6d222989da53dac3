// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace memledger {

// Parameter counts, from the matrices of each module, so that sharding by
// tensor and expert parallelism follows Megatron's layout: column/row-parallel
// weights split by t, norms, row-parallel biases, routers and MLA
// down-projections replicated, experts split over e (and ETP).
struct ParamCount
{
    std::int64_t params = 0; // elements
    std::int64_t factoredState = 0; // Adafactor's second moment: rows+cols per matrix, full size per vector
    std::int64_t largest
        = 0; // elements of the largest single tensor (what a per-tensor optimizer step sizes its temporaries by)
    // Muon (core/model/muon.h): the 2-D matrices, as this count's shapes are (full
    // shapes when counted with t = 1).
    std::int64_t matrixParams = 0; // elements of 2-D weights
    std::int64_t matrices = 0; // how many
    double nsFlops = 0; // one Newton–Schulz iteration over every matrix
    std::int64_t nsWorkingElements = 0; // the largest matrix's Newton–Schulz working set

    ParamCount &operator+=(const ParamCount &o)
    {
        params += o.params;
        factoredState += o.factoredState;
        largest = std::max(largest, o.largest);
        matrixParams += o.matrixParams;
        matrices += o.matrices;
        nsFlops += o.nsFlops;
        nsWorkingElements = std::max(nsWorkingElements, o.nsWorkingElements);
        return *this;
    }
    // k copies of the same tensors (experts): each stays its own tensor.
    ParamCount scaled(std::int64_t k) const
    {
        return {params * k,   factoredState * k,   k > 0 ? largest : 0,          matrixParams * k,
                matrices * k, nsFlops * double(k), k > 0 ? nsWorkingElements : 0};
    }
};

// Vocabulary padded as Megatron does: to a multiple of make_vocab_size_divisible_by * t.
std::int64_t paddedVocab(const ModelConfig &model, std::int64_t t);

// One transformer layer on one tensor-parallel rank (t = 1: the whole layer).
struct LayerParams
{
    ParamCount dense; // attention, norms, dense MLP or router + shared experts: data-parallel over d*c
    ParamCount expert; // routed experts held by this rank: data-parallel over the expert-data group
    std::int64_t mlpDense = 0; // of dense: the MLP half (pre-MLP norm, MLP or router and shared experts)
};
LayerParams layerParams(const ModelConfig &model, bool moeLayer, std::int64_t t, std::int64_t e, std::int64_t etp);

struct EmbeddingParams
{
    ParamCount word; // padded vocab x h / t, first stage
    ParamCount position; // learned absolute positions, first stage, replicated
    ParamCount output; // output layer, last stage (a second copy when tied and p > 1)
    ParamCount finalNorm; // last stage
    ParamCount mtp; // last stage: the multi-token prediction modules' projections and norms
    ParamCount mtpEmbedding; // last stage with p > 1 and multi-token prediction: its word embedding copy
};
EmbeddingParams embeddingParams(const ModelConfig &model, std::int64_t seqLength, std::int64_t t, std::int64_t p);

// The same shapes as element counts tensor by tensor, in module order (what
// PyTorch allocates one by one): a layer's on one rank, and the embeddings'.
struct ParameterTensors
{
    std::vector<std::int64_t> dense, expert;
};
ParameterTensors layerParameterTensors(const ModelConfig &model, bool moeLayer, std::int64_t t, std::int64_t e,
                                       std::int64_t etp);
struct EmbeddingTensors
{
    std::vector<std::int64_t> word, position, output, finalNorm, mtp, mtpEmbedding;
};
EmbeddingTensors embeddingParameterTensors(const ModelConfig &model, std::int64_t seqLength, std::int64_t t,
                                           std::int64_t p);

// The model's parameter count: every tensor once (tied embeddings once), padded vocabulary.
std::int64_t totalParameters(const Config &config);
// The same count in long double, from the same shapes: no input overflows it,
// so the validator holds it against its 100 T limit before any 64-bit count is made.
long double totalParametersWide(const Config &config);

// How many layers ModelConfig::isMoeLayer calls MoE, counted without visiting each.
std::int64_t moeLayerCount(const ModelConfig &model);

} // namespace memledger
