// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <optional>
#include <string_view>

namespace memledger {

// strategy.tensor_policies, resolved for one saved tensor. A rule is a
// tensor's name as the per-layer table writes it or a glob of it ('*' any
// run of characters, '?' one): an exact name beats every glob, and of two
// globs the longer (the more specific) wins; equal lengths, the one first in
// alphabetical order. Without a matching rule recompute_granularity decides:
// selective recomputes the attention core, none stores everything.
bool globMatch(std::string_view pattern, std::string_view name);
std::optional<TensorFate> policyFor(const std::vector<TensorPolicy> &policies, std::string_view name);

// torchtitan's per-op selective activation checkpointing
// (recompute_granularity selective_op; torchtitan's
// distributed/activation_checkpoint.py): inside each checkpointed block the
// outputs of matmuls, of the attention kernel and of reduce-scatters are
// kept, except every second matmul, and the rest is recomputed in the
// backward. On a Llama block, whose matmuls run wq, wk, wv, wo, then w1, w3,
// w2 (or fc1, fc2 without a gated MLP), that keeps the block's input, q, v,
// the attention output and its log-sum-exp, w1's output (fc1's), w2's, and
// with tensor parallelism the reduce-scatters after wo and w2. Whether the
// tensor of that name is kept.
bool selectiveOpKeeps(std::string_view name);

// The fate recompute_granularity gives a tensor before tensor_policies refine it.
TensorFate granularityFate(const StrategyConfig &strategy, std::string_view name, bool attentionCore);

// The fate of a saved tensor under the configuration. The layer's input (the
// first norm's input, `layerInput`) cannot be recomputed from inside the
// layer: a glob that would recompute it leaves it stored (the validator
// refuses the exact name).
TensorFate tensorFate(const StrategyConfig &strategy, std::string_view name, bool attentionCore, bool layerInput);

// Whether a fate quantises, offloads, or drops the tensor from the device
// between forward and backward.
bool quantizes(TensorFate f);
bool offloads(TensorFate f);
bool leavesDevice(TensorFate f); // recomputed or offloaded

// A tensor of `bytes` in elements of `elementBytes` after fp8 quantisation:
// one byte per element (E5M6: 12 bits, packed) and one scale per block of
// strategy.activation_quant_block_size elements (fp32: 4 bytes, e8m0: 1).
// Only tensors in the 16-bit activation dtype are quantised; 1-byte masks
// and fp32 statistics keep their size (returned unchanged).
Bytes quantizedBytes(const StrategyConfig &strategy, Bytes bytes, int elementBytes, int activationElementBytes,
                     TensorFate fate = TensorFate::QuantizeFp8);

} // namespace memledger
