// SPDX-License-Identifier: MIT
#include "core/formats/deepspeedexport.h"

#include "core/formats/builtins.h"
#include "core/formats/deepspeedconfig.h"
#include "core/formats/launchexport.h"
#include "core/formats/preset.h"

#include <nlohmann/json.hpp>

namespace memledger {

namespace {

using ordered = nlohmann::ordered_json;

std::string reasonFor(const std::string &field)
{
    if (field == "model" || field.rfind("model.", 0) == 0)
        return "the model: not part of a DeepSpeed config";
    if (field == "hardware")
        return "the device: not part of a DeepSpeed config";
    if (field == "strategy.framework")
        return "the framework whose defaults the plan's knobs follow";
    if (field == "parallelism.tensor_model_parallel_size" || field == "parallelism.pipeline_model_parallel_size"
        || field == "parallelism.context_parallel_size" || field == "parallelism.virtual_pipeline_model_parallel_size"
        || field == "parallelism.sequence_parallel" || field == "parallelism.expert_tensor_parallel_size"
        || field == "parallelism.expert_model_parallel_size" || field == "parallelism.pipeline_schedule"
        || field == "parallelism.pipeline_layout")
        return "model parallelism: DeepSpeed without Megatron is pure data parallel";
    if (field == "training.seq_length")
        return "the data loader's sequence length: not in a DeepSpeed config";
    return "no DeepSpeed key sets this value";
}

// {"unexpressed": {...}, "why": {...}}: every field of `want` that `got` (the import of the keys alone) lacks.
ordered memledgerKey(const Config &wantConfig, const Config &gotConfig, const std::string &model)
{
    ordered unexpressed = ordered::object(), why = ordered::object();
    const auto add = [&](const std::string &field, const ordered &value) {
        unexpressed[field] = value;
        why[field] = reasonFor(field);
    };
    if (!model.empty())
        add("model", model);
    for (const UnexpressedField &u : unexpressedFields(wantConfig, gotConfig, true))
        add(u.field, ordered::parse(u.value.dump()));
    ordered out = ordered::object();
    if (!unexpressed.empty()) {
        out["unexpressed"] = unexpressed;
        out["why"] = why;
    }
    return out;
}

const char *offloadDevice(OffloadTarget target)
{
    return target == OffloadTarget::NVMe ? "nvme" : target == OffloadTarget::CPU ? "cpu" : "none";
}

// What DeepSpeed's keys say of the plan.
ordered deepspeedKeys(const Config &config)
{
    const TrainingConfig &t = config.training;
    const StrategyConfig &s = config.strategy;
    const std::int64_t d = config.parallelism.data_parallel_size;
    const std::int64_t global = config.globalBatch();
    ordered doc = ordered::object();
    doc["train_batch_size"] = global;
    doc["train_micro_batch_size_per_gpu"] = t.micro_batch_size;
    doc["gradient_accumulation_steps"] = global / (t.micro_batch_size * d);
    doc["bf16"] = {{"enabled", t.params_dtype == Dtype::BF16}};
    doc["fp16"] = {{"enabled", t.params_dtype == Dtype::FP16}};
    if (t.main_grads_dtype == Dtype::FP32 || t.main_grads_dtype == Dtype::BF16 || t.main_grads_dtype == Dtype::FP16)
        doc["data_types"] = {{"grad_accum_dtype", std::string(dtypeName(t.main_grads_dtype))}};
    if (t.optimizer == Optimizer::Adam || t.optimizer == Optimizer::AdamW || t.optimizer == Optimizer::SGD)
        doc["optimizer"] = {{"type", t.optimizer == Optimizer::Adam    ? "Adam"
                                     : t.optimizer == Optimizer::AdamW ? "AdamW"
                                                                       : "SGD"}};
    ordered zero = ordered::object();
    zero["stage"] = config.parallelism.zero_stage;
    zero["reduce_bucket_size"] = s.ddp_bucket_size;
    zero["contiguous_gradients"] = s.grad_buffer == GradBuffer::Contiguous;
    zero["overlap_comm"] = s.overlap_grad_reduce;
    if (s.zero3_prefetch_bucket_size)
        zero["stage3_prefetch_bucket_size"] = *s.zero3_prefetch_bucket_size;
    if (s.zero3_max_live_parameters)
        zero["stage3_max_live_parameters"] = *s.zero3_max_live_parameters;
    if (s.optimizer_offload != OffloadTarget::None)
        zero["offload_optimizer"] = {{"device", offloadDevice(s.optimizer_offload)}};
    if (s.param_offload != OffloadTarget::None)
        zero["offload_param"] = {{"device", offloadDevice(s.param_offload)}};
    doc["zero_optimization"] = zero;
    if (s.recompute_granularity == RecomputeGranularity::Full && s.recompute_method == RecomputeMethod::Uniform
        && s.recompute_num_layers == 1)
        doc["activation_checkpointing"]
            = {{"partition_activations", false}, {"cpu_checkpointing", s.activation_offload == OffloadTarget::CPU}};
    return doc;
}

LaunchImport importBack(const ordered &doc)
{
    LaunchImport back = importDeepSpeedConfig(doc.dump(2), {});
    finishLaunchImport(back, {});
    return back;
}

} // namespace

LaunchExport exportDeepSpeed(const Config &config)
{
    LaunchExport out;
    ordered doc = deepspeedKeys(config);
    // The keys alone with the model, imported back: what they say and what they leave to "memledger".
    const std::string model = builtinSection(config, "models");
    ordered modelOnly = ordered::object();
    if (!model.empty()) {
        modelOnly["unexpressed"] = {{"model", model}};
    } else {
        const nlohmann::json fields = presetToJson(canonicalPlan(config))["model"];
        ordered unexpressed = ordered::object();
        for (const auto &[key, value] : fields.items())
            unexpressed["model." + key] = ordered::parse(value.dump());
        modelOnly["unexpressed"] = unexpressed;
    }
    doc["memledger"] = modelOnly;
    const LaunchImport plain = importBack(doc);
    if (!plain.config) {
        for (const Problem &p : plain.problems)
            if (p.isError())
                out.problems.push_back(p);
        return out;
    }
    ordered key = memledgerKey(config, *plain.config, {});
    for (const auto &[field, value] : modelOnly["unexpressed"].items()) {
        key["unexpressed"][field] = value;
        key["why"][field] = reasonFor(field);
    }
    doc["memledger"] = key;
    out.text = doc.dump(2) + "\n";
    // The round trip, checked: the file imported with its "memledger" key gives the plan back.
    const LaunchImport back = importBack(doc);
    if (!importFailedWarnings(back, out) && !(canonicalPlan(*back.config) == canonicalPlan(config))) {
        for (const auto &[field, value] : memledgerKey(config, *back.config, {})["unexpressed"].items())
            out.problems.push_back({field, "does not survive the round trip", {}, Problem::Severity::Warning});
    }
    return out;
}

} // namespace memledger
