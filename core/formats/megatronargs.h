// SPDX-License-Identifier: MIT
#pragma once

#include "core/formats/launchimport.h"

#include <string_view>

namespace memledger {

// A Megatron-LM launch: a shell script that runs pretrain_gpt.py (or
// pretrain_mamba.py / pretrain_hybrid.py) under torchrun, or a bare list of
// its arguments. The script's words come from core/formats/shellwords.h; the
// arguments are read with the names and defaults of Megatron-LM's
// megatron/training/arguments.py and megatron/core/transformer/transformer_config.py,
// and the values validate_args derives are derived the same way: the FFN
// width (4h, or int(8h/3 / 64) * 64 with --swiglu), kv_channels (h / heads),
// the data-parallel size (world size / (t * p * c)), the global batch
// (micro-batch * d), sequence parallelism off without tensor parallelism.
// The world size comes from torchrun's --nproc_per_node * --nnodes, else the
// script's WORLD_SIZE or GPUS_PER_NODE * NNODES, else options.gpus (which
// also replaces the file's).
// Errors name the argument: "--num-attention-heads: missing".
LaunchImport importMegatronLaunch(std::string_view text, const LaunchOptions &options);

// The plan's Megatron-LM arguments (without the launcher and script), each
// "--name" or "--name value", for what the arguments can express; values are
// shell-quoted where they need it.
std::vector<std::string> megatronArgumentsOf(const Config &config);

} // namespace memledger
