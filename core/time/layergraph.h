// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/config/efficiency.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// Store, recompute or offload, per saved tensor of one transformer layer
// (seed 002 §3.3, §4.3; issue 6). The tensors are the rows of
// layerActivations grouped into the 13 of a Megatron GPT layer; node 0, the
// layer input with its norm statistics, is the checkpoint and always stored,
// so 12 tensors are free: 2^12 store/recompute plans, 3^12 with offload.
//
// Recompute: a tensor not stored is rebuilt from its dependencies in the
// backward, once; a dependency that is itself recomputed is rebuilt once too
// and shared, so a plan's recompute is the sum of its recomputed tensors' own
// ops (dropout masks regenerate from the saved RNG state). Offload: the tensor
// goes to the host after the forward and returns for the backward over
// hardware.host_link_bytes_per_s; the copy-out hides under the layer's forward
// and the copy-in under its backward, and only the excess stalls compute
// (reference section 6: 150 MB over 25 GB/s against a 5 ms forward stalls 1 ms).
//
// Quantise (issue 12): fp8 e4m3 with one scale per block of
// strategy.activation_quant_block_size elements, written after the forward
// and read back to 16 bits in the backward, both memory-bound passes; a node
// quantised and offloaded sends its fp8 bytes. 1-byte masks and fp32
// statistics do not quantise.
using Fate = TensorFate;

struct TensorNode
{
    std::string name; // "attention.softmax_output"
    Bytes bytes = 0; // as saved, one micro-batch on one rank
    double flops = 0; // to recompute it from its dependencies
    double bytesMoved = 0; // HBM traffic of that recompute (inputs read, output written, weights)
    std::vector<int> deps; // nodes it is computed from (empty: the layer input or an RNG mask)
    bool attentionCore = false; // what Megatron's selective recompute drops
    std::vector<std::string> tensors; // the saved tensors it groups, as the per-layer table names them
    Bytes quantizedBytes = 0; // its size with the 16-bit tensors in fp8 and their scales
    double quantizedElements = 0; // elements of its 16-bit tensors
    double quantizeBytesMoved = 0; // HBM traffic of quantising in the forward and dequantising in the backward
    double commSeconds = 0; // collectives its recompute repeats (an MoE layer's dispatch or combine all-to-all)
};

struct LayerGraph
{
    std::vector<TensorNode> nodes; // nodes[0] is the layer input: always stored
    double forwardFlops = 0, backwardFlops = 0;
    double forwardSeconds = 0, backwardSeconds = 0; // roofline
    double peakFlops = 0, hbmBytesPerS = 0, linkBytesPerS = 0;
    EfficiencyTable gemmEfficiency, hbmEfficiency; // the device's achieved fractions (core/config/efficiency.h)
    Bytes total() const;
};

// The dense layer of the configured model (GPT/Llama blocks; MLA's tensors
// stay with the layer input).
LayerGraph layerGraph(const Config &config);

// An MoE layer of the configured model: the attention half as layerGraph's,
// then the router (its input and probabilities), the routed experts (the
// permuted token copies, fc1's output, fc2's input, the output the unpermute
// weighs) and the shared expert, each priced at the MoE layer's own shapes:
// the top-k copies each expert-parallel rank receives (times the capacity
// factor under static shapes), the local experts' weights, the shared
// expert's tensor-parallel width; recomputing the permuted tokens or the
// experts' output repeats the dispatch or combine all-to-all. The planners'
// frontier stays on the dense layer; this graph prices an MoE layer's policies.
LayerGraph moeLayerGraph(const Config &config);

enum class TensorCost {
    Flops, // recompute priced by its FLOPs, as if every op ran at peak
    Roofline, // per op as the time model prices a kernel: FLOPs at the achieved GEMM rate plus bytes at the achieved
              // HBM bandwidth
};

struct TensorPlan
{
    std::vector<Fate> fates; // one per node; fates[0] is Store
    Bytes deviceBytes = 0; // kept on the device from forward to backward
    Bytes offloadedBytes = 0;
    double recomputeSeconds = 0; // under the cost model (FLOPs model: FLOPs / peak)
    double quantizeSeconds = 0; // quantise and dequantise passes
    double stallSeconds = 0; // offload copies not hidden under compute
    double overhead = 0; // (recompute + quantise + stall) / the layer's forward + backward under the same model
};

// Seconds of compute stalled by copying `bytes` out during a forward of
// `forward` seconds and back during a backward of `backward` seconds.
double offloadStall(double bytes, double linkBytesPerS, double forward, double backward);

TensorPlan evaluateTensorPlan(const LayerGraph &graph, const std::vector<Fate> &fates, TensorCost cost);

// What recomputing node `n` costs (its own ops, its repeated collectives), what
// quantising and dequantising it costs, and the layer's forward + backward,
// each under `cost`'s model.
double opSeconds(const LayerGraph &graph, const TensorNode &n, TensorCost cost);
double quantizeSeconds(const LayerGraph &graph, const TensorNode &n, TensorCost cost);
double layerSeconds(const LayerGraph &graph, TensorCost cost);

// What the configuration's own fates (recompute_granularity refined by
// tensor_policies) cost one layer: each node's recompute and quantise work in
// proportion to its bytes given that fate, the offloaded bytes exact. `fates`
// holds the fate of most of each node's bytes, for display.
TensorPlan configuredTensorPlan(const Config &config, const LayerGraph &graph, TensorCost cost);
// The same for an MoE layer's tensors on moeLayerGraph's graph (moeLayer true).
TensorPlan configuredTensorPlan(const Config &config, const LayerGraph &graph, TensorCost cost, bool moeLayer);

} // namespace memledger
