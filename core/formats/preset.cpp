// SPDX-License-Identifier: MIT
#include "core/formats/preset.h"

#include "core/config/framework.h"
#include "core/formats/builtins.h"
#include "core/formats/jsontext.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace memledger {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxDim = std::int64_t(1) << 24; // 16.7 M: any single size
constexpr std::int64_t kMaxDegree = std::int64_t(1) << 20; // parallel degrees
constexpr std::int64_t kMaxBytes = std::int64_t(1) << 56; // hardware sizes

std::string describe(const json &v)
{
    return describeJson(v);
}

// Reads one section. The same visit functions drive Reader and Writer, so
// the list of fields exists once.
class Reader
{
public:
    Reader(const json &obj, std::string section, Problems &problems)
        : m_obj(obj)
        , m_section(std::move(section))
        , m_problems(problems)
    { }

    void field(const char *key, std::int64_t &v, std::int64_t lo, std::int64_t hi)
    {
        const json *j = get(key);
        if (!j)
            return;
        std::int64_t x = 0;
        if (j->is_number_integer()) {
            x = j->get<std::int64_t>();
        } else if (j->is_number_float() && std::isfinite(j->get<double>())
                   && std::floor(j->get<double>()) == j->get<double>() && std::fabs(j->get<double>()) < 9.0e18) {
            x = static_cast<std::int64_t>(j->get<double>());
        } else {
            error(key, "expected an integer, got " + describe(*j));
            return;
        }
        if (x < lo || x > hi) {
            error(key,
                  "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(x),
                  x < lo && lo >= 1 ? "sizes and degrees are positive; use 1 for none" : "");
            return;
        }
        v = x;
    }

    // An integer that may be absent or null (the default then depends on other fields).
    void field(const char *key, std::optional<std::int64_t> &v, std::int64_t lo, std::int64_t hi)
    {
        if (!m_obj.contains(key) || m_obj[key].is_null()) {
            if (get(key))
                v.reset();
            return;
        }
        std::int64_t x = 0;
        const std::size_t before = m_problems.size();
        field(key, x, lo, hi);
        if (m_problems.size() == before)
            v = x;
    }

    // A list of integers in [lo, hi] (pipeline_layout).
    void field(const char *key, std::vector<std::int64_t> &v, std::int64_t lo, std::int64_t hi)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (!j->is_array()) {
            error(key, "expected a list of integers, got " + describe(*j));
            return;
        }
        std::vector<std::int64_t> out;
        for (const json &x : *j) {
            if (!x.is_number_integer() || x.get<std::int64_t>() < lo || x.get<std::int64_t>() > hi) {
                error(key, "expected integers from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got "
                               + describe(x));
                return;
            }
            out.push_back(x.get<std::int64_t>());
        }
        v = std::move(out);
    }

    void field(const char *key, bool &v)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (!j->is_boolean()) {
            error(key, "expected true or false, got " + describe(*j));
            return;
        }
        v = j->get<bool>();
    }

    // A boolean that may be absent or null (unset: the framework's default).
    void field(const char *key, std::optional<bool> &v)
    {
        if (!m_obj.contains(key) || m_obj[key].is_null()) {
            if (get(key))
                v.reset();
            return;
        }
        bool x = false;
        const std::size_t before = m_problems.size();
        field(key, x);
        if (m_problems.size() == before)
            v = x;
    }

    void field(const char *key, double &v, double lo, double hi)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (!j->is_number()) {
            error(key, "expected a number, got " + describe(*j));
            return;
        }
        const double x = j->get<double>();
        if (!std::isfinite(x) || x < lo || x > hi) {
            char buf[128];
            std::snprintf(buf, sizeof buf, "must be between %g and %g, got %g", lo, hi, x);
            error(key, buf);
            return;
        }
        v = x;
    }

    // A number that may be absent or null (unset).
    void field(const char *key, std::optional<double> &v, double lo, double hi)
    {
        if (!m_obj.contains(key) || m_obj[key].is_null()) {
            if (get(key))
                v.reset();
            return;
        }
        double x = 0;
        const std::size_t before = m_problems.size();
        field(key, x, lo, hi);
        if (m_problems.size() == before)
            v = x;
    }

    // A nested object, read field by field as a section of its own ("strategy.allocator").
    template<class T>
    void object(const char *key, T &v)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (!j->is_object()) {
            error(key, "expected an object, got " + describe(*j));
            return;
        }
        Reader nested(*j, m_section + "." + key, m_problems);
        visit(nested, v);
    }

    // An efficiency table: [[size, fraction], ...]. Its shape is checked here;
    // its values (ascending, in (0, 1], not falling) by validate().
    void field(const char *key, EfficiencyTable &v)
    {
        const json *j = get(key);
        if (!j)
            return;
        const char *expected = "expected a list of [size, fraction] pairs, e.g. [[1e9, 0.5], [1e12, 0.8]]";
        if (!j->is_array()) {
            error(key, std::string(expected) + ", got " + describe(*j));
            return;
        }
        EfficiencyTable out;
        for (std::size_t i = 0; i < j->size(); ++i) {
            const json &pair = (*j)[i];
            if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number()) {
                error(key, std::string(expected) + "; entry " + std::to_string(i) + " is " + describe(pair));
                return;
            }
            out.push_back({pair[0].get<double>(), pair[1].get<double>()});
        }
        v = std::move(out);
    }

    // tensor_policies: {"tensor name or glob": "fate", ...}. Whether a name is
    // one the model saves is the validator's question (it knows the model).
    void field(const char *key, std::vector<TensorPolicy> &v, std::initializer_list<TensorFate> fates)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (!j->is_object()) {
            error(key, "expected an object from saved-tensor names or globs to fates, e.g. "
                       "{\"mlp.fc1.output\": \"recompute\"}, got "
                           + describe(*j));
            return;
        }
        std::string options;
        for (TensorFate f : fates)
            options += (options.empty() ? "\"" : ", \"") + std::string(tensorFateName(f)) + "\"";
        std::vector<TensorPolicy> out;
        bool ok = true;
        for (auto it = j->begin(); it != j->end(); ++it) {
            const std::string sub = std::string(key) + "." + it.key();
            bool found = false;
            if (it->is_string())
                for (TensorFate f : fates)
                    if (tensorFateName(f) == it->get<std::string>()) {
                        out.push_back({it.key(), f});
                        found = true;
                    }
            if (it.key().empty()) {
                error(key, "a tensor name or glob is empty");
                ok = false;
            } else if (!found) {
                error(sub.c_str(), "expected one of " + options + ", got " + describe(*it));
                ok = false;
            }
        }
        if (ok)
            v = std::move(out);
    }

    void field(const char *key, std::string &v)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (!j->is_string()) {
            error(key, "expected a string, got " + describe(*j));
            return;
        }
        v = j->get<std::string>();
    }

    template<class E>
    void choice(const char *key, E &v, std::initializer_list<E> all, std::string_view (*name)(E))
    {
        const json *j = get(key);
        if (!j)
            return;
        std::string options;
        for (E e : all)
            options += (options.empty() ? "\"" : ", \"") + std::string(name(e)) + "\"";
        if (j->is_string()) {
            for (E e : all) {
                if (name(e) == j->get<std::string>()) {
                    v = e;
                    return;
                }
            }
        }
        error(key, "expected one of " + options + ", got " + describe(*j));
    }

    template<class E>
    void choice(const char *key, std::optional<E> &v, std::initializer_list<E> all, std::string_view (*name)(E))
    {
        if (!m_obj.contains(key))
            return;
        E e = *all.begin();
        const std::size_t before = m_problems.size();
        choice(key, e, all, name);
        if (m_problems.size() == before)
            v = e;
    }

    // main_params_dtype: "fp32" or "none".
    void mainParams(const char *key, bool &fp32)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (j->is_string() && (j->get<std::string>() == "fp32" || j->get<std::string>() == "none")) {
            fp32 = j->get<std::string>() == "fp32";
            return;
        }
        error(key, "expected \"fp32\" or \"none\", got " + describe(*j));
    }

    // moe_layer_freq: an integer (every k-th layer) or Megatron's list form ([0,0,1,1,...]).
    void layerFreq(const char *key, std::int64_t &freq, std::vector<int> &pattern)
    {
        const json *j = get(key);
        if (!j)
            return;
        if (j->is_array()) {
            std::vector<int> p;
            for (const json &x : *j) {
                if (!x.is_number_integer() || (x.get<std::int64_t>() != 0 && x.get<std::int64_t>() != 1)) {
                    error(key, "a list form must hold only 0 (dense) and 1 (MoE), got " + describe(x));
                    return;
                }
                p.push_back(x.get<int>());
            }
            pattern = std::move(p);
            return;
        }
        field(key, freq, 1, kMaxDim);
    }

    void legacyDistributedOptimizer(const char *key, int &zeroStage)
    {
        bool on = false;
        const std::size_t before = m_problems.size();
        field(key, on);
        if (m_problems.size() == before && on && zeroStage < 1)
            zeroStage = 1;
    }

    void finish()
    {
        for (auto it = m_obj.begin(); it != m_obj.end(); ++it) {
            if (!m_used.count(it.key()))
                error(it.key().c_str(), "unknown field",
                      "see presets/README.md for the fields of \"" + m_section + "\"");
        }
    }

private:
    const json *get(const char *key)
    {
        auto it = m_obj.find(key);
        m_used.insert(key);
        if (it == m_obj.end())
            return nullptr;
        return &*it;
    }

    void error(const char *key, std::string message, std::string suggestion = {})
    {
        m_problems.push_back(
            {m_section + "." + key, std::move(message), std::move(suggestion), Problem::Severity::Error});
    }

    const json &m_obj;
    std::string m_section;
    Problems &m_problems;
    std::set<std::string> m_used;
};

class Writer
{
public:
    explicit Writer(json &obj)
        : m_obj(obj)
    { }
    void field(const char *key, std::int64_t &v, std::int64_t, std::int64_t) { m_obj[key] = v; }
    void field(const char *key, std::optional<std::int64_t> &v, std::int64_t, std::int64_t)
    {
        if (v)
            m_obj[key] = *v;
    }
    void field(const char *key, bool &v) { m_obj[key] = v; }
    void field(const char *key, std::optional<bool> &v)
    {
        if (v)
            m_obj[key] = *v;
    }
    void field(const char *key, std::vector<std::int64_t> &v, std::int64_t, std::int64_t)
    {
        if (!v.empty()) // optional: absent means the even split
            m_obj[key] = v;
    }
    void field(const char *key, double &v, double, double) { m_obj[key] = v; }
    void field(const char *key, std::optional<double> &v, double, double)
    {
        if (v)
            m_obj[key] = *v;
    }
    // Written only when it differs from its defaults, as the optional fields are.
    template<class T>
    void object(const char *key, T &v)
    {
        json nested = json::object();
        Writer w(nested);
        visit(w, v);
        m_obj[key] = std::move(nested);
    }
    void field(const char *key, std::string &v) { m_obj[key] = v; }
    void field(const char *key, std::vector<TensorPolicy> &v, std::initializer_list<TensorFate>)
    {
        if (v.empty()) // optional: absent means recompute_granularity alone
            return;
        json policies = json::object();
        for (const TensorPolicy &p : v)
            policies[p.pattern] = std::string(tensorFateName(p.fate));
        m_obj[key] = std::move(policies);
    }
    void field(const char *key, EfficiencyTable &v)
    {
        json table = json::array();
        for (const EfficiencyPoint &p : v)
            table.push_back({p.size, p.fraction});
        m_obj[key] = std::move(table);
    }
    template<class E>
    void choice(const char *key, E &v, std::initializer_list<E>, std::string_view (*name)(E))
    {
        m_obj[key] = std::string(name(v));
    }
    template<class E>
    void choice(const char *key, std::optional<E> &v, std::initializer_list<E>, std::string_view (*name)(E))
    {
        if (v)
            m_obj[key] = std::string(name(*v));
    }
    void mainParams(const char *key, bool &fp32) { m_obj[key] = fp32 ? "fp32" : "none"; }
    void layerFreq(const char *key, std::int64_t &freq, std::vector<int> &pattern)
    {
        if (pattern.empty())
            m_obj[key] = freq;
        else
            m_obj[key] = pattern;
    }
    void legacyDistributedOptimizer(const char *, int &) { }
    void finish() { }

private:
    json &m_obj;
};

const std::initializer_list<Dtype> kParamDtypes = {Dtype::FP32, Dtype::BF16, Dtype::FP16, Dtype::FP8};
const std::initializer_list<Dtype> kGradDtypes = {Dtype::FP32, Dtype::BF16, Dtype::FP16};
const std::initializer_list<Dtype> kStateDtypes = {Dtype::FP32, Dtype::BF16, Dtype::FP16, Dtype::FP8, Dtype::INT8};
const std::initializer_list<OffloadTarget> kOffloads = {OffloadTarget::None, OffloadTarget::CPU, OffloadTarget::NVMe};

template<class V>
void visit(V &v, ModelConfig &m)
{
    v.field("num_layers", m.num_layers, 1, 100000);
    v.field("hidden_size", m.hidden_size, 1, kMaxDim);
    v.field("num_attention_heads", m.num_attention_heads, 1, 65536);
    v.field("num_query_groups", m.num_query_groups, 0, 65536);
    v.field("kv_channels", m.kv_channels, 0, 65536);
    v.field("ffn_hidden_size", m.ffn_hidden_size, 0, kMaxDim);
    v.field("vocab_size", m.vocab_size, 1, kMaxDim);
    v.field("make_vocab_size_divisible_by", m.make_vocab_size_divisible_by, 1, 65536);
    v.field("swiglu", m.swiglu);
    v.field("squared_relu", m.squared_relu);
    v.choice("normalization", m.normalization, {Normalization::LayerNorm, Normalization::RMSNorm}, normalizationName);
    v.field("apply_layernorm_1p", m.apply_layernorm_1p);
    v.field("qk_layernorm", m.qk_layernorm);
    v.field("add_bias_linear", m.add_bias_linear);
    v.field("add_qkv_bias", m.add_qkv_bias);
    v.choice("position_embedding_type", m.position_embedding_type,
             {PositionEmbedding::LearnedAbsolute, PositionEmbedding::Rope, PositionEmbedding::None,
              PositionEmbedding::Alibi},
             positionEmbeddingName);
    v.field("embed_layernorm", m.embed_layernorm);
    v.field("max_position_embeddings", m.max_position_embeddings, 0, kMaxDim);
    v.field("untie_embeddings_and_output_weights", m.untie_embeddings_and_output_weights);
    v.field("attention_dropout", m.attention_dropout, 0.0, 0.999);
    v.field("hidden_dropout", m.hidden_dropout, 0.0, 0.999);
    v.field("num_experts", m.num_experts, 0, 65536);
    v.field("moe_router_topk", m.moe_router_topk, 1, 1024);
    v.field("moe_ffn_hidden_size", m.moe_ffn_hidden_size, 0, kMaxDim);
    v.field("moe_shared_expert_intermediate_size", m.moe_shared_expert_intermediate_size, 0, kMaxDim);
    v.layerFreq("moe_layer_freq", m.moe_layer_freq, m.moe_layer_pattern);
    v.field("first_k_dense_replace", m.first_k_dense_replace, 0, 100000);
    v.field("mtp_num_layers", m.mtp_num_layers, 0, 64);
    v.field("multi_latent_attention", m.multi_latent_attention);
    v.field("q_lora_rank", m.q_lora_rank, 0, kMaxDim);
    v.field("kv_lora_rank", m.kv_lora_rank, 1, kMaxDim);
    v.field("qk_head_dim", m.qk_head_dim, 1, 65536);
    v.field("qk_pos_emb_head_dim", m.qk_pos_emb_head_dim, 0, 65536);
    v.field("v_head_dim", m.v_head_dim, 1, 65536);
    v.field("sliding_window", m.sliding_window, 0, kMaxDim);
    v.finish();
}

template<class V>
void visit(V &v, TrainingConfig &t)
{
    v.field("seq_length", t.seq_length, 1, kMaxDim);
    v.field("micro_batch_size", t.micro_batch_size, 1, 65536);
    v.field("global_batch_size", t.global_batch_size, 0, std::int64_t(1) << 34);
    v.choice("params_dtype", t.params_dtype, kParamDtypes, dtypeName);
    v.mainParams("main_params_dtype", t.main_params_fp32);
    v.choice("main_grads_dtype", t.main_grads_dtype, kGradDtypes, dtypeName);
    v.choice(
        "optimizer", t.optimizer,
        {Optimizer::Adam, Optimizer::AdamW, Optimizer::SGD, Optimizer::Adafactor, Optimizer::Adam8bit, Optimizer::Muon},
        optimizerName);
    v.choice("exp_avg_dtype", t.exp_avg_dtype, kStateDtypes, dtypeName);
    v.choice("exp_avg_sq_dtype", t.exp_avg_sq_dtype, kStateDtypes, dtypeName);
    v.choice("fp8_recipe", t.fp8_recipe,
             {Fp8Recipe::None, Fp8Recipe::Delayed, Fp8Recipe::Tensorwise, Fp8Recipe::MXFP8, Fp8Recipe::Blockwise},
             fp8RecipeName);
    v.field("fp8_amax_history_len", t.fp8_amax_history_len, 1, 1 << 20);
    v.choice("muon_newton_schulz", t.muon_newton_schulz, {MuonNewtonSchulz::Redundant, MuonNewtonSchulz::LayerWise},
             muonNewtonSchulzName);
    v.field("fp32_params", t.fp32_params);
    v.finish();
}

template<class V>
void visit(V &v, ParallelismConfig &p)
{
    v.field("tensor_model_parallel_size", p.tensor_model_parallel_size, 1, kMaxDegree);
    v.field("pipeline_model_parallel_size", p.pipeline_model_parallel_size, 1, kMaxDegree);
    v.field("virtual_pipeline_model_parallel_size", p.virtual_pipeline_model_parallel_size, 1, 1024);
    v.field("data_parallel_size", p.data_parallel_size, 1, kMaxDegree);
    v.field("context_parallel_size", p.context_parallel_size, 1, kMaxDegree);
    v.field("expert_model_parallel_size", p.expert_model_parallel_size, 1, kMaxDegree);
    v.field("expert_tensor_parallel_size", p.expert_tensor_parallel_size, 0, kMaxDegree);
    v.field("sequence_parallel", p.sequence_parallel);
    std::int64_t zero = p.zero_stage;
    v.field("zero_stage", zero, 0, 3);
    p.zero_stage = static_cast<int>(zero);
    v.legacyDistributedOptimizer("use_distributed_optimizer", p.zero_stage);
    v.field("data_parallel_shard_size", p.data_parallel_shard_size, 0, kMaxDegree);
    v.choice("pipeline_schedule", p.pipeline_schedule,
             {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved,
              PipelineSchedule::ZbH1, PipelineSchedule::ZbH2, PipelineSchedule::ZbV, PipelineSchedule::DualPipe,
              PipelineSchedule::DualPipeV},
             scheduleName);
    v.field("pipeline_layout", p.pipeline_layout, 0, kMaxDim);
    v.finish();
}

// strategy.allocator: PyTorch's PYTORCH_CUDA_ALLOC_CONF, and the per-process
// memory fraction under which its garbage collection acts.
template<class V>
void visit(V &v, AllocatorConfig &a)
{
    v.field("expandable_segments", a.expandable_segments);
    v.field("max_split_size_mb", a.max_split_size_mb, 1, std::int64_t(1) << 30);
    v.field("garbage_collection_threshold", a.garbage_collection_threshold, 0.0, 1.0);
    v.field("per_process_memory_fraction", a.per_process_memory_fraction, 0.0, 1.0);
    v.finish();
}

template<class V>
void visit(V &v, StrategyConfig &s)
{
    v.choice("framework", s.framework,
             {Framework::Megatron, Framework::Torchtitan, Framework::DeepSpeed, Framework::HF}, frameworkName);
    v.choice("recompute_granularity", s.recompute_granularity,
             {RecomputeGranularity::None, RecomputeGranularity::Selective, RecomputeGranularity::Full,
              RecomputeGranularity::SelectiveOp},
             granularityName);
    v.choice("recompute_method", s.recompute_method, {RecomputeMethod::Uniform, RecomputeMethod::Block}, methodName);
    v.field("recompute_num_layers", s.recompute_num_layers, 1, 100000);
    v.field("flash_attention", s.flash_attention);
    v.field("torch_compile", s.torch_compile);
    v.choice("gqa_kv", s.gqa_kv, {GqaKv::Grouped, GqaKv::Repeated}, gqaKvName);
    v.choice("moe_apply_probs", s.moe_apply_probs, {MoeProbs::Activation, MoeProbs::Output, MoeProbs::OutputFp32},
             moeProbsName);
    v.choice("moe_token_dispatcher", s.moe_token_dispatcher, {MoeDispatcher::AllToAll, MoeDispatcher::DeepEP},
             moeDispatcherName);
    v.choice("deferred_wgrad_grad", s.deferred_wgrad_grad, {DeferredWgradGrad::Activation, DeferredWgradGrad::FP8},
             deferredWgradGradName);
    v.choice("dropout_mask_dtype", s.dropout_mask_dtype, {DropoutMaskDtype::Bool, DropoutMaskDtype::Activation},
             dropoutMaskName);
    v.choice("norm_stats_dtype", s.norm_stats_dtype,
             {NormStatsDtype::FP32, NormStatsDtype::Activation, NormStatsDtype::None}, normStatsName);
    v.choice("sp_linear_saves", s.sp_linear_saves, {SpLinearSaves::Shard, SpLinearSaves::Gathered}, spLinearSavesName);
    v.choice("norm_kernel", s.norm_kernel, {NormKernel::Fused, NormKernel::Eager}, normKernelName);
    v.choice("swiglu_kernel", s.swiglu_kernel, {SwigluKernel::Fused, SwigluKernel::Eager}, swigluKernelName);
    v.choice("softmax_dtype", s.softmax_dtype, {SoftmaxDtype::Activation, SoftmaxDtype::FP32}, softmaxDtypeName);
    v.choice("cp_comm_type", s.cp_comm_type, {CpCommType::P2P, CpCommType::AllGather, CpCommType::A2A}, cpCommTypeName);
    v.choice("optimizer_offload", s.optimizer_offload, kOffloads, offloadName);
    v.choice("param_offload", s.param_offload, kOffloads, offloadName);
    v.choice("activation_offload", s.activation_offload, {OffloadTarget::None, OffloadTarget::CPU}, offloadName);
    v.field("activation_offload_buffers", s.activation_offload_buffers, 1, 64);
    v.choice("grad_buffer", s.grad_buffer, {GradBuffer::Contiguous, GradBuffer::OnDemand}, gradBufferName);
    v.field("gradient_accumulation_fusion", s.gradient_accumulation_fusion);
    v.choice("cross_entropy", s.cross_entropy,
             {CrossEntropy::VocabParallel, CrossEntropy::Unfused, CrossEntropy::LossParallel}, crossEntropyName);
    v.choice("optimizer_kernel", s.optimizer_kernel,
             {OptimizerKernel::Fused, OptimizerKernel::Foreach, OptimizerKernel::SingleTensor}, optimizerKernelName);
    v.field("moe_expert_capacity_factor", s.moe_expert_capacity_factor, 0.0, 1024.0);
    v.field("ddp_bucket_size", s.ddp_bucket_size, 1, std::int64_t(1) << 40);
    v.choice("grad_offload", s.grad_offload, {OffloadTarget::None, OffloadTarget::CPU}, offloadName);
    v.field("overlap_grad_reduce", s.overlap_grad_reduce);
    v.field("overlap_param_gather", s.overlap_param_gather);
    v.field("overlap_p2p_comm", s.overlap_p2p_comm);
    v.field("fp8_param_gather", s.fp8_param_gather);
    v.field("tp_comm_overlap", s.tp_comm_overlap);
    v.field("scatter_gather_tensors_in_pipeline", s.scatter_gather_tensors_in_pipeline);
    v.field("tensor_policies", s.tensor_policies,
            {TensorFate::Store, TensorFate::Recompute, TensorFate::Offload, TensorFate::QuantizeFp8,
             TensorFate::QuantizeFp8Offload, TensorFate::QuantizeE5M6});
    v.field("activation_quant_block_size", s.activation_quant_block_size, 1, std::int64_t(1) << 20);
    v.choice("activation_quant_scale_dtype", s.activation_quant_scale_dtype, {QuantScale::FP32, QuantScale::E8M0},
             quantScaleName);
    v.choice("fp8_implementation", s.fp8_implementation,
             {Fp8Implementation::TransformerEngine, Fp8Implementation::Torchao}, fp8ImplementationName);
    v.choice("pipeline_activation_balance", s.pipeline_activation_balance,
             {ActivationBalance::None, ActivationBalance::Auto}, activationBalanceName);
    v.object("allocator", s.allocator);
    v.field("fsdp_reshard_after_forward", s.fsdp_reshard_after_forward);
    v.field("fsdp_root_unit", s.fsdp_root_unit);
    v.field("zero3_prefetch_bucket_size", s.zero3_prefetch_bucket_size, 0, std::int64_t(1) << 40);
    v.field("zero3_max_live_parameters", s.zero3_max_live_parameters, 1, std::int64_t(1) << 40);
    v.finish();
}

template<class V>
void visit(V &v, HardwareConfig &h)
{
    v.field("name", h.name);
    v.field("hbm_bytes", h.hbm_bytes, 1, kMaxBytes);
    v.field("runtime_reserve_bytes", h.runtime_reserve_bytes, 0, kMaxBytes);
    v.choice("runtime_reserve", h.runtime_reserve, {RuntimeReserveMode::Bytes, RuntimeReserveMode::Modelled},
             runtimeReserveModeName);
    v.field("cuda_context_bytes", h.cuda_context_bytes, 0, kMaxBytes);
    v.field("cublas_workspace_bytes", h.cublas_workspace_bytes, 0, kMaxBytes);
    v.field("nccl_channels", h.nccl_channels, 1, 64);
    v.field("host_bytes", h.host_bytes, 0, kMaxBytes);
    v.field("nvme_bytes", h.nvme_bytes, 0, kMaxBytes);
    v.field("hbm_bytes_per_s", h.hbm_bytes_per_s, 1.0, 1e16);
    v.field("host_link_bytes_per_s", h.host_link_bytes_per_s, 1.0, 1e16);
    v.field("nvlink_bytes_per_s", h.nvlink_bytes_per_s, 1.0, 1e16);
    v.field("network_bytes_per_s", h.network_bytes_per_s, 1.0, 1e16);
    v.field("nvme_bytes_per_s", h.nvme_bytes_per_s, 1.0, 1e16);
    v.field("peak_bf16_flops", h.peak_bf16_flops, 1.0, 1e20);
    v.field("peak_fp8_flops", h.peak_fp8_flops, 0.0, 1e20);
    v.field("mx_tensor_cores", h.mx_tensor_cores);
    v.field("gemm_efficiency", h.gemm_efficiency);
    v.field("hbm_efficiency", h.hbm_efficiency);
    v.field("nvlink_efficiency", h.nvlink_efficiency);
    v.field("network_efficiency", h.network_efficiency);
    v.field("collective_latency_s", h.collective_latency_s, 0.0, 1.0);
    v.field("kernel_launch_s", h.kernel_launch_s, 0.0, 1.0);
    v.field("gpus_per_node", h.gpus_per_node, 1, 1 << 20);
    v.field("cpu_adam_params_per_s", h.cpu_adam_params_per_s, 1.0, 1e15);
    v.finish();
}

// The optional serving section (presets/README.md, `inference`): the same model served. The
// ranges are the validator's too; see core/check/validate.cpp.
template<class V>
void visit(V &v, InferenceConfig &i)
{
    v.field("batch_size", i.batch_size, 1, 65536);
    v.field("context_length", i.context_length, 1, kMaxDim);
    v.choice("kv_cache_dtype", i.kv_cache_dtype, kKvCacheDtypes, servingDtypeName);
    v.choice("weights_dtype", i.weights_dtype, kWeightsDtypes, servingDtypeName);
    v.field("prefill_chunk_tokens", i.prefill_chunk_tokens, 0, kMaxDim);
    v.finish();
}

// Which built-in kind a section's string reference names.
std::string_view refKind(std::string_view section)
{
    if (section == "model")
        return "models";
    if (section == "hardware")
        return "hardware";
    return "scenarios";
}

// The object for one section: inline, or the same section of a built-in.
const json *resolveSection(const json &doc, const char *section, json &storage, Problems &problems, int depth)
{
    auto it = doc.find(section);
    if (it == doc.end())
        return nullptr;
    if (it->is_object())
        return &*it;
    if (it->is_string()) {
        const std::string name = it->get<std::string>();
        const BuiltinPreset *b = findBuiltin(refKind(section), name);
        if (!b) {
            std::string known;
            for (const std::string &n : builtinNames(refKind(section)))
                known += (known.empty() ? "" : ", ") + n;
            problems.push_back({std::string(section), "no built-in preset named \"" + name + "\"",
                                "built-in " + std::string(refKind(section)) + ": " + known});
            return nullptr;
        }
        json builtinDoc = json::parse(b->text, nullptr, false);
        if (depth > 2 || builtinDoc.is_discarded() || !builtinDoc.contains(section)) {
            problems.push_back(
                {std::string(section), "built-in preset \"" + name + "\" has no " + section + " section"});
            return nullptr;
        }
        Problems inner;
        const json *resolved = resolveSection(builtinDoc, section, storage, inner, depth + 1);
        if (resolved && resolved != &storage)
            storage = *resolved;
        problems.insert(problems.end(), inner.begin(), inner.end());
        return resolved ? &storage : nullptr;
    }
    problems.push_back(
        {std::string(section), "expected an object or the name of a built-in preset, got " + describe(*it)});
    return nullptr;
}

template<class S>
void readSection(const json &doc, const char *section, S &target, Problems &problems)
{
    json storage;
    const json *obj = resolveSection(doc, section, storage, problems, 0);
    if (!obj)
        return;
    Reader reader(*obj, section, problems);
    visit(reader, target);
}

// A section that may be absent: present (even empty) means its defaults
// apply. Like the others it may name a built-in scenario that has one.
template<class S>
void readOptionalSection(const json &doc, const char *section, std::optional<S> &target, Problems &problems)
{
    if (!doc.contains(section))
        return;
    json storage;
    const json *obj = resolveSection(doc, section, storage, problems, 0);
    if (!obj)
        return;
    S value;
    Reader reader(*obj, section, problems);
    visit(reader, value);
    target = value;
}

} // namespace

LoadResult presetFromJson(const json &doc)
{
    LoadResult result;
    Problems &problems = result.problems;
    if (!doc.is_object()) {
        problems.push_back({"", "a preset must be a JSON object, got " + describe(doc)});
        return result;
    }
    static const std::set<std::string> kTopLevel = {"format",   "version",     "name",     "description", "model",
                                                    "training", "parallelism", "strategy", "hardware",    "inference"};
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (!kTopLevel.count(it.key()))
            problems.push_back({it.key(), "unknown field",
                                "a preset has format, version, name, description, model, training, parallelism, "
                                "strategy, hardware and (optional) inference"});
    }
    const auto format = doc.find("format");
    if (format == doc.end() || !format->is_string() || format->get<std::string>() != "memledger-preset")
        problems.push_back({"format",
                            format == doc.end() ? "missing" : "expected \"memledger-preset\", got " + describe(*format),
                            "add \"format\": \"memledger-preset\""});
    const auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_integer())
        problems.push_back({"version",
                            version == doc.end() ? "missing" : "expected an integer, got " + describe(*version),
                            "add \"version\": 1"});
    else if (version->get<std::int64_t>() != 1)
        problems.push_back({"version", "this MemLedger reads version 1, the file has version " + version->dump(),
                            version->get<std::int64_t>() > 1 ? "update MemLedger" : ""});

    Config config;
    for (const char *key : {"name", "description"}) {
        auto it = doc.find(key);
        if (it == doc.end())
            continue;
        if (!it->is_string())
            problems.push_back({key, "expected a string, got " + describe(*it)});
        else
            (std::string_view(key) == "name" ? config.name : config.description) = it->get<std::string>();
    }
    // The framework's defaults first, so that the knobs the preset writes win over them.
    if (const auto st = doc.find("strategy"); st != doc.end() && st->is_object())
        if (const auto fw = st->find("framework"); fw != st->end() && fw->is_string())
            for (Framework f : {Framework::Torchtitan, Framework::DeepSpeed, Framework::HF})
                if (fw->get<std::string>() == frameworkName(f))
                    config = withFrameworkDefaults(std::move(config), f);
    readSection(doc, "model", config.model, problems);
    readSection(doc, "training", config.training, problems);
    readSection(doc, "parallelism", config.parallelism, problems);
    readSection(doc, "strategy", config.strategy, problems);
    readSection(doc, "hardware", config.hardware, problems);
    readOptionalSection(doc, "inference", config.inference, problems);
    if (!hasErrors(problems))
        result.config = std::move(config);
    return result;
}

const Config *builtinConfig(std::string_view kind, std::string_view name)
{
    // Every built-in model, device and scenario, loaded at the first call
    // (thread-safe: a function-local static); an export or a save compares a
    // plan with each of them, which parsing them every time made slow.
    static const std::map<std::pair<std::string, std::string>, Config, std::less<>> kLoaded = [] {
        std::map<std::pair<std::string, std::string>, Config, std::less<>> out;
        for (const BuiltinPreset &b : builtinPresets()) {
            if (b.kind != "models" && b.kind != "hardware" && b.kind != "scenarios")
                continue;
            LoadResult loaded = presetFromText(b.text, b.name);
            if (loaded.config)
                out.emplace(std::pair{std::string(b.kind), std::string(b.name)}, std::move(*loaded.config));
        }
        return out;
    }();
    const auto it = kLoaded.find(std::pair{std::string(kind), std::string(name)});
    return it == kLoaded.end() ? nullptr : &it->second;
}

LoadResult presetFromText(std::string_view text, std::string_view origin)
{
    LoadResult r;
    const std::optional<json> doc = parseJsonText(text, origin, r.problems);
    return doc ? presetFromJson(*doc) : r;
}

LoadResult presetFromFile(const std::string &path)
{
    LoadResult r;
    const std::optional<std::string> text = readTextFile(path, r.problems);
    return text ? presetFromText(*text, path) : r;
}

json presetToJson(const Config &config)
{
    Config c = config;
    json doc = json::object();
    doc["format"] = "memledger-preset";
    doc["version"] = 1;
    doc["name"] = c.name;
    doc["description"] = c.description;
    json model = json::object(), training = json::object(), parallelism = json::object(), strategy = json::object(),
         hardware = json::object();
    Writer wm(model), wt(training), wp(parallelism), ws(strategy), wh(hardware);
    visit(wm, c.model);
    visit(wt, c.training);
    visit(wp, c.parallelism);
    visit(ws, c.strategy);
    visit(wh, c.hardware);
    doc["model"] = std::move(model);
    doc["training"] = std::move(training);
    doc["parallelism"] = std::move(parallelism);
    doc["strategy"] = std::move(strategy);
    doc["hardware"] = std::move(hardware);
    if (c.inference) {
        json inference = json::object();
        Writer wi(inference);
        visit(wi, *c.inference);
        doc["inference"] = std::move(inference);
    }
    return doc;
}

namespace {

// The fields of `section` that differ from `defaults` (what a reader fills in itself).
json differing(const json &section, const json &defaults)
{
    json out = json::object();
    for (const auto &[key, value] : section.items()) {
        if (defaults.contains(key) && defaults[key] == value)
            continue;
        // A nested object ("strategy.allocator"): the fields that differ.
        if (value.is_object() && defaults.contains(key) && defaults[key].is_object())
            out[key] = differing(value, defaults[key]);
        else
            out[key] = value;
    }
    return out;
}

// The built-in preset of `kind` ("models", "hardware") whose section equals
// the configuration's, by its name; empty when none does.
std::string builtinMatching(std::string_view kind, const Config &config)
{
    for (const std::string &name : builtinNames(kind)) {
        const Config *builtin = builtinConfig(kind, name);
        if (!builtin)
            continue;
        if (kind == "models" ? builtin->model == config.model : builtin->hardware == config.hardware)
            return name;
    }
    return {};
}

} // namespace

std::string presetToText(const Config &config)
{
    // A file people keep, diff and share (issue 34, item 20): the sections in
    // their usual order, a built-in model or device by its name, and in each
    // section only what differs from the defaults a reader fills in. Loading
    // it gives the same configuration. (presetToJson writes every field, for
    // the programs that read a plan whole.)
    const json full = presetToJson(config);
    // A framework's own defaults are what a reader fills in for its plans.
    const json defaults = presetToJson(withFrameworkDefaults(Config{}, config.strategy.framework));
    nlohmann::ordered_json doc;
    for (const char *key : {"format", "version", "name", "description"})
        doc[key] = nlohmann::ordered_json::parse(full[key].dump());
    const auto put = [&](const char *section, const std::string &builtin) {
        const json value = builtin.empty() ? differing(full[section], defaults[section]) : json(builtin);
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        // The framework leads its section: the reader applies it before the knobs.
        if (std::string_view(section) == "strategy" && config.strategy.framework != Framework::Megatron)
            out["framework"] = std::string(frameworkName(config.strategy.framework));
        if (!value.is_object())
            out = nlohmann::ordered_json::parse(value.dump());
        else
            for (const auto &[key, field] : value.items())
                out[key] = nlohmann::ordered_json::parse(field.dump());
        if (!(out.is_object() && out.empty()))
            doc[section] = std::move(out);
    };
    put("model", builtinMatching("models", config));
    put("training", {});
    put("parallelism", {});
    put("strategy", {});
    put("hardware", builtinMatching("hardware", config));
    if (full.contains("inference"))
        doc["inference"] = nlohmann::ordered_json::parse(full["inference"].dump());
    return doc.dump(2) + "\n";
}

Problems applyOverride(json &doc, std::string_view assignment)
{
    Problems problems;
    static const std::set<std::string> kSections
        = {"model", "training", "parallelism", "strategy", "hardware", "inference"};
    const auto eq = assignment.find('=');
    const auto dot = assignment.find('.');
    // "--set hardware=H200-141GB": a whole section replaced by a built-in's name.
    if (eq != std::string_view::npos && (dot == std::string_view::npos || dot > eq)
        && kSections.count(std::string(assignment.substr(0, eq)))) {
        if (!doc.is_object())
            doc = json::object();
        doc[std::string(assignment.substr(0, eq))] = std::string(assignment.substr(eq + 1));
        return problems;
    }
    if (eq == std::string_view::npos || dot == std::string_view::npos || dot > eq || dot == 0 || dot + 1 == eq) {
        problems.push_back({std::string(assignment), "expected --set section.key=value",
                            "for example --set parallelism.tensor_model_parallel_size=8"});
        return problems;
    }
    const std::string section(assignment.substr(0, dot));
    const std::string key(assignment.substr(dot + 1, eq - dot - 1));
    const std::string text(assignment.substr(eq + 1));
    if (!kSections.count(section)) {
        problems.push_back(
            {section, "unknown section", "one of model, training, parallelism, strategy, hardware, inference"});
        return problems;
    }
    json value = json::parse(text, nullptr, false);
    if (value.is_discarded())
        value = text;
    if (!doc.is_object())
        doc = json::object();
    json &target = doc[section];
    if (target.is_string()) {
        // Expand a built-in reference so one field can be changed.
        json storage;
        Problems inner;
        json wrapper = {{section, target}};
        const json *resolved = resolveSection(wrapper, section.c_str(), storage, inner, 0);
        if (!resolved) {
            problems.insert(problems.end(), inner.begin(), inner.end());
            return problems;
        }
        target = *resolved;
    } else if (!target.is_object()) {
        target = json::object();
    }
    // A field of a nested object: "strategy.allocator.expandable_segments=true".
    json *into = &target;
    std::string_view rest = key;
    for (std::size_t d = rest.find('.'); d != std::string_view::npos; d = rest.find('.')) {
        json &inner = (*into)[std::string(rest.substr(0, d))];
        if (!inner.is_object())
            inner = json::object();
        into = &inner;
        rest.remove_prefix(d + 1);
    }
    (*into)[std::string(rest)] = std::move(value);
    return problems;
}

} // namespace memledger
