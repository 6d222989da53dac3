// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/model/activations.h"

#include <cstdint>
#include <vector>

namespace memledger {

// The sizes of what an iteration's backward passes allocate for a moment
// besides the saved tensors; the timeline decides when each is alive.
struct BackwardBuffers
{
    TransientActivations activations; // per micro-batch: the layers' and the loss's working sets
    std::vector<Bytes> weightGradient; // per pipeline rank: its largest weight gradient in the parameter dtype
    double gradBytesPerLayer = 0; // grad_offload: what one layer's backward sends to the host (average layer)
    double gradBucketBytes = 0; // grad_offload: one of the two device staging buckets
};
// `largestParameterTensors`: per pipeline rank, the elements of its largest
// parameter tensor (the ledger's RankLedger::largest_parameter_tensor).
BackwardBuffers backwardBuffers(const Config &config, const std::vector<std::int64_t> &largestParameterTensors);

// Whether a backward materialises each weight gradient before adding it to
// the gradient buffer: without gradient-accumulation fusion autograd writes
// it in the parameter dtype and a hook adds it to main_grad (Megatron's DDP);
// PyTorch's own .grad adds a later micro-batch's gradient the same way.
bool materializesWeightGradient(const StrategyConfig &strategy, bool firstMicroBatch);

} // namespace memledger
