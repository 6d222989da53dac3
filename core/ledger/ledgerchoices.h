// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/model/activations.h"
#include "core/model/modelstates.h"

#include <string>
#include <vector>

namespace memledger {

// The ledger's `choices`: one sentence per implementation choice in force
// (precision, attention, recompute, the schedule, the framework's gradient
// and loss buffers, the optimizer and its offload, FP8, MoE routing), so that
// every number explains itself (docs/accounting.md). `sb` and `denseLayer`
// are the evaluation's own (stateBytes, one dense layer's activations).
std::vector<std::string> ledgerChoices(const Config &config, const StateBytes &sb, const LayerActivations &denseLayer);

} // namespace memledger
