// SPDX-License-Identifier: MIT
#include "core/formats/hfimport.h"

#include "core/formats/jsontext.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace memledger {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxDim = std::int64_t(1) << 24; // the preset format's bound on one size

enum class Family { Llama, Mistral, Mixtral, Qwen2, Qwen2Moe, Qwen3, DeepseekV3, Nemotron, Bloom };

struct Architecture
{
    std::string_view name; // the entry of "architectures"
    std::string_view modelType; // "model_type", used when "architectures" is missing
    Family family;
};

const Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama", Family::Llama},
    {"MistralForCausalLM", "mistral", Family::Mistral},
    {"MixtralForCausalLM", "mixtral", Family::Mixtral},
    {"Qwen2ForCausalLM", "qwen2", Family::Qwen2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", Family::Qwen2Moe},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::DeepseekV3},
    {"Qwen3ForCausalLM", "qwen3", Family::Qwen3},
    {"NemotronForCausalLM", "nemotron", Family::Nemotron},
    {"BloomForCausalLM", "bloom", Family::Bloom},
};

// Fields that do not change training memory in any supported architecture.
// A field neither listed here nor read by the mapping below is reported as
// not understood, so this list is the importer's whole licence to ignore.
const std::set<std::string, std::less<>> kNoMemoryEffect = {
    // identity and bookkeeping
    "_name_or_path",
    "architectures",
    "model_type",
    "transformers_version",
    "auto_map",
    "tokenizer_class",
    // token ids
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "unk_token_id",
    // initialisation and inference-time switches; pretraining_tp only slices the same matmuls
    "initializer_range",
    "use_cache",
    "pretraining_tp",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
    // rotary frequencies and their scaling are computed on the fly: no parameters, nothing saved
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "rope_interleave",
    "use_mrope",
    // the norms' epsilon
    "rms_norm_eps",
    "norm_eps",
    "layer_norm_epsilon",
    // Nemotron: rotary on part of each head, computed on the fly like the rest of RoPE
    "partial_rotary_factor",
    // BLOOM's kernel switches: the same tensors (its fused softmax keeps its output either way)
    "bias_dropout_fusion",
    "masked_softmax_fusion",
    "slow_but_exact",
    "attention_softmax_in_fp32",
    "skip_bias_add", // where the bias is added, not whether it exists
    "skip_bias_add_qkv",
    "offset_alibi", // an inference-time offset of the ALiBi bias
    // router losses, noise and scoring rules: the same tensors, other numbers in them
    "output_router_logits",
    "router_aux_loss_coef",
    "router_jitter_noise",
    "norm_topk_prob",
    "aux_loss_alpha",
    "seq_aux",
    "n_group",
    "topk_group",
    "topk_method",
    "scoring_func",
    "routed_scaling_factor",
    // DeepSeek's expert-parallel hint for inference, not a model shape
    "ep_size",
    // the checkpoint's storage dtype, read for a note
    "torch_dtype",
    "dtype",
};

// Reads fields of one config, remembering which were read, and collects
// the problems with their "hf." paths.
class Reader
{
public:
    Reader(const json &hf, ImportResult &result)
        : m_hf(hf)
        , m_result(result)
    { }

    // The value of `key`, or nullptr when it is absent or null (transformers
    // treats a null as "not set").
    const json *get(const char *key)
    {
        m_read.insert(key);
        const auto it = m_hf.find(key);
        return it == m_hf.end() || it->is_null() ? nullptr : &*it;
    }

    bool present(const char *key) const { return m_hf.contains(key); }

    // An integer in [lo, hi]. A missing required field is an error: its
    // transformers default is some particular model's size, not a guess to make.
    std::optional<std::int64_t> integer(const char *key, bool required, std::int64_t lo, std::int64_t hi)
    {
        const json *j = get(key);
        if (!j) {
            if (required)
                error(key, "missing", "the architecture needs it to size the model");
            return std::nullopt;
        }
        if (!j->is_number_integer()) {
            error(key, "expected an integer, got " + describeJson(*j));
            return std::nullopt;
        }
        const std::int64_t v
            = j->is_number_unsigned() && j->get<std::uint64_t>() > std::uint64_t(hi) ? hi + 1 : j->get<std::int64_t>();
        if (v < lo || v > hi) {
            error(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + j->dump());
            return std::nullopt;
        }
        return v;
    }

    std::optional<bool> flag(const char *key)
    {
        const json *j = get(key);
        if (!j)
            return std::nullopt;
        if (!j->is_boolean()) {
            error(key, "expected true or false, got " + describeJson(*j));
            return std::nullopt;
        }
        return j->get<bool>();
    }

    std::optional<double> probability(const char *key)
    {
        const json *j = get(key);
        if (!j)
            return std::nullopt;
        if (!j->is_number() || j->get<double>() < 0.0 || j->get<double>() > 0.999) {
            error(key, "expected a probability from 0 to 0.999, got " + describeJson(*j));
            return std::nullopt;
        }
        return j->get<double>();
    }

    std::optional<std::string> text(const char *key)
    {
        const json *j = get(key);
        if (!j)
            return std::nullopt;
        if (!j->is_string()) {
            error(key, "expected a string, got " + describeJson(*j));
            return std::nullopt;
        }
        return j->get<std::string>();
    }

    void error(const std::string &field, std::string message, std::string suggestion = {})
    {
        m_result.problems.push_back(
            {"hf." + field, std::move(message), std::move(suggestion), Problem::Severity::Error});
    }

    void warning(const std::string &field, std::string message, std::string suggestion = {})
    {
        m_result.problems.push_back(
            {"hf." + field, std::move(message), std::move(suggestion), Problem::Severity::Warning});
    }

    void note(std::string text) { m_result.notes.push_back(std::move(text)); }

    // Every field neither read nor known to leave memory unchanged.
    void reportUnread()
    {
        for (auto it = m_hf.begin(); it != m_hf.end(); ++it) {
            if (m_read.count(it.key()) || kNoMemoryEffect.count(it.key()))
                continue;
            if (it->is_null() || (it->is_boolean() && !it->get<bool>()))
                continue; // unset or switched off: nothing to account for
            warning(it.key(), "not understood; check the import",
                    "MemLedger does not know whether this field changes memory; compare the model with its code");
        }
    }

private:
    const json &m_hf;
    ImportResult &m_result;
    std::set<std::string, std::less<>> m_read;
};

const Architecture *findArchitecture(Reader &r, const json &hf)
{
    std::string name;
    if (const json *list = r.get("architectures")) {
        if (!list->is_array() || list->empty() || !(*list)[0].is_string()) {
            r.error("architectures",
                    list->is_array() && list->empty()
                        ? std::string("is an empty list")
                        : "expected a list of class names, got " + describeJson(list->is_array() ? (*list)[0] : *list),
                    "for example [\"LlamaForCausalLM\"]");
            return nullptr;
        }
        name = (*list)[0].get<std::string>();
        if (list->size() > 1)
            r.warning("architectures",
                      "lists " + std::to_string(list->size()) + " classes; importing the first, " + name);
    }
    const std::optional<std::string> modelType = hf.contains("model_type") ? r.text("model_type") : std::nullopt;
    std::string supported;
    for (const Architecture &a : kArchitectures)
        supported += (supported.empty() ? "" : ", ") + std::string(a.name);
    for (const Architecture &a : kArchitectures) {
        if (name.empty() ? (modelType && *modelType == a.modelType) : name == a.name)
            return &a;
    }
    if (name.empty())
        r.error("architectures",
                modelType ? "missing, and model_type \"" + *modelType + "\" is not a supported one" : "missing",
                "supported: " + supported);
    else
        r.error("architectures", "\"" + name + "\" is not supported", "supported: " + supported);
    return nullptr;
}

// Shapes every supported architecture shares: a pre-norm decoder with
// RMSNorm, rotary positions, a gated MLP and no dropout on the residual stream.
void readDecoder(Reader &r, Family family, ModelConfig &m)
{
    m.num_layers = r.integer("num_hidden_layers", true, 1, 100000).value_or(m.num_layers);
    m.hidden_size = r.integer("hidden_size", true, 1, kMaxDim).value_or(m.hidden_size);
    m.num_attention_heads = r.integer("num_attention_heads", true, 1, 65536).value_or(m.num_attention_heads);
    // transformers: no num_key_value_heads means one per attention head.
    m.num_query_groups = r.integer("num_key_value_heads", false, 1, 65536).value_or(m.num_attention_heads);
    m.ffn_hidden_size = r.integer("intermediate_size", true, 1, kMaxDim).value_or(0);
    m.vocab_size = r.integer("vocab_size", true, 1, kMaxDim).value_or(m.vocab_size);
    m.max_position_embeddings = r.integer("max_position_embeddings", false, 1, kMaxDim).value_or(0);
    m.untie_embeddings_and_output_weights = !r.flag("tie_word_embeddings").value_or(false);
    m.attention_dropout = r.probability("attention_dropout").value_or(0.0);
    m.hidden_dropout = 0.0;
    m.normalization = Normalization::RMSNorm;
    m.position_embedding_type = PositionEmbedding::Rope;
    m.add_bias_linear = false;
    m.add_qkv_bias = false;

    if (family != Family::DeepseekV3) {
        const std::optional<std::int64_t> headDim = r.integer("head_dim", false, 1, 65536);
        const bool even = m.num_attention_heads > 0 && m.hidden_size % m.num_attention_heads == 0;
        if (headDim && (!even || *headDim != m.hidden_size / m.num_attention_heads))
            m.kv_channels = *headDim;
    } else {
        r.get("head_dim"); // recent transformers write qk_rope_head_dim here; MLA's dimensions below size the heads
    }

    // The MLP is gate, up and down projections whatever the activation, so
    // its shapes are SwiGLU's; only the name of the nonlinearity differs.
    // Nemotron's is ungated (readNemotron).
    m.swiglu = family != Family::Nemotron;
    if (family == Family::Nemotron) {
        // read by readNemotron
    } else if (const std::optional<std::string> act = r.text("hidden_act"); act && *act != "silu" && *act != "swish")
        r.warning("hidden_act", "\"" + *act + "\": the gated MLP is counted with SwiGLU's shapes (gate, up, down)",
                  "the saved tensors are the same; only the nonlinearity differs");

    if (const json *types = r.get("layer_types")) {
        std::set<std::string> other;
        if (types->is_array())
            for (const json &t : *types)
                if (!t.is_string() || t.get<std::string>() != "full_attention")
                    other.insert(t.is_string() ? t.get<std::string>() : describeJson(t));
        if (!types->is_array())
            r.error("layer_types", "expected a list, got " + describeJson(*types));
        else if (!other.empty())
            r.warning("layer_types", "has layers other than full_attention (" + *other.begin()
                                         + (other.size() > 1 ? ", ..." : "")
                                         + "); every layer is counted as full attention");
    }

    if (const json *q = r.get("quantization_config")) {
        const std::string method = q->is_object() && q->contains("quant_method") && (*q)["quant_method"].is_string()
                                       ? (*q)["quant_method"].get<std::string>()
                                       : std::string("unknown");
        r.warning("quantization_config",
                  "the checkpoint is stored quantised (" + method
                      + "); the ledger counts weights in training.params_dtype",
                  "set training.params_dtype for the precision you train in");
    }
    for (const char *key : {"torch_dtype", "dtype"})
        if (const std::optional<std::string> dtype = r.text(key))
            r.note("The checkpoint is stored in " + *dtype + " (" + key
                   + "); that is how the published weights are saved, not a training choice: the ledger uses "
                     "training.params_dtype.");
}

// Sliding-window attention masks the same s x s attention a full one
// computes, so training counts it as full attention; a served sequence
// caches only the window (model.sliding_window).
void readSlidingWindow(Reader &r, bool switchable, ModelConfig &m)
{
    const std::optional<std::int64_t> window
        = r.integer("sliding_window", false, 0, std::numeric_limits<std::int64_t>::max() - 1);
    std::optional<bool> on;
    if (switchable) {
        on = r.flag("use_sliding_window");
        r.get("max_window_layers"); // which layers use the window, when it is on
    }
    // A window no shorter than the longest sequence never applies (Qwen2.5's 131072).
    const bool applies
        = window && *window > 0 && (m.max_position_embeddings == 0 || *window < m.max_position_embeddings);
    if (applies && on.value_or(true)) {
        if (*window <= (std::int64_t(1) << 24)) // the preset's range; a longer window never applies
            m.sliding_window = *window;
        r.warning("sliding_window",
                  "sliding-window attention (" + std::to_string(*window)
                      + " tokens) is counted as full causal attention in training",
                  "training saves the same tensors either way; the window shortens only what a kernel computes and the "
                  "inference KV cache (model.sliding_window)");
    }
}

void readLlamaBiases(Reader &r, ModelConfig &m)
{
    const bool attention = r.flag("attention_bias").value_or(false);
    const bool mlp = r.flag("mlp_bias").value_or(false);
    if (attention && mlp) {
        m.add_bias_linear = true;
    } else if (attention) {
        m.add_qkv_bias = true;
        r.warning("attention_bias", "biases on q, k, v and o but not the MLP: counted as QKV biases (add_qkv_bias), "
                                    "the output projection's bias (h per layer) is left out");
    } else if (mlp) {
        r.warning("mlp_bias", "biases on the MLP but not attention: not counted (MemLedger has biases on every linear "
                              "layer or on QKV only)");
    }
}

// transformers' NemotronForCausalLM (Nemotron-4, Minitron): an ungated MLP
// (up_proj, act, down_proj) with relu² ("relu2", Megatron's --squared-relu),
// NemotronLayerNorm1P (a LayerNorm with bias whose weight is stored centred
// on zero: --apply-layernorm-1p).
void readNemotron(Reader &r, ModelConfig &m)
{
    m.normalization = Normalization::LayerNorm;
    m.apply_layernorm_1p = true;
    const std::string act = r.text("hidden_act").value_or("relu2");
    m.squared_relu = act == "relu2";
    if (!m.squared_relu)
        r.warning("hidden_act",
                  "\"" + act + "\": the ungated MLP is counted as GeLU's (the same shapes and saved tensors)");
    readLlamaBiases(r, m);
}

// transformers' Qwen3ForCausalLM: Qwen2's decoder without QKV biases and with
// q_norm and k_norm, RMSNorms over each head's head_dim before RoPE
// (Qwen3Attention; Megatron's --qk-layernorm).
void readQwen3(Reader &r, ModelConfig &m)
{
    m.qk_layernorm = true;
    readLlamaBiases(r, m); // attention_bias: q, k, v and o together, as Llama's
    readSlidingWindow(r, true, m);
}

// transformers' BloomForCausalLM (BigScience's BLOOM): its own field names
// (n_layer, n_head; n_embed in early configs), a 4h GeLU MLP with biases,
// LayerNorms, ALiBi instead of position embeddings, a LayerNorm after the
// word embeddings (word_embeddings_layernorm) and the output layer tied to
// them (PretrainedConfig's tie_word_embeddings defaults to true).
void readBloom(Reader &r, ModelConfig &m)
{
    // BloomConfig's attribute_map reads num_hidden_layers and num_attention_heads
    // as n_layer and n_head, and its __init__ takes n_embed for hidden_size.
    const auto either = [&r](const char *key, const char *alias, std::int64_t hi, std::int64_t fallback) {
        return r.integer(r.present(key) || !r.present(alias) ? key : alias, true, 1, hi).value_or(fallback);
    };
    m.num_layers = either("n_layer", "num_hidden_layers", 100000, m.num_layers);
    m.hidden_size = either("hidden_size", "n_embed", kMaxDim, m.hidden_size);
    m.num_attention_heads = either("n_head", "num_attention_heads", 65536, m.num_attention_heads);
    m.vocab_size = r.integer("vocab_size", true, 1, kMaxDim).value_or(m.vocab_size);
    // BloomMLP is 4h wide whatever n_inner says (transformers never reads it).
    r.get("n_inner");
    m.ffn_hidden_size = 0;
    m.untie_embeddings_and_output_weights = !r.flag("tie_word_embeddings").value_or(true);
    m.attention_dropout = r.probability("attention_dropout").value_or(0.0);
    m.hidden_dropout = r.probability("hidden_dropout").value_or(0.0);
    m.normalization = Normalization::LayerNorm;
    m.position_embedding_type = PositionEmbedding::Alibi;
    m.embed_layernorm = true;
    m.add_bias_linear = true;
    m.swiglu = false;
    if (r.flag("apply_residual_connection_post_layernorm").value_or(false))
        r.warning("apply_residual_connection_post_layernorm",
                  "the residual taken after the norm keeps the same tensors; counted as BLOOM's pre-norm layer");
    r.get("pretraining_tp"); // slices the same matmuls
    for (const char *key : {"torch_dtype", "dtype"})
        if (const std::optional<std::string> dtype = r.text(key))
            r.note("The checkpoint is stored in " + *dtype + " (" + key + "); the ledger uses training.params_dtype.");
}

// Which layers are MoE, as an integer frequency when Megatron's rule
// (dense for the first k, then every freq-th) says the same, else as a list.
void setMoeLayers(ModelConfig &m, const std::vector<int> &pattern, std::int64_t firstDense, std::int64_t freq)
{
    bool rule = true;
    for (std::size_t l = 0; l < pattern.size() && rule; ++l) {
        const std::int64_t layer = static_cast<std::int64_t>(l);
        rule = (pattern[l] != 0) == (layer >= firstDense && (layer - firstDense) % freq == 0);
    }
    if (rule) {
        m.first_k_dense_replace = firstDense;
        m.moe_layer_freq = freq;
        m.moe_layer_pattern.clear();
    } else {
        m.first_k_dense_replace = 0;
        m.moe_layer_freq = 1;
        m.moe_layer_pattern = pattern;
    }
}

void readMixtral(Reader &r, ModelConfig &m)
{
    m.num_experts = r.integer("num_local_experts", true, 1, 65536).value_or(0);
    m.moe_router_topk = r.integer("num_experts_per_tok", true, 1, 1024).value_or(m.moe_router_topk);
    m.moe_ffn_hidden_size = m.ffn_hidden_size; // every expert is a full-width MLP
    m.moe_layer_freq = 1;
}

void readQwen2Moe(Reader &r, ModelConfig &m)
{
    m.add_qkv_bias = true;
    m.num_experts = r.integer("num_experts", true, 0, 65536).value_or(0);
    m.moe_router_topk = r.integer("num_experts_per_tok", true, 1, 1024).value_or(m.moe_router_topk);
    m.moe_ffn_hidden_size = r.integer("moe_intermediate_size", true, 1, kMaxDim).value_or(0);
    m.moe_shared_expert_intermediate_size = r.integer("shared_expert_intermediate_size", true, 0, kMaxDim).value_or(0);
    const std::int64_t step = r.integer("decoder_sparse_step", false, 1, 100000).value_or(1);
    // transformers: layer i is sparse unless listed in mlp_only_layers, and only if (i + 1) % step == 0.
    std::vector<int> pattern(static_cast<std::size_t>(m.num_layers), 0);
    for (std::int64_t l = 0; l < m.num_layers; ++l)
        pattern[static_cast<std::size_t>(l)] = (l + 1) % step == 0 ? 1 : 0;
    if (const json *only = r.get("mlp_only_layers")) {
        if (!only->is_array()) {
            r.error("mlp_only_layers", "expected a list of layer indices, got " + describeJson(*only));
        } else {
            for (std::size_t i = 0; i < only->size(); ++i) {
                const json &x = (*only)[i];
                const std::string field = "mlp_only_layers[" + std::to_string(i) + "]";
                if (!x.is_number_integer())
                    r.error(field, "expected a layer index, got " + describeJson(x));
                else if (x.get<std::int64_t>() < 0 || x.get<std::int64_t>() >= m.num_layers)
                    r.warning(field, "layer " + x.dump() + " does not exist (" + std::to_string(m.num_layers)
                                         + " layers); ignored");
                else
                    pattern[static_cast<std::size_t>(x.get<std::int64_t>())] = 0;
            }
        }
    }
    setMoeLayers(m, pattern, 0, 1);
    if (m.moe_shared_expert_intermediate_size > 0)
        r.note("The shared expert's sigmoid gate (hidden_size parameters per MoE layer) is not counted.");
}

void readDeepseekV3(Reader &r, ModelConfig &m)
{
    m.multi_latent_attention = true;
    // null means no query compression (DeepSeek-V2-Lite); absent is an error like any size.
    if (r.present("q_lora_rank"))
        m.q_lora_rank = r.integer("q_lora_rank", false, 0, kMaxDim).value_or(0);
    else
        r.integer("q_lora_rank", true, 0, kMaxDim);
    m.kv_lora_rank = r.integer("kv_lora_rank", true, 1, kMaxDim).value_or(m.kv_lora_rank);
    m.qk_head_dim = r.integer("qk_nope_head_dim", true, 1, 65536).value_or(m.qk_head_dim);
    m.qk_pos_emb_head_dim = r.integer("qk_rope_head_dim", true, 0, 65536).value_or(m.qk_pos_emb_head_dim);
    m.v_head_dim = r.integer("v_head_dim", true, 1, 65536).value_or(m.v_head_dim);
    m.kv_channels = m.v_head_dim; // unused under MLA; Megatron's DeepSeek recipes set it to the value head size

    if (const bool bias = r.flag("attention_bias").value_or(false); bias)
        r.warning("attention_bias", "biases of the MLA projections are not counted");

    m.num_experts = r.integer("n_routed_experts", false, 1, 65536).value_or(0);
    if (m.num_experts > 0) {
        m.moe_router_topk = r.integer("num_experts_per_tok", true, 1, 1024).value_or(m.moe_router_topk);
        m.moe_ffn_hidden_size = r.integer("moe_intermediate_size", true, 1, kMaxDim).value_or(0);
        const std::int64_t shared = r.integer("n_shared_experts", false, 0, 1024).value_or(0);
        // The shared experts run as one MLP of their summed width.
        m.moe_shared_expert_intermediate_size = shared * m.moe_ffn_hidden_size;
        const std::int64_t firstDense = r.integer("first_k_dense_replace", false, 0, 100000).value_or(0);
        const std::int64_t freq = r.integer("moe_layer_freq", false, 1, 100000).value_or(1);
        // transformers: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
        std::vector<int> pattern(static_cast<std::size_t>(m.num_layers), 0);
        for (std::int64_t l = 0; l < m.num_layers; ++l)
            pattern[static_cast<std::size_t>(l)] = l >= firstDense && l % freq == 0 ? 1 : 0;
        setMoeLayers(m, pattern, firstDense, freq);
    } else {
        // A dense model: the expert fields describe nothing.
        for (const char *key : {"num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                                "first_k_dense_replace", "moe_layer_freq"})
            r.get(key);
    }

    // DeepSeek-V3's multi-token prediction modules (transformers does not build them; training does).
    m.mtp_num_layers = r.integer("num_nextn_predict_layers", false, 0, 64).value_or(0);
}

// "meta-llama/Llama-2-7b-hf" -> "Llama-2-7b-hf"; a local path keeps its last folder.
std::string nameFrom(Reader &r, const Architecture &arch)
{
    std::optional<std::string> path = r.text("_name_or_path");
    while (path && !path->empty() && path->back() == '/')
        path->pop_back();
    if (!path || path->empty())
        return std::string(arch.name);
    const auto slash = path->find_last_of('/');
    return slash == std::string::npos ? *path : path->substr(slash + 1);
}

std::string descriptionOf(const std::string &name, const Architecture &arch, const ImportResult &result)
{
    std::string d = "Imported from the Hugging Face config of " + name + " (" + std::string(arch.name)
                    + "). Only the model section comes from it; training, parallelism, strategy and hardware are "
                      "MemLedger's defaults.";
    for (const Problem &p : result.problems)
        d += " Import warning: " + p.path + ": " + p.message + ".";
    for (const std::string &n : result.notes)
        d += " " + n;
    return d;
}

} // namespace

const std::vector<std::string_view> &supportedHfArchitectures()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const Architecture &a : kArchitectures)
            v.push_back(a.name);
        return v;
    }();
    return names;
}

ImportResult importHfConfig(const json &hf)
{
    ImportResult result;
    if (!hf.is_object()) {
        result.problems.push_back({"hf", "a Hugging Face config is a JSON object, got " + describeJson(hf)});
        return result;
    }
    Reader r(hf, result);
    const Architecture *arch = findArchitecture(r, hf);
    if (!arch)
        return result;

    Config config;
    ModelConfig &m = config.model;
    if (arch->family != Family::Bloom)
        readDecoder(r, arch->family, m);
    switch (arch->family) {
    case Family::Llama:
        readLlamaBiases(r, m);
        break;
    case Family::Mistral:
        readSlidingWindow(r, false, m);
        break;
    case Family::Mixtral:
        readSlidingWindow(r, false, m);
        readMixtral(r, m);
        break;
    case Family::Qwen2:
        m.add_qkv_bias = true; // Qwen2Attention: q, k and v carry biases, o does not
        readSlidingWindow(r, true, m);
        break;
    case Family::Qwen2Moe:
        readSlidingWindow(r, true, m);
        readQwen2Moe(r, m);
        break;
    case Family::Qwen3:
        readQwen3(r, m);
        break;
    case Family::DeepseekV3:
        readDeepseekV3(r, m);
        break;
    case Family::Nemotron:
        readNemotron(r, m);
        break;
    case Family::Bloom:
        readBloom(r, m);
        break;
    }
    r.reportUnread();
    if (hasErrors(result.problems))
        return result;
    config.name = nameFrom(r, *arch);
    config.description = descriptionOf(config.name, *arch, result);
    result.config = std::move(config);
    return result;
}

ImportResult importHfConfigText(std::string_view text, std::string_view origin)
{
    ImportResult r;
    const std::optional<json> doc = parseJsonText(text, origin, r.problems);
    return doc ? importHfConfig(*doc) : r;
}

ImportResult importHfConfigFile(const std::string &path)
{
    ImportResult r;
    const std::optional<std::string> text = readTextFile(path, r.problems);
    return text ? importHfConfigText(*text, path) : r;
}

} // namespace memledger
