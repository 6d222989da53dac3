// SPDX-License-Identifier: MIT
#include "core/schedule/stagelayers.h"

#include "core/schedule/schedule.h"

#include <algorithm>

namespace memledger {

std::vector<StageLayers> stageLayers(const Config &config, bool withMtp)
{
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t p = std::max<std::int64_t>(1, par.pipeline_model_parallel_size);
    const std::int64_t v = std::max<std::int64_t>(1, par.virtual_pipeline_model_parallel_size);
    // Layers by position along the data flow (pipeline_layout lists them in
    // that order), then each rank's chunk k gets its position's layers.
    const std::int64_t positions = std::max<std::int64_t>(1, par.pipelineStages());
    std::vector<StageLayers> byPosition(static_cast<std::size_t>(positions));
    const bool layout = static_cast<std::int64_t>(par.pipeline_layout.size()) == positions;
    std::int64_t first = 0;
    for (std::int64_t s = 0; s < positions; ++s) {
        const std::int64_t count
            = layout ? par.pipeline_layout[static_cast<std::size_t>(s)] : config.model.num_layers / positions;
        byPosition[static_cast<std::size_t>(s)] = {first, count};
        first += count;
    }
    // The multi-token prediction modules' layers run on the last stage, after the decoder's.
    if (withMtp)
        byPosition.back().count += std::max<std::int64_t>(0, config.model.mtp_num_layers);
    std::vector<StageLayers> out(static_cast<std::size_t>(p * v));
    for (std::int64_t k = 0; k < v; ++k)
        for (std::int64_t r = 0; r < p; ++r) {
            const std::int64_t pos = std::min(stagePlace(par, r, k).position, positions - 1);
            out[static_cast<std::size_t>(k * p + r)] = byPosition[static_cast<std::size_t>(pos)];
        }
    return out;
}

std::int64_t rankLayers(const std::vector<StageLayers> &stages, std::int64_t p, std::int64_t rank)
{
    std::int64_t n = 0;
    for (std::size_t s = static_cast<std::size_t>(rank); s < stages.size(); s += static_cast<std::size_t>(p))
        n += stages[s].count;
    return n;
}

} // namespace memledger
