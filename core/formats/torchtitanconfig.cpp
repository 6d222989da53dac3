// SPDX-License-Identifier: MIT
#include "core/formats/torchtitanconfig.h"

#include "core/config/framework.h"
#include "core/formats/builtins.h"
#include "core/formats/deepspeedconfig.h"
#include "core/formats/preset.h"
#include "core/formats/tomltext.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace memledger {

namespace {

// The two torchtitan versions whose key names this reader knows (see the header).
enum class Version { Dec2024, Y2025 };

// Why a key MemLedger does not map is left: by the key's path, or a prefix of it ending in '.'.
using Reason = KeyReason;

constexpr Reason kReasons[] = {
    {"job.", true, "the job's name, folders and logging"},
    {"profiling.", true, "profiling"},
    {"metrics.", true, "logging"},
    {"checkpoint.", true, "checkpoint saving and loading"},
    {"comm.", true, "communication time-outs and the flight recorder"},
    {"validation.", true, "the validation loop"},
    {"lr_scheduler.", true, "the learning-rate schedule"},
    {"memory_estimation.", true, "torchtitan's own memory estimate"},
    {"fault_tolerance.", false, "TorchFT replica groups"},
    {"experimental.custom_", false, "a custom model or config module: check that the model is the one imported"},
    {"optimizer.lr", true, "a hyperparameter"},
    {"optimizer.eps", true, "a hyperparameter"},
    {"optimizer.beta1", true, "a hyperparameter"},
    {"optimizer.beta2", true, "a hyperparameter"},
    {"optimizer.weight_decay", true, "a hyperparameter"},
    {"optimizer.early_step_in_backward", false,
     "steps each parameter as its gradient arrives, so gradients are freed in backward (not modelled)"},
    {"training.warmup_steps", true, "the learning-rate schedule"},
    {"training.decay_ratio", true, "the learning-rate schedule"},
    {"training.max_norm", true, "gradient clipping"},
    {"training.steps", true, "the length of the run"},
    {"training.dataset", true, "the data"},
    {"training.dataset_path", true, "the data"},
    {"training.gc_freq", true, "Python's garbage collection"},
    {"training.gc_debug", true, "Python's garbage collection"},
    {"training.seed", true, "the random seed"},
    {"training.deterministic", true, "deterministic kernels"},
    {"training.mixed_precision_reduce", true, "FSDP reduces in fp32, the only choice torchtitan offers"},
    {"model.tokenizer_path", true, "the tokenizer's files"},
    {"model.hf_assets_path", true, "the tokenizer's and checkpoint's files"},
    {"model.print_after_conversion", true, "logging"},
    {"parallelism.enable_compiled_autograd", false, "compiled autograd"},
    {"experimental.enable_compiled_autograd", false, "compiled autograd"},
    {"parallelism.pipeline_parallel_schedule_csv", false, "a pipeline schedule read from a file"},
    {"experimental.pipeline_parallel_schedule_csv", false, "a pipeline schedule read from a file"},
    {"activation_checkpoint.early_stop", false, "stops recomputing once the saved tensors are rebuilt"},
    {"activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns", false,
     "matmuls per-op checkpointing recomputes by shape (MoE routers)"},
    {"float8.precompute_float8_dynamic_scale_for_fsdp", true, "one all-reduce of the scales instead of many"},
    {"quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp", true,
     "one all-reduce of the scales instead of many"},
    {"quantize.linear.float8.emulate", true, "a test mode"},
    {"quantize.linear.float8.filter_fqns", false,
     "the linear layers kept in bf16 (MemLedger's FP8 covers the transformer layers' linear layers)"},
    {"quantize.linear.mx.", false, "MX training's kernel choices"},
    {"quantize.grouped_mm.", false, "quantised MoE grouped GEMMs"},
    {"float8.", false, "a float8 setting"},
};

const Reason *reasonOf(const std::string &key)
{
    return keyReasonOf(kReasons, key);
}

std::string valueText(const toml::node &v)
{
    if (const auto *s = v.as_string())
        return s->get();
    if (const auto *i = v.as_integer())
        return std::to_string(i->get());
    if (const auto *b = v.as_boolean())
        return b->get() ? "true" : "false";
    if (const auto *f = v.as_floating_point()) {
        std::ostringstream os;
        os << f->get();
        return os.str();
    }
    if (const auto *a = v.as_array()) {
        std::string text = "[";
        for (std::size_t i = 0; i < a->size(); ++i)
            text += (i ? ", " : "") + valueText(*a->get(i));
        return text + "]";
    }
    return "{…}";
}

std::string describe(const toml::node &v)
{
    if (v.is_string())
        return "string \"" + valueText(v) + "\"";
    if (v.is_integer())
        return "integer " + valueText(v);
    if (v.is_floating_point())
        return "number " + valueText(v);
    if (v.is_boolean())
        return valueText(v);
    if (v.is_array())
        return "a list";
    return "a table";
}

class Reader
{
public:
    Reader(const toml::table &doc, LaunchImport &r)
        : m_doc(doc)
        , m_r(r)
    { }

    const toml::node *find(const std::string &path) const
    {
        const toml::node *v = &m_doc;
        std::size_t start = 0;
        while (true) {
            const std::size_t dot = path.find('.', start);
            const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            const toml::table *t = v->as_table();
            if (!t)
                return nullptr;
            v = t->get(part);
            if (!v)
                return nullptr;
            if (dot == std::string::npos)
                return v;
            start = dot + 1;
        }
    }
    bool has(const std::string &path) const { return find(path) != nullptr; }
    // The value at `path`, marked used.
    const toml::node *at(const std::string &path)
    {
        const toml::node *v = find(path);
        if (v)
            m_used.insert(path);
        return v;
    }
    // Read, but left in the unused list (a setting MemLedger does not model).
    void leave(const std::string &path) { m_used.erase(path); }

    // The key of a setting the two versions name differently: the one the
    // file writes (the 2025 name first). Both written: an error.
    std::string pick(const std::string &y2025, const std::string &dec2024, Version version)
    {
        const bool a = has(y2025), b = has(dec2024);
        if (a && b)
            error(dec2024, "set twice, also as " + y2025, "keep one of them (" + y2025 + " in torchtitan since 2025)");
        if (a || b)
            return a ? y2025 : dec2024;
        return version == Version::Y2025 ? y2025 : dec2024;
    }

    std::optional<std::int64_t> integer(const std::string &path, std::int64_t lo, std::int64_t hi)
    {
        const toml::node *v = at(path);
        if (!v)
            return std::nullopt;
        if (const auto *i = v->as_integer(); i && i->get() >= lo && i->get() <= hi)
            return i->get();
        error(path, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got "
                        + describe(*v));
        return std::nullopt;
    }
    std::optional<bool> boolean(const std::string &path)
    {
        const toml::node *v = at(path);
        if (!v)
            return std::nullopt;
        if (const auto *b = v->as_boolean())
            return b->get();
        error(path, "expected true or false, got " + describe(*v));
        return std::nullopt;
    }
    std::optional<std::string> string(const std::string &path)
    {
        const toml::node *v = at(path);
        if (!v)
            return std::nullopt;
        if (const auto *s = v->as_string())
            return s->get();
        error(path, "expected a string, got " + describe(*v));
        return std::nullopt;
    }
    // A list of strings; a string is split at commas, as torchtitan's
    // command line writes lists (model.converters = "float8").
    std::optional<std::vector<std::string>> strings(const std::string &path)
    {
        const toml::node *v = at(path);
        if (!v)
            return std::nullopt;
        std::vector<std::string> out;
        if (const auto *s = v->as_string()) {
            std::string item;
            std::istringstream in(s->get());
            while (std::getline(in, item, ','))
                if (!item.empty())
                    out.push_back(item);
            return out;
        }
        if (const auto *a = v->as_array()) {
            for (const toml::node &e : *a) {
                if (!e.is_string()) {
                    error(path, "expected a list of strings, got an element " + describe(e));
                    return std::nullopt;
                }
                out.push_back(valueText(e));
            }
            return out;
        }
        error(path, "expected a list of strings, got " + describe(*v));
        return std::nullopt;
    }
    // A flag MemLedger does not model: read when false (torchtitan's
    // default), left in the unused list with its reason when true.
    void unmodelledFlag(const std::string &path)
    {
        if (boolean(path).value_or(false))
            leave(path);
    }

    void error(const std::string &key, std::string message, std::string suggestion = {})
    {
        m_r.problems.push_back({key, std::move(message), std::move(suggestion)});
    }
    void warning(const std::string &key, std::string message)
    {
        m_r.problems.push_back({key, std::move(message), {}, Problem::Severity::Warning});
    }
    void note(const std::string &key, const std::string &text) { m_r.notes.push_back(key + ": " + text); }
    void source(const std::string &field, const std::string &key) { m_r.sourceOf[field] = key; }

    // Every leaf nothing read, as unused, with its line.
    void listUnused(const toml::table &t, const std::string &prefix)
    {
        for (const auto &[k, v] : t) {
            const std::string path = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
            if (const toml::table *sub = v.as_table(); sub && !sub->empty()) {
                listUnused(*sub, path);
                continue;
            }
            if (m_used.count(path))
                continue;
            UnusedSetting u{path, valueText(v), static_cast<int>(v.source().begin.line), false, {}};
            if (const Reason *r = reasonOf(path)) {
                u.noMemoryEffect = r->noMemoryEffect;
                u.why = std::string(r->why);
            } else {
                u.why = "not a key this reader knows from torchtitan's December 2024 or 2025 job config";
            }
            m_r.unused.push_back(std::move(u));
        }
    }

private:
    const toml::table &m_doc;
    LaunchImport &m_r;
    std::set<std::string> m_used;
};

// December 2024's configs keep the degrees under [training] and
// [experimental]; 2025's under [parallelism].
Version versionOf(const Reader &rd)
{
    if (rd.has("parallelism"))
        return Version::Y2025;
    for (const char *key :
         {"training.batch_size", "training.data_parallel_shard_degree", "training.data_parallel_replicate_degree",
          "training.tensor_parallel_degree", "training.compile", "experimental.pipeline_parallel_degree",
          "experimental.context_parallel_degree", "float8.enable_float8_linear", "checkpoint.enable_checkpoint",
          "model.norm_type"})
        if (rd.has(key))
            return Version::Dec2024;
    return Version::Y2025;
}

// "# memledger: section.key=value  # why" lines, with their line numbers.
void readAnnotations(std::string_view text, LaunchImport &r)
{
    int line = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string_view l = text.substr(start, end - start);
        ++line;
        start = end + 1;
        const std::size_t first = l.find_first_not_of(" \t");
        if (first == std::string_view::npos || l[first] != '#')
            continue;
        l.remove_prefix(first + 1);
        l.remove_prefix(std::min(l.size(), l.find_first_not_of(" \t")));
        constexpr std::string_view kTag = "memledger:";
        if (l.substr(0, kTag.size()) != kTag)
            continue;
        l.remove_prefix(kTag.size());
        l.remove_prefix(std::min(l.size(), l.find_first_not_of(" \t")));
        r.assignments.emplace_back(annotationAssignment(l), "line " + std::to_string(line));
        if (end == text.size())
            break;
    }
}

bool setsModel(const std::string &assignment)
{
    return assignment.rfind("model=", 0) == 0 || assignment.rfind("model.", 0) == 0;
}

// torchtitan's llama3 flavors (torchtitan/models/llama3/__init__.py, the same
// shapes in torchtitan/models/llama/__init__.py of December 2024): 8B dim
// 4096, 32 layers, 32 heads, 8 KV heads; 70B 8192, 80, 64, 8; 405B 16384,
// 126, 128, 8; FFN 4·dim·2/3 × ffn_dim_multiplier rounded up to multiple_of
// (8B: 16384·2/3 = 10922 × 1.3 = 14198 → 14336; 70B: 21845 × 1.3 = 28398 →
// 28672; 405B: 43690 × 1.2 = 52428 → 53248); vocabulary 128256 (Llama 3's
// tokenizer, 128000 + 256 special tokens); SwiGLU, RMSNorm, RoPE, no biases,
// untied output: the built-in Llama 3.1 models.
std::string builtinOfFlavor(const std::string &flavor)
{
    if (flavor == "8B")
        return "llama-3.1-8b";
    if (flavor == "70B")
        return "llama-3.1-70b";
    if (flavor == "405B")
        return "llama-3.1-405b";
    return {};
}

// "debugmodel": dim 256, 16 heads, FFN 4·256·2/3 = 682 → 768 (multiple_of
// 256); 2025: 6 layers, vocab_size 2048; December 2024: 8 layers, the
// vocabulary of the tokenizer (tests/assets/test_tiktoken.model: 2000 BPE
// ranks + 256 special tokens = 2256).
ModelConfig debugModel(const ModelConfig &llama, Version version)
{
    ModelConfig m = llama;
    m.hidden_size = 256;
    m.num_attention_heads = 16;
    m.num_query_groups = 16;
    m.ffn_hidden_size = 768;
    m.num_layers = version == Version::Y2025 ? 6 : 8;
    m.vocab_size = version == Version::Y2025 ? 2048 : 2256;
    m.max_position_embeddings = 0;
    return m;
}

ModelConfig builtinModel(const std::string &name)
{
    const Config *builtin = builtinConfig("models", name);
    return builtin ? builtin->model : ModelConfig{};
}

// [model] name and flavor, --model, and "# memledger: model..." lines (applied here, before the pipeline split).
bool readModel(Reader &rd, const LaunchOptions &options, Version version, const LaunchImport &r, Config &config)
{
    const std::optional<std::string> name = rd.string("model.name");
    const std::optional<std::string> flavor = rd.string("model.flavor");
    const std::optional<std::string> norm = rd.string("model.norm_type");
    std::vector<std::string> modelLines;
    for (const auto &[assignment, where] : r.assignments)
        if (setsModel(assignment))
            modelLines.push_back(assignment);
    if (!options.model.empty()) {
        LaunchImport sink;
        if (!modelFromOption(options.model, "--model", config.model, sink)) {
            for (Problem &p : sink.problems)
                rd.error(p.path, p.message, p.suggestion);
            return false;
        }
        if (flavor)
            rd.note("model.flavor", "\"" + *flavor + "\" replaced by --model " + options.model);
        return true;
    }
    if (name && *name != "llama3" && modelLines.empty()) {
        rd.error("model.name", "\"" + *name + "\" is not a model MemLedger knows: it reads torchtitan's llama3",
                 "--model NAME (a built-in model), a preset file or a Hugging Face config.json");
        return false;
    }
    const std::string f = flavor.value_or("debugmodel");
    const ModelConfig llama = builtinModel("llama-3.1-8b");
    if (!flavor && !modelLines.empty()) {
        // An export of a model that is no llama3 flavor: its fields from MemLedger's defaults.
        config.model = ModelConfig{};
    } else if (const std::string builtin = builtinOfFlavor(f); !builtin.empty()) {
        config.model = builtinModel(builtin);
        rd.note("model.flavor", "\"" + f + "\": the built-in " + builtin);
    } else if (f == "debugmodel") {
        config.model = debugModel(llama, version);
        if (!flavor)
            rd.note("model.flavor", "absent: torchtitan's default \"debugmodel\"");
        // December 2024 sized the vocabulary by the tokenizer: the test one, or Llama 3's.
        const toml::node *tokenizer = rd.find("model.tokenizer_path");
        if (version == Version::Dec2024 && tokenizer && tokenizer->is_string()
            && valueText(*tokenizer).find("test_tiktoken") == std::string::npos) {
            config.model.vocab_size = llama.vocab_size;
            rd.note("model.tokenizer_path", "not the test tokenizer: taken as Llama 3's, 128256 tokens");
        }
    } else if (modelLines.empty()) {
        rd.error("model.flavor", "\"" + f + "\" is not a llama3 flavor MemLedger knows",
                 "\"8B\", \"70B\", \"405B\" or \"debugmodel\"; or --model NAME");
        return false;
    }
    // December 2024: "rmsnorm" (PyTorch ops), "fused_rmsnorm" (a Triton kernel
    // saving the input and rstd), "layernorm" / "np_layernorm".
    if (norm && *norm == "fused_rmsnorm")
        config.strategy.norm_kernel = NormKernel::Fused;
    else if (norm && (*norm == "layernorm" || *norm == "np_layernorm"))
        config.model.normalization = Normalization::LayerNorm;
    else if (norm && *norm != "rmsnorm")
        rd.error("model.norm_type", "\"" + *norm + "\" is not one of rmsnorm, fused_rmsnorm, layernorm, np_layernorm");
    if (modelLines.empty())
        return true;
    nlohmann::json doc = presetToJson(config);
    for (const std::string &a : modelLines)
        for (Problem &p : applyOverride(doc, a))
            rd.error("# memledger: " + a, p.message, p.suggestion);
    const LoadResult loaded = presetFromJson(doc);
    for (const Problem &p : loaded.problems)
        rd.error(p.path, p.message, p.suggestion);
    if (!loaded.config)
        return false;
    config.model = loaded.config->model;
    return true;
}

struct Degrees
{
    std::int64_t replicate = 1, shard = 1, t = 1, p = 1, c = 1;
};

// torchtitan's ParallelDims._validate: data_parallel_shard_degree -1 takes
// world / (replicate · cp · tp · pp); the degrees must multiply to the world size.
std::optional<Degrees> readDegrees(Reader &rd, Version v, const LaunchOptions &options)
{
    constexpr std::int64_t kMax = 1 << 24;
    Degrees g;
    const std::string repKey
        = rd.pick("parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree", v);
    const std::string shardKey
        = rd.pick("parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree", v);
    const std::string tKey = rd.pick("parallelism.tensor_parallel_degree", "training.tensor_parallel_degree", v);
    const std::string pKey
        = rd.pick("parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree", v);
    const std::string cKey = rd.pick("parallelism.context_parallel_degree", "experimental.context_parallel_degree", v);
    g.replicate = rd.integer(repKey, 1, kMax).value_or(1);
    const std::int64_t shard = rd.integer(shardKey, -1, kMax).value_or(-1);
    if (shard == 0)
        rd.error(shardKey, "0 is neither -1 (the ranks left) nor a degree", "torchtitan takes -1 or a degree ≥ 1");
    g.t = rd.integer(tKey, 1, kMax).value_or(1);
    g.p = rd.integer(pKey, 1, kMax).value_or(1);
    g.c = rd.integer(cKey, 1, kMax).value_or(1);
    const std::int64_t others = g.replicate * g.t * g.p * g.c;
    std::optional<std::int64_t> world = options.gpus;
    if (!world && shard > 0)
        world = others * shard;
    if (!world && options.defaultGpus) {
        world = options.defaultGpus;
        rd.note(shardKey,
                "-1 takes the ranks the other degrees leave of the current plan's " + std::to_string(*world) + " GPUs");
    }
    if (!world) {
        rd.error("--gpus", "required: " + shardKey + " is -1, the ranks the other degrees leave of the world size",
                 "--gpus N gives the world size (torchrun's nproc_per_node × nnodes)");
        return std::nullopt;
    }
    if (shard < 0) {
        if (*world % others != 0) {
            rd.error(shardKey,
                     "-1: the world size " + std::to_string(*world)
                         + " does not divide by replicate · cp · tp · pp = " + std::to_string(others),
                     "torchtitan's ParallelDims requires their product to be the world size");
            return std::nullopt;
        }
        g.shard = *world / others;
        rd.note(shardKey, "-1: " + std::to_string(*world) + " GPUs / " + std::to_string(others) + " = "
                              + std::to_string(g.shard));
    } else {
        g.shard = shard;
        if (others * shard != *world) {
            rd.error(shardKey,
                     "the degrees multiply to " + std::to_string(others * shard) + ", not the world size "
                         + std::to_string(*world),
                     "torchtitan's ParallelDims requires replicate · shard · cp · tp · pp = world size");
            return std::nullopt;
        }
    }
    rd.source("parallelism.data_parallel_size", shardKey);
    rd.source("parallelism.tensor_model_parallel_size", tKey);
    rd.source("parallelism.pipeline_model_parallel_size", pKey);
    rd.source("parallelism.context_parallel_size", cKey);
    return g;
}

// FSDP (fully_shard per block and on the root) when data_parallel_shard_degree
// or context_parallel_degree is above 1 (ParallelDims.fsdp_enabled), over the
// shard × cp ranks, replicated across the replicate groups (HSDP); DDP when
// only replicate is; sequence parallelism with every TP plan.
void readParallelism(Reader &rd, Version v, const Degrees &g, Config &config)
{
    ParallelismConfig &par = config.parallelism;
    StrategyConfig &s = config.strategy;
    par.tensor_model_parallel_size = g.t;
    par.pipeline_model_parallel_size = g.p;
    par.context_parallel_size = g.c;
    par.data_parallel_size = g.replicate * g.shard;
    par.sequence_parallel = g.t > 1;
    const bool fsdp = g.shard > 1 || g.c > 1;
    par.zero_stage = fsdp ? 3 : 0;
    par.data_parallel_shard_size = fsdp && g.replicate > 1 ? g.shard : 0;
    // December 2024's apply_fsdp shards the whole model last, so the
    // embedding, final norm and output layer are FSDP2's root unit (torchtitan
    // wraps them as units of their own since July 2025, #1094).
    s.fsdp_root_unit = fsdp && v == Version::Dec2024;
    if (s.fsdp_root_unit)
        rd.note("strategy.fsdp_root_unit",
                "December 2024's apply_fsdp: the embedding, final norm and output layer form the root unit, "
                "never resharded after forward");
    if (fsdp && g.replicate > 1)
        rd.note("parallelism.data_parallel_shard_size", "HSDP: FSDP over " + std::to_string(g.shard)
                                                            + " ranks, replicated " + std::to_string(g.replicate)
                                                            + " times");
    const std::string ep = "parallelism.expert_parallel_degree", etp = "parallelism.expert_tensor_parallel_degree";
    const std::int64_t e = rd.integer(ep, 1, 1 << 24).value_or(1);
    const std::int64_t et = rd.integer(etp, 1, 1 << 24).value_or(1);
    if (config.model.isMoe()) {
        par.expert_model_parallel_size = e;
        par.expert_tensor_parallel_size = e > 1 ? et : 0;
        rd.source("parallelism.expert_model_parallel_size", ep);
    } else if (e > 1) {
        rd.note(ep, "no effect on a dense model (torchtitan's job_config.py)");
    }
    const std::string asyncKey
        = rd.pick("parallelism.enable_async_tensor_parallel", "experimental.enable_async_tensor_parallel", v);
    s.tp_comm_overlap = rd.boolean(asyncKey).value_or(false) && g.t > 1;
    const std::string rotateKey
        = rd.pick("parallelism.context_parallel_rotate_method", "experimental.context_parallel_rotate_method", v);
    // "allgather" gathers every rank's K and V; "alltoall" passes the shards
    // round the ring, each rank holding its own and the next: the P2P ring.
    if (const auto rotate = rd.string(rotateKey)) {
        if (*rotate == "allgather" || *rotate == "alltoall")
            s.cp_comm_type = *rotate == "allgather" ? CpCommType::AllGather : CpCommType::P2P;
        else
            rd.error(rotateKey, "expected \"allgather\" or \"alltoall\", got \"" + *rotate + "\"");
        rd.source("strategy.cp_comm_type", rotateKey);
    }
    if (const auto reshard = rd.string("parallelism.fsdp_reshard_after_forward")) {
        if (*reshard == "always" || *reshard == "never")
            s.fsdp_reshard_after_forward = *reshard == "always";
        else if (*reshard != "default")
            rd.error("parallelism.fsdp_reshard_after_forward",
                     "expected \"default\", \"always\" or \"never\", got \"" + *reshard + "\"");
        rd.source("strategy.fsdp_reshard_after_forward", "parallelism.fsdp_reshard_after_forward");
    }
    // FSDP's CPUOffloadPolicy: parameters, gradients and the optimizer step on the host.
    if (rd.boolean("training.enable_cpu_offload").value_or(false)) {
        s.param_offload = s.optimizer_offload = s.grad_offload = OffloadTarget::CPU;
        rd.source("strategy.param_offload", "training.enable_cpu_offload");
        rd.source("strategy.optimizer_offload", "training.enable_cpu_offload");
    }
}

struct ScheduleName
{
    std::string_view lower;
    PipelineSchedule schedule;
    bool multi; // PipelineScheduleMulti: two stages per rank unless the file says otherwise
};

// torch.distributed.pipelining's get_schedule_class names (matched without case).
constexpr ScheduleName kSchedules[] = {
    {"gpipe", PipelineSchedule::GPipe, false},
    {"1f1b", PipelineSchedule::OneFOneB, false},
    {"interleaved1f1b", PipelineSchedule::Interleaved, true},
    {"flexibleinterleaved1f1b", PipelineSchedule::Interleaved, true},
    {"zbvzerobubble", PipelineSchedule::ZbV, true},
    {"dualpipev", PipelineSchedule::DualPipeV, true},
};

// Layers per stage from the modules each stage holds ("layers.N" entries).
std::vector<std::int64_t> layoutOfParts(const std::vector<std::vector<std::string>> &parts)
{
    std::vector<std::int64_t> layout;
    for (const auto &part : parts) {
        std::int64_t n = 0;
        for (const std::string &m : part)
            n += m.rfind("layers.", 0) == 0 ? 1 : 0;
        layout.push_back(n);
    }
    return layout;
}

// torchtitan 2025, generate_llm_fqn_per_model_part: the embedding and the
// output count as input_weight and output_weight layers, the effective layers
// split evenly with the remainder to the first stages.
std::optional<std::vector<std::int64_t>> generatedLayout2025(std::int64_t stages, std::int64_t layers, std::int64_t in,
                                                             std::int64_t out)
{
    const std::int64_t effective = layers + in + out;
    const std::int64_t per = effective / stages, extra = effective % stages;
    if (per == 0 || in > per || out > per)
        return std::nullopt;
    std::vector<std::int64_t> layout;
    std::int64_t left = layers;
    for (std::int64_t s = 0; s < stages; ++s) {
        std::int64_t n = per + (s < extra ? 1 : 0) - (s == 0 ? in : 0) - (s == stages - 1 ? out : 0);
        n = std::min(std::max<std::int64_t>(n, 0), left);
        layout.push_back(n);
        left -= n;
    }
    return layout;
}

// torchtitan December 2024, generate_split_points: the first stage gets
// layers / stages, the middle stages one more while the remainder lasts, the
// last what is left.
std::vector<std::int64_t> generatedLayout2024(std::int64_t stages, std::int64_t layers)
{
    const std::int64_t base = layers / stages;
    std::int64_t extra = layers % stages, used = 0;
    std::vector<std::int64_t> layout;
    for (std::int64_t s = 0; s + 1 < stages; ++s) {
        std::int64_t n = base;
        if (s > 0 && extra > 0) {
            ++n;
            --extra;
        }
        layout.push_back(n);
        used += n;
    }
    layout.push_back(layers - used);
    return layout;
}

// The schedule, the stages per rank and the layers of each stage
// (torchtitan/models/llama3/infra/pipeline.py in 2025, parallelisms/pipeline_llama.py in December 2024).
void readPipeline(Reader &rd, Version v, Config &config)
{
    ParallelismConfig &par = config.parallelism;
    const std::int64_t p = par.pipeline_model_parallel_size, layers = config.model.num_layers;
    const std::string schedKey
        = rd.pick("parallelism.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule", v);
    const std::string name = rd.string(schedKey).value_or("1F1B");
    std::string lower;
    for (char ch : name)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const ScheduleName *sched = nullptr;
    for (const ScheduleName &s : kSchedules)
        if (s.lower == lower)
            sched = &s;
    if (p == 1) {
        // Without a pipeline these keys do nothing: read, not listed.
        for (const char *key :
             {"parallelism.pipeline_parallel_microbatch_size", "parallelism.pipeline_parallel_layers_per_stage",
              "parallelism.pipeline_parallel_first_stage_less_layers",
              "parallelism.pipeline_parallel_last_stage_less_layers", "parallelism.module_fqns_per_model_part",
              "parallelism.pipeline_parallel_split_points", "experimental.pipeline_parallel_split_points",
              "experimental.pipeline_parallel_microbatches"})
            rd.at(key);
        return;
    }
    if (!sched) {
        rd.error(
            schedKey, "\"" + name + "\" is not a schedule MemLedger models",
            "GPipe, 1F1B, Interleaved1F1B, ZBVZeroBubble or DualPipeV; or --set parallelism.pipeline_schedule=...");
        return;
    }
    par.pipeline_schedule = sched->schedule;
    rd.source("parallelism.pipeline_schedule", schedKey);
    std::int64_t stages = sched->multi ? 2 * p : p;
    std::optional<std::vector<std::int64_t>> layout;
    const std::string splitKey
        = rd.pick("parallelism.pipeline_parallel_split_points", "experimental.pipeline_parallel_split_points", v);
    const std::optional<std::int64_t> lps = rd.integer("parallelism.pipeline_parallel_layers_per_stage", 1, layers);
    const std::int64_t in = rd.integer("parallelism.pipeline_parallel_first_stage_less_layers", 0, layers).value_or(1);
    const std::int64_t out = rd.integer("parallelism.pipeline_parallel_last_stage_less_layers", 0, layers).value_or(1);
    if (const toml::node *parts = rd.at("parallelism.module_fqns_per_model_part"); parts && parts->as_array()) {
        std::vector<std::vector<std::string>> list;
        for (const toml::node &part : *parts->as_array()) {
            list.emplace_back();
            if (const auto *a = part.as_array())
                for (const toml::node &m : *a)
                    list.back().push_back(valueText(m));
        }
        layout = layoutOfParts(list);
        stages = static_cast<std::int64_t>(layout->size());
        rd.source("parallelism.pipeline_layout", "parallelism.module_fqns_per_model_part");
    } else if (const auto splits = rd.strings(splitKey); splits && !splits->empty()) {
        std::vector<std::int64_t> cuts;
        for (const std::string &sp : *splits)
            cuts.push_back(sp.rfind("layers.", 0) == 0 ? std::atoll(sp.c_str() + 7) : -1);
        layout.emplace();
        std::int64_t prev = 0;
        for (std::int64_t c : cuts) {
            layout->push_back(c - prev);
            prev = c;
        }
        layout->push_back(layers - prev);
        stages = static_cast<std::int64_t>(layout->size());
        rd.source("parallelism.pipeline_layout", splitKey);
        if (std::any_of(layout->begin(), layout->end(), [](std::int64_t n) { return n < 0; })) {
            rd.error(splitKey, "expected \"layers.N\" split points in increasing order, each within the "
                                   + std::to_string(layers) + " layers");
            return;
        }
    } else if (lps) {
        stages = (layers + in + out + *lps - 1) / *lps;
    }
    if (stages % p != 0) {
        rd.error(schedKey, std::to_string(stages) + " stages do not divide among " + std::to_string(p) + " ranks",
                 "torchtitan's stage_ids_this_rank requires stages divisible by pipeline_parallel_degree");
        return;
    }
    // pipeline.py: a single-stage schedule runs one stage per rank, a multi-stage one at least two.
    if (sched->multi ? stages / p < 2 : stages != p) {
        rd.error(schedKey,
                 "\"" + name + "\" runs " + (sched->multi ? "two or more stages" : "one stage") + " per rank, not "
                     + std::to_string(stages / p),
                 sched->multi ? "Interleaved1F1B and the V schedules need stages = 2 × pipeline_parallel_degree or more"
                              : "GPipe and 1F1B need as many stages as pipeline ranks");
        return;
    }
    par.virtual_pipeline_model_parallel_size = stages / p;
    if (!layout)
        layout = v == Version::Y2025 ? generatedLayout2025(stages, layers, in, out)
                                     : std::optional(generatedLayout2024(stages, layers));
    if (!layout) {
        rd.error(schedKey, std::to_string(stages) + " stages leave a stage without layers for " + std::to_string(layers)
                               + " layers");
        return;
    }
    par.pipeline_layout = *layout;
}

// Batch: 2025 local_batch_size and global_batch_size (gradient accumulation
// global / (local · dp), train.py), the pipeline's micro-batches of
// pipeline_parallel_microbatch_size; December 2024 batch_size per rank, no
// accumulation, pipeline_parallel_microbatches (default: the pipeline degree)
// micro-batches of it.
void readBatch(Reader &rd, Version v, Config &config)
{
    constexpr std::int64_t kMax = 1LL << 40;
    TrainingConfig &t = config.training;
    const std::int64_t d = config.parallelism.data_parallel_size, p = config.parallelism.pipeline_model_parallel_size;
    const std::string localKey = rd.pick("training.local_batch_size", "training.batch_size", v);
    const std::int64_t local = rd.integer(localKey, 1, kMax).value_or(8);
    if (!rd.has(localKey))
        rd.note(localKey, "absent: torchtitan's default 8");
    t.seq_length = rd.integer("training.seq_len", 1, kMax).value_or(2048);
    rd.source("training.seq_length", "training.seq_len");
    std::int64_t global = rd.integer("training.global_batch_size", -1, kMax).value_or(-1);
    if (global <= 0)
        global = local * d;
    else if (global % (local * d) != 0)
        rd.error("training.global_batch_size",
                 std::to_string(global) + " is not a multiple of local_batch_size × data-parallel degree = "
                     + std::to_string(local) + " × " + std::to_string(d),
                 "torchtitan's train.py asserts it");
    std::int64_t micro = local;
    if (p > 1 && rd.has("parallelism.pipeline_parallel_microbatch_size")) {
        micro = rd.integer("parallelism.pipeline_parallel_microbatch_size", 1, kMax).value_or(1);
    } else if (p > 1 && v == Version::Y2025) {
        micro = 1;
    } else if (p > 1) {
        const std::int64_t n = rd.integer("experimental.pipeline_parallel_microbatches", 1, kMax).value_or(p);
        micro = local / n;
        if (local % n != 0)
            rd.error("experimental.pipeline_parallel_microbatches",
                     std::to_string(local) + " samples do not split into " + std::to_string(n) + " micro-batches");
    }
    if (local % micro != 0)
        rd.error("parallelism.pipeline_parallel_microbatch_size",
                 "local batch " + std::to_string(local) + " is not a multiple of " + std::to_string(micro));
    if (p > 1)
        rd.note("training.micro_batch_size", std::to_string(local / std::max<std::int64_t>(1, micro))
                                                 + " pipeline micro-batches of " + std::to_string(micro));
    t.micro_batch_size = micro;
    t.global_batch_size = global;
    rd.source("training.micro_batch_size", p > 1 ? "parallelism.pipeline_parallel_microbatch_size" : localKey);
    rd.source("training.global_batch_size", "training.global_batch_size");
}

// training.mixed_precision_param (FSDP's MixedPrecisionPolicy, or in 2025
// autocast under DDP / one device; with TP or PP and no FSDP mixed precision
// is off: torchtitan's maybe_enable_amp) and 2025's training.dtype (bfloat16: no fp32 copy at all).
void readPrecision(Reader &rd, Version v, Config &config)
{
    TrainingConfig &t = config.training;
    const ParallelismConfig &par = config.parallelism;
    const std::string mp = rd.string("training.mixed_precision_param").value_or("bfloat16");
    if (mp != "bfloat16" && mp != "float32")
        rd.error("training.mixed_precision_param", "expected \"bfloat16\" or \"float32\", got \"" + mp + "\"");
    const bool fsdp = par.zero_stage == 3;
    // December 2024 applies it through FSDP only (parallelize_llama.py: DDP has no policy, and no autocast).
    const bool amp
        = fsdp || (v == Version::Y2025 && par.tensor_model_parallel_size == 1 && par.pipeline_model_parallel_size == 1);
    t.params_dtype = mp == "float32" || !amp ? Dtype::FP32 : Dtype::BF16;
    if (!amp && mp == "bfloat16")
        rd.warning("training.mixed_precision_param",
                   v == Version::Y2025 ? "bfloat16 is not applied: with tensor or pipeline parallelism and no FSDP "
                                         "torchtitan trains in fp32 (maybe_enable_amp)"
                                       : "bfloat16 is not applied: without FSDP December 2024's torchtitan trains in "
                                         "fp32 (its mixed precision is FSDP's policy)");
    rd.source("training.params_dtype", "training.mixed_precision_param");
    const std::optional<std::string> dtype = rd.string("training.dtype");
    if (dtype && *dtype == "bfloat16") {
        // Parameters, gradients and optimizer states all in bf16 (job_config.py).
        t.params_dtype = Dtype::BF16;
        t.fp32_params = false;
        t.main_params_fp32 = false;
        t.main_grads_dtype = Dtype::BF16;
        t.exp_avg_dtype = t.exp_avg_sq_dtype = Dtype::BF16;
        rd.source("training.params_dtype", "training.dtype");
    } else if (dtype && *dtype != "float32") {
        rd.error("training.dtype", "expected \"bfloat16\" or \"float32\", got \"" + *dtype + "\"");
    }
    if (const auto reduce = rd.string("training.mixed_precision_reduce"); reduce && *reduce != "float32")
        rd.error("training.mixed_precision_reduce", "expected \"float32\", the only value torchtitan accepts");
}

// optimizer.name and implementation (2025: fused by default); December 2024's
// optimizer.fused (false: foreach=True).
void readOptimizer(Reader &rd, Version v, Config &config)
{
    const std::string name = rd.string("optimizer.name").value_or("AdamW");
    Optimizer &o = config.training.optimizer;
    if (name == "AdamW" || name == "Adam") {
        o = name == "AdamW" ? Optimizer::AdamW : Optimizer::Adam;
    } else {
        o = Optimizer::AdamW;
        rd.warning("optimizer.name", "\"" + name + "\" is not Adam or AdamW: counted as AdamW");
    }
    rd.source("training.optimizer", "optimizer.name");
    OptimizerKernel &k = config.strategy.optimizer_kernel;
    if (const auto impl = rd.string("optimizer.implementation")) {
        if (*impl == "fused" || *impl == "foreach" || *impl == "for-loop")
            k = *impl == "fused"     ? OptimizerKernel::Fused
                : *impl == "foreach" ? OptimizerKernel::Foreach
                                     : OptimizerKernel::SingleTensor;
        else
            rd.error("optimizer.implementation",
                     "expected \"fused\", \"foreach\" or \"for-loop\", got \"" + *impl + "\"");
        rd.source("strategy.optimizer_kernel", "optimizer.implementation");
    } else if (const auto fused = rd.boolean("optimizer.fused")) {
        k = *fused ? OptimizerKernel::Fused : OptimizerKernel::Foreach;
        rd.source("strategy.optimizer_kernel", "optimizer.fused");
    } else if (v == Version::Dec2024) {
        k = OptimizerKernel::Foreach;
        rd.note("optimizer.fused", "absent: December 2024's default false, torch.optim with foreach=True");
    }
    rd.unmodelledFlag("optimizer.early_step_in_backward");
}

// The layers of the first chunk of a rank (what "block" counts in).
std::int64_t chunkLayers(const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    if (!par.pipeline_layout.empty())
        return par.pipeline_layout.front();
    return config.model.num_layers
           / std::max<std::int64_t>(1, par.pipeline_model_parallel_size * par.virtual_pipeline_model_parallel_size);
}

// torchtitan/distributed/activation_checkpoint.py (models/llama/parallelize_llama.py
// in December 2024): mode "full" wraps every block in checkpoint_wrapper;
// "selective" with "op" keeps the outputs of the ops on its save list
// (recompute_granularity "selective_op"); with an integer N,
// _apply_layer_sac wraps block k (counted from 1 over the rank's blocks) when
// k % N == 0: one block in N is recomputed whole and keeps only its input,
// the other N − 1 keep everything. MemLedger's "uniform" recomputes every
// layer (n layers per checkpoint, Megatron's meaning), so this is "full" with
// "block" and recompute_num_layers = the chunk's layers / N: the same bytes,
// the recomputed blocks counted first. N of 0 or 1 wraps every block.
void readCheckpointing(Reader &rd, Config &config)
{
    StrategyConfig &s = config.strategy;
    const std::string mode = rd.string("activation_checkpoint.mode").value_or("selective");
    const toml::node *optNode = rd.at("activation_checkpoint.selective_ac_option");
    std::string option = optNode ? valueText(*optNode) : "2";
    rd.source("strategy.recompute_granularity", "activation_checkpoint.mode");
    if (mode == "none")
        return;
    if (mode == "full") {
        s.recompute_granularity = RecomputeGranularity::Full;
        s.recompute_method = RecomputeMethod::Uniform;
        s.recompute_num_layers = 1;
        return;
    }
    if (mode != "selective") {
        rd.error("activation_checkpoint.mode", "expected \"none\", \"selective\" or \"full\", got \"" + mode + "\"");
        return;
    }
    if (!rd.has("activation_checkpoint.mode"))
        rd.note("activation_checkpoint.mode", "absent: torchtitan's default \"selective\"");
    rd.source("strategy.recompute_granularity", "activation_checkpoint.selective_ac_option");
    if (option == "op") {
        s.recompute_granularity = RecomputeGranularity::SelectiveOp;
        return;
    }
    if (option.empty() || option.find_first_not_of("0123456789") != std::string::npos) {
        rd.error("activation_checkpoint.selective_ac_option",
                 "expected \"op\" or a whole number N (every N-th block), got \"" + option + "\"");
        return;
    }
    const std::int64_t n = std::atoll(option.c_str());
    const std::int64_t layers = chunkLayers(config);
    s.recompute_granularity = RecomputeGranularity::Full;
    if (n <= 1) {
        s.recompute_method = RecomputeMethod::Uniform;
        s.recompute_num_layers = 1;
        return;
    }
    s.recompute_method = RecomputeMethod::Block;
    s.recompute_num_layers = layers / n;
    rd.note("activation_checkpoint.selective_ac_option",
            "one block in " + std::to_string(n) + " recomputed whole: " + std::to_string(layers / n) + " of "
                + std::to_string(layers) + " blocks per chunk (recompute_method \"block\")");
    if (s.recompute_num_layers == 0)
        s.recompute_granularity = RecomputeGranularity::None;
}

// Float8 linear layers through torchao (Float8Linear, dynamic tensorwise
// scaling unless a recipe says otherwise): December 2024's [float8]
// enable_float8_linear, 2025's model.converters "float8" with
// [quantize.linear.float8] (or [float8] between the two).
void readFloat8(Reader &rd, Version v, Config &config)
{
    TrainingConfig &t = config.training;
    StrategyConfig &s = config.strategy;
    bool fp8 = rd.boolean("float8.enable_float8_linear").value_or(false);
    // The converters' names: "float8" and "mx" until torchtitan's quantization
    // refactor (5b5d468, September 2025), "quantize.linear.float8" and
    // "quantize.linear.mx" after it (components/quantization/, as 8a2686c4
    // registers them; its own llama3_405b.toml still writes "float8").
    if (const auto converters = rd.strings("model.converters")) {
        for (const std::string &c : *converters) {
            if (c == "float8" || c == "quantize.linear.float8") {
                fp8 = true;
            } else if (c == "mx" || c == "quantize.linear.mx") {
                t.fp8_recipe = Fp8Recipe::MXFP8;
            } else if (c == "quantize.grouped_mm.float8" || c == "quantize.grouped_mm.mx") {
                rd.warning("model.converters", "\"" + c + "\" (quantised MoE grouped GEMMs) is not modelled");
            } else {
                rd.error("model.converters", "\"" + c + "\" is not a converter MemLedger models",
                         "\"quantize.linear.float8\" (\"float8\") or \"quantize.linear.mx\" (\"mx\")");
            }
            if ((c == "float8" || c == "mx") && v == Version::Y2025)
                rd.note("model.converters", "\"" + c
                                                + "\": the name before torchtitan's quantization refactor; "
                                                  "since September 2025 it is \"quantize.linear."
                                                + c + "\"");
        }
    }
    const std::string section
        = rd.has("quantize.linear.float8") || v == Version::Y2025 ? "quantize.linear.float8." : "float8.";
    const std::string recipeKey = section + "recipe_name";
    const std::string gatherKey = section + "enable_fsdp_float8_all_gather";
    const bool gather = rd.boolean(gatherKey).value_or(false);
    const std::optional<std::string> recipe = rd.string(recipeKey);
    for (const char *scaling : {"scaling_type_input", "scaling_type_weight", "scaling_type_grad_output"})
        if (const auto st = rd.string(std::string("float8.") + scaling); st && *st != "dynamic")
            rd.warning(std::string("float8.") + scaling, "\"" + *st + "\" scaling counted as dynamic tensorwise");
    if (const auto filter = rd.strings(section + "filter_fqns");
        filter && !(filter->empty() || (filter->size() == 1 && filter->front() == "output")))
        rd.leave(section + "filter_fqns");
    if (t.fp8_recipe == Fp8Recipe::MXFP8) {
        s.fp8_implementation = Fp8Implementation::Torchao;
        rd.source("training.fp8_recipe", "model.converters");
        return;
    }
    if (!fp8)
        return;
    t.fp8_recipe = Fp8Recipe::Tensorwise;
    s.fp8_implementation = Fp8Implementation::Torchao;
    s.fp8_param_gather = gather && config.parallelism.zero_stage > 0;
    rd.source("training.fp8_recipe", rd.has("model.converters") ? "model.converters" : "float8.enable_float8_linear");
    if (recipe && *recipe != "tensorwise")
        rd.warning(recipeKey, "\"" + *recipe + "\" counted as tensorwise: MemLedger has no row-wise scales");
}

// torch.compile ([compile] enable with "model" among its components, 2025;
// training.compile, December 2024): torchtitan compiles each transformer
// block (apply_compile), which strategy.torch_compile models; compiling the
// loss is not. disable_loss_parallel: the loss on gathered logits
// (ParallelDims.loss_parallel_enabled is tp > 1 unless it is set).
void readCompileAndLoss(Reader &rd, Version v, Config &config)
{
    StrategyConfig &s = config.strategy;
    const std::string compileKey = rd.pick("compile.enable", "training.compile", v);
    bool compiled = rd.boolean(compileKey).value_or(false);
    if (const auto components = rd.strings("compile.components"); components && compiled) {
        compiled = std::find(components->begin(), components->end(), "model") != components->end();
        if (!compiled)
            rd.note("compile.components", "without \"model\" the blocks run eager");
        if (std::find(components->begin(), components->end(), "loss") != components->end())
            rd.note("compile.components", "\"loss\": MemLedger counts the loss as eager PyTorch runs it");
    }
    s.torch_compile = compiled;
    rd.source("strategy.torch_compile", compileKey);
    const std::string lossKey = rd.pick("parallelism.disable_loss_parallel", "training.disable_loss_parallel", v);
    if (rd.boolean(lossKey).value_or(false)) {
        s.cross_entropy = CrossEntropy::Unfused;
        rd.source("strategy.cross_entropy", lossKey);
    }
}

// Flags and settings MemLedger reads but does not model, left in the unused list when set.
void readUnmodelled(Reader &rd, Version v)
{
    rd.unmodelledFlag(rd.pick("parallelism.enable_compiled_autograd", "experimental.enable_compiled_autograd", v));
    rd.unmodelledFlag("activation_checkpoint.early_stop");
    for (const char *key :
         {"parallelism.pipeline_parallel_schedule_csv", "experimental.pipeline_parallel_schedule_csv"})
        if (const auto csv = rd.string(key); csv && !csv->empty())
            rd.leave(key);
}

} // namespace

bool isTorchtitanConfigText(std::string_view text)
{
    toml::table doc;
    try {
        doc = toml::parse(tomlSafeText(text));
    } catch (const toml::parse_error &) {
        return false;
    }
    for (const char *section : {"job", "model", "training", "parallelism", "experimental", "activation_checkpoint",
                                "float8", "compile", "optimizer", "lr_scheduler", "quantize", "checkpoint"})
        if (doc.get_as<toml::table>(section))
            return true;
    return false;
}

LaunchImport importTorchtitanConfig(std::string_view text, const LaunchOptions &options)
{
    LaunchImport r;
    toml::table doc;
    try {
        doc = toml::parse(tomlSafeText(text));
    } catch (const toml::parse_error &e) {
        r.problems.push_back({"toml", "not valid TOML: " + std::string(e.description()) + " at line "
                                          + std::to_string(e.source().begin.line) + ", column "
                                          + std::to_string(e.source().begin.column)});
        return r;
    }
    readAnnotations(text, r);
    Reader rd(doc, r);
    const Version version = versionOf(rd);
    Config config = withFrameworkDefaults(Config{}, Framework::Torchtitan);
    if (!readModel(rd, options, version, r, config))
        return r;
    const std::optional<Degrees> degrees = readDegrees(rd, version, options);
    if (!degrees)
        return r;
    readParallelism(rd, version, *degrees, config);
    readPipeline(rd, version, config);
    readBatch(rd, version, config);
    readPrecision(rd, version, config);
    readOptimizer(rd, version, config);
    readCheckpointing(rd, config);
    readFloat8(rd, version, config);
    readCompileAndLoss(rd, version, config);
    readUnmodelled(rd, version);
    rd.listUnused(doc, "");
    if (hasErrors(r.problems))
        return r;
    config.name = "torchtitan-config";
    config.description = std::string("Imported from a torchtitan job config (")
                         + (version == Version::Y2025 ? "2025 keys" : "December 2024 keys")
                         + "). The device is not in the config: " + config.hardware.name
                         + ", MemLedger's default, unless the file or --set names another.";
    r.notes.push_back("the device is not in a torchtitan config: " + config.hardware.name
                      + " unless a \"# memledger: hardware=...\" line or --set hardware=NAME names another");
    r.config = std::move(config);
    return r;
}

} // namespace memledger
