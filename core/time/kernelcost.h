// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

namespace memledger {

// What one kernel or one collective costs on a device, from the hardware's
// peaks and its efficiency tables (core/config/efficiency.h).
struct OpCost
{
    double flops = 0;
    double bytes = 0;
    double seconds = 0;
    OpCost &operator+=(const OpCost &o);
};

// The two terms of every kernel's time below, launch left out: `flops` of
// GEMM work at `peak` FLOP/s times the efficiency hardware.gemm_efficiency
// gives a GEMM of that size, and `bytes` through HBM at the efficiency
// hardware.hbm_efficiency gives that size (0 for none of either). Serving's
// layer roofline (core/serving/inferencetimeline.cpp) adds them the same way.
inline double gemmSeconds(const HardwareConfig &hardware, double flops, double peak)
{
    return flops > 0 ? flops / (peak * efficiencyAt(hardware.gemm_efficiency, flops)) : 0.0;
}
inline double hbmSeconds(const HardwareConfig &hardware, double bytes)
{
    return bytes > 0 ? bytes / (hardware.hbm_bytes_per_s * efficiencyAt(hardware.hbm_efficiency, bytes)) : 0.0;
}

// C[batch × m × n] = A[m × k] · B[k × n], elements of `elementBytes`. Time is
// the FLOPs at the achieved GEMM rate plus the operands and result through
// HBM at the achieved bandwidth, not the larger of the two: a GEMM whose
// result is large next to its work (attention scores with a head size of
// 64–128) is visibly slower than its FLOPs say. With the max instead of the
// sum, the published Megatron times come out 10–20 % too short
// (docs/time-model.md); plus one kernel launch.
struct Gemm
{
    double batch = 1;
    double m = 0, n = 0, k = 0;
};
OpCost gemmCost(const HardwareConfig &hardware, const Gemm &gemm, double elementBytes);
// Its backward: the input gradient dA = dC·Bᵀ and the weight gradient dB = Aᵀ·dC.
OpCost gemmBackwardCost(const HardwareConfig &hardware, const Gemm &gemm, double elementBytes);
// The same GEMM with FP8 operands (training.fp8_recipe): `operandBytes` per
// element of A and B (1 plus the scales), the result in `resultBytes`, at
// hardware.peak_fp8_flops with the same efficiency table (a GEMM of n FLOPs
// is as far from its peak in FP8 as in BF16). The backward's two GEMMs take
// FP8 operands too (Transformer Engine quantises the output gradient).
OpCost fp8GemmCost(const HardwareConfig &hardware, const Gemm &gemm, double operandBytes, double resultBytes);
OpCost fp8GemmBackwardCost(const HardwareConfig &hardware, const Gemm &gemm, double operandBytes, double resultBytes);

// A memory-bound kernel (norm, softmax, dropout, activation, optimizer step)
// moving `bytes` through HBM, plus one launch.
OpCost memoryCost(const HardwareConfig &hardware, double bytes);

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Send };

// One collective over `ranks` ranks of a tensor of `bytes` (the whole tensor:
// what an all-reduce reduces, what an all-gather produces), in nccl-tests'
// bus-bandwidth terms: an all-reduce moves 2(n−1)/n of it over each rank's
// link, the others (n−1)/n, a send all of it. The link is NVLink inside a
// node, the network across nodes; its achieved fraction depends on the
// message size. Zero for one rank.
double collectiveSeconds(const HardwareConfig &hardware, Collective kind, double bytes, double ranks, bool nvlink);

} // namespace memledger
