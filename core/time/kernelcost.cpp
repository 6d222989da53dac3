// SPDX-License-Identifier: MIT
#include "core/time/kernelcost.h"

namespace memledger {

OpCost &OpCost::operator+=(const OpCost &o)
{
    flops += o.flops;
    bytes += o.bytes;
    seconds += o.seconds;
    return *this;
}

namespace {

// `inline` keeps it inlined into gemmCost and fp8GemmCost, as it was before
// it used the shared terms (out of line, the search ran 0.6 % more instructions).
inline OpCost gemmAt(const HardwareConfig &hardware, const Gemm &g, double peak, double operandBytes,
                     double resultBytes)
{
    OpCost c;
    c.flops = 2.0 * g.batch * g.m * g.n * g.k;
    c.bytes = g.batch * (operandBytes * (g.m * g.k + g.k * g.n) + resultBytes * g.m * g.n);
    if (c.flops <= 0)
        return {};
    c.seconds = gemmSeconds(hardware, c.flops, peak) + hbmSeconds(hardware, c.bytes) + hardware.kernel_launch_s;
    return c;
}

} // namespace

OpCost gemmCost(const HardwareConfig &hardware, const Gemm &g, double elementBytes)
{
    return gemmAt(hardware, g, hardware.peak_bf16_flops, elementBytes, elementBytes);
}

OpCost fp8GemmCost(const HardwareConfig &hardware, const Gemm &g, double operandBytes, double resultBytes)
{
    return gemmAt(hardware, g, hardware.peak_fp8_flops, operandBytes, resultBytes);
}

OpCost fp8GemmBackwardCost(const HardwareConfig &hardware, const Gemm &g, double operandBytes, double resultBytes)
{
    OpCost c = fp8GemmCost(hardware, {g.batch, g.m, g.k, g.n}, operandBytes, resultBytes); // dA = dC · Bᵀ
    c += fp8GemmCost(hardware, {g.batch, g.k, g.n, g.m}, operandBytes, resultBytes); // dB = Aᵀ · dC
    return c;
}

OpCost gemmBackwardCost(const HardwareConfig &hardware, const Gemm &g, double elementBytes)
{
    OpCost c = gemmCost(hardware, {g.batch, g.m, g.k, g.n}, elementBytes); // dA[m × k] = dC[m × n] · Bᵀ
    c += gemmCost(hardware, {g.batch, g.k, g.n, g.m}, elementBytes); // dB[k × n] = Aᵀ · dC
    return c;
}

OpCost memoryCost(const HardwareConfig &hardware, double bytes)
{
    if (bytes <= 0)
        return {};
    return {0.0, bytes, hbmSeconds(hardware, bytes) + hardware.kernel_launch_s};
}

double collectiveSeconds(const HardwareConfig &hardware, Collective kind, double bytes, double ranks, bool nvlink)
{
    if (ranks <= 1 || bytes <= 0)
        return 0.0;
    double factor = (ranks - 1) / ranks;
    if (kind == Collective::AllReduce)
        factor *= 2.0;
    else if (kind == Collective::Send)
        factor = 1.0;
    const double link = nvlink ? hardware.nvlink_bytes_per_s : hardware.network_bytes_per_s;
    const EfficiencyTable &table = nvlink ? hardware.nvlink_efficiency : hardware.network_efficiency;
    return hardware.collective_latency_s + bytes * factor / (link * efficiencyAt(table, bytes));
}

} // namespace memledger
