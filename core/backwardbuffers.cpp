// SPDX-License-Identifier: MIT
#include "core/backwardbuffers.h"

#include "core/modelstates.h"
#include "core/parameters.h"

namespace memledger {

BackwardBuffers backwardBuffers(const Config &c, const Ledger &ledger)
{
    BackwardBuffers out;
    out.activations = transientActivations(c);
    for (const RankLedger &r : ledger.ranks)
        out.weightGradient.push_back(r.largest_parameter_tensor * dtypeBytes(c.training.params_dtype));
    const ParallelismConfig &par = c.parallelism;
    if (c.strategy.grad_offload != OffloadTarget::None && c.model.num_layers > 0) {
        const StateBytes sb = stateBytes(c.training);
        const std::int64_t t = par.tensor_model_parallel_size, e = par.expert_model_parallel_size;
        const LayerParams dense = layerParams(c.model, false, t, e, par.expertTensorParallel());
        const LayerParams moe = c.model.isMoe() ? layerParams(c.model, true, t, e, par.expertTensorParallel()) : dense;
        double params = 0;
        for (std::int64_t l = 0; l < c.model.num_layers; ++l) {
            const LayerParams &lp = c.model.isMoeLayer(l) ? moe : dense;
            params += double(lp.dense.params + lp.expert.params);
        }
        const double shard = par.zero_stage >= 2 ? double(par.data_parallel_size * par.context_parallel_size) : 1.0;
        out.gradBytesPerLayer = params / double(c.model.num_layers) * sb.grad / shard;
        out.gradBucketBytes = double(c.strategy.ddp_bucket_size) * sb.grad;
    }
    return out;
}

bool materializesWeightGradient(const StrategyConfig &strategy, bool firstMicroBatch)
{
    return strategy.grad_buffer == GradBuffer::Contiguous ? !strategy.gradient_accumulation_fusion : !firstMicroBatch;
}

} // namespace memledger
