// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <string>
#include <vector>

namespace memledger {

// What autograd saves for backward in one transformer layer, tensor by
// tensor, for one micro-batch on one rank (after TP, SP and CP). Korthikanti
// et al.'s closed forms (sbh(34 + 5as/h) and its TP/SP variants) are sums of
// these rows for a GPT layer; they are not written anywhere else.
struct SavedTensor
{
    std::string name; // "attention.softmax_output"
    Bytes bytes = 0;
    std::string formula; // symbolic, with the divisor that applies: "2·s·b·h/t"
    bool attentionCore = false; // recomputed by Megatron's selective recompute
    TensorFate fate = TensorFate::Store; // recompute_granularity refined by strategy.tensor_policies
    Bytes placed = 0; // where the fate puts it (device or host), after fp8 quantisation; 0 when recomputed
    int elementBytes = 2; // 1 for bool masks, 4 for fp32 statistics; only the activation dtype quantises
};

struct LayerActivations
{
    std::vector<SavedTensor> tensors;
    Bytes total = 0; // every saved tensor
    Bytes attentionCore = 0; // the part selective recompute drops
    Bytes checkpoint = 0; // the layer input, all full recompute keeps
    Bytes mlp = 0; // the second half (pre-MLP norm, MLP or MoE, its dropout): backward frees it first
    // What a deferred weight-gradient pass (W of the zero-bubble schedules)
    // still needs once the input-gradient pass (B) has run: each linear
    // layer's saved input and the gradient of its output (Qi et al. 2023 §2).
    Bytes weightPass = 0;
    // Under recompute_granularity none or selective, refined tensor by tensor
    // by strategy.tensor_policies (core/model/tensorpolicy.h); full recompute
    // decides per layer instead (chunkActivations).
    Bytes kept = 0; // on the device from forward to backward (quantised tensors at their fp8 size)
    Bytes keptMlp = 0; // the part of `kept` the MLP half saved
    Bytes recomputed = 0; // rebuilt during the backward (selective: the attention core)
    Bytes recomputedMlp = 0; // the part of `recomputed` the MLP half saves: freed as the MLP's backward ends
    Bytes offloaded = 0; // on the host from forward to backward (after quantisation where the fate stacks them)
    Bytes quantized = 0; // fp8 bytes with scales of the quantised tensors, on the device or the host
    Bytes quantizedFrom = 0; // their size before quantisation
    // The part of `kept` stored in FP8: quantize_fp8 tensors and, under a
    // Transformer Engine fp8_recipe, the linear layers' saved FP8 inputs.
    Bytes keptFp8 = 0;
    Bytes keptFp8Mlp = 0; // the part of keptFp8 the MLP half saved
};

// listTensors = false computes the totals only (the ledger's hot path).
LayerActivations layerActivations(const Config &config, bool moeLayer, bool listTensors = true);
// NamesOnly lists the tensors without their formula text (the validator's check of tensor_policies).
enum class TensorList { None, NamesOnly, WithFormulas };
LayerActivations layerActivations(const Config &config, bool moeLayer, TensorList list);

// Saved outside the transformer layers, per micro-batch.
struct StageActivations
{
    std::vector<SavedTensor> first; // embedding output dropout mask
    std::vector<SavedTensor> last; // final norm, output layer input, fp32 logits for the loss
};
StageActivations stageActivations(const Config &config);

// What one virtual chunk (layers [firstLayer, firstLayer + layers)) keeps for
// one micro-batch under the recompute policy, and what its backward
// re-materialises at once. Shared by the ledger and the timeline.
struct ChunkActivations
{
    Bytes stored = 0; // kept from the chunk's forward to its backward
    Bytes recomputeWorkingSet = 0; // full recompute: the largest group rebuilt at once
    std::vector<Bytes> layerStored; // per layer, in order
    std::vector<Bytes> layerStoredMlp; // per layer, the part of layerStored the MLP half saved
    std::vector<Bytes> layerStoredFp8; // per layer, the part of layerStored kept in FP8 (LayerActivations::keptFp8)
    std::vector<Bytes> layerStoredFp8Mlp; // per layer, the MLP half's part of layerStoredFp8
    std::vector<Bytes> layerFull; // per layer, everything it saves (what recompute rebuilds)
    std::vector<Bytes> layerFullMlp; // per layer, the MLP half of layerFull
    std::vector<Bytes>
        layerCore; // per layer, what its backward rebuilds (selective: the attention core; tensor_policies)
    std::vector<Bytes> layerCoreMlp; // per layer, the MLP half's part of layerCore
    std::vector<Bytes> layerOffloaded; // per layer, what tensor_policies keep on the host until its backward
    Bytes weightPass = 0; // Σ over layers of LayerActivations::weightPass: kept from B until a deferred W
    Bytes offloaded = 0; // Σ over layers of LayerActivations::offloaded
};
ChunkActivations chunkActivations(const Config &config, const LayerActivations &dense, const LayerActivations &moe,
                                  std::int64_t firstLayer, std::int64_t layers);

// A deferred W's operands over what one layer keeps for its backward (the
// first layer's, at most 1): how ZB-V's greedy fill counts memory. One figure
// for the whole pipeline, so that every rank's order comes from one fill.
double weightPassShare(const Config &config, const LayerActivations &dense, const LayerActivations &moe);

// What a backward (and the loss) allocates besides the saved tensors, for one
// micro-batch on one rank; each is alive for a moment, one at a time.
struct TransientActivations
{
    Bytes mlpBackward = 0; // a layer's MLP half: the gradients of its output and of the MLP's inner activations
    Bytes attentionBackward = 0; // its attention half: the output gradient and the score (or q, k, v) gradients
    Bytes recomputedForward = 0; // full recompute: a layer's forward run without saving (the widest tensors at once)
    Bytes lossForward = 0; // the logits and their fp32 copy while the loss is computed
    Bytes lossBackward = 0; // the cross entropy's backward before the output layer's (cross_entropy option)
    // The tensors each of them is, in the order they are allocated (what
    // core/timeline/allocationstream.h requests one by one); each sums to its total.
    std::vector<Bytes> mlpBackwardParts, attentionBackwardParts, recomputedForwardParts, lossForwardParts,
        lossBackwardParts;
};
TransientActivations transientActivations(const Config &config);

// Bytes of one activation element: 2 for 16-bit (and FP8) training, 4 for fp32.
int activationBytes(const Config &config);

// torch.autocast over an fp32 model: fp32 weights (training.fp32_params)
// below ZeRO-3 in 16-bit training, as Hugging Face's Trainer(bf16=True)
// runs. The residual stream stays fp32 (the embedding and the residual adds
// are not autocast ops), an eager RMSNorm keeps it and its normalised output
// in fp32, and every linear layer casts its input to 16 bits itself (autocast
// caches the casts of weights, not of activations).
bool autocastOverFp32(const Config &config);
// Bytes of one element of the residual stream: 4 under autocastOverFp32, else activationBytes.
int residualBytes(const Config &config);

} // namespace memledger
