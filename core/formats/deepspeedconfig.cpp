// SPDX-License-Identifier: MIT
#include "core/formats/deepspeedconfig.h"

#include "core/config/framework.h"
#include "core/formats/builtins.h"
#include "core/formats/hfimport.h"
#include "core/formats/jsontext.h"
#include "core/formats/preset.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace memledger {

namespace {

using json = nlohmann::json;

// Why a key MemLedger does not map is left: {noMemoryEffect, why}, by the
// key's path or a prefix of it ending in '.'.
using Reason = KeyReason;

constexpr Reason kReasons[] = {
    {"optimizer.params.", true, "a hyperparameter"},
    {"scheduler.", true, "the learning-rate schedule"},
    {"fp16.", true, "loss scaling"},
    {"bf16.immediate_grad_update", false, "when bf16 gradients reach the fp32 accumulator"},
    {"gradient_clipping", true, "a hyperparameter"},
    {"steps_per_print", true, "logging"},
    {"wall_clock_breakdown", true, "logging"},
    {"dump_state", true, "logging"},
    {"tensorboard.", true, "logging"},
    {"wandb.", true, "logging"},
    {"csv_monitor.", true, "logging"},
    {"comms_logger.", true, "logging"},
    {"flops_profiler.", true, "profiling"},
    {"zero_allow_untested_optimizer", true, "a check of the optimizer's class"},
    {"prescale_gradients", true, "where gradients are scaled"},
    {"gradient_predivide_factor", true, "where gradients are scaled"},
    {"aio.", true, "host-side NVMe I/O settings"},
    {"zero_optimization.allgather_partitions", true, "all-gather instead of broadcasts"},
    {"zero_optimization.reduce_scatter", true, "reduce-scatter instead of all-reduces"},
    // deepspeed/runtime/utils.py, all_gather_dp_groups: all_gather_into_tensor
    // (PyTorch 1.13 and later) or, before it, shards that are views of the same
    // flat group: the bucket sets how many all-gathers run, not what is allocated.
    {"zero_optimization.allgather_bucket_size", true,
     "stage 1 and 2 all-gather the updated partitions into the flat 16-bit groups in place; the bucket sets how "
     "many all-gathers run"},
    {"zero_optimization.stage3_max_reuse_distance", false,
     "ZeRO-3 keeps a parameter gathered when it is reused within this distance"},
    {"zero_optimization.stage3_param_persistence_threshold", false, "ZeRO-3 keeps parameters below this size gathered"},
    {"zero_optimization.stage3_gather_16bit_weights_on_model_save", true, "checkpoint saving"},
    {"zero_optimization.stage3_gather_fp16_weights_on_model_save", true, "checkpoint saving"},
    {"zero_optimization.sub_group_size", false, "the optimizer step's group of parameters at a time"},
    {"zero_optimization.offload_optimizer.pin_memory", true, "host memory"},
    {"zero_optimization.offload_param.pin_memory", true, "host memory"},
    {"zero_optimization.offload_optimizer.nvme_path", true, "a path"},
    {"zero_optimization.offload_param.nvme_path", true, "a path"},
    {"zero_optimization.offload_optimizer.buffer_count", false, "NVMe staging buffers"},
    {"zero_optimization.offload_param.buffer_count", false, "NVMe staging buffers"},
    {"zero_optimization.offload_param.buffer_size", false, "NVMe staging buffers"},
    {"zero_optimization.offload_param.max_in_cpu", true, "host memory"},
    {"zero_optimization.offload_optimizer.pipeline_read", true, "NVMe I/O overlap"},
    {"zero_optimization.offload_optimizer.pipeline_write", true, "NVMe I/O overlap"},
    {"zero_optimization.offload_optimizer.fast_init", true, "NVMe initialisation"},
    {"zero_optimization.offload_optimizer.ratio", false, "the share of the optimizer step offloaded"},
    {"activation_checkpointing.partition_activations", true,
     "splits each checkpoint over the tensor-parallel ranks, which DeepSpeed alone does not have"},
    {"activation_checkpointing.contiguous_memory_optimization", false,
     "preallocated contiguous buffers for the checkpoints"},
    {"activation_checkpointing.number_checkpoints", false, "the size of those buffers"},
    {"activation_checkpointing.synchronize_checkpoint_boundary", true, "a synchronisation"},
    {"activation_checkpointing.profile", true, "profiling"},
};

const Reason *reasonOf(const std::string &key)
{
    return keyReasonOf(kReasons, key);
}

std::string valueText(const json &v)
{
    return v.is_string() ? v.get<std::string>() : v.dump();
}

class Reader
{
public:
    Reader(const json &doc, LaunchImport &r)
        : m_doc(doc)
        , m_r(r)
    { }

    // The value at a dotted path, or nullptr; marks it used.
    const json *at(const std::string &path)
    {
        const json *v = &m_doc;
        std::size_t start = 0;
        while (true) {
            const std::size_t dot = path.find('.', start);
            const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            if (!v->is_object() || !v->contains(part))
                return nullptr;
            v = &(*v)[part];
            if (dot == std::string::npos)
                break;
            start = dot + 1;
        }
        m_used.insert(path);
        return v;
    }
    bool isAuto(const std::string &path)
    {
        const json *v = at(path);
        return v && v->is_string() && v->get<std::string>() == "auto";
    }
    void error(const std::string &key, std::string message, std::string suggestion = {})
    {
        m_r.problems.push_back({key, std::move(message), std::move(suggestion)});
    }
    void warning(const std::string &key, std::string message)
    {
        m_r.problems.push_back({key, std::move(message), {}, Problem::Severity::Warning});
    }
    void autoRefused(const std::string &key)
    {
        error(key, "\"auto\" here is filled by nobody: the Hugging Face Trainer fills only its own keys",
              "write the value");
    }
    // A section that must be an object when present.
    void section(const std::string &key)
    {
        const json *v = at(key);
        if (v && !v->is_object())
            error(key, "expected an object, got " + describeJson(*v));
    }
    void note(const std::string &key, const std::string &text) { m_r.notes.push_back(key + ": " + text); }
    void source(const std::string &field, const std::string &key) { m_r.sourceOf[field] = key; }

    // A whole number in [lo, hi] (DeepSpeed's 2e8 counts as one); nullopt when
    // absent or "auto" (autoNote then says what it is taken from).
    std::optional<std::int64_t> integer(const std::string &key, std::int64_t lo, std::int64_t hi,
                                        const std::string &autoNote = {})
    {
        const json *v = at(key);
        if (!v)
            return std::nullopt;
        if (v->is_string() && v->get<std::string>() == "auto") {
            if (autoNote.empty())
                autoRefused(key);
            else
                note(key, "\"auto\": " + autoNote);
            return std::nullopt;
        }
        if (v->is_number()) {
            const double d = v->get<double>();
            if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(lo) && d <= static_cast<double>(hi))
                return v->is_number_integer() ? v->get<std::int64_t>() : static_cast<std::int64_t>(d);
        }
        error(key, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got "
                       + describeJson(*v));
        return std::nullopt;
    }
    // "auto" only for a key the Hugging Face Trainer fills (allowAuto).
    std::optional<bool> boolean(const std::string &key, bool allowAuto = false)
    {
        const json *v = at(key);
        if (!v)
            return std::nullopt;
        if (v->is_boolean())
            return v->get<bool>();
        if (v->is_string() && v->get<std::string>() == "auto") {
            if (!allowAuto)
                autoRefused(key);
            return std::nullopt;
        }
        error(key, "expected true or false, got " + describeJson(*v));
        return std::nullopt;
    }
    std::optional<std::string> string(const std::string &key)
    {
        const json *v = at(key);
        if (!v)
            return std::nullopt;
        if (v->is_string())
            return v->get<std::string>();
        error(key, "expected a string, got " + describeJson(*v));
        return std::nullopt;
    }

    // Every leaf of the document that nothing read, as unused.
    void listUnused(const json &v, const std::string &path)
    {
        if (v.is_object() && !v.empty()) {
            for (const auto &[k, child] : v.items())
                listUnused(child, path.empty() ? k : path + "." + k);
            return;
        }
        if (m_used.count(path) || path == "memledger" || path.rfind("memledger.", 0) == 0)
            return;
        UnusedSetting u{path, valueText(v), 0, false, {}};
        if (const Reason *r = reasonOf(path)) {
            u.noMemoryEffect = r->noMemoryEffect;
            u.why = std::string(r->why);
        }
        if (v.is_string() && v.get<std::string>() == "auto")
            u.why += std::string(u.why.empty() ? "" : "; ") + "\"auto\": the Hugging Face Trainer fills it";
        m_r.unused.push_back(std::move(u));
    }

private:
    const json &m_doc;
    LaunchImport &m_r;
    std::set<std::string> m_used;
};

std::int64_t unexpressedInt(const json &unexpressed, const char *key)
{
    const auto it = unexpressed.find(key);
    return it != unexpressed.end() && it->is_number_integer() && it->get<std::int64_t>() > 0 ? it->get<std::int64_t>()
                                                                                             : 1;
}

// The model: --model (a built-in model preset, or a Hugging Face config.json),
// else the "memledger" key's built-in model name. False (with an error) when
// neither names one and the key sets no model field.
bool readModel(const LaunchOptions &options, const json &unexpressed, Config &config, LaunchImport &r)
{
    std::string name = options.model;
    std::string where = "--model";
    if (name.empty()) {
        const auto it = unexpressed.find("model");
        if (it != unexpressed.end() && it->is_string()) {
            name = it->get<std::string>();
            where = "memledger.unexpressed.model";
        }
    }
    if (name.empty()) {
        for (const auto &[key, value] : unexpressed.items())
            if (key.rfind("model.", 0) == 0)
                return true; // the fields themselves
        if (options.defaultModel) {
            config.model = *options.defaultModel;
            r.notes.push_back("the model is the current plan's (" + std::to_string(config.model.num_layers)
                              + " layers, hidden size " + std::to_string(config.model.hidden_size)
                              + "): a DeepSpeed config does not describe its model");
            return true;
        }
        r.problems.push_back({"--model", "required: a DeepSpeed config does not describe its model",
                              "--model NAME (a built-in model preset) or --model config.json (Hugging Face)"});
        return false;
    }
    return modelFromOption(name, where, config.model, r);
}

// deepspeed/runtime/config.py, _set_batch_related_parameters and
// _batch_assertion: any two of the triple give the third; all three must agree.
void readBatch(Reader &rd, std::optional<std::int64_t> world, std::optional<std::int64_t> defaultWorld,
               std::int64_t tpc, Config &config)
{
    constexpr std::int64_t kMax = 1LL << 40;
    std::optional<std::int64_t> tb
        = rd.integer("train_batch_size", 1, kMax,
                     "the Trainer's world size × micro-batch × accumulation, derived here the same way");
    std::optional<std::int64_t> mb = rd.integer("train_micro_batch_size_per_gpu", 1, kMax,
                                                "the Trainer's per_device_train_batch_size, 8 by default: taken as 8 "
                                                "(--set training.micro_batch_size=N for another)");
    std::optional<std::int64_t> ga = rd.integer("gradient_accumulation_steps", 1, kMax,
                                                "the Trainer's gradient_accumulation_steps, 1 by default: taken as 1 "
                                                "(--set training.global_batch_size=N for another)");
    if (!mb && rd.isAuto("train_micro_batch_size_per_gpu"))
        mb = 8;
    if (!ga && rd.isAuto("gradient_accumulation_steps"))
        ga = 1;
    if (!tb && !mb) {
        rd.error("train_batch_size", "missing, and so is train_micro_batch_size_per_gpu",
                 "DeepSpeed needs one of them (deepspeed/runtime/config.py)");
        return;
    }
    if (!world && !(tb && mb && ga) && defaultWorld) {
        world = defaultWorld;
        rd.note("parallelism.data_parallel_size", "the world size is the current plan's " + std::to_string(*world)
                                                      + " GPUs: the file's batch sizes do not give it");
    }
    std::int64_t d = 0;
    if (world) {
        if (*world % tpc != 0) {
            rd.error("--gpus", std::to_string(*world) + " GPUs do not divide by t · p · c = " + std::to_string(tpc));
            return;
        }
        d = *world / tpc;
        rd.source("parallelism.data_parallel_size", "--gpus");
    } else if (tb && mb && ga) {
        if (*tb % (*mb * *ga) != 0) {
            rd.error("train_batch_size",
                     std::to_string(*tb)
                         + " is not a multiple of train_micro_batch_size_per_gpu × "
                           "gradient_accumulation_steps = "
                         + std::to_string(*mb * *ga),
                     "train_batch_size = micro-batch × accumulation × data-parallel size");
            return;
        }
        d = *tb / (*mb * *ga);
        rd.note("parallelism.data_parallel_size",
                "train_batch_size / (micro-batch × accumulation) = " + std::to_string(d));
        rd.source("parallelism.data_parallel_size", "train_batch_size");
    } else {
        rd.error("--gpus", "required: the data-parallel size does not follow from the file's batch sizes",
                 "--gpus N gives the world size");
        return;
    }
    if (!mb)
        mb = *tb / d / ga.value_or(1);
    if (*mb < 1) {
        rd.error("train_batch_size",
                 std::to_string(*tb) + " is too small for the data-parallel size " + std::to_string(d));
        return;
    }
    if (!ga)
        ga = tb ? *tb / d / *mb : 1;
    const std::int64_t expect = *mb * *ga * d;
    if (tb && (*ga < 1 || *tb != expect)) {
        rd.error("train_batch_size",
                 std::to_string(*tb)
                     + " is not train_micro_batch_size_per_gpu × gradient_accumulation_steps × "
                       "data-parallel size = "
                     + std::to_string(*mb) + " × " + std::to_string(*ga) + " × " + std::to_string(d),
                 "DeepSpeed's _batch_assertion requires them equal");
        return;
    }
    config.parallelism.data_parallel_size = d;
    config.training.micro_batch_size = *mb;
    config.training.global_batch_size = expect;
    rd.source("training.micro_batch_size", "train_micro_batch_size_per_gpu");
    rd.source("training.global_batch_size", "train_batch_size");
}

// bf16 / fp16 (deepspeed/runtime/config.py: "bfloat16" is bf16's old name; both enabled is refused).
void readPrecision(Reader &rd, Config &config)
{
    const std::string bfKey = rd.at("bfloat16") && !rd.at("bf16") ? "bfloat16.enabled" : "bf16.enabled";
    const std::optional<bool> bf = rd.boolean(bfKey, true);
    const std::optional<bool> fp = rd.boolean("fp16.enabled", true);
    const bool bfAuto = rd.isAuto(bfKey), fpAuto = rd.isAuto("fp16.enabled");
    if (bf.value_or(false) && fp.value_or(false)) {
        rd.error("fp16.enabled", "and " + bfKey + " are both true", "DeepSpeed refuses bf16 and fp16 together");
        return;
    }
    TrainingConfig &t = config.training;
    if (bf.value_or(false) || (!fp.value_or(false) && bfAuto)) {
        t.params_dtype = Dtype::BF16;
        rd.source("training.params_dtype", bfKey);
        if (!bf)
            rd.note(bfKey, "\"auto\": the Trainer's --bf16, taken as on (--set training.params_dtype=... otherwise)");
    } else if (fp.value_or(false) || fpAuto) {
        t.params_dtype = Dtype::FP16;
        rd.source("training.params_dtype", "fp16.enabled");
        if (!fp)
            rd.note("fp16.enabled",
                    "\"auto\": the Trainer's --fp16, taken as on (--set training.params_dtype=... otherwise)");
    } else {
        t.params_dtype = Dtype::FP32;
    }
    t.main_params_fp32 = true; // ZeRO's fp32 partition of the master weights
    // data_types.grad_accum_dtype (deepspeed/runtime/config.py get_grad_accum_dtype); unset: the model's dtype.
    t.main_grads_dtype = t.params_dtype;
    if (const std::optional<std::string> g = rd.string("data_types.grad_accum_dtype")) {
        const std::optional<Dtype> dtype = parseDtype(*g);
        if (!dtype || (*dtype != Dtype::FP32 && *dtype != Dtype::BF16 && *dtype != Dtype::FP16))
            rd.error("data_types.grad_accum_dtype", "expected fp32, bf16 or fp16, got \"" + *g + "\"");
        else
            t.main_grads_dtype = *dtype;
        rd.source("training.main_grads_dtype", "data_types.grad_accum_dtype");
    }
}

void readOptimizer(Reader &rd, Config &config)
{
    const std::optional<std::string> type = rd.string("optimizer.type");
    if (!type) {
        if (!rd.at("optimizer"))
            rd.note("optimizer", "none: the client's optimizer (the Hugging Face Trainer's AdamW) counted as adam");
        return;
    }
    std::string lower;
    for (char ch : *type)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Optimizer &o = config.training.optimizer;
    if (lower == "adam" || lower == "fusedadam" || lower == "cpuadam")
        o = Optimizer::Adam;
    else if (lower == "adamw")
        o = Optimizer::AdamW;
    else if (lower == "sgd")
        o = Optimizer::SGD;
    else if (lower == "lamb" || lower == "onebitadam" || lower == "zerooneadam" || lower == "onebitlamb") {
        o = Optimizer::Adam;
        rd.warning("optimizer.type", "\"" + *type + "\" counted as adam: two fp32 moments per parameter");
    } else {
        o = Optimizer::Adam;
        rd.warning("optimizer.type", "\"" + *type + "\" is not known: counted as adam");
    }
    rd.source("training.optimizer", "optimizer.type");
}

std::optional<OffloadTarget> offloadDevice(Reader &rd, const std::string &key)
{
    const std::optional<std::string> device = rd.string(key);
    if (!device)
        return std::nullopt;
    if (*device == "none")
        return OffloadTarget::None;
    if (*device == "cpu")
        return OffloadTarget::CPU;
    if (*device == "nvme")
        return OffloadTarget::NVMe;
    rd.error(key, "expected \"none\", \"cpu\" or \"nvme\", got \"" + *device + "\"");
    return std::nullopt;
}

// deepspeed/runtime/zero/config.py: DeepSpeedZeroConfig and its defaults.
void readZero(Reader &rd, Config &config)
{
    StrategyConfig &s = config.strategy;
    if (const auto stage = rd.integer("zero_optimization.stage", 0, 3)) {
        config.parallelism.zero_stage = static_cast<int>(*stage);
        rd.source("parallelism.zero_stage", "zero_optimization.stage");
    }
    if (const auto bucket = rd.integer("zero_optimization.reduce_bucket_size", 1, 1LL << 40,
                                       "the Trainer's hidden_size², taken from the model")) {
        s.ddp_bucket_size = *bucket;
        rd.source("strategy.ddp_bucket_size", "zero_optimization.reduce_bucket_size");
    } else if (rd.isAuto("zero_optimization.reduce_bucket_size")) {
        s.ddp_bucket_size = config.model.hidden_size * config.model.hidden_size;
        rd.source("strategy.ddp_bucket_size", "zero_optimization.reduce_bucket_size");
    }
    // Stage 3 gathers module by module with a prefetch window under a live cap;
    // the Trainer fills the window with 0.9 × hidden_size² (transformers'
    // integrations/deepspeed.py).
    if (const auto prefetch = rd.integer("zero_optimization.stage3_prefetch_bucket_size", 0, 1LL << 40,
                                         "the Trainer's 0.9 × hidden_size², taken from the model")) {
        s.zero3_prefetch_bucket_size = *prefetch;
        rd.source("strategy.zero3_prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size");
    } else if (rd.isAuto("zero_optimization.stage3_prefetch_bucket_size")) {
        s.zero3_prefetch_bucket_size = config.model.hidden_size * config.model.hidden_size * 9 / 10;
        rd.source("strategy.zero3_prefetch_bucket_size", "zero_optimization.stage3_prefetch_bucket_size");
    }
    if (const auto live = rd.integer("zero_optimization.stage3_max_live_parameters", 1, 1LL << 40)) {
        s.zero3_max_live_parameters = *live;
        rd.source("strategy.zero3_max_live_parameters", "zero_optimization.stage3_max_live_parameters");
    }
    // overlap_comm reduces buckets while the backward runs; stages 1 and 2
    // then keep two ipg buffers (stage_1_and_2.py, backward()).
    if (const auto overlap = rd.boolean("zero_optimization.overlap_comm")) {
        s.overlap_grad_reduce = *overlap;
        rd.source("strategy.overlap_grad_reduce", "zero_optimization.overlap_comm");
    }
    if (const auto contiguous = rd.boolean("zero_optimization.contiguous_gradients")) {
        s.grad_buffer = *contiguous ? GradBuffer::Contiguous : GradBuffer::OnDemand;
        rd.source("strategy.grad_buffer", "zero_optimization.contiguous_gradients");
    }
    // Stage 1 and 2's old switch (cpu_offload: true) before offload_optimizer.
    std::optional<OffloadTarget> opt = offloadDevice(rd, "zero_optimization.offload_optimizer.device");
    if (!opt && rd.boolean("zero_optimization.cpu_offload").value_or(false))
        opt = OffloadTarget::CPU;
    if (opt) {
        s.optimizer_offload = *opt;
        // ZeRO-Offload streams the gradients to the host as backward makes them.
        s.grad_offload = *opt == OffloadTarget::None ? OffloadTarget::None : OffloadTarget::CPU;
        rd.source("strategy.optimizer_offload", "zero_optimization.offload_optimizer.device");
        rd.source("strategy.grad_offload", "zero_optimization.offload_optimizer.device");
    }
    if (const auto param = offloadDevice(rd, "zero_optimization.offload_param.device")) {
        s.param_offload = *param;
        rd.source("strategy.param_offload", "zero_optimization.offload_param.device");
    }
}

// deepspeed/runtime/activation_checkpointing/config.py: the section configures
// deepspeed.checkpointing, which checkpoints every layer's input.
void readCheckpointing(Reader &rd, Config &config)
{
    const json *section = rd.at("activation_checkpointing");
    if (!section)
        return;
    if (!section->is_object()) {
        rd.error("activation_checkpointing", "expected an object, got " + describeJson(*section));
        return;
    }
    StrategyConfig &s = config.strategy;
    s.recompute_granularity = RecomputeGranularity::Full;
    s.recompute_method = RecomputeMethod::Uniform;
    s.recompute_num_layers = 1;
    rd.source("strategy.recompute_granularity", "activation_checkpointing");
    rd.note("activation_checkpointing", "every layer checkpointed (recompute_granularity full, uniform, 1 layer)");
    if (rd.boolean("activation_checkpointing.cpu_checkpointing").value_or(false)) {
        s.activation_offload = OffloadTarget::CPU;
        rd.source("strategy.activation_offload", "activation_checkpointing.cpu_checkpointing");
    }
}

// The "memledger" key: {"unexpressed": {...}, "why": {...}}.
bool readMemledgerKey(const json &doc, json &unexpressed, LaunchImport &r)
{
    unexpressed = json::object();
    const auto it = doc.find("memledger");
    if (it == doc.end())
        return true;
    if (!it->is_object()) {
        r.problems.push_back({"memledger", "expected an object, got " + describeJson(*it)});
        return false;
    }
    for (const auto &[key, value] : it->items()) {
        if (key == "why")
            continue;
        if (key != "unexpressed") {
            r.problems.push_back({"memledger." + key, "unknown key", "memledger holds \"unexpressed\" and \"why\""});
            return false;
        }
        if (!value.is_object()) {
            r.problems.push_back({"memledger.unexpressed", "expected an object, got " + describeJson(value)});
            return false;
        }
        unexpressed = value;
    }
    return true;
}

} // namespace

bool modelFromOption(const std::string &name, const std::string &where, ModelConfig &model, LaunchImport &r)
{
    if (const BuiltinPreset *builtin = findBuiltin("models", name)) {
        const LoadResult loaded = presetFromText(builtin->text, name);
        if (loaded.config) {
            model = loaded.config->model;
            return true;
        }
    }
    if (std::ifstream(name).good()) {
        // A MemLedger preset file lends its model section; any other JSON is a Hugging Face config.
        Problems readProblems;
        const std::optional<std::string> text = readTextFile(name, readProblems);
        if (text && text->find("\"memledger-preset\"") != std::string::npos) {
            LoadResult preset = presetFromText(*text, name);
            for (Problem &p : preset.problems) {
                p.path = where + " " + name + ": " + p.path;
                r.problems.push_back(std::move(p));
            }
            if (!preset.config)
                return false;
            model = preset.config->model;
            return true;
        }
        ImportResult hf = importHfConfigFile(name);
        for (Problem &p : hf.problems) {
            p.path = where + " " + name + ": " + p.path;
            r.problems.push_back(std::move(p));
        }
        for (const std::string &n : hf.notes)
            r.notes.push_back(where + " " + name + ": " + n);
        if (!hf.config)
            return false;
        model = hf.config->model;
        return true;
    }
    r.problems.push_back({where, "\"" + name + "\" is neither a built-in model preset nor a readable file",
                          "memledger-cli presets lists the models; or give a Hugging Face config.json"});
    return false;
}

LaunchImport importDeepSpeedConfig(std::string_view text, const LaunchOptions &options)
{
    LaunchImport r;
    const std::optional<json> parsed = parseJsonText(text, "ds_config", r.problems);
    if (!parsed)
        return r;
    if (!parsed->is_object()) {
        r.problems.push_back({"ds_config", "expected a JSON object, got " + describeJson(*parsed)});
        return r;
    }
    const json &doc = *parsed;
    json unexpressed;
    if (!readMemledgerKey(doc, unexpressed, r))
        return r;
    Config config = withFrameworkDefaults(Config{}, Framework::DeepSpeed);
    if (!readModel(options, unexpressed, config, r))
        return r;
    Reader rd(doc, r);
    for (const char *section : {"bf16", "bfloat16", "fp16", "optimizer", "data_types", "zero_optimization",
                                "zero_optimization.offload_optimizer", "zero_optimization.offload_param"})
        rd.section(section);
    const std::int64_t tpc = unexpressedInt(unexpressed, "parallelism.tensor_model_parallel_size")
                             * unexpressedInt(unexpressed, "parallelism.pipeline_model_parallel_size")
                             * unexpressedInt(unexpressed, "parallelism.context_parallel_size");
    readBatch(rd, options.gpus, options.defaultGpus, tpc, config);
    readPrecision(rd, config);
    readOptimizer(rd, config);
    readZero(rd, config);
    readCheckpointing(rd, config);
    rd.listUnused(doc, "");
    if (!unexpressed.contains("training.seq_length"))
        r.notes.push_back("training.seq_length: not in a DeepSpeed config (the data loader's): "
                          + std::to_string(config.training.seq_length) + " unless --set training.seq_length=N");
    for (const auto &[key, value] : unexpressed.items()) {
        if (!options.model.empty() && (key == "model" || key.rfind("model.", 0) == 0))
            continue; // --model replaces the file's model
        if (key == "model" && value.is_string())
            continue; // read by readModel
        const bool section = key.find('.') == std::string::npos;
        r.assignments.emplace_back(key + "=" + (section && value.is_string() ? value.get<std::string>() : value.dump()),
                                   "memledger.unexpressed");
    }
    if (hasErrors(r.problems))
        return r;
    r.config = std::move(config);
    return r;
}

} // namespace memledger
