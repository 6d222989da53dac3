// SPDX-License-Identifier: MIT
#pragma once

#include "core/formats/launchexport.h"

namespace memledger {

// The plan as a DeepSpeed JSON config (issue 33): the batch triple, bf16 /
// fp16 with data_types.grad_accum_dtype, optimizer.type, zero_optimization
// (stage, reduce_bucket_size, contiguous_gradients, offload devices) and
// activation_checkpointing, with every other value of the plan (the model,
// the device, tensor or pipeline parallelism DeepSpeed alone does not run,
// another framework's knobs) under the key "memledger": {"unexpressed":
// {"section.key": value}, "why": {"section.key": "why"}}, which
// importDeepSpeedConfig applies back, so that the import is the same plan.
// DeepSpeed ignores top-level keys it does not know.
LaunchExport exportDeepSpeed(const Config &config);

} // namespace memledger
