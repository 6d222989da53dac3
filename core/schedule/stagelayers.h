// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <vector>

namespace memledger {

// Every stage's layers in stage order (p·v entries), from pipeline_layout or
// the even split; each rank's chunk k takes the layers of its position along
// the data flow (stagePlace, which DualPipe's two directions make differ from k·p + r).
// The last stage also runs the multi-token prediction modules' layers
// (model.mtp_num_layers, numbered from num_layers on) unless `withMtp` is
// false (serving runs the decoder alone).
std::vector<StageLayers> stageLayers(const Config &config, bool withMtp = true);
// The transformer layers a pipeline rank holds, all its chunks together.
std::int64_t rankLayers(const std::vector<StageLayers> &stages, std::int64_t p, std::int64_t rank);

} // namespace memledger
