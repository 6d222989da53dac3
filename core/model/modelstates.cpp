// SPDX-License-Identifier: MIT
#include "core/model/modelstates.h"

#include <algorithm>
#include <cmath>

namespace memledger {

StateBytes stateBytes(const TrainingConfig &tr)
{
    StateBytes sb;
    sb.compute = dtypeBytes(tr.params_dtype);
    sb.weight = tr.fp32_params ? 4 : sb.compute;
    sb.grad = dtypeBytes(tr.main_grads_dtype);
    // fp32 parameters are their own master weights (FSDP's MixedPrecisionPolicy, autocast).
    sb.master = tr.main_params_fp32 && !tr.fp32_params && tr.params_dtype != Dtype::FP32 ? 4 : 0;
    sb.weightWhy = tr.fp32_params && tr.params_dtype != Dtype::FP32
                       ? "4 B (fp32 parameters, also the master weights; " + std::string(dtypeName(tr.params_dtype))
                             + " only as cast for compute)"
                       : std::to_string(sb.weight) + " B (" + std::string(dtypeName(tr.params_dtype)) + ")";
    sb.gradWhy = std::to_string(sb.grad) + " B (" + std::string(dtypeName(tr.main_grads_dtype)) + " main_grads)";
    const Dtype defaultState = tr.optimizer == Optimizer::Adam8bit ? Dtype::INT8 : Dtype::FP32;
    const int m1 = dtypeBytes(tr.exp_avg_dtype.value_or(defaultState));
    const int m2 = dtypeBytes(tr.exp_avg_sq_dtype.value_or(defaultState));
    const std::string masterWhy = sb.master ? "4 B fp32 master weights + " : "";
    switch (tr.optimizer) {
    case Optimizer::Adam:
    case Optimizer::AdamW:
        sb.states = m1 + m2;
        sb.optWhy = masterWhy + std::to_string(m1) + " B exp_avg + " + std::to_string(m2) + " B exp_avg_sq";
        break;
    case Optimizer::Adam8bit:
        // bitsandbytes keeps one fp32 absmax per 2048-element block of each state.
        sb.states = m1 + m2 + 2.0 * 4.0 / 2048.0;
        sb.optWhy = masterWhy + std::to_string(m1) + " B + " + std::to_string(m2)
                    + " B quantised moments + 2 fp32 block scales per 2048 elements (bitsandbytes)";
        break;
    case Optimizer::SGD:
        sb.states = m1;
        sb.optWhy = masterWhy + std::to_string(m1) + " B momentum";
        break;
    case Optimizer::Muon:
        // One momentum buffer per matrix element (fp32 unless exp_avg_dtype
        // says otherwise); AdamW's two moments for everything else (Moonlight).
        sb.states = m1;
        sb.muon = true;
        sb.fallbackStates = m1 + m2;
        sb.optWhy = masterWhy + std::to_string(m1) + " B Muon momentum per matrix element; AdamW's "
                    + std::to_string(m1) + " B exp_avg + " + std::to_string(m2)
                    + " B exp_avg_sq for embeddings, output layer, norms, biases";
        break;
    case Optimizer::Adafactor:
        sb.states = 4;
        sb.factored = true;
        sb.optWhy = masterWhy + "4 B fp32 factored second moment per row and column of each matrix (no momentum)";
        break;
    }
    return sb;
}

static Bytes ceilDiv(Bytes a, std::int64_t b)
{
    return b > 1 ? (a + b - 1) / b : a;
}

ModelStates modelStates(const StateBytes &sb, std::int64_t params, std::int64_t factoredElements, int zero,
                        std::int64_t group, std::int64_t matrixElements)
{
    ModelStates ms;
    ms.weights = ceilDiv(params * sb.weight, zero >= 3 ? group : 1);
    ms.gradients = ceilDiv(params * sb.grad, zero >= 2 ? group : 1);
    double optimizer = static_cast<double>(params) * sb.optimizerPerParam();
    if (sb.factored)
        optimizer += static_cast<double>(factoredElements) * sb.states;
    if (sb.muon) {
        const std::int64_t matrices = std::clamp<std::int64_t>(matrixElements, 0, params);
        optimizer = static_cast<double>(params) * sb.master + static_cast<double>(matrices) * sb.states
                    + static_cast<double>(params - matrices) * sb.fallbackStates;
    }
    ms.optimizer = ceilDiv(static_cast<Bytes>(std::llround(optimizer)), zero >= 1 ? group : 1);
    return ms;
}

Bytes optimizerStepTemporaries(const Config &config, double shardElements, std::int64_t largestTensor)
{
    const Optimizer o = config.training.optimizer;
    if ((o != Optimizer::Adam && o != Optimizer::AdamW) || config.strategy.optimizer_offload != OffloadTarget::None)
        return 0;
    const int element = dtypeBytes(config.training.exp_avg_sq_dtype.value_or(Dtype::FP32));
    switch (config.strategy.optimizer_kernel) {
    case OptimizerKernel::Fused:
        return 0;
    case OptimizerKernel::Foreach:
        return static_cast<Bytes>(std::ceil(shardElements)) * element;
    case OptimizerKernel::SingleTensor:
        return 2 * std::min<Bytes>(largestTensor, static_cast<Bytes>(std::ceil(shardElements))) * element;
    }
    return 0;
}

} // namespace memledger
