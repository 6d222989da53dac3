// SPDX-License-Identifier: MIT
#include "core/model/backwardbuffers.h"

#include "core/model/modelstates.h"
#include "core/model/parameters.h"

namespace memledger {

BackwardBuffers backwardBuffers(const Config &config, const std::vector<std::int64_t> &largestParameterTensors)
{
    BackwardBuffers out;
    out.activations = transientActivations(config);
    for (const std::int64_t elements : largestParameterTensors)
        out.weightGradient.push_back(elements * dtypeBytes(config.training.params_dtype));
    const ParallelismConfig &par = config.parallelism;
    if (config.strategy.grad_offload != OffloadTarget::None && config.model.num_layers > 0) {
        const StateBytes sb = stateBytes(config.training);
        const std::int64_t t = par.tensor_model_parallel_size, e = par.expert_model_parallel_size;
        const LayerParams dense = layerParams(config.model, false, t, e, par.expertTensorParallel());
        const LayerParams moe
            = config.model.isMoe() ? layerParams(config.model, true, t, e, par.expertTensorParallel()) : dense;
        double params = 0;
        for (std::int64_t l = 0; l < config.model.num_layers; ++l) {
            const LayerParams &lp = config.model.isMoeLayer(l) ? moe : dense;
            params += double(lp.dense.params + lp.expert.params);
        }
        const double shard = par.zero_stage >= 2 ? double(par.dataParallelShard() * par.context_parallel_size) : 1.0;
        out.gradBytesPerLayer = params / double(config.model.num_layers) * sb.grad / shard;
        out.gradBucketBytes = double(config.strategy.ddp_bucket_size) * sb.grad;
    }
    return out;
}

bool materializesWeightGradient(const StrategyConfig &strategy, bool firstMicroBatch)
{
    return strategy.grad_buffer == GradBuffer::Contiguous ? !strategy.gradient_accumulation_fusion : !firstMicroBatch;
}

} // namespace memledger
