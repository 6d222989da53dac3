// SPDX-License-Identifier: MIT
#include "core/formats/megatronargs.h"

#include "core/formats/shellwords.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

namespace memledger {

namespace {

constexpr std::int64_t kMaxDim = std::int64_t(1) << 24; // the preset format's bound on one size
constexpr std::int64_t kMaxDegree = std::int64_t(1) << 20;

// The entry points whose arguments are a GPT-style decoder's
// (pretrain_mamba.py was renamed pretrain_hybrid.py in Megatron-LM).
const std::set<std::string, std::less<>> kEntryPoints = {"pretrain_gpt.py", "pretrain_mamba.py", "pretrain_hybrid.py"};

// Arguments known not to change what a GPU holds: learning rate and its
// schedule, data and tokenizer paths, checkpointing, logging, evaluation,
// initialisation, seeds, timeouts. They are still listed as unused, marked so.
const std::set<std::string, std::less<>> kNoMemoryEffect = {
    "--lr",
    "--min-lr",
    "--lr-decay-style",
    "--lr-decay-iters",
    "--lr-decay-samples",
    "--lr-warmup-iters",
    "--lr-warmup-samples",
    "--lr-warmup-fraction",
    "--lr-warmup-init",
    "--decoupled-lr",
    "--decoupled-min-lr",
    "--weight-decay",
    "--clip-grad",
    "--adam-beta1",
    "--adam-beta2",
    "--adam-eps",
    "--sgd-momentum",
    "--init-method-std",
    "--train-iters",
    "--train-samples",
    "--exit-duration-in-mins",
    "--exit-interval",
    "--data-path",
    "--data-cache-path",
    "--split",
    "--vocab-file",
    "--merge-file",
    "--tokenizer-model",
    "--tokenizer-type",
    "--tiktoken-pattern",
    "--mock-data",
    "--num-workers",
    "--no-mmap-bin-files",
    "--no-create-attention-mask-in-dataloader",
    "--save",
    "--load",
    "--save-interval",
    "--ckpt-format",
    "--no-load-optim",
    "--no-load-rng",
    "--auto-detect-ckpt-format",
    "--dist-ckpt-strictness",
    "--log-interval",
    "--log-throughput",
    "--log-timers-to-tensorboard",
    "--log-memory-to-tensorboard",
    "--log-num-zeros-in-grad",
    "--log-params-norm",
    "--log-validation-ppl-to-tensorboard",
    "--logging-level",
    "--tensorboard-dir",
    "--wandb-project",
    "--wandb-exp-name",
    "--eval-iters",
    "--eval-interval",
    "--profile",
    "--profile-step-start",
    "--profile-step-end",
    "--distributed-timeout-minutes",
    "--distributed-backend",
    "--seed",
    "--use-mcore-models",
    "--transformer-impl",
    "--rotary-base",
    "--rotary-percent",
    "--rotary-seq-len-interpolation-factor",
    "--use-rope-scaling",
    "--rope-scaling-factor",
    "--norm-epsilon",
    "--calculate-per-token-loss",
    "--manual-gc",
    "--manual-gc-interval",
    "--fp8-amax-compute-algo",
    "--moe-router-load-balancing-type",
    "--moe-aux-loss-coeff",
    "--moe-router-score-function",
    "--moe-router-pre-softmax",
    "--moe-router-enable-expert-bias",
    "--moe-router-bias-update-rate",
    "--moe-router-topk-scaling-factor",
    "--moe-z-loss-coeff",
    "--moe-grouped-gemm",
    "--moe-permute-fusion",
    "--no-masked-softmax-fusion",
    "--no-bias-dropout-fusion",
    "--no-bias-swiglu-fusion",
    "--no-rope-fusion",
    "--no-persist-layer-norm",
    "--cross-entropy-loss-fusion",
    "--no-check-for-nan-in-loss-and-grad",
    "--check-for-nan-in-loss-and-grad",
    "--attention-softmax-in-fp32",
    "--loss-scale",
    "--initial-loss-scale",
    "--min-loss-scale",
    "--loss-scale-window",
    "--hysteresis",
    "--step-batch-size-schedule",
    "--rampup-batch-size",
    "--rotary-scaling-factor",
    "--mscale",
    "--mscale-all-dim",
    "--enable-experimental",
    "--ddp-average-in-collective",
};

struct Arg
{
    std::string name;
    std::vector<std::string> values;
    int line = 0;
    std::vector<std::string> unset; // script variables the words used that were never set
    bool used = false;
};

std::string quoted(const std::string &s)
{
    return "\"" + s + "\"";
}

// The arguments of one launch, queried by name; every query marks the
// argument used, and every problem names it.
class Args
{
public:
    explicit Args(LaunchImport &result)
        : m_r(result)
    { }

    void add(Arg arg)
    {
        for (Arg &a : m_args) {
            if (a.name == arg.name && !a.used) {
                // argparse keeps the last: the earlier one is reported as replaced.
                m_r.unused.push_back({a.name, join(a.values), a.line, false, {}});
                m_r.notes.push_back(a.name + " is given twice (lines " + std::to_string(a.line) + " and "
                                    + std::to_string(arg.line) + "); the last one counts, as in argparse");
                a = std::move(arg);
                return;
            }
        }
        m_args.push_back(std::move(arg));
    }

    bool has(std::string_view name) const { return find(name) != nullptr; }

    // A store_true flag: present or not; a value after it is an error.
    bool flag(std::string_view name)
    {
        Arg *a = take(name);
        if (a && !a->values.empty())
            error(name, "takes no value, got " + quoted(join(a->values)));
        return a != nullptr;
    }

    std::optional<std::string> text(std::string_view name)
    {
        Arg *a = take(name);
        if (!a)
            return std::nullopt;
        if (a->values.size() != 1) {
            error(name, a->values.empty() ? "expects a value" + unsetNote(*a)
                                          : "expects one value, got " + quoted(join(a->values)) + unsetNote(*a));
            return std::nullopt;
        }
        return a->values[0];
    }

    std::optional<std::int64_t> integer(std::string_view name, std::int64_t lo, std::int64_t hi)
    {
        const std::optional<std::string> t = text(name);
        if (!t)
            return std::nullopt;
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(*t, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used == 0 || used != t->size()) {
            error(name, "expected an integer, got " + quoted(*t) + unsetNote(*find(name)));
            return std::nullopt;
        }
        if (v < lo || v > hi) {
            error(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + *t);
            return std::nullopt;
        }
        return v;
    }

    std::optional<double> number(std::string_view name, double lo, double hi)
    {
        const std::optional<std::string> t = text(name);
        if (!t)
            return std::nullopt;
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(*t, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used == 0 || used != t->size() || !std::isfinite(v)) {
            error(name, "expected a number, got " + quoted(*t) + unsetNote(*find(name)));
            return std::nullopt;
        }
        if (v < lo || v > hi) {
            error(name, "must be between " + formatNumber(lo) + " and " + formatNumber(hi) + ", got " + *t);
            return std::nullopt;
        }
        return v;
    }

    std::optional<std::string> choice(std::string_view name, const std::vector<std::string> &choices)
    {
        const std::optional<std::string> t = text(name);
        if (!t)
            return std::nullopt;
        if (std::find(choices.begin(), choices.end(), *t) == choices.end()) {
            error(name, "unknown value " + quoted(*t), "Megatron-LM takes " + join(choices, ", "));
            return std::nullopt;
        }
        return t;
    }

    // Every value word of a nargs='+' argument.
    std::vector<std::string> list(std::string_view name)
    {
        Arg *a = take(name);
        return a ? a->values : std::vector<std::string>{};
    }

    // A known argument read only to say why it is not used.
    void unusedBecause(std::string_view name, const std::string &why)
    {
        if (const Arg *a = find(name)) {
            warning(name, why);
            m_r.unused.push_back({a->name, join(a->values), a->line, false, {}});
            const_cast<Arg *>(a)->used = true;
        }
    }

    void error(std::string_view name, std::string message, std::string suggestion = {})
    {
        m_r.problems.push_back({std::string(name), std::move(message), std::move(suggestion)});
    }
    void warning(std::string_view name, std::string message, std::string suggestion = {})
    {
        m_r.problems.push_back(
            {std::string(name), std::move(message), std::move(suggestion), Problem::Severity::Warning});
    }
    void note(std::string text) { m_r.notes.push_back(std::move(text)); }
    void source(const std::string &field, std::string_view name) { m_r.sourceOf[field] = std::string(name); }

    // Every argument no query read.
    void reportUnused()
    {
        for (const Arg &a : m_args)
            if (!a.used)
                m_r.unused.push_back({a.name, join(a.values), a.line, kNoMemoryEffect.count(a.name) > 0, {}});
    }

    static std::string join(const std::vector<std::string> &v, const char *sep = " ")
    {
        std::string s;
        for (const std::string &x : v)
            s += (s.empty() ? "" : sep) + x;
        return s;
    }

private:
    const Arg *find(std::string_view name) const
    {
        for (const Arg &a : m_args)
            if (a.name == name)
                return &a;
        return nullptr;
    }
    Arg *take(std::string_view name)
    {
        Arg *a = const_cast<Arg *>(find(name));
        if (a)
            a->used = true;
        return a;
    }
    static std::string unsetNote(const Arg &a)
    {
        if (a.unset.empty())
            return {};
        std::string names;
        for (const std::string &n : a.unset)
            names += (names.empty() ? "" : ", ") + (n[0] == '$' ? n : "$" + n);
        return " (" + names + " is not set in the script)";
    }
    static std::string formatNumber(double v)
    {
        std::string s = std::to_string(v);
        s.erase(s.find_last_not_of('0') + 1);
        if (!s.empty() && s.back() == '.')
            s.pop_back();
        return s;
    }

    LaunchImport &m_r;
    std::vector<Arg> m_args;
};

bool isOptionWord(const std::string &w)
{
    if (w.size() < 2 || w[0] != '-')
        return false;
    // A negative number is a value, not an option.
    return !(std::isdigit(static_cast<unsigned char>(w[1])) || w[1] == '.');
}

// "--name value ..." and "--name=value" words into arguments.
void collectArguments(const std::vector<std::pair<ShellWord, int>> &words, Args &args, LaunchImport &r)
{
    for (std::size_t i = 0; i < words.size();) {
        const ShellWord &w = words[i].first;
        if (!isOptionWord(w.text)) {
            r.unused.push_back({w.text, "", words[i].second, false, {}});
            r.problems.push_back({w.text, "not an argument: Megatron-LM's arguments are --name value",
                                  "a word the script passes that argparse would refuse", Problem::Severity::Warning});
            ++i;
            continue;
        }
        Arg a;
        a.line = words[i].second;
        a.unset = w.unset;
        const std::size_t eq = w.text.find('=');
        a.name = w.text.substr(0, eq);
        if (eq != std::string::npos)
            a.values.push_back(w.text.substr(eq + 1));
        ++i;
        while (eq == std::string::npos && i < words.size() && !isOptionWord(words[i].first.text)) {
            a.values.push_back(words[i].first.text);
            a.unset.insert(a.unset.end(), words[i].first.unset.begin(), words[i].first.unset.end());
            ++i;
        }
        args.add(std::move(a));
    }
}

std::string basename(const std::string &path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The world size as the launch gives it, with where it came from.
struct WorldSize
{
    std::optional<std::int64_t> gpus;
    std::string source;
};

std::optional<std::int64_t> positive(const std::string &s)
{
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(s, &used);
    } catch (const std::exception &) {
        return std::nullopt;
    }
    return used == s.size() && v > 0 ? std::optional<std::int64_t>(v) : std::nullopt;
}

// torchrun's --nproc_per_node and --nnodes (defaults 1 and 1); other launcher
// options are listed as unused.
WorldSize launcherWorld(const ShellCommand &cmd, std::size_t script, LaunchImport &r)
{
    WorldSize w;
    if (script == 0)
        return w;
    const std::string launcher = basename(cmd.words[0].text);
    bool torchrun = launcher == "torchrun";
    for (std::size_t i = 1; i < script; ++i)
        torchrun = torchrun || cmd.words[i].text == "torch.distributed.run"
                   || cmd.words[i].text == "torch.distributed.launch";
    std::optional<std::int64_t> nproc = 1, nnodes = 1;
    std::string nprocText = "1", nnodesText = "1";
    for (std::size_t i = 1; i < script; ++i) {
        std::string name = cmd.words[i].text, value;
        const auto eq = name.find('=');
        if (eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        } else if (isOptionWord(name) && i + 1 < script && !isOptionWord(cmd.words[i + 1].text)) {
            value = cmd.words[++i].text;
        }
        if (torchrun && (name == "--nproc_per_node" || name == "--nproc-per-node")) {
            nproc = positive(value);
            nprocText = value;
        } else if (torchrun && name == "--nnodes") {
            nnodes = positive(value);
            nnodesText = value;
        } else if (name != "-m" && name != "torch.distributed.run" && name != "torch.distributed.launch") {
            r.unused.push_back({launcher + " " + name, value, cmd.line, true, {}});
        }
    }
    if (!torchrun)
        return w;
    if (nproc && nnodes) {
        w.gpus = *nproc * *nnodes;
        w.source = "torchrun --nproc_per_node " + nprocText + " × --nnodes " + nnodesText;
    } else {
        w.source = "torchrun --nproc_per_node " + nprocText + " --nnodes " + nnodesText + " is not a number of GPUs";
    }
    return w;
}

// WORLD_SIZE, else GPUS_PER_NODE × NNODES (or NUM_NODES), as the scripts compute it.
WorldSize scriptWorld(const ShellScript &script)
{
    const auto value = [&](const char *name) -> std::optional<std::int64_t> {
        const auto it = script.variables.find(name);
        return it == script.variables.end() || it->second.empty() ? std::nullopt : positive(it->second[0]);
    };
    if (const auto w = value("WORLD_SIZE"))
        return {w, "the script's WORLD_SIZE=" + std::to_string(*w)};
    const auto perNode = value("GPUS_PER_NODE");
    const auto nodes = value("NNODES") ? value("NNODES") : value("NUM_NODES");
    if (perNode && nodes)
        return {*perNode * *nodes, "the script's GPUS_PER_NODE × NNODES"};
    return {};
}

// Megatron's list form of --moe-layer-freq: a Python expression of lists,
// "+", "*" and parentheses ("([0]*3+[1]*58)"), as moe_freq_type evaluates it.
class PatternExpression
{
public:
    explicit PatternExpression(std::string s)
    {
        s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
        m_s = std::move(s);
    }
    std::optional<std::vector<int>> run()
    {
        auto v = sum();
        return v && m_i == m_s.size() ? v : std::nullopt;
    }

private:
    bool eat(char c)
    {
        if (m_i < m_s.size() && m_s[m_i] == c) {
            ++m_i;
            return true;
        }
        return false;
    }
    std::optional<long long> integer()
    {
        const std::size_t start = m_i;
        while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i])))
            ++m_i;
        if (m_i == start || m_i - start > 6)
            return std::nullopt;
        return std::stoll(m_s.substr(start, m_i - start));
    }
    std::optional<std::vector<int>> sum()
    {
        auto v = product();
        while (v && eat('+')) {
            const auto r = product();
            if (!r)
                return std::nullopt;
            v->insert(v->end(), r->begin(), r->end());
        }
        return v;
    }
    std::optional<std::vector<int>> product()
    {
        auto v = atom();
        while (v && eat('*')) {
            const auto n = integer();
            if (!n || v->size() * static_cast<std::size_t>(*n) > 1000000)
                return std::nullopt;
            std::vector<int> out;
            for (long long k = 0; k < *n; ++k)
                out.insert(out.end(), v->begin(), v->end());
            v = std::move(out);
        }
        return v;
    }
    std::optional<std::vector<int>> atom()
    {
        if (eat('(')) {
            auto v = sum();
            return v && eat(')') ? v : std::nullopt;
        }
        if (!eat('['))
            return std::nullopt;
        std::vector<int> v;
        while (!eat(']')) {
            const auto n = integer();
            if (!n)
                return std::nullopt;
            v.push_back(*n != 0 ? 1 : 0);
            if (!eat(',') && !(m_i < m_s.size() && m_s[m_i] == ']'))
                return std::nullopt;
        }
        return v;
    }

    std::string m_s;
    std::size_t m_i = 0;
};

// --num-layers and its kind: required integers, as validate_args checks them.
void requiredInteger(Args &a, const char *name, std::int64_t lo, std::int64_t hi, std::int64_t &dst, const char *field)
{
    a.source(field, name);
    if (!a.has(name)) {
        a.error(name, "missing", "Megatron-LM requires it (megatron/training/arguments.py, validate_args)");
        return;
    }
    if (const auto v = a.integer(name, lo, hi))
        dst = *v;
}

// The decoder's shape, with validate_args' derived defaults.
void readShape(Args &a, ModelConfig &m)
{
    requiredInteger(a, "--num-layers", 1, 100000, m.num_layers, "model.num_layers");
    requiredInteger(a, "--hidden-size", 1, kMaxDim, m.hidden_size, "model.hidden_size");
    requiredInteger(a, "--num-attention-heads", 1, 65536, m.num_attention_heads, "model.num_attention_heads");
    requiredInteger(a, "--max-position-embeddings", 1, kMaxDim, m.max_position_embeddings,
                    "model.max_position_embeddings");
    // Without --group-query-attention, TransformerConfig gets num_query_groups None: one group per head.
    if (a.flag("--group-query-attention")) {
        m.num_query_groups = a.integer("--num-query-groups", 1, 65536).value_or(1);
        a.source("model.num_query_groups", "--num-query-groups");
    } else {
        a.unusedBecause("--num-query-groups", "has no effect without --group-query-attention");
    }
    if (a.has("--kv-channels")) {
        m.kv_channels = a.integer("--kv-channels", 1, 65536).value_or(0);
        a.source("model.kv_channels", "--kv-channels");
        if (m.num_attention_heads > 0 && m.hidden_size == m.kv_channels * m.num_attention_heads)
            m.kv_channels = 0; // the default, h / heads
    } else if (m.num_attention_heads > 0 && m.hidden_size % m.num_attention_heads != 0) {
        a.error("--num-attention-heads",
                "does not divide --hidden-size " + std::to_string(m.hidden_size) + ", and no --kv-channels is given",
                "validate_args asserts hidden_size % num_attention_heads == 0 to derive kv_channels");
    }
    m.swiglu = a.flag("--swiglu");
    if (a.flag("--quick-geglu")) {
        m.swiglu = true;
        a.warning("--quick-geglu", "a gated MLP: counted with SwiGLU's shapes (gate, up, down)");
    }
    // An ungated MLP of GeLU's shapes; relu saves its output (model.squared_relu).
    m.squared_relu = a.flag("--squared-relu");
    a.flag("--openai-gelu");
    if (a.has("--ffn-hidden-size")) {
        m.ffn_hidden_size = a.integer("--ffn-hidden-size", 1, kMaxDim).value_or(0);
    } else if (m.swiglu) {
        // validate_args: two projections of this width keep the parameters near 4h's, a multiple of 64.
        m.ffn_hidden_size = (4 * m.hidden_size * 2 / 3) / 64 * 64;
        a.note("--ffn-hidden-size is not given: with --swiglu Megatron-LM derives int(4h · 2/3 / 64) · 64 = "
               + std::to_string(m.ffn_hidden_size));
    }
    a.source("model.ffn_hidden_size", "--ffn-hidden-size");
    if (m.ffn_hidden_size == 4 * m.hidden_size)
        m.ffn_hidden_size = 0; // the default, 4h
    m.normalization = a.choice("--normalization", {"LayerNorm", "RMSNorm"}).value_or("LayerNorm") == "RMSNorm"
                          ? Normalization::RMSNorm
                          : Normalization::LayerNorm;
    m.apply_layernorm_1p = a.flag("--apply-layernorm-1p");
    m.qk_layernorm = a.flag("--qk-layernorm");
    // Megatron-DeepSpeed's (BigScience's fork) LayerNorm after the word embeddings (BLOOM).
    m.embed_layernorm = a.flag("--embed-layernorm");
    m.add_bias_linear = !a.flag("--disable-bias-linear");
    m.add_qkv_bias = a.flag("--add-qkv-bias");
    m.untie_embeddings_and_output_weights = a.flag("--untie-embeddings-and-output-weights");
    m.attention_dropout = a.number("--attention-dropout", 0.0, 0.999).value_or(0.1);
    m.hidden_dropout = a.number("--hidden-dropout", 0.0, 0.999).value_or(0.1);
    a.source("model.attention_dropout", "--attention-dropout");
    a.source("model.hidden_dropout", "--hidden-dropout");
}

void readPositions(Args &a, ModelConfig &m)
{
    const std::string type = a.choice("--position-embedding-type", {"learned_absolute", "rope", "yarn", "mrope",
                                                                    "relative", "none", "alibi", "absolute", "rotary"})
                                 .value_or("learned_absolute");
    // "alibi", "absolute" and "rotary": Megatron-DeepSpeed's names (BLOOM's launch).
    m.position_embedding_type = type == "learned_absolute" || type == "absolute" ? PositionEmbedding::LearnedAbsolute
                                : type == "none"                                 ? PositionEmbedding::None
                                : type == "alibi"                                ? PositionEmbedding::Alibi
                                                                                 : PositionEmbedding::Rope;
    if (type == "relative") {
        m.position_embedding_type = PositionEmbedding::None;
        a.warning("--position-embedding-type",
                  "relative: the attention bias table (32 buckets × heads) is not counted");
    }
    if (a.flag("--use-rotary-position-embeddings"))
        m.position_embedding_type = PositionEmbedding::Rope;
    // --no-position-embedding (deprecated) drops the learned table; rotary positions have none anyway.
    if (a.flag("--no-position-embedding") && m.position_embedding_type == PositionEmbedding::LearnedAbsolute)
        m.position_embedding_type = PositionEmbedding::None;
}

// The vocabulary: --vocab-size, else what the tokenizer type fixes, else an error.
void readVocabulary(Args &a, ModelConfig &m)
{
    m.make_vocab_size_divisible_by = a.integer("--make-vocab-size-divisible-by", 1, 1 << 20).value_or(128);
    a.source("model.vocab_size", "--vocab-size");
    // Megatron-DeepSpeed's --pad-vocab-size-to (BLOOM: 250880) pads to exactly that size.
    if (a.has("--pad-vocab-size-to")) {
        m.vocab_size = a.integer("--pad-vocab-size-to", 1, kMaxDim).value_or(m.vocab_size);
        m.make_vocab_size_divisible_by = 1;
        a.source("model.vocab_size", "--pad-vocab-size-to");
        return;
    }
    if (a.has("--padded-vocab-size")) {
        m.vocab_size = a.integer("--padded-vocab-size", 1, kMaxDim).value_or(m.vocab_size);
        m.make_vocab_size_divisible_by = 1; // already padded: Megatron does not pad it again
        a.source("model.vocab_size", "--padded-vocab-size");
        return;
    }
    if (a.has("--vocab-size")) {
        m.vocab_size = a.integer("--vocab-size", 1, kMaxDim).value_or(m.vocab_size);
        return;
    }
    // The tokenizers whose vocabulary is fixed by their type.
    const bool bpeFiles = a.has("--vocab-file") && a.has("--merge-file");
    const std::optional<std::string> type = a.has("--tokenizer-type") ? a.text("--tokenizer-type") : std::nullopt;
    if (type == "GPT2BPETokenizer" || (!type && bpeFiles)) {
        m.vocab_size = 50257;
        a.note("the vocabulary is GPT-2's BPE (--vocab-file and --merge-file, GPT2BPETokenizer): 50257 tokens; "
               "--set model.vocab_size=N for another");
        return;
    }
    if (type == "Llama2Tokenizer") {
        m.vocab_size = 32000;
        a.note("the vocabulary is Llama 2's SentencePiece model (Llama2Tokenizer): 32000 tokens; "
               "--set model.vocab_size=N for another");
        return;
    }
    a.error("--vocab-size",
            "missing: the vocabulary comes from the tokenizer" + (type ? " (" + *type + ")" : std::string())
                + ", which MemLedger does not read",
            "add --vocab-size N to the arguments, or --set model.vocab_size=N");
}

void readMoe(Args &a, ModelConfig &m)
{
    m.mtp_num_layers = a.integer("--mtp-num-layers", 0, 64).value_or(0);
    a.source("model.mtp_num_layers", "--mtp-num-layers");
    m.num_experts = a.integer("--num-experts", 0, 65536).value_or(0);
    a.source("model.num_experts", "--num-experts");
    if (m.num_experts == 0) {
        for (const char *name : {"--moe-router-topk", "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size",
                                 "--moe-layer-freq", "--moe-expert-capacity-factor"})
            a.unusedBecause(name, "has no effect without --num-experts");
        return;
    }
    m.moe_router_topk = a.integer("--moe-router-topk", 1, 1024).value_or(2);
    a.source("model.moe_router_topk", "--moe-router-topk");
    m.moe_ffn_hidden_size = a.integer("--moe-ffn-hidden-size", 1, kMaxDim).value_or(0);
    if (m.moe_ffn_hidden_size == m.ffn())
        m.moe_ffn_hidden_size = 0; // validate_args' default: the FFN width
    m.moe_shared_expert_intermediate_size = a.integer("--moe-shared-expert-intermediate-size", 1, kMaxDim).value_or(0);
    if (const std::optional<std::string> freq = a.text("--moe-layer-freq")) {
        a.source("model.moe_layer_freq", "--moe-layer-freq");
        if (freq->find('[') == std::string::npos) {
            // An integer N: layer i is an expert layer when i % N == 0 (moe_freq_type).
            m.moe_layer_freq = positive(*freq).value_or(0);
            if (m.moe_layer_freq == 0)
                a.error("--moe-layer-freq", "expected a positive integer or a list expression, got " + quoted(*freq));
        } else if (const auto pattern = PatternExpression(*freq).run()) {
            if (static_cast<std::int64_t>(pattern->size()) != m.num_layers)
                a.error("--moe-layer-freq", "lists " + std::to_string(pattern->size()) + " layers, not --num-layers "
                                                + std::to_string(m.num_layers));
            m.moe_layer_pattern = *pattern;
        } else {
            a.error("--moe-layer-freq", "cannot read " + quoted(*freq),
                    "an integer, or a list expression such as ([0]*3+[1]*58)");
        }
    }
}

void readMla(Args &a, ModelConfig &m)
{
    m.multi_latent_attention = a.flag("--multi-latent-attention");
    if (!m.multi_latent_attention) {
        for (const char *name :
             {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim"})
            a.unusedBecause(name, "has no effect without --multi-latent-attention");
        return;
    }
    if (m.num_query_groups > 0)
        a.error("--multi-latent-attention", "and --group-query-attention exclude each other",
                "validate_args: group query attention is mutually exclusive with multi latent attention");
    // megatron/training/arguments.py, _add_mla_args: the defaults of the argument parser.
    m.q_lora_rank = a.integer("--q-lora-rank", 1, kMaxDim).value_or(0);
    m.kv_lora_rank = a.integer("--kv-lora-rank", 1, kMaxDim).value_or(32);
    m.qk_head_dim = a.integer("--qk-head-dim", 1, 65536).value_or(128);
    m.qk_pos_emb_head_dim = a.integer("--qk-pos-emb-head-dim", 0, 65536).value_or(64);
    m.v_head_dim = a.integer("--v-head-dim", 1, 65536).value_or(128);
}

// Hybrid (Mamba) models: only a pattern without Mamba layers is a decoder MemLedger counts.
void readHybrid(Args &a, const std::string &entry)
{
    for (const char *name : {"--hybrid-layer-pattern", "--hybrid-override-pattern"}) {
        if (const std::optional<std::string> pattern = a.text(name); pattern && pattern->find('M') != std::string::npos)
            a.error(name, "has Mamba layers (M): MemLedger counts attention and MLP layers only");
    }
    if (entry != "pretrain_gpt.py" && !a.has("--hybrid-layer-pattern") && !a.has("--hybrid-override-pattern"))
        a.note(entry + " without a layer pattern: read as a GPT decoder");
    a.list("--spec");
}

// Megatron's params_dtype and gradient-buffer dtype (validate_args), the optimizer and its states.
void readPrecision(Args &a, TrainingConfig &t, StrategyConfig &s)
{
    const bool fp16 = a.flag("--fp16"), bf16 = a.flag("--bf16");
    if (fp16 && bf16)
        a.error("--fp16", "and --bf16 exclude each other", "validate_args asserts not both");
    t.params_dtype = fp16 ? Dtype::FP16 : bf16 ? Dtype::BF16 : Dtype::FP32;
    a.source("training.params_dtype", bf16 ? "--bf16" : "--fp16");
    const bool fp32Reduce = a.flag("--accumulate-allreduce-grads-in-fp32");
    const bool bf16Reduce = a.flag("--grad-reduce-in-bf16");
    // bf16 accumulates and reduces gradients in fp32 unless --grad-reduce-in-bf16;
    // fp16 keeps fp16 gradients unless --accumulate-allreduce-grads-in-fp32.
    t.main_grads_dtype = bf16   ? (bf16Reduce ? Dtype::BF16 : Dtype::FP32)
                         : fp16 ? (fp32Reduce ? Dtype::FP32 : Dtype::FP16)
                                : Dtype::FP32;
    if (!bf16 && bf16Reduce)
        a.warning("--grad-reduce-in-bf16", "has effect only with --bf16");
    t.main_params_fp32 = true; // Float16OptimizerWithFloat16Params / the distributed optimizer keep fp32 masters
    const std::string optimizer = a.choice("--optimizer", {"adam", "sgd", "muon", "dist_muon"}).value_or("adam");
    t.optimizer = optimizer == "sgd" ? Optimizer::SGD : optimizer == "adam" ? Optimizer::Adam : Optimizer::Muon;
    a.source("training.optimizer", "--optimizer");
    if (a.flag("--use-precision-aware-optimizer")) {
        const auto dtype = [&](const char *name, std::vector<std::string> choices) {
            return parseDtype(a.choice(name, choices).value_or("fp32")).value_or(Dtype::FP32);
        };
        if (a.has("--main-grads-dtype"))
            t.main_grads_dtype = dtype("--main-grads-dtype", {"fp32", "bf16"});
        if (dtype("--main-params-dtype", {"fp32", "fp16"}) != Dtype::FP32)
            a.warning("--main-params-dtype", "fp16 master weights are not expressible: counted as fp32");
        const Dtype avg = dtype("--exp-avg-dtype", {"fp32", "fp16", "bf16", "fp8"});
        const Dtype sq = dtype("--exp-avg-sq-dtype", {"fp32", "fp16", "bf16", "fp8"});
        t.exp_avg_dtype = avg == Dtype::FP32 ? std::nullopt : std::optional<Dtype>(avg);
        t.exp_avg_sq_dtype = sq == Dtype::FP32 ? std::nullopt : std::optional<Dtype>(sq);
    } else {
        for (const char *name : {"--main-grads-dtype", "--main-params-dtype", "--exp-avg-dtype", "--exp-avg-sq-dtype"})
            a.unusedBecause(name, "has effect only with --use-precision-aware-optimizer");
    }
    if (a.flag("--optimizer-cpu-offload")) {
        const double fraction = a.number("--optimizer-offload-fraction", 0.0, 1.0).value_or(1.0);
        if (fraction == 1.0)
            s.optimizer_offload = OffloadTarget::CPU;
        else
            a.warning("--optimizer-offload-fraction",
                      "a partial offload is not expressible: the optimizer stays on the GPU");
    }
    // --fp8-format turns FP8 on (TransformerConfig.fp8); --fp8-recipe picks the scaling, delayed by default.
    if (a.has("--fp8-format")) {
        a.choice("--fp8-format", {"e4m3", "hybrid"});
        const std::string recipe
            = a.choice("--fp8-recipe", {"delayed", "tensorwise", "mxfp8", "blockwise"}).value_or("delayed");
        t.fp8_recipe = recipe == "tensorwise"  ? Fp8Recipe::Tensorwise
                       : recipe == "mxfp8"     ? Fp8Recipe::MXFP8
                       : recipe == "blockwise" ? Fp8Recipe::Blockwise
                                               : Fp8Recipe::Delayed;
        if (t.fp8_recipe == Fp8Recipe::Delayed)
            t.fp8_amax_history_len = a.integer("--fp8-amax-history-len", 1, 1 << 20).value_or(1);
        else
            a.unusedBecause("--fp8-amax-history-len", "has effect only with --fp8-recipe delayed");
        s.fp8_param_gather = a.flag("--fp8-param-gather");
        a.source("training.fp8_recipe", "--fp8-recipe");
    } else {
        for (const char *name : {"--fp8-recipe", "--fp8-amax-history-len", "--fp8-param-gather"})
            a.unusedBecause(name, "has no effect without --fp8-format");
    }
}

// Activation recomputation and the other strategy knobs Megatron has arguments for.
void readStrategy(Args &a, StrategyConfig &s, const ModelConfig &m)
{
    std::optional<std::string> granularity = a.choice("--recompute-granularity", {"full", "selective"});
    if (a.flag("--recompute-activations"))
        granularity = "selective"; // the deprecated alias
    a.source("strategy.recompute_granularity", "--recompute-granularity");
    if (granularity == "full") {
        s.recompute_granularity = RecomputeGranularity::Full;
        if (!a.has("--recompute-method"))
            a.error("--recompute-method", "missing: full recompute needs uniform or block",
                    "megatron/core/transformer/transformer_block.py refuses full recompute without it");
        if (!a.has("--recompute-num-layers"))
            a.error("--recompute-num-layers", "missing: full recompute needs it",
                    "TransformerConfig: recompute_num_layers must be set for full recompute");
        s.recompute_method = a.choice("--recompute-method", {"uniform", "block"}).value_or("uniform") == "block"
                                 ? RecomputeMethod::Block
                                 : RecomputeMethod::Uniform;
        s.recompute_num_layers = a.integer("--recompute-num-layers", 1, 100000).value_or(1);
        a.unusedBecause("--recompute-modules", "has effect only with --recompute-granularity selective");
    } else if (granularity == "selective") {
        s.recompute_granularity = RecomputeGranularity::Selective;
        for (const std::string &module : a.list("--recompute-modules"))
            if (module != "core_attn")
                a.warning("--recompute-modules",
                          "\"" + module
                              + "\" is not expressible here: selective recompute is counted "
                                "as Megatron's default, the core attention only",
                          "strategy.tensor_policies can recompute other tensors");
    } else if (a.flag("--checkpoint-activations")) {
        // The flag of Megatron-LM before --recompute-granularity, kept by
        // Megatron-DeepSpeed (BLOOM's launch): every group of
        // --checkpoint-num-layers layers keeps its input, Megatron-LM's
        // arguments.py mapping it to recompute-granularity full, method uniform.
        s.recompute_granularity = RecomputeGranularity::Full;
        s.recompute_method = RecomputeMethod::Uniform;
        s.recompute_num_layers = a.integer("--checkpoint-num-layers", 1, 100000).value_or(1);
        a.source("strategy.recompute_granularity", "--checkpoint-activations");
    } else {
        for (const char *name : {"--recompute-method", "--recompute-num-layers", "--recompute-modules"})
            a.unusedBecause(name, "has no effect without --recompute-granularity");
    }
    // The attention backend: flash and cuDNN fused attention store no s × s scores; unfused and local do.
    const std::string backend
        = a.choice("--attention-backend", {"auto", "flash", "fused", "unfused", "local"}).value_or("auto");
    s.flash_attention = backend != "unfused" && backend != "local";
    if (a.flag("--use-flash-attn"))
        s.flash_attention = true;
    a.source("strategy.flash_attention", "--attention-backend");
    s.gradient_accumulation_fusion = !a.flag("--no-gradient-accumulation-fusion");
    s.overlap_grad_reduce = a.flag("--overlap-grad-reduce");
    s.overlap_param_gather = a.flag("--overlap-param-gather");
    s.overlap_p2p_comm = !a.flag("--no-overlap-p2p-communication");
    s.tp_comm_overlap = a.flag("--tp-comm-overlap");
    if (a.has("--ddp-bucket-size"))
        s.ddp_bucket_size = a.integer("--ddp-bucket-size", 1, std::int64_t(1) << 40).value_or(s.ddp_bucket_size);
    if (m.num_experts > 0) {
        s.moe_expert_capacity_factor = a.number("--moe-expert-capacity-factor", 0.0, 1000.0).value_or(0.0);
        // The flex dispatcher's DeepEP backend (--moe-enable-deepep, deprecated for
        // --moe-flex-dispatcher-backend deepep, its default: transformer_config.py).
        const bool flex = a.choice("--moe-token-dispatcher-type", {"allgather", "alltoall", "flex"}) == "flex";
        const bool enable = a.flag("--moe-enable-deepep");
        const std::string backend
            = a.choice("--moe-flex-dispatcher-backend", {"deepep", "hybridep", "ncclep"}).value_or("deepep");
        if (flex && (enable || backend == "deepep"))
            s.moe_token_dispatcher = MoeDispatcher::DeepEP;
        a.source("strategy.moe_token_dispatcher", "--moe-token-dispatcher-type");
    }
}

// --pipeline-model-parallel-layout as PipelineParallelLayerLayout.parse_str_to_list
// reads it (megatron/core/transformer/pipeline_parallel_layer_layout.py):
// commas removed, "(...)*n" then "x*n" unrolled, stages split at "|".
std::optional<std::vector<std::string>> layoutStages(std::string s)
{
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    for (const char *pattern : {R"(\(([^)]+)\)\*(\d+))", R"((.)\*(\d+))"}) {
        const std::regex re(pattern);
        std::string out;
        auto begin = std::sregex_iterator(s.begin(), s.end(), re);
        std::size_t last = 0;
        for (auto it = begin; it != std::sregex_iterator(); ++it) {
            out += s.substr(last, static_cast<std::size_t>(it->position()) - last);
            const long long n = std::stoll((*it)[2].str().substr(0, 6));
            for (long long k = 0; k < n && out.size() < 1000000; ++k)
                out += (*it)[1].str();
            last = static_cast<std::size_t>(it->position() + it->length());
        }
        s = out + s.substr(last);
    }
    std::vector<std::string> stages(1);
    for (char c : s) {
        if (c == '|')
            stages.emplace_back();
        else if (c == 'E' || c == 'L' || c == 't' || c == 'm')
            stages.back() += c;
        else
            return std::nullopt;
    }
    return stages;
}

// The plan's layout as Megatron writes it, each run of equal stages as "(s|)*n".
std::string layoutString(const std::vector<std::int64_t> &counts)
{
    std::vector<std::string> stages;
    for (std::size_t i = 0; i < counts.size(); ++i)
        stages.push_back((i == 0 ? "E" : "") + std::string(static_cast<std::size_t>(counts[i]), 't')
                         + (i + 1 == counts.size() ? "L" : ""));
    std::string out;
    for (std::size_t i = 0; i < stages.size();) {
        std::size_t run = 1;
        while (i + run + 1 < stages.size() && stages[i + run] == stages[i])
            ++run;
        const bool last = i + run == stages.size();
        if (run > 1) {
            out += "(" + stages[i] + "|)*" + std::to_string(run);
        } else {
            out += stages[i] + (last ? "" : "|");
        }
        i += run;
    }
    return out;
}

void readLayout(Args &a, const ModelConfig &m, ParallelismConfig &p)
{
    const std::optional<std::string> text = a.text("--pipeline-model-parallel-layout");
    if (!text)
        return;
    a.source("parallelism.pipeline_layout", "--pipeline-model-parallel-layout");
    const auto stages = layoutStages(*text);
    if (!stages || stages->size() % static_cast<std::size_t>(p.pipeline_model_parallel_size) != 0) {
        a.error("--pipeline-model-parallel-layout",
                stages ? std::to_string(stages->size()) + " stages do not divide over --pipeline-model-parallel-size "
                             + std::to_string(p.pipeline_model_parallel_size)
                       : "cannot read " + quoted(*text) + ": stages of E, t, m, L split by |");
        return;
    }
    std::int64_t layers = 0, mtp = 0;
    for (const std::string &stage : *stages) {
        p.pipeline_layout.push_back(std::count(stage.begin(), stage.end(), 't'));
        layers += p.pipeline_layout.back();
        mtp += std::count(stage.begin(), stage.end(), 'm');
    }
    if (stages->front().empty() || stages->front()[0] != 'E' || stages->back().empty() || stages->back().back() != 'L')
        a.error("--pipeline-model-parallel-layout", "must start with the embedding E and end with the loss L");
    if (layers != m.num_layers)
        a.error("--pipeline-model-parallel-layout",
                "places " + std::to_string(layers) + " layers (t), not --num-layers " + std::to_string(m.num_layers));
    if (mtp > 0)
        a.warning("--pipeline-model-parallel-layout",
                  "the multi-token-prediction layers (m) are counted on the last stage, with the loss");
    p.virtual_pipeline_model_parallel_size = static_cast<std::int64_t>(stages->size()) / p.pipeline_model_parallel_size;
}

// v and uneven splits: the layout, --num-layers-per-virtual-pipeline-stage,
// --num-virtual-stages-per-pipeline-rank, --decoder-first/last-pipeline-num-layers
// and --account-for-embedding/loss-in-pipeline-split, as validate_args combines them.
void readPipelineSplit(Args &a, const ModelConfig &m, ParallelismConfig &p)
{
    const bool embedding = a.flag("--account-for-embedding-in-pipeline-split");
    const bool loss = a.flag("--account-for-loss-in-pipeline-split");
    const std::int64_t split = m.num_layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
    readLayout(a, m, p);
    if (const auto perStage = a.integer("--num-layers-per-virtual-pipeline-stage", 1, 100000)) {
        const std::int64_t perRank = split / p.pipeline_model_parallel_size;
        if (split % p.pipeline_model_parallel_size != 0 || perRank % *perStage != 0)
            a.error("--num-layers-per-virtual-pipeline-stage",
                    "does not divide the " + std::to_string(perRank) + " layers of a pipeline rank");
        else
            p.virtual_pipeline_model_parallel_size = perRank / *perStage;
    }
    if (const auto v = a.integer("--num-virtual-stages-per-pipeline-rank", 1, 1024))
        p.virtual_pipeline_model_parallel_size = *v;
    const std::int64_t stages = p.pipeline_model_parallel_size * p.virtual_pipeline_model_parallel_size;
    const auto first = a.integer("--decoder-first-pipeline-num-layers", 0, 100000);
    const auto last = a.integer("--decoder-last-pipeline-num-layers", 0, 100000);
    if (!p.pipeline_layout.empty() || stages < 1)
        return;
    if (first || last) {
        const std::int64_t given = (first ? 1 : 0) + (last ? 1 : 0);
        const std::int64_t rest = m.num_layers - first.value_or(0) - last.value_or(0);
        const std::int64_t middle = stages - given;
        if (rest < 0 || (middle == 0 ? rest != 0 : rest % middle != 0)) {
            a.error(first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers",
                    "leaves " + std::to_string(rest) + " layers, which do not divide over the other "
                        + std::to_string(middle) + " stages");
            return;
        }
        p.pipeline_layout.assign(static_cast<std::size_t>(stages), middle ? rest / middle : 0);
        if (first)
            p.pipeline_layout.front() = *first;
        if (last)
            p.pipeline_layout.back() = *last;
    } else if (embedding || loss) {
        if (split % stages != 0) {
            a.error(embedding ? "--account-for-embedding-in-pipeline-split" : "--account-for-loss-in-pipeline-split",
                    std::to_string(m.num_layers)
                        + " layers with the embedding or loss counted as one do not divide over "
                        + std::to_string(stages) + " pipeline stages");
            return;
        }
        p.pipeline_layout.assign(static_cast<std::size_t>(stages), split / stages);
        p.pipeline_layout.front() -= embedding ? 1 : 0;
        p.pipeline_layout.back() -= loss ? 1 : 0;
    }
    // An even layout is the default split: left implicit.
    if (!p.pipeline_layout.empty()
        && std::all_of(p.pipeline_layout.begin(), p.pipeline_layout.end(),
                       [&](std::int64_t n) { return n * stages == m.num_layers; }))
        p.pipeline_layout.clear();
}

void readParallelism(Args &a, Config &c)
{
    ParallelismConfig &p = c.parallelism;
    const auto degree = [&](const char *name, const char *field, std::int64_t fallback) {
        a.source(field, name);
        return a.integer(name, 1, kMaxDegree).value_or(fallback);
    };
    p.tensor_model_parallel_size = degree("--tensor-model-parallel-size", "parallelism.tensor_model_parallel_size", 1);
    p.pipeline_model_parallel_size
        = degree("--pipeline-model-parallel-size", "parallelism.pipeline_model_parallel_size", 1);
    p.context_parallel_size = degree("--context-parallel-size", "parallelism.context_parallel_size", 1);
    p.expert_model_parallel_size = degree("--expert-model-parallel-size", "parallelism.expert_model_parallel_size", 1);
    p.expert_tensor_parallel_size
        = degree("--expert-tensor-parallel-size", "parallelism.expert_tensor_parallel_size", 0);
    if (p.expert_tensor_parallel_size == p.tensor_model_parallel_size)
        p.expert_tensor_parallel_size = 0;
    p.sequence_parallel = a.flag("--sequence-parallel");
    if (p.sequence_parallel && p.tensor_model_parallel_size == 1) {
        p.sequence_parallel
            = false; // validate_args: "Disabling sequence parallelism because tensor model parallelism is disabled"
        a.note("--sequence-parallel is turned off without tensor parallelism, as validate_args does");
    }
    const bool distributed = a.flag("--use-distributed-optimizer");
    p.zero_stage = distributed ? 1 : 0;
    a.source("parallelism.zero_stage", "--use-distributed-optimizer");
    const bool megatronFsdp = a.flag("--use-megatron-fsdp"), torchFsdp = a.flag("--use-torch-fsdp2");
    if (megatronFsdp) {
        const std::string strategy
            = a.choice("--data-parallel-sharding-strategy", {"no_shard", "optim", "optim_grads", "optim_grads_params"})
                  .value_or("optim_grads_params");
        p.zero_stage = strategy == "no_shard" ? 0 : strategy == "optim" ? 1 : strategy == "optim_grads" ? 2 : 3;
        a.source("parallelism.zero_stage", "--data-parallel-sharding-strategy");
    } else if (torchFsdp) {
        p.zero_stage = 3;
        a.source("parallelism.zero_stage", "--use-torch-fsdp2");
    } else {
        a.unusedBecause("--data-parallel-sharding-strategy", "has effect only with --use-megatron-fsdp");
    }
    if (c.training.optimizer == Optimizer::Muon && distributed)
        c.training.muon_newton_schulz = MuonNewtonSchulz::LayerWise; // LayerWiseDistributedOptimizer
    readPipelineSplit(a, c.model, p);
    a.source("parallelism.pipeline_layout", "--pipeline-model-parallel-layout");
    a.source("parallelism.virtual_pipeline_model_parallel_size", "--num-virtual-stages-per-pipeline-rank");
}

// d = world / (t · p · c), as validate_args derives data_parallel_size; the
// global batch defaults to micro-batch · d.
void readWorld(Args &a, Config &c, const WorldSize &world, const LaunchOptions &options)
{
    ParallelismConfig &p = c.parallelism;
    requiredInteger(a, "--micro-batch-size", 1, 1 << 20, c.training.micro_batch_size, "training.micro_batch_size");
    requiredInteger(a, "--seq-length", 1, kMaxDim, c.training.seq_length, "training.seq_length");
    if (a.has("--global-batch-size"))
        c.training.global_batch_size = a.integer("--global-batch-size", 1, std::int64_t(1) << 30).value_or(0);
    std::optional<std::int64_t> gpus = world.gpus;
    std::string source = world.source;
    if (options.gpus) {
        if (gpus && *gpus != *options.gpus)
            a.note("--gpus " + std::to_string(*options.gpus) + " replaces the world size of the file (" + source + " = "
                   + std::to_string(*gpus) + ")");
        gpus = options.gpus;
        source = "--gpus";
    }
    if (!gpus && options.defaultGpus) {
        gpus = options.defaultGpus;
        source = "the current plan";
        a.note("the world size is the current plan's " + std::to_string(*gpus)
               + " GPUs: the file does not say how many GPUs run it");
    }
    if (!gpus) {
        a.error("world size",
                "the file does not say how many GPUs run it"
                    + (source.empty() ? std::string(" (no torchrun --nproc_per_node/--nnodes, WORLD_SIZE or "
                                                    "GPUS_PER_NODE × NNODES)")
                                      : ": " + source),
                "give --gpus N");
        return;
    }
    const std::int64_t model = p.tensor_model_parallel_size * p.pipeline_model_parallel_size * p.context_parallel_size;
    if (*gpus % model != 0) {
        a.error("world size",
                std::to_string(*gpus) + " GPUs (" + source + ") do not divide by --tensor-model-parallel-size "
                    + std::to_string(p.tensor_model_parallel_size) + " × --pipeline-model-parallel-size "
                    + std::to_string(p.pipeline_model_parallel_size) + " × --context-parallel-size "
                    + std::to_string(p.context_parallel_size) + " = " + std::to_string(model),
                "give --gpus N, a multiple of " + std::to_string(model));
        return;
    }
    p.data_parallel_size = *gpus / model;
    a.note("the data-parallel size is " + std::to_string(p.data_parallel_size) + ": " + std::to_string(*gpus)
           + " GPUs (" + source + ") / (t · p · c = " + std::to_string(model) + ")");
    a.source("training.global_batch_size", "--global-batch-size");
    if (c.training.global_batch_size == 0) {
        c.training.global_batch_size = c.training.micro_batch_size * p.data_parallel_size;
        a.note("--global-batch-size is not given: Megatron-LM uses micro-batch × d = "
               + std::to_string(c.training.global_batch_size));
    }
}

// The launch command: the one that runs a Megatron-LM entry point, or, in an
// argument list, every command made of --arguments.
struct Launch
{
    std::vector<std::pair<ShellWord, int>> arguments;
    std::string entry;
    WorldSize world;
};

std::optional<Launch> findLaunch(const ShellScript &script, LaunchImport &r)
{
    Launch launch;
    for (const ShellCommand &cmd : script.commands) {
        for (std::size_t i = 0; i < cmd.words.size(); ++i) {
            const std::string name = basename(cmd.words[i].text);
            if (name.size() < 3 || name.substr(name.size() - 3) != ".py")
                continue;
            if (!kEntryPoints.count(name)) {
                r.problems.push_back({"line " + std::to_string(cmd.line),
                                      name + " is not a Megatron-LM entry point MemLedger reads",
                                      "pretrain_gpt.py, pretrain_mamba.py or pretrain_hybrid.py"});
                return std::nullopt;
            }
            if (!launch.entry.empty()) {
                r.problems.push_back({"line " + std::to_string(cmd.line),
                                      "a second launch; only the first is read",
                                      {},
                                      Problem::Severity::Warning});
                break;
            }
            launch.entry = name;
            for (std::size_t k = i + 1; k < cmd.words.size(); ++k)
                launch.arguments.push_back({cmd.words[k], cmd.line});
            launch.world = launcherWorld(cmd, i, r);
        }
    }
    if (launch.entry.empty()) {
        for (const ShellCommand &cmd : script.commands)
            if (isOptionWord(cmd.words[0].text))
                for (const ShellWord &w : cmd.words)
                    launch.arguments.push_back({w, cmd.line});
        if (launch.arguments.empty()) {
            r.problems.push_back({"launch",
                                  "no Megatron-LM launch found: no command runs pretrain_gpt.py, and the file is "
                                  "not a list of --arguments"});
            return std::nullopt;
        }
        launch.entry = "pretrain_gpt.py";
    }
    if (!launch.world.gpus)
        if (const WorldSize w = scriptWorld(script); w.gpus)
            launch.world = w;
    return launch;
}

} // namespace

LaunchImport importMegatronLaunch(std::string_view text, const LaunchOptions &options)
{
    LaunchImport r;
    const ShellScript script = readShellScript(text);
    r.problems = script.problems;
    for (const ShellAnnotation &note : script.annotations)
        r.assignments.push_back({annotationAssignment(note.text), "line " + std::to_string(note.line)});
    const std::optional<Launch> launch = findLaunch(script, r);
    if (!launch)
        return r;
    Args a(r);
    collectArguments(launch->arguments, a, r);
    Config c;
    readShape(a, c.model);
    readPositions(a, c.model);
    readVocabulary(a, c.model);
    readMoe(a, c.model);
    readMla(a, c.model);
    readHybrid(a, launch->entry);
    readPrecision(a, c.training, c.strategy);
    readStrategy(a, c.strategy, c.model);
    readParallelism(a, c);
    readWorld(a, c, launch->world, options);
    a.reportUnused();
    if (hasErrors(r.problems))
        return r;
    c.name = "megatron-launch";
    c.description = "Imported from a Megatron-LM launch (" + launch->entry
                    + "). The device is not among Megatron-LM's arguments: " + c.hardware.name
                    + ", MemLedger's default, unless the file or --set names another.";
    r.notes.push_back("the device is not among Megatron-LM's arguments: " + c.hardware.name
                      + " unless a \"# memledger: hardware=...\" line or --set hardware=NAME names another");
    r.config = std::move(c);
    return r;
}

} // namespace memledger

namespace memledger {

namespace {

// One shell word: quoted when it holds characters the shell would read.
std::string shellWord(const std::string &s)
{
    if (!s.empty() && s.find_first_of(" \t|()[]*?$&;<>'\"\\{}#") == std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// The list expression of moe_freq_type for a pattern: runs as [v]*n joined by +.
std::string patternExpression(const std::vector<int> &pattern)
{
    std::string out;
    for (std::size_t i = 0; i < pattern.size();) {
        std::size_t run = 1;
        while (i + run < pattern.size() && pattern[i + run] == pattern[i])
            ++run;
        out += (out.empty() ? "" : "+") + std::string("[") + (pattern[i] ? "1" : "0") + "]*" + std::to_string(run);
        i += run;
    }
    return "(" + out + ")";
}

std::string number(double v)
{
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.')
        s.pop_back();
    return s;
}

void modelArguments(const ModelConfig &m, std::int64_t seq, std::vector<std::string> &out)
{
    const auto arg = [&](const std::string &name, const std::string &value) {
        out.push_back(value.empty() ? name : name + " " + shellWord(value));
    };
    arg("--num-layers", std::to_string(m.num_layers));
    arg("--hidden-size", std::to_string(m.hidden_size));
    arg("--num-attention-heads", std::to_string(m.num_attention_heads));
    if (!m.multi_latent_attention && m.queryGroups() != m.num_attention_heads) {
        arg("--group-query-attention", "");
        arg("--num-query-groups", std::to_string(m.queryGroups()));
    }
    if (m.kv_channels > 0)
        arg("--kv-channels", std::to_string(m.kv_channels));
    arg("--ffn-hidden-size", std::to_string(m.ffn()));
    arg("--max-position-embeddings", std::to_string(m.max_position_embeddings > 0 ? m.max_position_embeddings : seq));
    // Megatron-LM has no ALiBi (Megatron-DeepSpeed's choice, which the import
    // reads): "none", no position parameters either, and a "# memledger:" line.
    arg("--position-embedding-type", m.position_embedding_type == PositionEmbedding::Alibi
                                         ? std::string("none")
                                         : std::string(positionEmbeddingName(m.position_embedding_type)));
    arg("--normalization", std::string(normalizationName(m.normalization)));
    if (m.swiglu)
        arg("--swiglu", "");
    if (m.squared_relu)
        arg("--squared-relu", "");
    if (m.apply_layernorm_1p)
        arg("--apply-layernorm-1p", "");
    if (m.qk_layernorm)
        arg("--qk-layernorm", "");
    if (!m.add_bias_linear)
        arg("--disable-bias-linear", "");
    if (m.add_qkv_bias)
        arg("--add-qkv-bias", "");
    if (m.untie_embeddings_and_output_weights)
        arg("--untie-embeddings-and-output-weights", "");
    arg("--attention-dropout", number(m.attention_dropout));
    arg("--hidden-dropout", number(m.hidden_dropout));
    arg("--vocab-size", std::to_string(m.vocab_size));
    if (m.make_vocab_size_divisible_by != 128)
        arg("--make-vocab-size-divisible-by", std::to_string(m.make_vocab_size_divisible_by));
    if (m.mtp_num_layers > 0)
        arg("--mtp-num-layers", std::to_string(m.mtp_num_layers));
    if (m.isMoe()) {
        arg("--num-experts", std::to_string(m.num_experts));
        arg("--moe-router-topk", std::to_string(m.moe_router_topk));
        arg("--moe-ffn-hidden-size", std::to_string(m.moeFfn()));
        if (m.moe_shared_expert_intermediate_size > 0)
            arg("--moe-shared-expert-intermediate-size", std::to_string(m.moe_shared_expert_intermediate_size));
        if (m.moe_layer_pattern.empty() && m.first_k_dense_replace == 0) {
            arg("--moe-layer-freq", std::to_string(m.moe_layer_freq));
        } else {
            std::vector<int> pattern;
            for (std::int64_t l = 0; l < m.num_layers; ++l)
                pattern.push_back(m.isMoeLayer(l) ? 1 : 0);
            arg("--moe-layer-freq", patternExpression(pattern));
        }
    }
    if (m.multi_latent_attention) {
        arg("--multi-latent-attention", "");
        if (m.q_lora_rank > 0)
            arg("--q-lora-rank", std::to_string(m.q_lora_rank));
        arg("--kv-lora-rank", std::to_string(m.kv_lora_rank));
        arg("--qk-head-dim", std::to_string(m.qk_head_dim));
        arg("--qk-pos-emb-head-dim", std::to_string(m.qk_pos_emb_head_dim));
        arg("--v-head-dim", std::to_string(m.v_head_dim));
    }
}

void trainingArguments(const Config &c, std::vector<std::string> &out)
{
    const TrainingConfig &t = c.training;
    const auto arg = [&](const std::string &name, const std::string &value) {
        out.push_back(value.empty() ? name : name + " " + shellWord(value));
    };
    arg("--seq-length", std::to_string(t.seq_length));
    arg("--micro-batch-size", std::to_string(t.micro_batch_size));
    arg("--global-batch-size", std::to_string(c.globalBatch()));
    if (t.params_dtype == Dtype::BF16) {
        arg("--bf16", "");
        if (t.main_grads_dtype == Dtype::BF16)
            arg("--grad-reduce-in-bf16", "");
    } else if (t.params_dtype == Dtype::FP16) {
        arg("--fp16", "");
        if (t.main_grads_dtype == Dtype::FP32)
            arg("--accumulate-allreduce-grads-in-fp32", "");
    }
    arg("--optimizer", t.optimizer == Optimizer::SGD ? "sgd" : t.optimizer == Optimizer::Muon ? "muon" : "adam");
    const auto lowPrecision = [](const std::optional<Dtype> &d) {
        return d && (*d == Dtype::BF16 || *d == Dtype::FP16 || *d == Dtype::FP8);
    };
    const bool precisionAware = lowPrecision(t.exp_avg_dtype) || lowPrecision(t.exp_avg_sq_dtype)
                                || c.strategy.optimizer_offload == OffloadTarget::CPU;
    if (precisionAware)
        arg("--use-precision-aware-optimizer", "");
    if (lowPrecision(t.exp_avg_dtype))
        arg("--exp-avg-dtype", std::string(dtypeName(*t.exp_avg_dtype)));
    if (lowPrecision(t.exp_avg_sq_dtype))
        arg("--exp-avg-sq-dtype", std::string(dtypeName(*t.exp_avg_sq_dtype)));
    if (c.strategy.optimizer_offload == OffloadTarget::CPU)
        arg("--optimizer-cpu-offload", "");
    if (t.fp8_recipe != Fp8Recipe::None) {
        arg("--fp8-format", "hybrid");
        arg("--fp8-recipe", std::string(fp8RecipeName(t.fp8_recipe)));
        if (t.fp8_recipe == Fp8Recipe::Delayed)
            arg("--fp8-amax-history-len", std::to_string(t.fp8_amax_history_len));
        if (c.strategy.fp8_param_gather)
            arg("--fp8-param-gather", "");
    }
}

void parallelArguments(const Config &c, std::vector<std::string> &out)
{
    const ParallelismConfig &p = c.parallelism;
    const auto arg = [&](const std::string &name, const std::string &value) {
        out.push_back(value.empty() ? name : name + " " + shellWord(value));
    };
    arg("--tensor-model-parallel-size", std::to_string(p.tensor_model_parallel_size));
    arg("--pipeline-model-parallel-size", std::to_string(p.pipeline_model_parallel_size));
    if (p.context_parallel_size > 1)
        arg("--context-parallel-size", std::to_string(p.context_parallel_size));
    if (p.expert_model_parallel_size > 1)
        arg("--expert-model-parallel-size", std::to_string(p.expert_model_parallel_size));
    if (p.expert_tensor_parallel_size > 0)
        arg("--expert-tensor-parallel-size", std::to_string(p.expert_tensor_parallel_size));
    if (p.sequence_parallel)
        arg("--sequence-parallel", "");
    if (p.zero_stage >= 1)
        arg("--use-distributed-optimizer", "");
    if (p.zero_stage >= 2) {
        arg("--use-megatron-fsdp", "");
        arg("--data-parallel-sharding-strategy", p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    }
    // Megatron runs 1F1B and its interleaved form; other schedules are left to the comments.
    const PipelineSchedule schedule = p.schedule();
    if (schedule == PipelineSchedule::OneFOneB || schedule == PipelineSchedule::Interleaved) {
        if (!p.pipeline_layout.empty())
            arg("--pipeline-model-parallel-layout", layoutString(p.pipeline_layout));
        else if (p.virtual_pipeline_model_parallel_size > 1)
            arg("--num-virtual-stages-per-pipeline-rank", std::to_string(p.virtual_pipeline_model_parallel_size));
    }
}

void strategyArguments(const StrategyConfig &s, std::vector<std::string> &out)
{
    const auto arg = [&](const std::string &name, const std::string &value) {
        out.push_back(value.empty() ? name : name + " " + shellWord(value));
    };
    if (s.recompute_granularity == RecomputeGranularity::Selective) {
        arg("--recompute-granularity", "selective");
    } else if (s.recompute_granularity == RecomputeGranularity::Full) {
        arg("--recompute-granularity", "full");
        arg("--recompute-method", std::string(methodName(s.recompute_method)));
        arg("--recompute-num-layers", std::to_string(s.recompute_num_layers));
    }
    if (!s.flash_attention)
        arg("--attention-backend", "unfused");
    if (!s.gradient_accumulation_fusion)
        arg("--no-gradient-accumulation-fusion", "");
    if (s.overlap_grad_reduce)
        arg("--overlap-grad-reduce", "");
    if (s.overlap_param_gather)
        arg("--overlap-param-gather", "");
    if (!s.overlap_p2p_comm)
        arg("--no-overlap-p2p-communication", "");
    if (s.tp_comm_overlap)
        arg("--tp-comm-overlap", "");
    if (s.ddp_bucket_size != StrategyConfig{}.ddp_bucket_size)
        arg("--ddp-bucket-size", std::to_string(s.ddp_bucket_size));
    if (s.moe_expert_capacity_factor > 0)
        arg("--moe-expert-capacity-factor", number(s.moe_expert_capacity_factor));
    if (s.moe_token_dispatcher == MoeDispatcher::DeepEP) {
        arg("--moe-token-dispatcher-type", "flex");
        arg("--moe-flex-dispatcher-backend", "deepep");
    }
}

} // namespace

std::vector<std::string> megatronArgumentsOf(const Config &config)
{
    std::vector<std::string> out;
    modelArguments(config.model, config.training.seq_length, out);
    trainingArguments(config, out);
    parallelArguments(config, out);
    strategyArguments(config.strategy, out);
    return out;
}

} // namespace memledger
