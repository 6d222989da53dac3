// SPDX-License-Identifier: MIT
#include "core/formats/torchtitanexport.h"

#include "core/formats/builtins.h"
#include "core/formats/launchexport.h"
#include "core/formats/preset.h"
#include "core/formats/torchtitanconfig.h"

#include <nlohmann/json.hpp>

namespace memledger {

namespace {

// torchtitan's llama3 flavor of a built-in model (see builtinOfFlavor in torchtitanconfig.cpp).
std::string flavorOf(const std::string &builtin)
{
    if (builtin == "llama-3.1-8b")
        return "8B";
    if (builtin == "llama-3.1-70b")
        return "70B";
    if (builtin == "llama-3.1-405b")
        return "405B";
    return {};
}

std::string reasonFor(const std::string &field)
{
    if (field == "model" || field.rfind("model.", 0) == 0)
        return "the model: not one of torchtitan's llama3 flavors";
    if (field == "hardware" || field.rfind("hardware.", 0) == 0)
        return "the device: not in a torchtitan config";
    if (field == "strategy.framework")
        return "the framework whose defaults the plan's knobs follow";
    if (field == "parallelism.zero_stage")
        return "torchtitan shards with FSDP (ZeRO-3) or replicates with DDP";
    if (field == "parallelism.pipeline_schedule")
        return "not a schedule torchtitan runs";
    if (field.rfind("strategy.recompute", 0) == 0)
        return "torchtitan checkpoints whole blocks, per op, or every N-th block";
    return "no torchtitan key sets this value";
}

// "field=value  # why" for every field of `want` the import of the keys alone (`got`) lacks;
// a field the plan leaves unset that the import sets is written null.
std::vector<std::string> annotations(const Config &wantConfig, const Config &gotConfig)
{
    std::vector<std::string> lines;
    for (const UnexpressedField &u : unexpressedFields(wantConfig, gotConfig, true))
        lines.push_back(u.field + "="
                        + (u.value.is_string() && u.field == "hardware" ? u.value.get<std::string>() : u.value.dump())
                        + "  # " + reasonFor(u.field));
    return lines;
}

std::string tomlString(std::string_view s)
{
    return "\"" + std::string(s) + "\"";
}

const char *scheduleOf(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::GPipe:
        return "GPipe";
    case PipelineSchedule::Interleaved:
        return "Interleaved1F1B";
    case PipelineSchedule::ZbV:
        return "ZBVZeroBubble";
    case PipelineSchedule::DualPipeV:
        return "DualPipeV";
    default:
        return "1F1B"; // the others travel as a "# memledger:" line
    }
}

// [parallelism]: FSDP over the shard group (HSDP across the replicas) for
// ZeRO ≥ 1, DDP for ZeRO 0; the pipeline's schedule and split.
std::string parallelismTable(const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    const StrategyConfig &s = config.strategy;
    const std::int64_t d = par.data_parallel_size, p = par.pipeline_model_parallel_size;
    const std::int64_t shard = par.zero_stage >= 1 ? par.dataParallelShard() : 1;
    std::string t = "\n[parallelism]\n";
    t += "data_parallel_replicate_degree = " + std::to_string(d / shard) + "\n";
    t += "data_parallel_shard_degree = " + std::to_string(shard) + "\n";
    t += "tensor_parallel_degree = " + std::to_string(par.tensor_model_parallel_size) + "\n";
    if (s.tp_comm_overlap && par.tensor_model_parallel_size > 1)
        t += "enable_async_tensor_parallel = true\n";
    // torchtitan's loss under TP is loss_parallel unless this is set.
    if (s.cross_entropy == CrossEntropy::Unfused && par.tensor_model_parallel_size > 1)
        t += "disable_loss_parallel = true\n";
    t += "pipeline_parallel_degree = " + std::to_string(p) + "\n";
    if (p > 1) {
        t += "pipeline_parallel_schedule = " + tomlString(scheduleOf(par.schedule())) + "\n";
        t += "pipeline_parallel_microbatch_size = " + std::to_string(config.training.micro_batch_size) + "\n";
        // Stages along the data flow: p · v, but p for DualPipe (its two directions share them).
        const std::int64_t stages = par.pipelineStages();
        if (par.pipeline_layout.empty()) {
            // An even split: no stage counts the embedding or the output as a layer.
            t += "pipeline_parallel_first_stage_less_layers = 0\npipeline_parallel_last_stage_less_layers = 0\n";
            t += "pipeline_parallel_layers_per_stage = " + std::to_string(config.model.num_layers / stages) + "\n";
        } else {
            t += "module_fqns_per_model_part = [\n";
            std::int64_t layer = 0;
            for (std::size_t i = 0; i < par.pipeline_layout.size(); ++i) {
                t += "    [";
                std::string items = i == 0 ? "\"tok_embeddings\"" : "";
                for (std::int64_t k = 0; k < par.pipeline_layout[i]; ++k, ++layer)
                    items += (items.empty() ? "" : ", ") + tomlString("layers." + std::to_string(layer));
                if (i + 1 == par.pipeline_layout.size())
                    items += std::string(items.empty() ? "" : ", ") + "\"norm\", \"output\"";
                t += items + "],\n";
            }
            t += "]\n";
        }
    }
    t += "context_parallel_degree = " + std::to_string(par.context_parallel_size) + "\n";
    if (par.context_parallel_size > 1)
        t += std::string("context_parallel_rotate_method = ")
             + (s.cp_comm_type == CpCommType::P2P ? "\"alltoall\"" : "\"allgather\"") + "\n";
    if (s.fsdp_reshard_after_forward)
        t += std::string("fsdp_reshard_after_forward = ") + (*s.fsdp_reshard_after_forward ? "\"always\"" : "\"never\"")
             + "\n";
    if (config.model.isMoe() && par.expert_model_parallel_size > 1) {
        t += "expert_parallel_degree = " + std::to_string(par.expert_model_parallel_size) + "\n";
        t += "expert_tensor_parallel_degree = " + std::to_string(par.expertTensorParallel()) + "\n";
    }
    return t;
}

// [activation_checkpoint]: full, per-op, or every N-th block ("block" with
// the chunk's layers / N, as importTorchtitanConfig reads it); anything else "none" and a line.
std::string checkpointTable(const Config &config)
{
    const StrategyConfig &s = config.strategy;
    std::string t = "\n[activation_checkpoint]\n";
    if (s.recompute_granularity == RecomputeGranularity::SelectiveOp)
        return t + "mode = \"selective\"\nselective_ac_option = \"op\"\n";
    if (s.recompute_granularity != RecomputeGranularity::Full)
        return t + "mode = \"none\"\n";
    if (s.recompute_method == RecomputeMethod::Block && s.recompute_num_layers > 0) {
        const ParallelismConfig &par = config.parallelism;
        const std::int64_t chunk
            = par.pipeline_layout.empty()
                  ? config.model.num_layers
                        / (par.pipeline_model_parallel_size * par.virtual_pipeline_model_parallel_size)
                  : par.pipeline_layout.front();
        const std::int64_t n = chunk / s.recompute_num_layers;
        if (n > 1 && chunk / n == s.recompute_num_layers)
            return t + "mode = \"selective\"\nselective_ac_option = \"" + std::to_string(n) + "\"\n";
    }
    return t + "mode = \"full\"\n";
}

std::string torchtitanText(const Config &config, const std::string &flavor, const std::vector<std::string> &lines)
{
    const TrainingConfig &tr = config.training;
    const StrategyConfig &s = config.strategy;
    const ParallelismConfig &par = config.parallelism;
    std::string t = "# torchtitan job config of the plan \"" + config.name
                    + "\", written by memledger-cli export --to torchtitan\n"
                      "# (torchtitan's 2025 keys). Values torchtitan has no key for follow as \"# memledger:\" "
                      "lines,\n# which memledger-cli import reads back; torchtitan reads no comments.\n";
    for (const std::string &l : lines)
        t += "# memledger: " + l + "\n";
    t += "# Run on " + std::to_string(par.gpus()) + " GPUs (the degrees below multiply to it).\n";
    t += "\n[job]\ndescription = " + nlohmann::json(config.name).dump() + "\n";
    t += "\n[model]\n";
    if (flavor.empty())
        t += "# not one of torchtitan's llama3 flavors: the model is in the \"# memledger:\" lines\n";
    else
        t += "name = \"llama3\"\nflavor = " + tomlString(flavor) + "\n";
    const bool fp8 = tr.fp8_recipe == Fp8Recipe::Tensorwise || tr.fp8_recipe == Fp8Recipe::MXFP8;
    if (fp8)
        t += std::string("converters = [")
             + (tr.fp8_recipe == Fp8Recipe::MXFP8 ? "\"quantize.linear.mx\"" : "\"quantize.linear.float8\"") + "]\n";
    t += "\n[optimizer]\nname = ";
    t += tr.optimizer == Optimizer::Adam ? "\"Adam\"\n" : "\"AdamW\"\n";
    t += std::string("implementation = ")
         + (s.optimizer_kernel == OptimizerKernel::Fused     ? "\"fused\""
            : s.optimizer_kernel == OptimizerKernel::Foreach ? "\"foreach\""
                                                             : "\"for-loop\"")
         + "\n";
    const std::int64_t global = config.globalBatch();
    const std::int64_t local
        = par.pipeline_model_parallel_size > 1 ? global / par.data_parallel_size : tr.micro_batch_size;
    t += "\n[training]\nlocal_batch_size = " + std::to_string(local) + "\n";
    t += "global_batch_size = " + std::to_string(global) + "\n";
    t += "seq_len = " + std::to_string(tr.seq_length) + "\n";
    const bool pureBf16 = tr.params_dtype == Dtype::BF16 && !tr.fp32_params && !tr.main_params_fp32;
    t += std::string("mixed_precision_param = ") + (tr.params_dtype == Dtype::FP32 ? "\"float32\"" : "\"bfloat16\"")
         + "\n";
    if (pureBf16)
        t += "dtype = \"bfloat16\"\n";
    if (s.param_offload == OffloadTarget::CPU && s.optimizer_offload == OffloadTarget::CPU)
        t += "enable_cpu_offload = true\n";
    t += parallelismTable(config);
    t += checkpointTable(config);
    if (s.torch_compile)
        t += "\n[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n";
    if (tr.fp8_recipe == Fp8Recipe::Tensorwise)
        t += std::string("\n[quantize.linear.float8]\nenable_fsdp_float8_all_gather = ")
             + (s.fp8_param_gather ? "true" : "false") + "\nfilter_fqns = [\"output\"]\n";
    return t;
}

LaunchImport importBack(const std::string &text)
{
    LaunchImport back = importTorchtitanConfig(text, {});
    finishLaunchImport(back, {});
    return back;
}

} // namespace

LaunchExport exportTorchtitan(const Config &config)
{
    LaunchExport out;
    const std::string flavor = flavorOf(builtinSection(config, "models"));
    // The model first (a flavor, a built-in's name or its fields), so the keys' import derives the same split.
    std::vector<std::string> modelLines;
    if (flavor.empty()) {
        if (const std::string builtin = builtinSection(config, "models"); !builtin.empty())
            modelLines.push_back("model=" + builtin + "  # " + reasonFor("model"));
        else {
            const nlohmann::json fields = presetToJson(canonicalPlan(config))["model"];
            for (const auto &[key, value] : fields.items())
                modelLines.push_back("model." + key + "=" + value.dump() + "  # " + reasonFor("model"));
        }
    }
    LaunchImport plain = importTorchtitanConfig(torchtitanText(config, flavor, modelLines), {});
    if (!plain.config) {
        for (Problem &p : plain.problems)
            if (p.isError())
                out.problems.push_back(std::move(p));
        return out;
    }
    std::vector<std::string> lines = modelLines;
    for (const std::string &l : annotations(config, *plain.config))
        if (!(l.rfind("model", 0) == 0 && !modelLines.empty()))
            lines.push_back(l);
    out.text = torchtitanText(config, flavor, lines);
    // The round trip, checked: the file imported with its comments gives the plan back.
    const LaunchImport back = importBack(out.text);
    if (!importFailedWarnings(back, out) && !(canonicalPlan(*back.config) == canonicalPlan(config))) {
        for (const std::string &line : annotations(config, *back.config))
            out.problems.push_back(
                {annotationAssignment(line), "does not survive the round trip", {}, Problem::Severity::Warning});
    }
    return out;
}

} // namespace memledger
