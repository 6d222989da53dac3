// SPDX-License-Identifier: MIT
#pragma once

#include "core/formats/launchimport.h"

#include <string>
#include <string_view>

namespace memledger {

// A DeepSpeed JSON config (the ds_config.json that deepspeed.initialize or the
// Hugging Face Trainer's --deepspeed reads) with a model: options.model (a
// built-in model preset's name, or a Hugging Face config.json's path), or the
// model its "memledger" key carries. Keys are read with the names and
// defaults of deepspeed/runtime/config.py and deepspeed/runtime/zero/config.py:
// the batch triple train_batch_size = train_micro_batch_size_per_gpu ×
// gradient_accumulation_steps × data-parallel world, completed from any two
// as DeepSpeed's _set_batch_related_parameters does; zero_optimization's
// stage, reduce_bucket_size, contiguous_gradients and offload devices;
// bf16 / fp16; optimizer.type; activation_checkpointing. DeepSpeed without
// Megatron is pure data parallel: d = world size (options.gpus) / (t · p · c),
// with t, p and c 1 unless the "memledger" key sets them.
//
// "auto" values (what the Hugging Face Trainer fills from its own arguments)
// are taken from the plan's defaults, each with a note. Every other key is
// used or listed as unused with why; a bad type or a contradiction is an
// error naming the key ("zero_optimization.stage").
//
// The "memledger" key, {"unexpressed": {"section.key": value, ...}, "why":
// {...}}, holds what DeepSpeed's keys cannot say (export --to deepspeed
// writes it); each entry is applied as --set would, before --set.
LaunchImport importDeepSpeedConfig(std::string_view text, const LaunchOptions &options);

// The model --model names: a built-in model preset, a MemLedger preset file
// (its model section) or a Hugging Face config.json, read as import-hf reads
// it. False with problems (each prefixed by `where` and the name) when it is
// none of them; the torchtitan import shares it.
bool modelFromOption(const std::string &name, const std::string &where, ModelConfig &model, LaunchImport &r);

} // namespace memledger
