// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"
#include "core/units.h"

#include <string>
#include <vector>

namespace memledger {

// What autograd saves for backward in one transformer layer, tensor by
// tensor, for one micro-batch on one rank (after TP, SP and CP). Korthikanti
// et al.'s closed forms (sbh(34 + 5as/h) and its TP/SP variants) are sums of
// these rows for a GPT layer; they are not written anywhere else.
struct SavedTensor {
    std::string name;      // "attention.softmax_output"
    Bytes bytes = 0;
    std::string formula;   // symbolic, with the divisor that applies: "2·s·b·h/t"
    bool attentionCore = false; // recomputed by Megatron's selective recompute
};

struct LayerActivations {
    std::vector<SavedTensor> tensors;
    Bytes total = 0;          // every saved tensor
    Bytes attentionCore = 0;  // the part selective recompute drops
    Bytes checkpoint = 0;     // the layer input, all full recompute keeps
    Bytes stored(RecomputeGranularity g) const
    {
        return g == RecomputeGranularity::Selective ? total - attentionCore : total;
    }
};

// listTensors = false computes the totals only (the ledger's hot path).
LayerActivations layerActivations(const Config &config, bool moeLayer, bool listTensors = true);

// Saved outside the transformer layers, per micro-batch.
struct StageActivations {
    std::vector<SavedTensor> first; // embedding output dropout mask
    std::vector<SavedTensor> last;  // final norm, output layer input, fp32 logits for the loss
};
StageActivations stageActivations(const Config &config);

// Bytes of one activation element: 2 for 16-bit (and FP8) training, 4 for fp32.
int activationBytes(const Config &config);

} // namespace memledger
