// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// strategy.framework: the knobs real frameworks set differently, each
// framework's defaults for them read from its source, and the sentence the
// ledger's choices say about each. A knob a preset writes wins over its
// framework's default (the preset reader applies the defaults first).

// One knob a framework sets: its preset name ("strategy.cross_entropy").
struct FrameworkKnob
{
    std::string_view name;
    void (*copy)(Config &to, const Config &from);
    bool (*same)(const Config &a, const Config &b);
};
const std::vector<FrameworkKnob> &frameworkKnobs();

// `config` with every knob of frameworkKnobs() at `framework`'s default
// (strategy.framework set too): what the reader starts from and what the
// GUI's framework picker applies.
Config withFrameworkDefaults(Config config, Framework framework);

// One sentence per knob, naming the behaviour of the plan's framework that
// its value follows, or saying that the preset overrides the framework.
std::vector<std::string> frameworkChoices(const Config &config);

// FSDP's per-block sharding: ZeRO-3 under torchtitan (FSDP2's fully_shard on
// each transformer block) or Hugging Face (accelerate's FSDP with the
// decoder layer as the wrap unit). Its gathers, reduce-scatters and
// pipeline-parallel accumulation follow PyTorch's FSDP rather than
// DeepSpeed's or Megatron's buckets.
bool fsdpPerBlock(const Config &config);
// The frameworks whose ZeRO-3 is PyTorch FSDP per block: torchtitan, Hugging Face.
bool fsdpFramework(Framework framework);

// FSDP's reshard_after_forward: the preset's value, or the framework's
// default (torchtitan's "default" policy: not under pipeline parallelism,
// whose micro-batches would each gather again).
bool fsdpReshardAfterForward(const Config &config);

// Every block of the rank stays gathered from its forward to its backward:
// FSDP per block without resharding after forward, or under pipeline
// parallelism, where PyTorch's pipelining keeps blocks gathered (and their
// gradients unsharded) until the last micro-batch's backward.
bool fsdpKeepsGathered(const Config &config);

} // namespace memledger
