// SPDX-License-Identifier: MIT
#pragma once

#include "core/formats/launchexport.h"

namespace memledger {

// The plan as a torchtitan TOML job config with torchtitan's 2025 keys
// (torchtitan/config/job_config.py at 8a2686c4): [model] name and flavor for
// the Llama 3.1 models torchtitan ships, [training] batch, sequence and
// precision, [parallelism] degrees (the data-parallel shard degree written
// out, so the world size follows), schedule and pipeline split,
// [activation_checkpoint], [optimizer], float8 as a model converter. Every
// other value of the plan (the device, a model that is no llama3 flavor,
// ZeRO-1/2, another framework's knobs) is a "# memledger: section.key=value
// # why" comment line at the top, which importTorchtitanConfig applies back,
// so that the import is the same plan. Comments, not a [memledger] table:
// torchtitan's ConfigManager refuses tables and keys it does not know.
LaunchExport exportTorchtitan(const Config &config);

} // namespace memledger
