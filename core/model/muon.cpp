// SPDX-License-Identifier: MIT
#include "core/model/muon.h"

#include <algorithm>

namespace memledger {

double newtonSchulzIterationFlops(std::int64_t rows, std::int64_t cols)
{
    const double m = double(std::min(rows, cols)), n = double(std::max(rows, cols));
    return 2.0 * m * m * n + 2.0 * m * m * m + 2.0 * m * m * n;
}

std::int64_t newtonSchulzWorkingElements(std::int64_t rows, std::int64_t cols)
{
    const std::int64_t m = std::min(rows, cols), n = std::max(rows, cols);
    return 3 * m * n + 2 * m * m;
}

ParamCount muonFullMatrices(const Config &config, const std::vector<std::int64_t> &layers)
{
    // t = 1 and expert t = 1: every matrix at its full shape; e still splits the experts.
    const std::int64_t e = config.parallelism.expert_model_parallel_size;
    const LayerParams dense = layerParams(config.model, false, 1, e, 1);
    const LayerParams moe = config.model.isMoe() ? layerParams(config.model, true, 1, e, 1) : dense;
    ParamCount full;
    for (std::int64_t l : layers) {
        const LayerParams &lp = config.model.isMoeLayer(l) ? moe : dense;
        full += lp.dense;
        full += lp.expert;
    }
    return full;
}

ParamCount muonFullMatrices(const Config &config, const std::vector<StageLayers> &stages, std::int64_t rank)
{
    const ParallelismConfig &par = config.parallelism;
    std::vector<std::int64_t> layers;
    for (std::int64_t k = 0; k < par.virtual_pipeline_model_parallel_size; ++k) {
        const StageLayers &sl = stages[static_cast<std::size_t>(k * par.pipeline_model_parallel_size + rank)];
        for (std::int64_t i = 0; i < sl.count; ++i)
            layers.push_back(sl.first + i);
    }
    return muonFullMatrices(config, layers);
}

double muonLocalMatrixElements(const Config &config, const std::vector<std::int64_t> &layers)
{
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size, e = par.expert_model_parallel_size;
    const LayerParams dense = layerParams(config.model, false, t, e, par.expertTensorParallel());
    const LayerParams moe
        = config.model.isMoe() ? layerParams(config.model, true, t, e, par.expertTensorParallel()) : dense;
    const bool zero = par.zero_stage >= 1;
    const double dp = double(par.data_parallel_size * par.context_parallel_size);
    const double edp
        = config.model.isMoe() ? std::max(1.0, double(t) * dp / double(par.expertTensorParallel() * e)) : 1.0;
    double local = 0;
    for (std::int64_t l : layers) {
        const LayerParams &lp = config.model.isMoeLayer(l) ? moe : dense;
        local
            += double(lp.dense.matrixParams) / (zero ? dp : 1.0) + double(lp.expert.matrixParams) / (zero ? edp : 1.0);
    }
    return local;
}

double muonSharers(const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    return config.training.muon_newton_schulz == MuonNewtonSchulz::LayerWise
               ? double(par.data_parallel_size * par.context_parallel_size)
               : 1.0;
}

Bytes muonWorkingSetBytes(const ParamCount &full)
{
    return full.nsWorkingElements * dtypeBytes(kNewtonSchulzDtype);
}

} // namespace memledger
