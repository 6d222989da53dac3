// SPDX-License-Identifier: MIT
#include "core/model/activations.h"

#include "core/model/fp8.h"
#include "core/model/parameters.h"
#include "core/model/policymatch.h"
#include "core/model/tensorpolicy.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <string_view>

namespace memledger {

namespace {

// Products of up to a dozen sizes can pass 2^63 before the division.
__extension__ typedef __int128 Wide;

struct Factor
{
    std::string_view symbol;
    std::int64_t value;
};

// Collects saved tensors; each is a product of factors over a product of
// divisors, written out symbolically and with the values substituted.
// Without a list to fill it only sums: the ledger needs totals on every
// slider move, the tensor-by-tensor text only when someone reads it.
class Account
{
public:
    Account(std::vector<SavedTensor> *out, const StrategyConfig &strategy, int activationElementBytes,
            bool formulas = true)
        : m_out(out)
        , m_strategy(strategy)
        , m_A(activationElementBytes)
        , m_formulas(formulas)
    {
        // The rules resolved once per layer kind, not once per tensor: whether
        // each is a glob (policyFor asks on every call).
        m_rules.reserve(strategy.tensor_policies.size());
        for (const TensorPolicy &p : strategy.tensor_policies) {
            const std::string_view pat = p.pattern;
            const bool glob = pat.find_first_of("*?") != std::string_view::npos;
            // One '*' and no '?' (the usual "attention.*", "*dropout_mask"): a prefix and a suffix.
            const std::size_t star = pat.find('*');
            const bool simple = glob && pat.find('?') == std::string_view::npos && pat.rfind('*') == star;
            m_rules.push_back({pat, glob, p.fate, simple ? star : std::string_view::npos});
        }
    }

    // Bit k: rule k matched a tensor added so far (policymatch.h).
    std::uint64_t matched() const { return m_matched; }

    // `elementBytes` 0: the first factor is the element size (every tensor
    // but the norm statistics, whose first factor counts them).
    void add(std::string_view module, std::string_view tensor, std::initializer_list<Factor> num,
             std::initializer_list<Factor> den, bool core = false, std::int64_t elementBytes = 0, bool fp8Input = false,
             bool linearInput = false)
    {
        Wide n = 1, d = 1;
        for (const Factor &f : num)
            n *= f.value;
        for (const Factor &f : den)
            d *= f.value;
        const Bytes bytes = static_cast<Bytes>(n / d);
        if (bytes == 0)
            return;
        total += bytes;
        if (core)
            attentionCore += bytes;
        // The name on the stack: policies are matched on every ledger evaluation.
        char buffer[96];
        std::string_view name;
        if (m_out || !m_strategy.tensor_policies.empty()
            || m_strategy.recompute_granularity == RecomputeGranularity::SelectiveOp) {
            const std::size_t n = std::min(module.size(), sizeof buffer - 1);
            std::memcpy(buffer, module.data(), n);
            buffer[n] = '.';
            const std::size_t k = std::min(tensor.size(), sizeof buffer - n - 1);
            std::memcpy(buffer + n + 1, tensor.data(), k);
            name = std::string_view(buffer, n + 1 + k);
        }
        const TensorFate fate = fateOf(name, core, module == "input_norm" && tensor == "input");
        const int elem = static_cast<int>(elementBytes > 0 ? elementBytes : num.begin()->value);
        const Bytes q = quantizes(fate) ? quantizedBytes(m_strategy, bytes, elem, m_A, fate) : bytes;
        if (quantizes(fate)) {
            quantized += q;
            quantizedFrom += bytes;
        }
        // A linear layer's input stays until its weight gradient: what a
        // deferred W of a zero-bubble schedule holds after B is the tensor as
        // the backward had it, the quantised copy when a policy quantises it,
        // the copy that came back when it was offloaded, and the whole
        // tensor again when it was recomputed for the backward.
        if (linearInput)
            weightInputs += fate == TensorFate::Recompute ? bytes : q;
        if (fate == TensorFate::Recompute)
            recomputed += bytes;
        else if (offloads(fate))
            offloaded += q;
        else {
            kept += q;
            if (fp8Input || quantizes(fate))
                keptFp8 += q; // the gantt's FP8 share
        }
        if (m_out)
            m_out->push_back({std::string(name), bytes, m_formulas ? formula(num, den) : std::string(), core, fate,
                              fate == TensorFate::Recompute ? 0 : q, elem});
    }

    Bytes total = 0;
    Bytes attentionCore = 0;
    Bytes kept = 0, recomputed = 0, offloaded = 0, quantized = 0, quantizedFrom = 0, keptFp8 = 0;
    Bytes weightInputs = 0; // linear inputs a deferred W holds (weightPassBytes)

private:
    struct Rule
    {
        std::string_view pattern;
        bool glob;
        TensorFate fate;
        std::size_t star; // the one '*' of a prefix*suffix glob; npos: match with globMatch

        bool matches(std::string_view name) const
        {
            if (!glob)
                return pattern == name;
            if (star == std::string_view::npos)
                return globMatch(pattern, name);
            const std::string_view prefix = pattern.substr(0, star), suffix = pattern.substr(star + 1);
            return name.size() >= prefix.size() + suffix.size() && name.substr(0, prefix.size()) == prefix
                   && name.substr(name.size() - suffix.size()) == suffix;
        }
    };

    // tensorFate (core/model/tensorpolicy.h) over the pre-resolved rules, noting
    // which rules match: the first exact name in the preset's order wins,
    // else the longest glob (equal lengths: the first alphabetically), else
    // recompute_granularity decides; the layer's input is never recomputed.
    TensorFate fateOf(std::string_view name, bool attentionCore, bool layerInput)
    {
        const TensorFate base = granularityFate(m_strategy, name, attentionCore);
        if (m_rules.empty())
            return base;
        const Rule *exact = nullptr, *best = nullptr;
        for (std::size_t k = 0; k < m_rules.size(); ++k) {
            const Rule &rule = m_rules[k];
            if (!rule.matches(name))
                continue;
            if (k < 64)
                m_matched |= std::uint64_t(1) << k;
            if (!rule.glob) {
                if (!exact)
                    exact = &rule;
            } else if (!best || rule.pattern.size() > best->pattern.size()
                       || (rule.pattern.size() == best->pattern.size() && rule.pattern < best->pattern)) {
                best = &rule;
            }
        }
        const TensorFate f = exact ? exact->fate : best ? best->fate : base;
        return layerInput && f == TensorFate::Recompute ? TensorFate::Store : f;
    }

    static std::string formula(std::initializer_list<Factor> num, std::initializer_list<Factor> den)
    {
        // Appended in place, numbers through std::to_chars: the ledger writes
        // the first and last stages' tensors on every evaluation.
        std::string sym, val;
        sym.reserve(64);
        val.reserve(64);
        const auto number = [&val](std::int64_t v) {
            char buf[24];
            val.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
        };
        for (const Factor &f : num) {
            if (f.value == 1 && f.symbol.empty()) // an optional factor that does not apply
                continue;
            if (!sym.empty())
                sym += "·";
            sym += f.symbol;
            if (!val.empty())
                val += "·";
            number(f.value);
        }
        for (const Factor &f : den) {
            if (f.value == 1)
                continue;
            if (!f.symbol.empty()) { // an unnamed divisor belongs to a fraction written in the numerator
                sym += '/';
                sym += f.symbol;
            }
            val += '/';
            number(f.value);
        }
        sym += " = ";
        sym += val;
        return sym;
    }

    std::vector<SavedTensor> *m_out;
    const StrategyConfig &m_strategy;
    int m_A;
    bool m_formulas; // the symbolic text costs more than the rest; the validator needs only names
    std::vector<Rule> m_rules;
    std::uint64_t m_matched = 0;
};

struct Shape
{
    Factor A; // activation element bytes
    // A saved linear-layer input: A, or with FP8 (Transformer Engine) its
    // columnwise FP8 copy, L / Ld bytes per element with the scales.
    Factor L;
    Factor Ld;
    bool fp8Inputs; // saved linear inputs are FP8 copies, not the 16-bit tensors
    Factor M; // dropout mask element bytes
    Factor S; // stats element bytes
    Factor s; // local sequence (s/c under context parallelism)
    Factor skv; // keys each query attends to (the full sequence)
    Factor b;
    Factor h;
    Factor t; // tensor-parallel split of heads and MLP width
    Factor sp; // sequence-parallel split of the replicated parts (t or 1)
    Factor lin; // split of saved linear inputs (sp, or 1 when sp_linear_saves = gathered)
    int normStats; // statistics per token: LayerNorm mean + rstd, RMSNorm rstd
    bool statsSaved;
    bool eagerNorm; // an RMSNorm in PyTorch ops (strategy.norm_kernel)
    bool perOp; // torchtitan's per-op checkpointing: the block's input is the checkpoint's
    // torch.autocast over an fp32 model (autocastOverFp32): the residual
    // stream's element bytes R (4, else A), and how many linear layers cast
    // the attention's and the MLP's input each for themselves (separate q, k,
    // v and gate, up projections outside Megatron-LM, which fuses them).
    Factor R;
    Factor qkvCasts, fc1Casts;
};

Shape shapeOf(const Config &config)
{
    const std::int64_t A = activationBytes(config);
    const std::int64_t t = config.parallelism.tensor_model_parallel_size;
    const bool sp = config.parallelism.sequence_parallel && t > 1;
    const std::int64_t cp = config.parallelism.context_parallel_size;
    Shape sh{};
    sh.A = {A == 4 ? "4" : "2", A};
    const Fp8Format f8 = fp8Format(config);
    sh.fp8Inputs = f8.on && f8.transformerEngine;
    sh.L = sh.fp8Inputs ? Factor{f8.inputSymbol, f8.inputNum} : sh.A;
    sh.Ld = {"", sh.fp8Inputs ? f8.inputDen : 1};
    sh.M = config.strategy.dropout_mask_dtype == DropoutMaskDtype::Bool ? Factor{"1", 1} : sh.A;
    sh.S = config.strategy.norm_stats_dtype == NormStatsDtype::FP32 ? Factor{"4", 4} : sh.A;
    sh.s = {cp > 1 ? "s/c" : "s", config.training.seq_length / cp};
    sh.skv = {"s", config.training.seq_length};
    sh.b = {"b", config.training.micro_batch_size};
    sh.h = {"h", config.model.hidden_size};
    sh.t = {"t", t};
    sh.sp = {"t", sp ? t : 1};
    sh.lin = {"t", sp && config.strategy.sp_linear_saves == SpLinearSaves::Shard ? t : 1};
    sh.normStats = config.model.normalization == Normalization::LayerNorm ? 2 : 1;
    sh.statsSaved = config.strategy.norm_stats_dtype != NormStatsDtype::None;
    sh.eagerNorm = config.strategy.norm_kernel == NormKernel::Eager && !config.strategy.torch_compile
                   && config.model.normalization == Normalization::RMSNorm;
    sh.perOp = config.strategy.recompute_granularity == RecomputeGranularity::SelectiveOp;
    const bool autocast = autocastOverFp32(config);
    sh.R = autocast ? Factor{"4", 4} : sh.A;
    // Compiled, the casts of one tensor to one dtype are one node of the graph (common subexpressions merge).
    const bool separate
        = autocast && config.strategy.framework != Framework::Megatron && !config.strategy.torch_compile;
    sh.qkvCasts = separate ? Factor{"3", 3} : Factor{"", 1};
    sh.fc1Casts = separate && config.model.swiglu ? Factor{"2", 2} : Factor{"", 1};
    return sh;
}

// A linear layer's saved input: under a Transformer Engine fp8_recipe its FP8 copy (the gantt marks it).
void addInput(Account &acc, const Shape &x, std::string_view module, std::string_view tensor,
              std::initializer_list<Factor> num, std::initializer_list<Factor> den)
{
    acc.add(module, tensor, num, den, false, 0, x.fp8Inputs, true);
}

void addNorm(Account &acc, const Shape &x, std::string_view name, Factor width)
{
    if (x.eagerNorm && x.R.value == 4 && x.A.value != 4) {
        // Autocast over an fp32 model: the input is the fp32 residual stream
        // (x.to(float32) is x itself, saved by pow and the multiply with
        // rsqrt), and the weight, fp32, multiplies the normalised x in fp32
        // and saves it (transformers' LlamaRMSNorm: input_dtype is fp32).
        acc.add(name, "input", {x.R, x.s, x.b, width}, {x.sp}, false, 4);
        acc.add(name, "stats", {{"1", 1}, {"4", 4}, x.s, x.b}, {x.sp}, false, 4);
        acc.add(name, "normalized", {x.R, x.s, x.b, width}, {x.sp}, false, 4);
        return;
    }
    if (x.eagerNorm) {
        // x.to(float32) is saved by pow and by the multiply with rsqrt, which
        // saves rsqrt's fp32 output too; the multiply by the weight saves the
        // normalised x cast back. The 16-bit input itself is saved by nothing,
        // but a checkpoint keeps it as its own input.
        if (x.perOp && name == "input_norm" && x.A.value != 4)
            acc.add(name, "input", {x.A, x.s, x.b, width}, {x.sp});
        // With fp32 activations x.to(float32) is x itself: saved once, as the input.
        acc.add(name, x.A.value == 4 ? "input" : "input_fp32", {{"4", 4}, x.s, x.b, width}, {x.sp}, false, 4);
        acc.add(name, "stats", {{"1", 1}, {"4", 4}, x.s, x.b}, {x.sp}, false, 4);
        acc.add(name, "normalized", {x.A, x.s, x.b, width}, {x.sp});
        return;
    }
    acc.add(name, "input", {x.R, x.s, x.b, width}, {x.sp}, false, x.R.value);
    if (x.statsSaved) {
        const Factor n{x.normStats == 2 ? "2" : "1", x.normStats};
        acc.add(name, "stats", {n, x.S, x.s, x.b}, {x.sp}, false, x.S.value);
    }
}

// Megatron-Core's q_layernorm / k_layernorm (--qk-layernorm; Qwen3's q_norm
// and k_norm): a norm over each head's d channels of the projection's
// output, before the rotary embedding, on this rank's heads (split over t,
// not along the sequence). It saves what the layer's own norms save, per head
// row instead of per token: a fused kernel (Transformer Engine's RMSNorm or
// LayerNorm) its input and statistics; an eager RMSNorm (transformers'
// Qwen3RMSNorm, the same ops as LlamaRMSNorm) the fp32 copy of its input,
// rsqrt's fp32 output per row and the normalised x cast back. Its input is
// the projection's output, a tensor the attention does not otherwise keep
// (it keeps q and k after the rotary embedding).
void addHeadNorm(Account &acc, const Shape &x, std::string_view name, Factor heads, Factor headDim)
{
    if (x.eagerNorm) {
        acc.add(name, x.A.value == 4 ? "input" : "input_fp32", {{"4", 4}, x.s, x.b, heads, headDim}, {x.t}, false, 4);
        acc.add(name, "stats", {{"1", 1}, {"4", 4}, x.s, x.b, heads}, {x.t}, false, 4);
        acc.add(name, "normalized", {x.A, x.s, x.b, heads, headDim}, {x.t});
        return;
    }
    acc.add(name, "input", {x.A, x.s, x.b, heads, headDim}, {x.t});
    if (x.statsSaved) {
        const Factor n{x.normStats == 2 ? "2" : "1", x.normStats};
        acc.add(name, "stats", {n, x.S, x.s, x.b, heads}, {x.t}, false, x.S.value);
    }
}

void addDropoutMask(Account &acc, const Shape &x, std::string_view name, double p)
{
    if (p > 0)
        acc.add(name, "dropout_mask", {x.M, x.s, x.b, x.h}, {x.sp});
}

// The attention core: QK^T, softmax, dropout, xV. Without FlashAttention the
// score matrices are materialised; with it only the row statistics are kept.
void addCore(Account &acc, const Shape &x, const Config &config, Factor heads, Factor qkDim, Factor kvHeads,
             Factor vDim)
{
    const double pAttn = config.model.attention_dropout;
    acc.add("attention", "q", {x.A, x.s, x.b, heads, qkDim}, {x.t});
    if (config.strategy.flash_attention) {
        // repeat_kv before the kernel: the kernel saves the copies; under
        // per-op checkpointing wv's output is what is kept and the copies
        // (made by a reshape, not a saved op) are rebuilt in the backward.
        const bool repeated = config.strategy.gqa_kv == GqaKv::Repeated && kvHeads.value != heads.value;
        const Factor kvSaved = repeated && !x.perOp ? heads : kvHeads;
        acc.add("attention", "k", {x.A, x.s, x.b, kvSaved, qkDim}, {x.t});
        acc.add("attention", "v", {x.A, x.s, x.b, kvSaved, vDim}, {x.t});
        if (repeated && x.perOp) {
            acc.add("attention", "k_expanded", {x.A, x.s, x.b, heads, qkDim}, {x.t});
            acc.add("attention", "v_expanded", {x.A, x.s, x.b, heads, vDim}, {x.t});
        }
        acc.add("attention", "softmax_lse", {{"4", 4}, x.s, x.b, heads}, {x.t}, true);
        return;
    }
    // Unfused attention expands grouped K/V to every head before its batched
    // matmuls (Megatron's DotProductAttention repeat_interleave, transformers'
    // repeat_kv), and the matmuls save the expanded copies. Under selective
    // recompute the expansion is inside the checkpointed core: the checkpoint
    // keeps K and V at their group width as its inputs, and the expanded
    // copies are rebuilt with the rest of the core in the backward.
    const bool grouped = kvHeads.value != heads.value;
    const bool checkpointed = grouped && config.strategy.recompute_granularity == RecomputeGranularity::Selective;
    if (checkpointed) {
        acc.add("attention", "k", {x.A, x.s, x.b, kvHeads, qkDim}, {x.t});
        acc.add("attention", "v", {x.A, x.s, x.b, kvHeads, vDim}, {x.t});
        acc.add("attention", "k_expanded", {x.A, x.s, x.b, heads, qkDim}, {x.t}, true);
    } else {
        acc.add("attention", "k", {x.A, x.s, x.b, heads, qkDim}, {x.t});
    }
    if (config.strategy.softmax_dtype == SoftmaxDtype::FP32) {
        // softmax(dtype=float32) saves its fp32 output; the matmul with V
        // saves the 16-bit cast unless a dropout stands between them (with
        // fp32 activations the cast is the same tensor). Compiled, the cast
        // is a pointwise op the partitioner recomputes from the fp32 output.
        acc.add("attention", "softmax_fp32", {{"4", 4}, heads, x.s, x.skv, x.b}, {x.t}, true, 4);
        if (pAttn <= 0 && x.A.value != 4 && !config.strategy.torch_compile)
            acc.add("attention", "softmax_output", {x.A, heads, x.s, x.skv, x.b}, {x.t}, true);
    } else {
        acc.add("attention", "softmax_output", {x.A, heads, x.s, x.skv, x.b}, {x.t}, true);
    }
    if (pAttn > 0) {
        acc.add("attention", "softmax_dropout_mask", {x.M, heads, x.s, x.skv, x.b}, {x.t}, true);
        acc.add("attention", "dropout_output", {x.A, heads, x.s, x.skv, x.b}, {x.t}, true);
    }
    if (checkpointed)
        acc.add("attention", "v_expanded", {x.A, x.s, x.b, heads, vDim}, {x.t}, true);
    else
        acc.add("attention", "v", {x.A, x.s, x.b, heads, vDim}, {x.t});
}

// With FlashAttention the kernel's output O is also the projection's input:
// one tensor. With FP8 the projection saves its own FP8 copy and the kernel
// still keeps O (TE's save_original_input=False, its default).
void addProjInput(Account &acc, const Shape &x, const Config &config, Factor heads, Factor vDim)
{
    if (x.fp8Inputs && config.strategy.flash_attention)
        acc.add("attention", "output", {x.A, x.s, x.b, heads, vDim}, {x.t});
    addInput(acc, x, "attention.proj", "input", {x.L, x.s, x.b, heads, vDim}, {x.Ld, x.t});
    // torchtitan's per-op checkpointing keeps what wo's reduce-scatter returns (sequence-parallel shards).
    if (config.strategy.recompute_granularity == RecomputeGranularity::SelectiveOp && x.t.value > 1)
        acc.add("attention", "proj.reduce_scatter", {x.A, x.s, x.b, x.h}, {x.sp});
}

void addAttention(Account &acc, const Shape &x, const Config &config)
{
    const ModelConfig &m = config.model;
    addNorm(acc, x, "input_norm", x.h);
    const Factor a{"a", m.num_attention_heads};
    if (m.multi_latent_attention) {
        // Down-projections (replicated weights) see the whole hidden state.
        addInput(acc, x, "mla.down_proj", "input", {x.L, x.s, x.b, x.h}, {x.Ld, x.lin});
        if (m.q_lora_rank > 0) {
            const Factor q{"q_lora", m.q_lora_rank};
            addNorm(acc, x, "mla.q_norm", q);
            addInput(acc, x, "mla.q_up", "input", {x.L, x.s, x.b, q}, {x.Ld, x.sp});
        }
        const Factor kv{"kv_lora", m.kv_lora_rank};
        addNorm(acc, x, "mla.kv_norm", kv);
        addInput(acc, x, "mla.kv_up", "input", {x.L, x.s, x.b, kv}, {x.Ld, x.sp});
        const Factor qk{"d_qk", m.qk_head_dim + m.qk_pos_emb_head_dim};
        const Factor v{"d_v", m.v_head_dim};
        addCore(acc, x, config, a, qk, a, v);
        addProjInput(acc, x, config, a, v);
    } else {
        const Factor d{"d", m.headDim()};
        const Factor g{"g", m.queryGroups()};
        // Under autocast q_proj, k_proj and v_proj each save their own 16-bit cast.
        addInput(acc, x, "attention.qkv", "input", {x.L, x.s, x.b, x.h, x.qkvCasts}, {x.Ld, x.lin});
        if (m.qk_layernorm) {
            addHeadNorm(acc, x, "attention.q_layernorm", a, d);
            addHeadNorm(acc, x, "attention.k_layernorm", g, d);
        }
        addCore(acc, x, config, a, d, g, d);
        addProjInput(acc, x, config, a, d);
    }
    addDropoutMask(acc, x, "attention", m.hidden_dropout);
}

void addMlp(Account &acc, const Shape &x, const Config &config, std::string_view name, std::int64_t width, bool input)
{
    const Factor f{"f", width};
    if (input) // under autocast gate_proj and up_proj each save their own 16-bit cast
        addInput(acc, x, name, "fc1.input", {x.L, x.s, x.b, x.h, x.fc1Casts}, {x.Ld, x.lin});
    const bool perOp = config.strategy.recompute_granularity == RecomputeGranularity::SelectiveOp;
    // Compiled, F.silu's output is recomputed from gate in the backward.
    const bool eagerSwiglu = config.strategy.swiglu_kernel == SwigluKernel::Eager && !config.strategy.torch_compile;
    if (config.model.swiglu && perOp) { // w1 and w3 are two matmuls: one kept, one recomputed
        acc.add(name, "fc1.gate", {x.A, x.s, x.b, f}, {x.t});
        acc.add(name, "fc1.up", {x.A, x.s, x.b, f}, {x.t});
    } else if (config.model.swiglu && eagerSwiglu) {
        acc.add(name, "fc1.gate", {x.A, x.s, x.b, f}, {x.t}); // saved by F.silu
        acc.add(name, "fc1.up", {x.A, x.s, x.b, f}, {x.t}); // saved by the product
    } else if (config.model.swiglu) {
        acc.add(name, "fc1.output", {x.A, {"2", 2}, x.s, x.b, f}, {x.t}); // gate and up, for SwiGLU's backward
    } else if (config.model.squared_relu) {
        // Megatron's squared_relu, torch.pow(F.relu(x), 2): relu saves its
        // output for its backward and pow saves its input, the same tensor;
        // fc1's own output is saved by nothing.
        acc.add(name, "fc1.relu_output", {x.A, x.s, x.b, f}, {x.t});
    } else {
        acc.add(name, "fc1.output", {x.A, x.s, x.b, f}, {x.t}); // GeLU input
    }
    // Eager SwiGLU: the product saves F.silu's output beside up.
    if (config.model.swiglu && eagerSwiglu)
        acc.add(name, "fc1.silu_output", {x.A, x.s, x.b, f}, {x.t});
    addInput(acc, x, name, "fc2.input", {x.L, x.s, x.b, f}, {x.Ld, x.t});
    if (perOp && !config.strategy.torch_compile) {
        // Eager, torchtitan keeps w2's output (the block's 7th matmul: the
        // whole local sequence, partial sums before the reduce-scatter) and
        // the reduce-scatter's: the checkpoint's dispatch mode stores every
        // MUST_SAVE output for the recomputation to replay, needed or not
        // (torch/utils/checkpoint.py, _CachingTorchDispatchMode). fc2 of an
        // ungated MLP is the 6th matmul, recomputed. Compiled, MUST_SAVE
        // only bans a node from recomputation: the partitioner saves what
        // the backward needs (torch/_functorch/partitioners.py,
        // should_ban_recomputation), and only the residual add uses these.
        if (config.model.swiglu)
            acc.add(name, "fc2.output", {x.A, x.s, x.b, x.h}, {});
        if (x.t.value > 1)
            acc.add(name, "fc2.reduce_scatter", {x.A, x.s, x.b, x.h}, {x.sp});
    }
}

void addMoe(Account &acc, const Shape &x, const Config &config)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t etp = par.expertTensorParallel();
    // The router is a linear layer too, but not an FP8 GEMM: its input stays 16-bit.
    acc.add("moe.router", "input", {x.A, x.s, x.b, x.h}, {x.lin}, false, 0, false, true);
    acc.add("moe.router", "probs", {{"4", 4}, x.s, x.b, {"E", m.num_experts}}, {x.sp});
    // Balanced routing: each rank of the expert-parallel group receives as many
    // token copies (top-k) as its tokens send; ETP ranks all see them.
    const Factor k{"k", m.moe_router_topk};
    const Factor etpF{"etp", etp};
    const Factor f{"f_moe", m.moeFfn()};
    addInput(acc, x, "moe.experts.fc1", "input", {x.L, x.s, x.b, k, etpF, x.h}, {x.Ld, x.sp});
    if (m.swiglu)
        acc.add("moe.experts.fc1", "output", {x.A, {"2", 2}, x.s, x.b, k, etpF, f}, {x.sp, etpF});
    else
        acc.add("moe.experts.fc1", "output", {x.A, x.s, x.b, k, etpF, f}, {x.sp, etpF});
    addInput(acc, x, "moe.experts.fc2", "input", {x.L, x.s, x.b, k, etpF, f}, {x.Ld, x.sp, etpF});
    switch (config.strategy.moe_apply_probs) {
    case MoeProbs::Activation:
        // weighted_bias_swiglu: the fc1 output above and an fp32 probability per token copy.
        acc.add("moe.experts", "probs", {{"4", 4}, x.s, x.b, k, etpF}, {x.sp});
        break;
    case MoeProbs::Output:
        // The combine multiplies expert outputs by their routing probabilities: both saved.
        acc.add("moe.experts", "output", {x.A, x.s, x.b, k, etpF, x.h}, {x.sp});
        break;
    case MoeProbs::OutputFp32:
        acc.add("moe.experts", "output", {{"4", 4}, x.s, x.b, k, etpF, x.h}, {x.sp});
        break;
    }
    if (m.moe_shared_expert_intermediate_size > 0)
        addMlp(acc, x, config, "moe.shared_expert", m.moe_shared_expert_intermediate_size, false);
}

// W of a zero-bubble schedule computes dW = Xᵀ·dY for every linear layer, so
// after B has freed the rest of the layer's saved tensors it keeps X and dY
// as it arrived: a column-parallel layer's split over t, a row-parallel
// layer's split along the sequence under sequence parallelism (W gathers it
// again, as Megatron's backward re-gathers X). The inputs X are the Account's
// own (`Account::weightInputs`: named and sized as the per-layer table has
// them, each as its tensor policy left it for the backward); here only the
// output gradients, elements per token times s·b and the activation element
// size: Transformer Engine keeps its quantised dY with both usages for a
// delayed wgrad, about as large as the 16-bit one; with deferred_wgrad_grad
// "fp8" only the columnwise FP8 copy W reads.
Bytes weightPassBytes(const Shape &x, const Config &config, bool moeLayer, Bytes inputs)
{
    const ModelConfig &m = config.model;
    const double t = double(x.t.value), sp = double(x.sp.value);
    const double h = double(x.h.value), a = double(m.num_attention_heads);
    double grads = 0; // per token
    if (m.multi_latent_attention) {
        const double q = double(m.q_lora_rank), kv = double(m.kv_lora_rank);
        const double qk = double(m.qk_head_dim + m.qk_pos_emb_head_dim), v = double(m.v_head_dim);
        grads += (q > 0 ? q : a * qk / t) + kv + double(m.qk_pos_emb_head_dim); // down-projection outputs
        grads += (q > 0 ? a * qk / t : 0.0) + a * (double(m.qk_head_dim) + v) / t + h / sp; // up, proj
    } else {
        const double d = double(m.headDim()), g = double(m.queryGroups());
        grads += (a + 2 * g) * d / t + h / sp; // qkv's and proj's output gradients
    }
    // fc1's output gradient (gated: twice as wide), fc2's output gradient.
    const double gate = m.swiglu ? 2.0 : 1.0;
    const auto mlp = [&](double width, double copies, double split, double outputGrad) {
        grads += copies * (gate * width / split + outputGrad);
    };
    if (moeLayer) {
        const double etp = double(config.parallelism.expertTensorParallel());
        const double routed = double(m.moe_router_topk) * etp / sp; // token copies per local token
        mlp(double(m.moeFfn()), routed, etp, h); // per routed copy
        if (m.moe_shared_expert_intermediate_size > 0)
            mlp(double(m.moe_shared_expert_intermediate_size), 1.0, t, h / sp);
    } else {
        mlp(double(m.ffn()), 1.0, t, h / sp);
    }
    // Under FP8 a framework may keep only the FP8 copy its weight-gradient GEMM reads (strategy.deferred_wgrad_grad).
    double element = double(x.A.value);
    if (config.strategy.deferred_wgrad_grad == DeferredWgradGrad::FP8 && config.training.fp8_recipe != Fp8Recipe::None)
        element = fp8Format(config).inputBytes;
    return inputs + static_cast<Bytes>(grads * element * double(x.s.value) * double(x.b.value));
}

} // namespace

int activationBytes(const Config &config)
{
    return config.training.params_dtype == Dtype::FP32 ? 4 : 2;
}

bool autocastOverFp32(const Config &config)
{
    return config.training.fp32_params && config.training.params_dtype != Dtype::FP32
           && config.parallelism.zero_stage < 3;
}

int residualBytes(const Config &config)
{
    return autocastOverFp32(config) ? 4 : activationBytes(config);
}

LayerActivations layerActivations(const Config &config, bool moeLayer, bool listTensors)
{
    return layerActivations(config, moeLayer, listTensors ? TensorList::WithFormulas : TensorList::None);
}

namespace {

// One layer's saved tensors through `acc`; `matched` (when given) receives
// the policy rules that matched one of them.
LayerActivations accountLayer(const Config &config, bool moeLayer, TensorList list, std::uint64_t *matched)
{
    LayerActivations la;
    const Shape x = shapeOf(config);
    Account acc(list == TensorList::None ? nullptr : &la.tensors, config.strategy, static_cast<int>(x.A.value),
                list == TensorList::WithFormulas);
    addAttention(acc, x, config);
    const Bytes attentionHalf = acc.total;
    const Bytes keptAttention = acc.kept;
    const Bytes recomputedAttention = acc.recomputed;
    const Bytes fp8Attention = acc.keptFp8;
    addNorm(acc, x, "pre_mlp_norm", x.h);
    if (moeLayer)
        addMoe(acc, x, config);
    else
        addMlp(acc, x, config, "mlp", config.model.ffn(), true);
    addDropoutMask(acc, x, "mlp", config.model.hidden_dropout);
    la.total = acc.total;
    la.mlp = acc.total - attentionHalf;
    la.attentionCore = acc.attentionCore;
    la.kept = acc.kept;
    la.keptMlp = acc.kept - keptAttention;
    la.keptFp8 = acc.keptFp8;
    la.keptFp8Mlp = acc.keptFp8 - fp8Attention;
    la.recomputed = acc.recomputed;
    la.recomputedMlp = acc.recomputed - recomputedAttention;
    la.offloaded = acc.offloaded;
    la.quantized = acc.quantized;
    la.quantizedFrom = acc.quantizedFrom;
    // Full recompute keeps the layer's input (sharded along the sequence under SP): the residual stream.
    la.checkpoint = static_cast<Bytes>(x.R.value) * x.s.value * x.b.value * x.h.value / x.sp.value;
    la.weightPass = weightPassBytes(x, config, moeLayer, acc.weightInputs);
    if (matched)
        *matched = acc.matched();
    return la;
}

} // namespace

LayerActivations layerActivations(const Config &config, bool moeLayer, TensorList list)
{
    return accountLayer(config, moeLayer, list, nullptr);
}

std::uint64_t matchedPolicies(const Config &config, bool moeLayer)
{
    std::uint64_t matched = 0;
    accountLayer(config, moeLayer, TensorList::None, &matched);
    return matched;
}

LayerActivations layerActivationsMatched(const Config &config, bool moeLayer, std::uint64_t &matched)
{
    return accountLayer(config, moeLayer, TensorList::None, &matched);
}

ChunkActivations chunkActivations(const Config &config, const LayerActivations &dense, const LayerActivations &moe,
                                  std::int64_t first, std::int64_t layers)
{
    const StrategyConfig &st = config.strategy;
    const bool full = st.recompute_granularity == RecomputeGranularity::Full;
    const std::int64_t n = std::max<std::int64_t>(1, st.recompute_num_layers);
    ChunkActivations ca;
    ca.layerStored.reserve(static_cast<std::size_t>(layers));
    ca.layerStoredMlp.reserve(static_cast<std::size_t>(layers));
    ca.layerStoredFp8.reserve(static_cast<std::size_t>(layers));
    ca.layerStoredFp8Mlp.reserve(static_cast<std::size_t>(layers));
    ca.layerFull.reserve(static_cast<std::size_t>(layers));
    ca.layerFullMlp.reserve(static_cast<std::size_t>(layers));
    ca.layerCore.reserve(static_cast<std::size_t>(layers));
    ca.layerCoreMlp.reserve(static_cast<std::size_t>(layers));
    ca.layerOffloaded.reserve(static_cast<std::size_t>(layers));
    Bytes group = 0;
    for (std::int64_t i = 0; i < layers; ++i) {
        const LayerActivations &la = config.model.isMoeLayer(first + i) ? moe : dense;
        Bytes kept = la.kept;
        Bytes keptMlp = la.keptMlp;
        Bytes fp8 = la.keptFp8, fp8Mlp = la.keptFp8Mlp;
        Bytes rebuilt = la.recomputed;
        Bytes rebuiltMlp = la.recomputedMlp;
        Bytes offloaded = la.offloaded;
        if (full && st.recompute_method == RecomputeMethod::Uniform) {
            // Groups of n layers keep only the group's input.
            if (i % n == 0)
                group = 0;
            kept = i % n == 0 ? la.checkpoint : 0;
            keptMlp = 0;
            fp8 = fp8Mlp = 0; // the checkpoint is the layer's 16-bit input
            rebuilt = rebuiltMlp = offloaded = 0;
            group += la.total;
            ca.recomputeWorkingSet = std::max(ca.recomputeWorkingSet, group);
        } else if (full) {
            // Block: the first n layers of the chunk are recomputed, the rest keep everything.
            kept = i < n ? la.checkpoint : la.total;
            keptMlp = i < n ? 0 : la.mlp;
            if (i < n)
                fp8 = fp8Mlp = 0; // the checkpoint is the layer's 16-bit input
            rebuilt = rebuiltMlp = offloaded = 0;
            if (i < n)
                ca.recomputeWorkingSet = std::max(ca.recomputeWorkingSet, la.total);
        }
        ca.stored += kept;
        ca.layerStored.push_back(kept);
        ca.layerStoredMlp.push_back(keptMlp);
        ca.layerStoredFp8.push_back(fp8);
        ca.layerStoredFp8Mlp.push_back(fp8Mlp);
        ca.layerFull.push_back(la.total);
        ca.layerFullMlp.push_back(la.mlp);
        ca.layerCore.push_back(rebuilt);
        ca.layerCoreMlp.push_back(rebuiltMlp);
        ca.layerOffloaded.push_back(offloaded);
        ca.offloaded += offloaded;
        ca.weightPass += la.weightPass;
    }
    return ca;
}

double weightPassShare(const Config &config, const LayerActivations &dense, const LayerActivations &moe)
{
    const ChunkActivations one = chunkActivations(config, dense, moe, 0, 1);
    return one.stored > 0 ? std::min(1.0, double(one.weightPass) / double(one.stored)) : 1.0;
}

// Policies name a transformer layer's tensors; the embedding's and the loss's are stored as they are.
const StrategyConfig kNoPolicies{};

StageActivations stageActivations(const Config &config)
{
    StageActivations sa;
    const Shape x = shapeOf(config);
    {
        Account acc(&sa.first, kNoPolicies, static_cast<int>(x.A.value));
        if (config.model.embed_layernorm) {
            // Megatron-DeepSpeed's --embed-layernorm (BLOOM): a LayerNorm
            // (Apex's fused kernel: input, mean and rstd) on the word
            // embeddings' output after their all-reduce over t, on the whole
            // sequence (mpu/layers.py, VocabParallelEmbedding.forward).
            acc.add("embedding_norm", "input", {x.A, x.s, x.b, x.h}, {});
            if (x.statsSaved)
                acc.add("embedding_norm", "stats", {{"2", 2}, x.S, x.s, x.b}, {}, false, x.S.value);
        }
        addDropoutMask(acc, x, "embedding", config.model.hidden_dropout);
    }
    {
        Account acc(&sa.last, kNoPolicies, static_cast<int>(x.A.value));
        addNorm(acc, x, "final_norm", x.h);
        acc.add("output_layer", "input", {x.A, x.s, x.b, x.h}, {x.lin});
        // Megatron's vocab-parallel cross entropy keeps the fp32 softmax of the logits.
        const Factor vocab{"V", paddedVocab(config.model, x.t.value)};
        acc.add("loss", "softmax_fp32", {{"4", 4}, x.s, x.b, vocab}, {x.t});
        // Each multi-token prediction module (its transformer layer is a stage
        // layer): the two norms of the next tokens' embedding and the hidden
        // state, eh_proj's input (their concatenation, 2h), its final norm,
        // and the shared output layer's input and loss again.
        for (std::int64_t i = 0; i < config.model.mtp_num_layers; ++i) {
            addNorm(acc, x, "mtp.enorm", x.h);
            addNorm(acc, x, "mtp.hnorm", x.h);
            acc.add("mtp.eh_proj", "input", {x.A, {"2", 2}, x.s, x.b, x.h}, {x.lin});
            addNorm(acc, x, "mtp.final_norm", x.h);
            acc.add("mtp.output_layer", "input", {x.A, x.s, x.b, x.h}, {x.lin});
            acc.add("mtp.loss", "softmax_fp32", {{"4", 4}, x.s, x.b, vocab}, {x.t});
        }
    }
    return sa;
}

TransientActivations transientActivations(const Config &config)
{
    TransientActivations ta;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t A = activationBytes(config);
    const std::int64_t t = par.tensor_model_parallel_size;
    const bool sp = par.sequence_parallel && t > 1;
    const std::int64_t tokens
        = config.training.seq_length / par.context_parallel_size * config.training.micro_batch_size;
    // Autograd's working set in one layer's backward: the gradient arriving at
    // the layer's output (kept for the residual) and the one the current op
    // produces, plus, at the widest moment,
    // - in the MLP, the gradients of the activation function's output and
    //   input (ffn wide, the input 2·ffn with SwiGLU's gate);
    // - in unfused attention, the gradients of the dropped-out and of the
    //   raw softmax probabilities (a·s² per sequence each);
    // - in FlashAttention, the gradients of q, k and v.
    const ModelConfig &m = config.model;
    // The residual stream's gradients have its dtype (fp32 under autocast over an fp32 model).
    const std::int64_t hidden = 2 * residualBytes(config) * tokens * m.hidden_size / (sp ? t : 1);
    const std::int64_t ffn = config.model.ffn() / t;
    const std::int64_t mlp = A * tokens * (m.swiglu ? 3 * ffn : 2 * ffn);
    // FlashAttention's backward makes dq, dk and dv at the width the kernel
    // was given: every head when K and V were repeated for it.
    const std::int64_t kvWidth = config.strategy.gqa_kv == GqaKv::Repeated ? m.num_attention_heads : m.queryGroups();
    const std::int64_t attention = config.strategy.flash_attention
                                       ? A * tokens * (m.num_attention_heads + 2 * kvWidth) * m.headDim() / t
                                       : 2 * A * m.num_attention_heads / t * tokens * config.training.seq_length;
    // A forward under full recompute saves nothing but each layer's input;
    // its tensors live while the module's forward that made them runs (eager
    // PyTorch keeps a function's locals until it returns): at the widest, the
    // attention's q, k and v with its core (unfused: the raw scores, the
    // softmax, the dropout mask and output; FlashAttention: its output and
    // statistics), or the MLP's inner activation and its activation
    // function's output.
    const Bytes qkv = A * tokens * (m.num_attention_heads + 2 * m.queryGroups()) * m.headDim() / t;
    std::vector<Bytes> coreParts; // the attention core's tensors, in forward order
    for (const SavedTensor &saved : layerActivations(config, false, TensorList::NamesOnly).tensors)
        if (saved.attentionCore)
            coreParts.push_back(saved.bytes);
    const Bytes core = std::accumulate(coreParts.begin(), coreParts.end(), Bytes(0));
    const Bytes scores = config.strategy.flash_attention
                             ? A * tokens * m.num_attention_heads * m.headDim() / t // the output
                             : A * m.num_attention_heads / t * tokens * config.training.seq_length;
    const Bytes inner = A * tokens * ffn; // the MLP's activation function's input, or its output
    if (qkv + scores + core >= 2 * inner) {
        ta.recomputedForwardParts = {hidden / 2, qkv, scores};
        ta.recomputedForwardParts.insert(ta.recomputedForwardParts.end(), coreParts.begin(), coreParts.end());
    } else
        ta.recomputedForwardParts = {hidden / 2, inner, inner};
    ta.mlpBackwardParts = {hidden / 2, hidden / 2, inner, mlp - inner};
    ta.attentionBackwardParts = {hidden / 2, hidden / 2};
    if (config.strategy.flash_attention) { // dq, dk, dv
        const Bytes dq = A * tokens * m.num_attention_heads * m.headDim() / t;
        const Bytes dk = (attention - dq) / 2;
        ta.attentionBackwardParts.insert(ta.attentionBackwardParts.end(), {dq, dk, attention - dq - dk});
    } else { // the gradients of the dropped-out and of the raw probabilities
        ta.attentionBackwardParts.insert(ta.attentionBackwardParts.end(), {attention / 2, attention - attention / 2});
    }
    const std::int64_t logits = tokens * paddedVocab(config.model, t) / t;
    // logits.float() returns the same tensor when the logits already are fp32.
    ta.lossForwardParts = {logits * A};
    if (A < 4)
        ta.lossForwardParts.push_back(logits * 4);
    const bool lossParallel = config.strategy.cross_entropy == CrossEntropy::LossParallel && t > 1;
    if (lossParallel) {
        // PyTorch's loss_parallel() runs log_softmax decomposed on the local
        // shard (torch/distributed/tensor/parallel/loss.py, _log_softmax):
        // shifted = x - max stays alive beside exp(shifted), then beside the
        // result (the saved log-softmax, counted with the layer's saves).
        ta.lossForwardParts.push_back(logits * 4);
        // Its _nll_loss_and_log_softmax_backward returns
        // (grad_input + torch.exp(x)) * grad_output: zeros_like(x), then
        // exp(x) and the sum, then the sum and the product, each fp32 and
        // vocabulary-sized, beside the saved log-softmax x.
        ta.lossBackwardParts = {4 * logits, 4 * logits, 4 * logits};
    } else if (config.strategy.cross_entropy != CrossEntropy::VocabParallel) {
        // F.cross_entropy = log_softmax + nll_loss: nll_loss_backward writes an
        // fp32 gradient of the log-probabilities, _log_softmax_backward_data a
        // second one of the logits, both alive together (PyTorch autograd).
        ta.lossBackwardParts = {4 * logits, 4 * logits};
    } else if (A < 4) {
        // Megatron's _VocabParallelCrossEntropy turns its saved fp32 softmax
        // into the gradient in place; only the cast back to the activation
        // dtype allocates.
        ta.lossBackwardParts = {A * logits};
    }
    const auto sum = [](const std::vector<Bytes> &parts) {
        Bytes total = 0;
        for (const Bytes b : parts)
            total += b;
        return total;
    };
    ta.recomputedForward = sum(ta.recomputedForwardParts);
    ta.mlpBackward = sum(ta.mlpBackwardParts);
    ta.attentionBackward = sum(ta.attentionBackwardParts);
    ta.lossForward = sum(ta.lossForwardParts);
    ta.lossBackward = sum(ta.lossBackwardParts);
    return ta;
}

} // namespace memledger
