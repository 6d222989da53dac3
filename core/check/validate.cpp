// SPDX-License-Identifier: MIT
#include "core/check/validate.h"

#include "core/config/editrules.h"
#include "core/model/activations.h"
#include "core/model/deepep.h"
#include "core/model/kvcache.h"
#include "core/model/parameters.h"
#include "core/model/policymatch.h"
#include "core/model/runtimereserve.h"
#include "core/model/tensorpolicy.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace memledger {

namespace {

const std::string kModel = "model.";
const std::string kTraining = "training.";
const std::string kPar = "parallelism.";
const std::string kStrategy = "strategy.";

std::string str(std::int64_t v)
{
    return std::to_string(v);
}

// "4 or 8": the divisors of n nearest to `want` (below and above).
std::string nearestDivisors(std::int64_t n, std::int64_t want)
{
    std::int64_t below = 0, above = 0;
    for (std::int64_t k = want; k >= 1; --k)
        if (n % k == 0) {
            below = k;
            break;
        }
    for (std::int64_t k = want; k <= n && k <= want * 64; ++k)
        if (n % k == 0) {
            above = k;
            break;
        }
    if (below && above && below != above)
        return str(below) + " or " + str(above);
    return str(below ? below : above);
}

// "1024 or 1088": the multiples of k nearest to n.
std::string nearestMultiples(std::int64_t n, std::int64_t k)
{
    const std::int64_t below = n / k * k;
    const std::int64_t above = below + k;
    return below > 0 ? str(below) + " or " + str(above) : str(above);
}

// `prefix` and the even divisors of n nearest `want` (DualPipe pairs rank r
// with rank p − 1 − r), or nothing when n has no even divisor.
std::string evenDivisorsNear(std::int64_t n, std::int64_t want, const std::string &prefix)
{
    std::int64_t below = 0, above = 0;
    for (std::int64_t k = want; k >= 2 && below == 0; --k)
        if (k % 2 == 0 && n % k == 0)
            below = k;
    for (std::int64_t k = want; k <= n && k <= want * 64 && above == 0; ++k)
        if (k % 2 == 0 && n % k == 0)
            above = k;
    if (below == 0 && above == 0)
        return {};
    if (below > 0 && above > 0 && below != above)
        return prefix + str(below) + " or " + str(above);
    return prefix + str(below > 0 ? below : above);
}

// The most even layout of the layers over the stages, as the suggestion of a
// split that does not divide: a model's depth is what it is, so the split
// adapts to it, never the model to the split (the GUI cannot change a built-in
// model's layers, and a preset's layers are the model's).
std::string layoutSuggestion(std::int64_t layers, std::int64_t stages)
{
    const std::vector<std::int64_t> layout = balancedLayout(layers, stages);
    if (stages <= 32) {
        std::string list;
        for (const std::int64_t n : layout)
            list += (list.empty() ? "" : ", ") + str(n);
        return "pipeline_layout [" + list + "]";
    }
    return "a pipeline_layout of " + str(stages) + " counts (" + layoutText(layout) + ")";
}

class Checker
{
public:
    void error(std::string path, std::string message, std::string suggestion = {})
    {
        m_problems.push_back({std::move(path), std::move(message), std::move(suggestion), Problem::Severity::Error});
    }
    void warning(std::string path, std::string message, std::string suggestion = {})
    {
        m_problems.push_back({std::move(path), std::move(message), std::move(suggestion), Problem::Severity::Warning});
    }
    // `value` must divide by `by`; the suggestion names the nearest values of `field`.
    // The suggestion is built only when needed: validation runs on every slider move.
    template<class Suggest>
    void divisible(const std::string &path, std::int64_t value, std::int64_t by, const char *what, Suggest suggestion)
    {
        if (by > 0 && value % by != 0)
            error(path, what + std::string(" (") + str(value) + ") is not divisible by " + str(by), suggestion());
    }
    bool hasProblems() const { return !m_problems.empty(); }
    bool hasErrors() const
    {
        for (const Problem &p : m_problems)
            if (p.severity == Problem::Severity::Error)
                return true;
        return false;
    }
    Problems take() { return std::move(m_problems); }

private:
    Problems m_problems;
};

const std::string kInference = "inference.";

// FP8 training (training.fp8_recipe): which recipe runs where follows
// Transformer Engine's documented support (docs "Low precision training":
// delayed and current scaling from Ada/Hopper, blockwise on Hopper and
// emulated with MXFP8 on Blackwell, MXFP8 on SM 10.0 and later only).
void checkFp8(Checker &ck, const Config &config)
{
    const Fp8Recipe r = config.training.fp8_recipe;
    if (r == Fp8Recipe::None) {
        if (config.strategy.deferred_wgrad_grad == DeferredWgradGrad::FP8)
            ck.error(kStrategy + "deferred_wgrad_grad",
                     "keeps FP8 output gradients for the weight passes, but no fp8_recipe makes FP8 GEMMs",
                     "set training.fp8_recipe, or deferred_wgrad_grad to \"activation\"");
        return;
    }
    const std::string name = std::string(fp8RecipeName(r));
    if (config.training.params_dtype == Dtype::FP32)
        ck.error(kTraining + "fp8_recipe",
                 "FP8 training casts 16-bit weights and activations to FP8; with params_dtype fp32 there are none",
                 "set training.params_dtype to \"bf16\" or fp8_recipe to \"none\"");
    else if (config.training.params_dtype == Dtype::FP8)
        ck.error(kTraining + "fp8_recipe",
                 "params_dtype fp8 already counts 1-byte weights; FP8 training keeps the 16-bit weights and adds "
                 "FP8 copies",
                 "set training.params_dtype to \"bf16\"");
    if (config.hardware.peak_fp8_flops <= 0)
        ck.error("hardware.peak_fp8_flops",
                 "is 0: " + config.hardware.name + " has no FP8 tensor cores, so fp8_recipe \"" + name
                     + "\" cannot run",
                 "set training.fp8_recipe to \"none\" or pick FP8 hardware (H100, H200, B200, MI300X)");
    if (r == Fp8Recipe::MXFP8 && !config.hardware.mx_tensor_cores)
        ck.error(kTraining + "fp8_recipe",
                 "mxfp8 needs Blackwell tensor cores (Transformer Engine supports it on SM 10.0 and later); "
                     + config.hardware.name + " has hardware.mx_tensor_cores false",
                 "use \"blockwise\" (DeepSeek-V3's scaling) on Hopper");
    if (r == Fp8Recipe::Blockwise && config.hardware.mx_tensor_cores)
        ck.warning(kTraining + "fp8_recipe",
                   "on Blackwell Transformer Engine emulates blockwise scaling with MXFP8; the ledger counts "
                   "blockwise's fp32 scales",
                   "use \"mxfp8\", the native recipe there");
}

std::string dtypeChoices(std::initializer_list<ServingDtype> all)
{
    std::string out;
    for (ServingDtype d : all)
        out += (out.empty() ? "" : ", ") + std::string(servingDtypeName(d));
    return out;
}

// The serving section (presets/README.md, `inference`): a hand-built Config (the GUI) can still get these wrong.
void checkInference(Checker &ck, const Config &config)
{
    const InferenceConfig &inf = *config.inference;
    if (inf.batch_size < 1)
        ck.error(kInference + "batch_size", "must be at least 1 sequence, got " + str(inf.batch_size));
    if (inf.context_length && *inf.context_length < 1)
        ck.error(kInference + "context_length",
                 "must be at least 1 token (prompt + generated tokens per sequence), got " + str(*inf.context_length),
                 "leave it out to serve training.seq_length tokens");
    if (inf.prefill_chunk_tokens < 0)
        ck.error(kInference + "prefill_chunk_tokens", "must not be negative, got " + str(inf.prefill_chunk_tokens),
                 "0 prefills the whole batch at once");
    if (std::find(kKvCacheDtypes.begin(), kKvCacheDtypes.end(), inf.kv_cache_dtype) == kKvCacheDtypes.end())
        ck.error(kInference + "kv_cache_dtype",
                 std::string(servingDtypeName(inf.kv_cache_dtype)) + " is a weight-only format, not a KV cache dtype",
                 "use one of " + dtypeChoices(kKvCacheDtypes));
    if (std::find(kWeightsDtypes.begin(), kWeightsDtypes.end(), inf.weights_dtype) == kWeightsDtypes.end())
        ck.error(kInference + "weights_dtype", "not a serving dtype", "use one of " + dtypeChoices(kWeightsDtypes));
    if (inf.batch_size < 1 || (inf.context_length && *inf.context_length < 1))
        return;
    const std::int64_t ctx = inf.context_length.value_or(config.training.seq_length);
    const std::int64_t positions = config.model.max_position_embeddings;
    if (positions > 0 && ctx > positions)
        ck.warning(kInference + "context_length",
                   str(ctx) + " tokens is longer than the model's " + str(positions) + " positions",
                   "use at most " + str(positions));
    // The KV cache of the whole batch must stay a byte count (the loader caps batch and context).
    const double kv = double(kvCacheBytesPerToken(config)) * double(ctx) * double(inf.batch_size);
    if (kv > double(std::int64_t(1) << 62))
        ck.error(kInference + "batch_size", "batch_size × context_length gives a KV cache beyond 2^62 bytes",
                 "serve fewer or shorter sequences");
}

} // namespace

namespace {

// strategy.tensor_policies: every exact name is a tensor the model's layers
// save, every glob matches one, the layer input is never recomputed, and
// quantising needs 16-bit activations.
void checkTensorPolicies(Checker &ck, const Config &config, const std::uint64_t *knownMatched)
{
    const std::string path = "strategy.tensor_policies";
    const StrategyConfig &st = config.strategy;
    if (st.recompute_granularity == RecomputeGranularity::Full) {
        ck.error(path,
                 "refines recompute_granularity \"none\" or \"selective\"; full recompute keeps only each "
                 "group's input",
                 "set strategy.recompute_granularity to \"none\" (the policies then name every fate)");
        return;
    }
    if (ck.hasErrors())
        return; // the tensors' names need a model that makes sense
    // Which rules match a tensor, from the totals-only pass (no names listed):
    // validation runs on every ledger evaluation and every slider move.
    // (Or from the caller's own pass: the ledger's, validateMatched.)
    const std::uint64_t matched
        = knownMatched ? *knownMatched
                       : matchedPolicies(config, false) | (config.model.isMoe() ? matchedPolicies(config, true) : 0);
    // The names, only for a message or a rule past the 64 the mask holds.
    std::vector<std::string> names;
    const auto listNames = [&] {
        if (!names.empty())
            return;
        for (const SavedTensor &t : layerActivations(config, false, TensorList::NamesOnly).tensors)
            names.push_back(t.name);
        if (config.model.isMoe())
            for (const SavedTensor &t : layerActivations(config, true, TensorList::NamesOnly).tensors)
                if (std::find(names.begin(), names.end(), t.name) == names.end())
                    names.push_back(t.name);
    };
    const auto all = [&] {
        listNames();
        std::string list;
        for (const std::string &n : names)
            list += (list.empty() ? "" : ", ") + n;
        return list;
    };
    for (std::size_t k = 0; k < st.tensor_policies.size(); ++k) {
        const TensorPolicy &p = st.tensor_policies[k];
        const auto field = [&] { return path + "." + p.pattern; }; // only for a message
        const bool glob = p.pattern.find_first_of("*?") != std::string::npos;
        bool matches = false;
        if (k < 64) {
            matches = (matched >> k) & 1;
        } else {
            listNames();
            for (const std::string &n : names)
                matches = matches || (glob ? globMatch(p.pattern, n) : p.pattern == n);
        }
        if (!matches) {
            if (glob)
                ck.warning(field(), "matches no tensor this model's layers save", "the layers save " + all());
            else
                ck.error(field(), "is not a tensor this model's layers save", "use one of " + all());
            continue;
        }
        if (!glob && p.pattern == "input_norm.input" && p.fate == TensorFate::Recompute)
            ck.error(field(), "is the layer's input: nothing inside the layer can rebuild it",
                     "store, offload or quantise it; recompute_granularity \"full\" keeps only this tensor");
        if (quantizes(p.fate) && activationBytes(config) != 2)
            ck.error(field(),
                     "fp8 quantisation of saved activations needs 16-bit training (activations are "
                         + std::to_string(activationBytes(config)) + "-byte here)",
                     "set training.params_dtype to \"bf16\", or store the tensor");
    }
}

// Ranges a hand-built Config (the GUI, --set) can still get wrong; false when
// any is out of range, and nothing after it is meaningful.
// The path is spelled out only for a message: validation runs on every ledger evaluation.
bool checkRanges(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    const TrainingConfig &tr = config.training;
    const ParallelismConfig &par = config.parallelism;
    const StrategyConfig &st = config.strategy;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    const std::int64_t d = par.data_parallel_size;
    const std::int64_t cp = par.context_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size;
    const auto positive = [&](const std::string &section, const char *field, std::int64_t value) {
        if (value < 1)
            ck.error(section + field, "must be at least 1, got " + str(value),
                     "sizes and degrees are positive; use 1 for none");
        return value >= 1;
    };
    bool sane = true;
    sane &= positive(kModel, "num_layers", m.num_layers);
    sane &= positive(kModel, "hidden_size", m.hidden_size);
    sane &= positive(kModel, "num_attention_heads", m.num_attention_heads);
    sane &= positive(kModel, "vocab_size", m.vocab_size);
    sane &= positive(kTraining, "seq_length", tr.seq_length);
    sane &= positive(kTraining, "micro_batch_size", tr.micro_batch_size);
    sane &= positive(kPar, "tensor_model_parallel_size", t);
    sane &= positive(kPar, "pipeline_model_parallel_size", p);
    sane &= positive(kPar, "virtual_pipeline_model_parallel_size", v);
    sane &= positive(kPar, "data_parallel_size", d);
    sane &= positive(kPar, "context_parallel_size", cp);
    sane &= positive(kPar, "expert_model_parallel_size", e);
    sane &= positive(kStrategy, "recompute_num_layers", st.recompute_num_layers);
    sane &= positive(kModel, "make_vocab_size_divisible_by", m.make_vocab_size_divisible_by);
    const auto nonNegative = [&](const std::string &section, const char *field, std::int64_t value) {
        if (value < 0) {
            ck.error(section + field, "must not be negative, got " + str(value), "0 takes the documented default");
            sane = false;
        }
    };
    nonNegative(kModel, "num_query_groups", m.num_query_groups);
    nonNegative(kModel, "kv_channels", m.kv_channels);
    nonNegative(kModel, "ffn_hidden_size", m.ffn_hidden_size);
    nonNegative(kModel, "num_experts", m.num_experts);
    nonNegative(kTraining, "global_batch_size", tr.global_batch_size);
    nonNegative(kPar, "expert_tensor_parallel_size", par.expert_tensor_parallel_size);
    if (par.zero_stage < 0 || par.zero_stage > 3) {
        ck.error(kPar + "zero_stage", "must be 0, 1, 2 or 3, got " + str(par.zero_stage));
        sane = false;
    }
    return sane;
}

// Sizes that would overflow 64-bit byte counts (checked in long double).
void checkOverflow(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    const TrainingConfig &tr = config.training;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t d = par.data_parallel_size;
    const std::int64_t cp = par.context_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size;
    const long double s = tr.seq_length, b = tr.micro_batch_size, h = m.hidden_size, a = m.num_attention_heads;
    const long double L = m.num_layers, V = m.vocab_size;
    const long double f = std::max<std::int64_t>(m.ffn(), m.moeFfn());
    const long double k = m.isMoe() ? m.moe_router_topk : 1;
    // The ledger's own parameter count (core/model/parameters.h), in long double,
    // so that the 100 T limit means 100 T of the shapes the ledger counts.
    const long double params = totalParametersWide(config);
    const long double scores = 5 * a * s * s * b;
    const long double limit = std::ldexp(1.0L, 60);
    // Saved activations of the busiest rank: GPipe keeps all m micro-batches
    // of its L/p layers; 1F1B and interleaving keep at most 2p stage-micro-
    // batches, so 2L layer-micro-batches. (Bounding one micro-batch only let
    // a GPipe plan with 2^34 micro-batches overflow its activation rows.)
    const long double p_ = p,
                      micro = std::max<long double>(1, static_cast<long double>(config.globalBatch()) / (b * d));
    const bool gpipe = par.schedule() == PipelineSchedule::GPipe;
    // ZB-H2 and DualPipe's two model copies hold up to twice that: 4L bounds them all.
    const long double layerMicrobatches = gpipe ? std::ceil(L / p_) * micro : 4 * L;
    const long double inFlight = gpipe ? micro : std::min(micro, 4 * p_);
    const long double perLayer = s * b * (80 * h + 10 * a * s + 16 * k * f + 16 * f);
    if (params > 1e14L)
        ck.error(kModel + "num_layers",
                 "about " + str(static_cast<std::int64_t>(params / 1e12L))
                     + " T parameters is beyond what MemLedger accounts",
                 "models up to 100 T parameters are supported");
    if (scores * L > limit || s * b * V * 4 * 16 * inFlight > limit || perLayer * layerMicrobatches > limit
        || static_cast<long double>(e) * s * b * k * h * 4 > limit)
        ck.error(kTraining + "seq_length",
                 "activations of this sequence length and micro-batch would overflow 64-bit byte counts",
                 "reduce training.seq_length, training.micro_batch_size or the micro-batches in flight");
    if (static_cast<long double>(t) * p * d * cp > 1e6L)
        ck.error(kPar + "data_parallel_size",
                 "more than a million GPUs (t·p·d·c = "
                     + str(static_cast<std::int64_t>(static_cast<long double>(t) * p * d * cp)) + ")");
}

// The MLP's activation and the norms' variants: combinations no framework builds.
void checkModelVariants(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    // Megatron-LM's arguments.py: "assert not args.swiglu" under --squared-relu.
    if (m.squared_relu && m.swiglu)
        ck.error(kModel + "squared_relu", "squared_relu and swiglu are two MLP activations; a layer has one",
                 "set model.swiglu to false (Nemotron-4's MLP is ungated) or model.squared_relu to false");
}

// The model's own shape: heads and query groups, positions, experts.
void checkModelShape(Checker &ck, const Config &config)
{
    checkModelVariants(ck, config);
    const ModelConfig &m = config.model;
    const TrainingConfig &tr = config.training;
    const std::int64_t g = m.queryGroups();
    if (!m.multi_latent_attention) {
        if (m.kv_channels == 0 && m.hidden_size % m.num_attention_heads != 0)
            ck.error(kModel + "hidden_size",
                     "hidden_size (" + str(m.hidden_size) + ") is not divisible by num_attention_heads ("
                         + str(m.num_attention_heads) + ")",
                     "set model.kv_channels, or use hidden_size "
                         + nearestMultiples(m.hidden_size, m.num_attention_heads));
        if (m.num_attention_heads % g != 0)
            ck.error(kModel + "num_query_groups",
                     "num_attention_heads (" + str(m.num_attention_heads) + ") is not divisible by num_query_groups ("
                         + str(g) + ")",
                     "use num_query_groups " + nearestDivisors(m.num_attention_heads, g));
    }
    if (m.position_embedding_type == PositionEmbedding::LearnedAbsolute && m.max_position_embeddings > 0
        && m.max_position_embeddings < tr.seq_length)
        ck.error(kTraining + "seq_length",
                 "seq_length (" + str(tr.seq_length) + ") exceeds the learned position table ("
                     + str(m.max_position_embeddings) + " positions)",
                 // The sequence is the user's to change; the model's position table is the model's.
                 "use seq_length " + str(m.max_position_embeddings) + " or less");
    if (m.isMoe()) {
        if (m.moe_router_topk > m.num_experts)
            ck.error(kModel + "moe_router_topk",
                     "top-" + str(m.moe_router_topk) + " routing needs at least that many experts, the model has "
                         + str(m.num_experts),
                     "use moe_router_topk ≤ " + str(m.num_experts));
        if (!m.moe_layer_pattern.empty() && static_cast<std::int64_t>(m.moe_layer_pattern.size()) != m.num_layers)
            ck.error(kModel + "moe_layer_freq",
                     "the list has " + str(static_cast<std::int64_t>(m.moe_layer_pattern.size()))
                         + " entries but the model has " + str(m.num_layers) + " layers",
                     "one 0 (dense) or 1 (MoE) per layer");
    }
}

// Tensor parallelism. Every rule on t gets the same advice: the degrees
// nearest t that divide all of them at once (heads, query groups, FFN
// widths and, with SP, each context-parallel rank's sequence), so two
// messages never suggest different values.
void checkTensorParallel(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    const TrainingConfig &tr = config.training;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t cp = par.context_parallel_size;
    const std::int64_t g = m.queryGroups();
    const std::string tp = kPar + "tensor_model_parallel_size";
    std::int64_t common = m.num_attention_heads;
    if (!m.multi_latent_attention)
        common = std::gcd(common, g);
    common = std::gcd(common, m.ffn());
    if (m.moe_shared_expert_intermediate_size > 0)
        common = std::gcd(common, m.moe_shared_expert_intermediate_size);
    if (par.sequence_parallel && t > 1 && tr.seq_length / cp > 0)
        common = std::gcd(common, tr.seq_length / cp);
    const std::string useT = "use tensor_model_parallel_size " + nearestDivisors(common, t);
    ck.divisible(tp, m.num_attention_heads, t, "num_attention_heads", [&] { return useT; });
    if (!m.multi_latent_attention && g % t != 0)
        ck.error(tp,
                 "num_query_groups (" + str(g) + ") is not divisible by tensor_model_parallel_size (" + str(t) + ")",
                 useT);
    ck.divisible(tp, m.ffn(), t, "ffn_hidden_size", [&] { return useT; });
    if (m.moe_shared_expert_intermediate_size > 0)
        ck.divisible(tp, m.moe_shared_expert_intermediate_size, t, "moe_shared_expert_intermediate_size",
                     [&] { return useT; });
    if (par.sequence_parallel && t > 1)
        ck.divisible(kTraining + "seq_length", tr.seq_length / cp, t, "the sequence on each context-parallel rank",
                     [&] {
                         return std::string("sequence parallelism splits it over t; " + useT + ", or seq_length "
                                            + nearestMultiples(tr.seq_length, t * cp));
                     });
    if (par.sequence_parallel && t == 1)
        ck.warning(kPar + "sequence_parallel", "has no effect with tensor_model_parallel_size 1");
}

// Pipeline parallelism: the layout or the even split, and what each schedule needs.
void checkPipeline(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    const PipelineSchedule sched = par.schedule();
    const std::string schedName = "\"" + std::string(scheduleName(sched)) + "\"";
    const std::int64_t stages = par.pipelineStages();
    const std::vector<std::int64_t> &layout = par.pipeline_layout;
    if (!layout.empty()) {
        std::int64_t sum = 0;
        bool negative = false;
        for (std::int64_t n : layout) {
            sum += n;
            negative |= n < 0;
        }
        if (static_cast<std::int64_t>(layout.size()) != stages)
            ck.error(kPar + "pipeline_layout",
                     "lists " + str(std::int64_t(layout.size())) + " stages but "
                         + (sched == PipelineSchedule::DualPipe
                                ? "DualPipe has p = " + str(p) + " (each rank holds one stage of each direction)"
                                : "p × v = " + str(p) + " × " + str(v) + " = " + str(stages)),
                     "give one layer count per virtual stage, or remove pipeline_layout to split the layers evenly");
        else if (negative)
            ck.error(kPar + "pipeline_layout", "holds a negative layer count", "a stage holds 0 or more layers");
        else if (sum != m.num_layers)
            ck.error(kPar + "pipeline_layout", "places " + str(sum) + " layers but the model has " + str(m.num_layers),
                     "make the counts add up to " + str(m.num_layers) + ", e.g. "
                         + layoutSuggestion(m.num_layers, stages));
    } else if (m.num_layers % stages != 0 && sched == PipelineSchedule::DualPipe)
        ck.error(kModel + "num_layers",
                 "num_layers (" + str(m.num_layers) + ") is not divisible by pipeline_model_parallel_size (" + str(p)
                     + "): DualPipe gives each of its p stages an equal share",
                 "list each stage's layers in " + layoutSuggestion(m.num_layers, p)
                     + evenDivisorsNear(m.num_layers, p, ", or pipeline_model_parallel_size "));
    else if (m.num_layers % stages != 0 && v == 2
             && (sched == PipelineSchedule::ZbV || sched == PipelineSchedule::DualPipeV))
        // A V puts chunks r and 2p − 1 − r on rank r: the layers split into 2p
        // equal chunks, so the nearest valid values are of p (v stays 2).
        ck.error(kModel + "num_layers",
                 "num_layers (" + str(m.num_layers) + ") does not split into 2p = " + str(stages)
                     + " equal chunks, which the " + schedName + " schedule's V shape needs",
                 m.num_layers % 2 == 0 ? "use pipeline_model_parallel_size " + nearestDivisors(m.num_layers / 2, p)
                                             + ", or " + layoutSuggestion(m.num_layers, stages)
                                       : "list each chunk's layers in " + layoutSuggestion(m.num_layers, stages)
                                             + " (an odd layer count splits into 2p equal chunks for no p)");
    else if (m.num_layers % stages != 0)
        ck.error(kModel + "num_layers",
                 "num_layers (" + str(m.num_layers)
                     + ") is not divisible by pipeline_model_parallel_size × virtual_pipeline_model_parallel_size ("
                     + str(p) + " × " + str(v) + " = " + str(stages) + ")",
                 "use a split dividing " + str(m.num_layers) + " (p·v = " + nearestDivisors(m.num_layers, stages)
                     + "), or " + layoutSuggestion(m.num_layers, stages));
    const bool twoChunks
        = sched == PipelineSchedule::ZbV || sched == PipelineSchedule::DualPipe || sched == PipelineSchedule::DualPipeV;
    if (twoChunks && v != 2)
        ck.error(kPar + "virtual_pipeline_model_parallel_size",
                 "the " + schedName + " schedule runs exactly two chunks on each rank, not " + str(v),
                 "set virtual_pipeline_model_parallel_size to 2");
    else if (v > 1 && sched != PipelineSchedule::Interleaved && !twoChunks)
        ck.error(kPar + "pipeline_schedule",
                 "virtual_pipeline_model_parallel_size " + str(v) + " needs the interleaved schedule",
                 "set pipeline_schedule to \"interleaved\" (or \"zb-v\", \"dualpipev\" with v = 2), or "
                 "virtual_pipeline_model_parallel_size to 1");
    const bool zeroBubbleFamily = sched == PipelineSchedule::ZbH1 || sched == PipelineSchedule::ZbH2 || twoChunks;
    if (zeroBubbleFamily && p < 2)
        ck.error(kPar + "pipeline_model_parallel_size", "the " + schedName + " schedule needs a pipeline (p ≥ 2)",
                 "raise pipeline_model_parallel_size or use the 1f1b schedule");
    if (sched == PipelineSchedule::DualPipe && p % 2 != 0)
        ck.error(kPar + "pipeline_model_parallel_size",
                 "DualPipe pairs rank r with rank p − 1 − r, so p must be even, not " + str(p),
                 "use pipeline_model_parallel_size " + str(std::max<std::int64_t>(2, p - 1)) + " or " + str(p + 1)
                     + ", or the \"dualpipev\" schedule");
    if (sched == PipelineSchedule::Interleaved && v < 2)
        ck.error(kPar + "virtual_pipeline_model_parallel_size",
                 "the interleaved schedule needs at least 2 chunks per rank",
                 "set virtual_pipeline_model_parallel_size to 2 or more");
    if (sched == PipelineSchedule::Interleaved && p < 2)
        ck.error(kPar + "pipeline_model_parallel_size", "the interleaved schedule needs a pipeline (p ≥ 2)",
                 "raise pipeline_model_parallel_size or use the 1f1b schedule");
}

// Batch: micro-batches per iteration, and what each schedule needs of them.
void checkBatch(Checker &ck, const Config &config)
{
    const TrainingConfig &tr = config.training;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t d = par.data_parallel_size;
    const PipelineSchedule sched = par.schedule();
    const std::string schedName = "\"" + std::string(scheduleName(sched)) + "\"";
    const std::int64_t perIteration = tr.micro_batch_size * d;
    const std::int64_t gbs = config.globalBatch();
    if (gbs % perIteration != 0)
        ck.error(kTraining + "global_batch_size",
                 "global_batch_size (" + str(gbs) + ") is not divisible by micro_batch_size × data_parallel_size ("
                     + str(tr.micro_batch_size) + " × " + str(d) + " = " + str(perIteration) + ")",
                 "use global_batch_size " + nearestMultiples(gbs, perIteration));
    const std::int64_t micro = gbs / perIteration;
    if (gbs % perIteration == 0) {
        const bool dual = sched == PipelineSchedule::DualPipe || sched == PipelineSchedule::DualPipeV;
        if (dual && p >= 2 && (micro < 2 * p || (sched == PipelineSchedule::DualPipe && micro % 2 != 0)))
            ck.error(kTraining + "global_batch_size",
                     str(micro) + " micro-batches per iteration: " + schedName + " needs at least 2p = " + str(2 * p)
                         + (sched == PipelineSchedule::DualPipe ? ", an even number (half in each direction)" : "")
                         + " (deepseek-ai/DualPipe)",
                     "use global_batch_size "
                         + nearestMultiples(std::max(gbs, perIteration * 2 * p), perIteration * 2));
        else if (sched == PipelineSchedule::Interleaved && p >= 2 && micro % p != 0)
            ck.error(kTraining + "global_batch_size",
                     str(micro) + " micro-batches per iteration is not a multiple of the pipeline size " + str(p)
                         + " (Megatron's interleaved schedule needs it)",
                     "use global_batch_size " + nearestMultiples(gbs, perIteration * p));
        else if (micro < p)
            ck.warning(kTraining + "global_batch_size",
                       "only " + str(micro) + " micro-batches for " + str(p)
                           + " pipeline stages: most of the pipeline idles",
                       "use global_batch_size ≥ " + str(perIteration * p));
    }
}

// Context parallelism: causal load balancing splits the sequence into 2c chunks.
void checkContextParallel(Checker &ck, const Config &config)
{
    const TrainingConfig &tr = config.training;
    const ParallelismConfig &par = config.parallelism;
    const StrategyConfig &st = config.strategy;
    const std::int64_t cp = par.context_parallel_size;
    if (cp > 1) {
        ck.divisible(kTraining + "seq_length", tr.seq_length, 2 * cp, "seq_length", [&] {
            return std::string("context parallelism splits the sequence into 2·c chunks; use seq_length "
                               + nearestMultiples(tr.seq_length, 2 * cp));
        });
        if (!st.flash_attention)
            ck.warning(kStrategy + "flash_attention", "context parallelism runs on fused attention kernels in Megatron",
                       "turn flash_attention on");
    }
}

// Expert parallelism.
void checkExpertParallel(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t d = par.data_parallel_size;
    const std::int64_t cp = par.context_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size;
    const std::int64_t etp = par.expertTensorParallel();
    if (m.isMoe()) {
        ck.divisible(kPar + "expert_model_parallel_size", m.num_experts, e, "num_experts", [&] {
            return std::string("use expert_model_parallel_size " + nearestDivisors(m.num_experts, e));
        });
        if ((t * cp * d) % (etp * e) != 0)
            ck.error(kPar + "expert_model_parallel_size",
                     "t·c·d (" + str(t * cp * d)
                         + ") is not divisible by expert_tensor_parallel_size × expert_model_parallel_size ("
                         + str(etp * e) + ")",
                     "the expert grid (etp·e·edp) must tile the same GPUs as t·c·d");
        ck.divisible(kPar + "expert_tensor_parallel_size", m.moeFfn(), etp, "moe_ffn_hidden_size", [&] {
            return std::string("use expert_tensor_parallel_size " + nearestDivisors(m.moeFfn(), etp));
        });
        if (t > 1 && !par.sequence_parallel)
            ck.error(kPar + "sequence_parallel",
                     "MoE with tensor parallelism needs sequence parallelism (Megatron requires it)",
                     "set sequence_parallel to true");
        // DeepEP's Buffer has recommended configs for these group sizes only (deep_ep/buffers/legacy.py).
        if (config.strategy.moe_token_dispatcher == MoeDispatcher::DeepEP && e > 1 && !deepEpBuffer(e, 2))
            ck.error(kStrategy + "moe_token_dispatcher",
                     "DeepEP has no buffer config for an expert-parallel group of " + str(e),
                     "use expert_model_parallel_size 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 144 or 160, or the "
                     "alltoall dispatcher");
    } else if (e > 1) {
        ck.error(kPar + "expert_model_parallel_size", "is " + str(e) + " but the model has no experts",
                 "use 1 for a dense model");
    }
}

// ZeRO and offload: what each needs, as Megatron-LM and DeepSpeed refuse it.
void checkZeroAndOffload(Checker &ck, const Config &config)
{
    const TrainingConfig &tr = config.training;
    const ParallelismConfig &par = config.parallelism;
    const StrategyConfig &st = config.strategy;
    const std::int64_t d = par.data_parallel_size;
    const std::int64_t cp = par.context_parallel_size;
    if (par.zero_stage > 0 && d * cp == 1)
        ck.warning(kPar + "zero_stage", "ZeRO shards over the data-parallel group, which has one rank here",
                   "raise data_parallel_size");
    if (st.param_offload != OffloadTarget::None && par.zero_stage < 3)
        ck.error(kStrategy + "param_offload", "parameters are offloaded only with ZeRO-3 (DeepSpeed's offload_param)",
                 "set parallelism.zero_stage to 3");
    // Megatron's arguments.py refuses --overlap-param-gather without the
    // distributed optimizer (or its FSDP) and without --overlap-grad-reduce.
    if (st.overlap_param_gather && par.zero_stage < 1)
        ck.error(kStrategy + "overlap_param_gather",
                 "overlaps ZeRO's all-gather of the updated weights, and zero_stage 0 has none "
                 "(Megatron needs the distributed optimizer)",
                 "set parallelism.zero_stage to 1 or more, or overlap_param_gather to false");
    else if (st.overlap_param_gather && !st.overlap_grad_reduce)
        ck.error(kStrategy + "overlap_param_gather",
                 "needs overlap_grad_reduce (Megatron refuses one without the other)",
                 "set strategy.overlap_grad_reduce to true");
    // Megatron-LM's arguments.py: without overlap_p2p_comm the interleaved
    // schedule batches its sends and receives, and refuses p = 2 (several
    // sends between the same two ranks in one batch).
    if (!st.overlap_p2p_comm && par.schedule() == PipelineSchedule::Interleaved
        && par.virtual_pipeline_model_parallel_size > 1 && par.pipeline_model_parallel_size == 2)
        ck.error(kStrategy + "overlap_p2p_comm",
                 "off with the interleaved schedule on 2 pipeline ranks, which Megatron refuses "
                 "(its batched sends would pair the same two ranks twice)",
                 "set strategy.overlap_p2p_comm to true, or pipeline_model_parallel_size above 2");
    // --fp8-param-gather keeps FP8 weights (Transformer Engine's fp8_model_init)
    // and gathers them in FP8: it needs an FP8 recipe, and only ZeRO's gathers move them.
    if (st.fp8_param_gather && tr.fp8_recipe == Fp8Recipe::None)
        ck.error(kStrategy + "fp8_param_gather", "gathers FP8 weights, and no FP8 recipe is in force",
                 "set training.fp8_recipe, or fp8_param_gather to false");
    else if (st.fp8_param_gather && par.zero_stage < 1)
        ck.warning(kStrategy + "fp8_param_gather",
                   "changes only ZeRO's all-gathers of the weights, and zero_stage 0 has none",
                   "set parallelism.zero_stage to 1 or more (Megatron's distributed optimizer, FSDP)");
    if (st.optimizer_offload == OffloadTarget::NVMe && config.hardware.nvme_bytes == 0)
        ck.warning(kStrategy + "optimizer_offload", "the hardware lists no NVMe capacity", "set hardware.nvme_bytes");
    // ZeRO-Offload moves the gradients only because the update runs on the host.
    if (st.grad_offload != OffloadTarget::None && st.optimizer_offload == OffloadTarget::None)
        ck.error(kStrategy + "grad_offload",
                 "gradients go to the host only for an optimizer step that runs there (ZeRO-Offload)",
                 "set strategy.optimizer_offload to \"cpu\", or grad_offload to \"none\"");
    if (tr.optimizer == Optimizer::Muon && st.optimizer_offload != OffloadTarget::None)
        ck.warning(kTraining + "optimizer",
                   "Muon's Newton–Schulz iteration has no CPU kernel; the host step is timed as CPU-Adam",
                   "keep Muon's step on the device (optimizer_offload \"none\")");
}

// HSDP and FSDP's knobs (core/config/framework.h).
void checkFsdp(Checker &ck, const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t d = par.data_parallel_size, shard = par.data_parallel_shard_size;
    if (shard > 0 && (shard > d || d % shard != 0))
        ck.error(kPar + "data_parallel_shard_size",
                 "must divide data_parallel_size (" + str(d)
                     + "): HSDP shards over groups of this many ranks and "
                       "replicates across the groups, got "
                     + str(shard),
                 "use one of " + nearestDivisors(d, shard));
    else if (shard > 0 && shard < d && par.zero_stage == 0)
        ck.warning(kPar + "data_parallel_shard_size",
                   "without ZeRO nothing is sharded, so the shard groups change nothing",
                   "set parallelism.zero_stage to 1 or more");
    if (config.strategy.fsdp_reshard_after_forward && par.zero_stage < 3)
        ck.warning(kStrategy + "fsdp_reshard_after_forward",
                   "only ZeRO-3 (FSDP) gathers the parameters for each layer, so there is nothing to reshard",
                   "set parallelism.zero_stage to 3, or remove fsdp_reshard_after_forward");
    if (config.strategy.fsdp_root_unit && !(par.zero_stage >= 3 && config.strategy.framework == Framework::Torchtitan))
        ck.warning(kStrategy + "fsdp_root_unit",
                   "the root unit is torchtitan's FSDP2 wrapping (zero_stage 3 under framework \"torchtitan\"); "
                   "it changes nothing here",
                   "remove fsdp_root_unit, or set strategy.framework to \"torchtitan\" and parallelism.zero_stage "
                   "to 3");
}

// Activation balance (core/ledger/balance.h): it needs other pipeline ranks, and
// a group is either parked on one or offloaded to the host, not both.
void checkActivationBalance(Checker &ck, const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    const StrategyConfig &st = config.strategy;
    if (st.pipeline_activation_balance == ActivationBalance::Auto && par.pipeline_model_parallel_size < 2)
        ck.error(kStrategy + "pipeline_activation_balance",
                 "\"auto\" parks activations on the other pipeline ranks, and p = 1 has none",
                 "set it to \"none\" or raise parallelism.pipeline_model_parallel_size");
    else if (st.pipeline_activation_balance == ActivationBalance::Auto && st.activation_offload != OffloadTarget::None)
        ck.error(kStrategy + "pipeline_activation_balance",
                 "\"auto\" and activation_offload both move saved activations off the device; the two together "
                 "are not modelled",
                 "choose one: activation_offload \"none\" or pipeline_activation_balance \"none\"");
}

// Recompute: full recompute's groups within a pipeline chunk.
// Float8 under per-op checkpointing, as torchtitan ran it in December 2024:
// torchao's tensorwise Float8Linear multiplies Float8Tensors with aten.mm,
// which the checkpoint's dispatch mode sees before the subclass turns it into
// _scaled_mm, so the policy counts and keeps the same matmul outputs as in
// bf16. It also names aten.abs, whose output is a 16-bit copy of every linear
// input and weight (torch.max(torch.abs(x)) for the scale): compiled, the
// partitioner keeps only what the backward reads (the amax, not the copy);
// eager, the dispatch mode stores every copy, which is not modelled.
void checkSelectiveOpFloat8(Checker &ck, const Config &config)
{
    const Fp8Recipe r = config.training.fp8_recipe;
    if (r == Fp8Recipe::None)
        return;
    const std::string field = kStrategy + "recompute_granularity";
    if (config.strategy.fp8_implementation != Fp8Implementation::Torchao || r != Fp8Recipe::Tensorwise)
        ck.error(field,
                 "\"selective_op\" with FP8 is modelled for torchtitan's Float8 (torchao, tensorwise), whose "
                 "matmuls its policy counts as bf16 ones",
                 "set strategy.fp8_implementation to \"torchao\" and training.fp8_recipe to \"tensorwise\"");
    else if (!config.strategy.torch_compile)
        ck.error(field,
                 "\"selective_op\" with Float8 is modelled compiled only: eager, the policy's aten.abs keeps a "
                 "16-bit copy of every linear input and weight of every layer (torchao's max(abs(x)) scale), which "
                 "the ledger does not count",
                 "set strategy.torch_compile to true, or recompute_granularity to \"full\"");
}

// recompute_granularity "selective_op" follows torchtitan's policy on its
// Llama block (a dense layer, GQA attention through SDPA's flash or
// efficient kernel, tensor parallelism with sequence-parallel norms):
// what it would keep elsewhere is not modelled, so it is refused by name.
void checkSelectiveOp(Checker &ck, const Config &config)
{
    const StrategyConfig &st = config.strategy;
    if (st.recompute_granularity != RecomputeGranularity::SelectiveOp)
        return;
    const std::string field = kStrategy + "recompute_granularity";
    if (config.model.isMoe() || config.model.multi_latent_attention)
        ck.error(field,
                 "\"selective_op\" models torchtitan's per-op checkpointing of a dense Llama block, not MoE or "
                 "multi-latent attention layers",
                 "use \"selective\", \"full\" or tensor_policies for this model");
    if (config.model.squared_relu)
        ck.error(field,
                 "\"selective_op\" models torchtitan's Llama block; with squared ReLU what relu and pow save is "
                 "not the matmul output its policy keeps",
                 "use \"selective\", \"full\" or tensor_policies for this model");
    if (!st.flash_attention)
        ck.error(field, "\"selective_op\" keeps the outputs of SDPA's flash kernel, as torchtitan runs it",
                 "set strategy.flash_attention to true");
    if (config.parallelism.tensor_model_parallel_size > 1 && !config.parallelism.sequence_parallel)
        ck.error(field,
                 "\"selective_op\" with tensor parallelism follows torchtitan, whose norms are sequence-parallel",
                 "set parallelism.sequence_parallel to true");
    checkSelectiveOpFloat8(ck, config);
}

void checkRecompute(Checker &ck, const Config &config)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const StrategyConfig &st = config.strategy;
    const std::int64_t stages = par.pipelineStages();
    const std::vector<std::int64_t> &layout = par.pipeline_layout;
    std::int64_t perChunk = m.num_layers / stages;
    for (std::int64_t n : layout)
        perChunk = std::max(perChunk, n);
    if (st.recompute_granularity == RecomputeGranularity::Full && perChunk > 0 && st.recompute_num_layers > perChunk)
        ck.warning(kStrategy + "recompute_num_layers",
                   "is " + str(st.recompute_num_layers) + " but each pipeline chunk has " + str(perChunk) + " layers",
                   "use at most " + str(perChunk));
    checkSelectiveOp(ck, config);
}

// Precision: optimizer-state and gradient dtypes that do not go with the optimizer or the weights.
void checkPrecision(Checker &ck, const Config &config)
{
    const TrainingConfig &tr = config.training;
    if (tr.optimizer != Optimizer::Adam8bit
        && ((tr.exp_avg_dtype && *tr.exp_avg_dtype == Dtype::INT8)
            || (tr.exp_avg_sq_dtype && *tr.exp_avg_sq_dtype == Dtype::INT8)))
        ck.warning(kTraining + "exp_avg_dtype", "int8 optimizer states need a block-quantised optimizer",
                   "use optimizer \"adam8bit\"");
    if (tr.params_dtype == Dtype::FP32 && tr.main_grads_dtype != Dtype::FP32)
        ck.warning(kTraining + "main_grads_dtype", "gradients of fp32 parameters are fp32",
                   "set main_grads_dtype to \"fp32\"");
}

// The caching allocator's settings (strategy.allocator) within what PyTorch
// accepts (c10/core/AllocatorConfig.cpp, torch.cuda.set_per_process_memory_fraction).
void checkAllocator(Checker &ck, const Config &config)
{
    const AllocatorConfig &a = config.strategy.allocator;
    const std::string at = kStrategy + "allocator.";
    if (a.max_split_size_mb && *a.max_split_size_mb < 20)
        ck.error(at + "max_split_size_mb",
                 "is " + str(*a.max_split_size_mb) + " MB; PyTorch refuses values under 20 (its 20 MiB large segments)",
                 "use 20 or more, or null for no limit");
    if (a.garbage_collection_threshold
        && (*a.garbage_collection_threshold <= 0 || *a.garbage_collection_threshold >= 1))
        ck.error(at + "garbage_collection_threshold", "must be above 0 and below 1, as PyTorch requires",
                 "for example 0.8, or null for none");
    if (a.per_process_memory_fraction && *a.per_process_memory_fraction <= 0)
        ck.error(at + "per_process_memory_fraction", "must be above 0 and at most 1",
                 "for example 0.9, or null for the whole device");
    if (a.garbage_collection_threshold && !a.per_process_memory_fraction)
        ck.warning(at + "garbage_collection_threshold",
                   "PyTorch collects cached blocks only under a per-process memory fraction: without one it does "
                   "nothing",
                   "set strategy.allocator.per_process_memory_fraction, or leave the threshold out");
}

// Hardware: a runtime reserve within the device memory, and well-formed efficiency tables.
void checkHardware(Checker &ck, const Config &config)
{
    const bool modelled = config.hardware.runtime_reserve == RuntimeReserveMode::Modelled;
    if (maxRuntimeReserveBytes(config) >= config.hardware.hbm_bytes)
        ck.error(modelled ? "hardware.runtime_reserve" : "hardware.runtime_reserve_bytes",
                 "the runtime reserve is not smaller than the device memory",
                 modelled ? "lower hardware.cuda_context_bytes or hardware.nccl_channels"
                          : "use a reserve of a few GB");
    if (modelled && config.hardware.runtime_reserve_bytes != HardwareConfig{}.runtime_reserve_bytes)
        ck.warning("hardware.runtime_reserve_bytes",
                   "the runtime reserve is modelled in parts (hardware.runtime_reserve \"modelled\"), so "
                   "runtime_reserve_bytes is not used",
                   "set hardware.runtime_reserve to \"bytes\" for one figure of your own");
    Problems tables;
    checkEfficiencyTable(config.hardware.gemm_efficiency, "hardware.gemm_efficiency", tables);
    checkEfficiencyTable(config.hardware.hbm_efficiency, "hardware.hbm_efficiency", tables);
    checkEfficiencyTable(config.hardware.nvlink_efficiency, "hardware.nvlink_efficiency", tables);
    checkEfficiencyTable(config.hardware.network_efficiency, "hardware.network_efficiency", tables);
    for (const Problem &p : tables)
        ck.error(p.path, p.message, p.suggestion);
}

// validate's body, one section of rules after the other (their order is the
// order of the messages); `matched`: the policy rules' match bits when known.
Problems validateWith(const Config &config, const std::uint64_t *matched)
{
    Checker ck;
    if (!checkRanges(ck, config))
        return ck.take();
    checkOverflow(ck, config);
    // Nothing else is meaningful for sizes this large.
    if (ck.hasProblems())
        return ck.take();
    checkModelShape(ck, config);
    checkTensorParallel(ck, config);
    checkPipeline(ck, config);
    checkBatch(ck, config);
    checkContextParallel(ck, config);
    checkExpertParallel(ck, config);
    checkZeroAndOffload(ck, config);
    checkFsdp(ck, config);
    checkActivationBalance(ck, config);
    checkRecompute(ck, config);
    if (!config.strategy.tensor_policies.empty())
        checkTensorPolicies(ck, config, matched);
    checkPrecision(ck, config);
    checkAllocator(ck, config);
    checkFp8(ck, config);
    checkHardware(ck, config);
    if (config.inference)
        checkInference(ck, config);
    return ck.take();
}

} // namespace

Problems validate(const Config &config)
{
    return validateWith(config, nullptr);
}

Problems validateMatched(const Config &config, std::uint64_t matched)
{
    return validateWith(config, &matched);
}

} // namespace memledger
