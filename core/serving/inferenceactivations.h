// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>
#include <string>

namespace memledger {

// The shape of one serving forward on one rank.
struct ForwardShape
{
    std::int64_t tokens = 0; // tokens in the forward, all sequences together
    std::int64_t sequences = 0; // sequences they belong to
    std::int64_t query_length = 0; // new tokens per sequence
    std::int64_t key_length = 0; // tokens each new token attends to
};

// A prefill forward: the whole batch's prompts at once, or a chunk of
// prefill_chunk_tokens (vLLM's chunked prefill), the prompt taken as the
// whole context (the worst case, e.g. a preempted sequence recomputed).
ForwardShape prefillShape(const Config &config, const InferenceConfig &resolved);
// A decode step: one new token per sequence, attending to the cached tokens.
ForwardShape decodeShape(const Config &config, const InferenceConfig &resolved);

/// What one forward keeps alive at its widest on one rank, in bytes. An
/// inference forward runs one layer at a time and frees a layer's tensors
/// once the next op has read them (no autograd graph), so the peak is the
/// widest single layer, not the sum over layers that training keeps.
struct WorkingSet
{
    ForwardShape shape;
    Bytes residual = 0; // the residual stream and a layer's normed input: 2·n·h
    Bytes attention = 0; // q, k, v, the attention output, and the scores without FlashAttention
    Bytes mlp = 0; // the widest MLP: dense gate/up and activation, or the experts' share of tokens
    Bytes moe_routing = 0; // router logits, top-k ids and weights, dispatch and combine buffers
    Bytes logits = 0; // last stage: fp32 logits of each sequence's last position (the sampler's input)
    Bytes total = 0; // residual + max(attention, mlp + moe_routing), or the logits phase if wider
    std::string formula;
};

// Flags say which layer kinds the rank holds and whether it computes the logits.
WorkingSet forwardWorkingSet(const Config &config, const ForwardShape &shape, bool denseLayers, bool moeLayers,
                             bool lastStage);

} // namespace memledger
