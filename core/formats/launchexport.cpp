// SPDX-License-Identifier: MIT
#include "core/formats/launchexport.h"

#include "core/formats/builtins.h"
#include "core/formats/deepspeedexport.h"
#include "core/formats/megatronargs.h"
#include "core/formats/preset.h"
#include "core/formats/torchtitanexport.h"

#include <nlohmann/json.hpp>

namespace memledger {

namespace {

// MoE layers as (first_k_dense_replace, moe_layer_freq) when that rule gives
// the same layers, else as the list.
void canonicalMoeLayers(ModelConfig &m)
{
    if (!m.isMoe())
        return;
    std::vector<int> pattern;
    for (std::int64_t l = 0; l < m.num_layers; ++l)
        pattern.push_back(m.isMoeLayer(l) ? 1 : 0);
    std::int64_t first = -1, second = -1;
    for (std::int64_t l = 0; l < m.num_layers; ++l) {
        if (pattern[static_cast<std::size_t>(l)] == 0)
            continue;
        if (first < 0)
            first = l;
        else if (second < 0)
            second = l;
    }
    if (first >= 0) {
        const std::int64_t freq = second > first ? second - first : std::max<std::int64_t>(1, m.num_layers - first);
        bool rule = true;
        for (std::int64_t l = 0; l < m.num_layers && rule; ++l)
            rule = (pattern[static_cast<std::size_t>(l)] != 0) == (l >= first && (l - first) % freq == 0);
        if (rule) {
            m.first_k_dense_replace = first;
            m.moe_layer_freq = freq;
            m.moe_layer_pattern.clear();
            return;
        }
    }
    m.first_k_dense_replace = 0;
    m.moe_layer_freq = 1;
    m.moe_layer_pattern = pattern;
}

std::string reasonFor(const std::string &field)
{
    if (field == "strategy.framework")
        return "the framework whose defaults the plan's knobs follow";
    if (field == "parallelism.pipeline_schedule")
        return "Megatron-LM runs 1F1B and interleaved 1F1B only";
    if (field == "strategy.tensor_policies")
        return "per-tensor fates: no Megatron-LM argument";
    if (field == "model.position_embedding_type")
        return "ALiBi: Megatron-DeepSpeed's --position-embedding-type alibi, not a Megatron-LM choice";
    if (field == "model.embed_layernorm")
        return "Megatron-DeepSpeed's --embed-layernorm, not a Megatron-LM argument";
    return "no Megatron-LM argument sets this value";
}

// "# memledger:" lines for every field of `want` that `got` (the import of
// the arguments alone) does not have.
std::vector<std::string> annotations(const Config &wantConfig, const Config &gotConfig)
{
    std::vector<std::string> lines;
    for (const UnexpressedField &u : unexpressedFields(wantConfig, gotConfig, false))
        lines.push_back(u.field == "hardware" ? "hardware=" + u.value.get<std::string>()
                                                    + "  # the device: not among Megatron-LM's arguments"
                                              : u.field + "=" + u.value.dump() + "  # " + reasonFor(u.field));
    return lines;
}

std::string megatronText(const Config &config, const std::vector<std::string> &notes)
{
    const ParallelismConfig &p = config.parallelism;
    const std::int64_t gpus = p.gpus();
    const std::int64_t node = config.hardware.gpus_per_node;
    const std::int64_t perNode = gpus % node == 0 ? node : gpus;
    std::string text = "#!/bin/bash\n# Megatron-LM launch of the plan \"" + config.name
                       + "\", written by memledger-cli export --to megatron.\n"
                         "# Values Megatron-LM has no argument for follow as \"# memledger:\" lines, which "
                         "memledger-cli import reads back.\n";
    for (const std::string &n : notes)
        text += "# memledger: " + n + "\n";
    text += "torchrun --nproc_per_node " + std::to_string(perNode) + " --nnodes " + std::to_string(gpus / perNode)
            + " pretrain_gpt.py";
    for (const std::string &arg : megatronArgumentsOf(config))
        text += " \\\n    " + arg;
    return text + "\n";
}

} // namespace

Config canonicalPlan(Config c)
{
    c.name.clear();
    c.description.clear();
    ModelConfig &m = c.model;
    m.num_query_groups = m.queryGroups();
    m.kv_channels = m.headDim();
    m.ffn_hidden_size = m.ffn();
    if (m.isMoe())
        m.moe_ffn_hidden_size = m.moeFfn();
    if (m.max_position_embeddings == 0)
        m.max_position_embeddings = c.training.seq_length;
    canonicalMoeLayers(m);
    c.training.global_batch_size = c.globalBatch();
    ParallelismConfig &p = c.parallelism;
    p.expert_tensor_parallel_size = p.expertTensorParallel();
    p.pipeline_schedule = p.schedule();
    const std::int64_t stages = static_cast<std::int64_t>(p.pipeline_layout.size());
    if (stages > 0
        && std::all_of(p.pipeline_layout.begin(), p.pipeline_layout.end(),
                       [&](std::int64_t n) { return n * stages == m.num_layers; })
        && stages == p.pipeline_model_parallel_size * p.virtual_pipeline_model_parallel_size)
        p.pipeline_layout.clear();
    return c;
}

bool importFailedWarnings(const LaunchImport &back, LaunchExport &out)
{
    if (back.config)
        return false;
    for (const Problem &p : back.problems)
        if (p.isError())
            out.problems.push_back(
                {p.path, p.message + " (importing the export)", p.suggestion, Problem::Severity::Warning});
    return true;
}

LaunchExport exportLaunch(const Config &config, LaunchFormat format)
{
    LaunchExport out;
    if (format == LaunchFormat::DeepSpeed)
        return exportDeepSpeed(config);
    if (format == LaunchFormat::Torchtitan)
        return exportTorchtitan(config);
    // The arguments alone, imported back: what they say and what they leave to the comments.
    LaunchImport plain = importMegatronLaunch(megatronText(config, {}), {});
    if (!plain.config) {
        for (Problem &p : plain.problems)
            if (p.isError())
                out.problems.push_back(std::move(p));
        return out;
    }
    out.text = megatronText(config, annotations(config, *plain.config));
    // The round trip, checked: the file imported with its comments gives the plan back.
    LaunchImport back = importMegatronLaunch(out.text, {});
    finishLaunchImport(back, {});
    if (!importFailedWarnings(back, out) && !(canonicalPlan(*back.config) == canonicalPlan(config))) {
        for (const std::string &line : annotations(config, *back.config))
            out.problems.push_back(
                {annotationAssignment(line), "does not survive the round trip", {}, Problem::Severity::Warning});
    }
    return out;
}

std::string builtinSection(const Config &config, const char *kind)
{
    const Config want = canonicalPlan(config);
    for (const std::string &name : builtinNames(kind)) {
        const Config *builtin = builtinConfig(kind, name);
        if (!builtin)
            continue;
        Config c = config;
        if (std::string_view(kind) == "models")
            c.model = builtin->model;
        else
            c.hardware = builtin->hardware;
        if (canonicalPlan(c) == want)
            return name;
    }
    return {};
}

std::vector<UnexpressedField> unexpressedFields(const Config &wantConfig, const Config &gotConfig, bool unsetExtra)
{
    const nlohmann::json want = presetToJson(canonicalPlan(wantConfig));
    const nlohmann::json got = presetToJson(canonicalPlan(gotConfig));
    std::vector<UnexpressedField> out;
    for (const char *section : {"model", "training", "parallelism", "strategy", "hardware", "inference"}) {
        if (!want.contains(section) || (got.contains(section) && want[section] == got[section]))
            continue;
        if (std::string_view(section) == "hardware") {
            if (const std::string name = builtinSection(wantConfig, "hardware"); !name.empty()) {
                out.push_back({"hardware", name});
                continue;
            }
        }
        for (const auto &[key, value] : want[section].items()) {
            if (got.contains(section) && got[section].contains(key) && got[section][key] == value)
                continue;
            // A nested object ("strategy.allocator"): field by field, as import reads it back.
            if (value.is_object() && got.contains(section) && got[section].contains(key)
                && got[section][key].is_object()) {
                for (const auto &[inner, v] : value.items())
                    if (!got[section][key].contains(inner) || got[section][key][inner] != v)
                        out.push_back({std::string(section) + "." + key + "." + inner, v});
                continue;
            }
            out.push_back({std::string(section) + "." + key, value});
        }
        if (unsetExtra && got.contains(section) && got[section].is_object())
            for (const auto &[key, value] : got[section].items())
                if (!want[section].contains(key))
                    out.push_back({std::string(section) + "." + key, nullptr});
    }
    return out;
}

} // namespace memledger
