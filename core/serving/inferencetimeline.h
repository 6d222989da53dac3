// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/timeline/timeline.h"

namespace memledger {

enum class ServingPass { Prefill, Decode };

// One serving forward (a prefill, or a decode step) through every pipeline
// rank, in the training timeline's structures so the lifetimes view can draw
// it beside an iteration: the inference ledger's weights and runtime rows
// live throughout, each layer's KV cache from the moment the prefill writes
// it (a decode step finds it there), the residual stream while the rank
// computes, and each layer's working set only while that layer runs: half
// the layer for attention, half for the MLP (seed 001: an activation dies
// once the next op has read it). The ledger it carries is the inference
// ledger's rows in training categories (the KV cache under activations).
// Layer times are a roofline of the layer's GEMM FLOPs and the weights (and,
// decoding, the KV cache) read through HBM, with the hardware's efficiency
// tables. Precondition: validate(config) has no errors.
Timeline simulateInferenceForward(const Config &config, ServingPass pass = ServingPass::Prefill);

} // namespace memledger
