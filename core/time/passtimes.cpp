// SPDX-License-Identifier: MIT
#include "core/time/passtimes.h"

#include "core/model/activations.h"
#include "core/schedule/stagelayers.h"

namespace memledger {

PassTimes passTimes(const Config &config, const CostModel &cost)
{
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t p = par.pipeline_model_parallel_size, v = par.virtual_pipeline_model_parallel_size;
    const std::vector<StageLayers> stages = stageLayers(config);
    PassTimes times{.passes = {}, .sendSeconds = cost.p2pSeconds};
    for (std::int64_t r = 0; r < p; ++r) {
        std::vector<PassSeconds> &rank = times.passes.emplace_back();
        for (std::int64_t k = 0; k < v; ++k) {
            const StageLayers &sl = stages[static_cast<std::size_t>(k * p + r)];
            double forward = 0, backward = 0, weight = 0;
            for (std::int64_t i = 0; i < sl.count; ++i) {
                const LayerCost &lc = config.model.isMoeLayer(sl.first + i) ? cost.moe : cost.dense;
                forward += lc.forward.seconds;
                backward += lc.backward.seconds + (recomputesLayer(config.strategy, i) ? lc.recompute.seconds : 0.0);
                weight += lc.weightGrad.seconds;
            }
            if (isLastStage(par, r, k)) {
                forward += cost.outputForward.seconds;
                backward += cost.outputBackward.seconds;
                weight += cost.outputWeightGrad.seconds;
            }
            rank.push_back({.forward = forward, .inputGradient = backward - weight, .weight = weight});
        }
    }
    return times;
}

std::vector<std::vector<PipelineOp>> scheduledOps(const Config &config, const CostModel &cost, double weightShare)
{
    const PassTimes times
        = config.parallelism.schedule() == PipelineSchedule::ZbV ? passTimes(config, cost) : PassTimes{};
    return scheduleAllOps(config.parallelism, config.microBatches(), weightShare, times);
}

std::vector<std::vector<PipelineOp>> scheduledOps(const Config &config, const CostModel &cost)
{
    if (!splitsBackward(config.parallelism.schedule()))
        return scheduleAllOps(config.parallelism, config.microBatches());
    const LayerActivations dense = layerActivations(config, false, false);
    const LayerActivations moe = config.model.isMoe() ? layerActivations(config, true, false) : dense;
    return scheduledOps(config, cost, weightPassShare(config, dense, moe));
}

} // namespace memledger
