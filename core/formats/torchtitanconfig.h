// SPDX-License-Identifier: MIT
#pragma once

#include "core/formats/launchimport.h"

#include <string_view>

namespace memledger {

// A torchtitan TOML job config (train_configs/*.toml, what `torchrun ...
// -m torchtitan.train --job.config_file FILE` reads) as a plan, under
// strategy.framework "torchtitan". Keys are read with the names and defaults
// of two torchtitan versions, told apart by their keys:
// - December 2024 (commit 9dec370, the one benchmarks/llama3_h100_202412_torchtitan.md
//   names; torchtitan/config_manager.py): the degrees and batch_size under
//   [training], pipeline and context parallelism under [experimental], [float8];
// - 2025 (commit 8a2686c4, the last with TOML configs; torchtitan/config/job_config.py):
//   [parallelism], training.local_batch_size and global_batch_size, [compile],
//   model.converters with [quantize.linear.float8].
// The model is a flavor of torchtitan's llama3 ("8B", "70B", "405B" are the
// built-in Llama 3.1 models, "debugmodel" its test model), or --model.
// data_parallel_shard_degree -1 takes the ranks the other degrees leave of
// the world size (options.gpus). Every key is used or listed as unused with
// why; a bad type, an unknown value or a contradiction is an error naming the
// key ("parallelism.pipeline_parallel_schedule").
//
// Values torchtitan has no key for travel as "# memledger: section.key=value"
// comment lines (export --to torchtitan writes them: torchtitan's config
// manager refuses unknown tables and keys, so a [memledger] table would stop
// the job); lines setting the model are applied before the file's pipeline
// split is derived, the others as --set would, before --set.
LaunchImport importTorchtitanConfig(std::string_view text, const LaunchOptions &options);

// True for TOML text with a torchtitan table at its top level ([job],
// [model], [training], [parallelism], ...): what pasted text and a dropped
// .toml are taken as a torchtitan config by.
bool isTorchtitanConfigText(std::string_view text);

} // namespace memledger
