// SPDX-License-Identifier: MIT
#include "core/serving/inference.h"

#include "core/ledger/ledger.h"
#include "core/model/parameters.h"
#include "core/model/runtimereserve.h"
#include "core/schedule/stagelayers.h"
#include "core/timeline/peakledger.h"

#include <algorithm>

namespace memledger {

namespace {

std::string num(std::int64_t v)
{
    return formatThousands(v);
}

std::string gb(Bytes b)
{
    return formatGB(static_cast<double>(b));
}

// Embeddings, the output layer and the final norm stay 16-bit under
// weight-only quantisation (GPTQ and AWQ quantise the transformer layers'
// linears and leave lm_head and the embeddings alone), as vLLM loads them.
ServingDtype headDtype(ServingDtype d)
{
    return d == ServingDtype::FP16 ? ServingDtype::FP16 : ServingDtype::BF16;
}

} // namespace

Bytes servedWeightBytes(std::int64_t params, ServingDtype dtype)
{
    const int bits = servingDtypeBits(dtype);
    Bytes bytes = (params * bits + 7) / 8;
    if (dtype == ServingDtype::INT8 || dtype == ServingDtype::INT4) {
        const std::int64_t groups = (params + kQuantGroupSize - 1) / kQuantGroupSize;
        bytes += groups * kQuantScaleBytes + (groups * bits + 7) / 8; // scales + packed zero points
    } else if (dtype == ServingDtype::FP8) {
        bytes += (params + kFp8BlockElements - 1) / kFp8BlockElements * kFp8ScaleBytes;
    }
    return bytes;
}

std::string_view inferenceCategoryKey(InferenceCategory c)
{
    switch (c) {
    case InferenceCategory::Weights:
        return "weights";
    case InferenceCategory::KvCache:
        return "kv_cache";
    case InferenceCategory::Activations:
        return "activations";
    case InferenceCategory::Runtime:
        return "runtime";
    }
    return "runtime";
}

std::string_view inferenceCategoryLabel(InferenceCategory c)
{
    switch (c) {
    case InferenceCategory::Weights:
        return "Weights";
    case InferenceCategory::KvCache:
        return "KV cache";
    case InferenceCategory::Activations:
        return "Activations";
    case InferenceCategory::Runtime:
        return "Runtime";
    }
    return "Runtime";
}

bool InferenceLedger::fits() const
{
    return std::all_of(ranks.begin(), ranks.end(), [](const InferenceRank &r) { return r.fits; });
}

InferenceLedger computeInference(const Config &config, std::optional<Bytes> trainingPeak)
{
    const ModelConfig &m = config.model;
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size;
    const std::int64_t p = par.pipeline_model_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size;
    const std::int64_t etp = par.expertTensorParallel();

    InferenceLedger out;
    out.settings = resolvedInference(config);
    const InferenceConfig &inf = out.settings;
    const std::int64_t ctx = *inf.context_length;
    out.total_parameters = totalParameters(config);
    out.cached_tokens = cachedTokens(m, ctx);
    out.kv_cache_bytes_per_token = kvCacheBytesPerToken(config);
    out.capacity_bytes = config.hardware.hbm_bytes;
    out.training_peak_bytes = trainingPeak ? *trainingPeak : peakLedger(config).peak_bytes;

    const LayerParams denseWhole = layerParams(m, false, 1, 1, 1);
    const LayerParams moeWhole = m.isMoe() ? layerParams(m, true, 1, 1, 1) : denseWhole;
    std::int64_t layerParamsWhole = 0;
    for (std::int64_t l = 0; l < m.num_layers; ++l) {
        const LayerParams &lp = m.isMoeLayer(l) ? moeWhole : denseWhole;
        layerParamsWhole += lp.dense.params + lp.expert.params;
    }
    const ServingDtype head = headDtype(inf.weights_dtype);
    out.weights_bytes = servedWeightBytes(layerParamsWhole, inf.weights_dtype)
                        + servedWeightBytes(out.total_parameters - layerParamsWhole, head);

    // Serving has no virtual stages: a rank's layers are its chunks together.
    const LayerParams dense = layerParams(m, false, t, e, etp);
    const LayerParams moe = m.isMoe() ? layerParams(m, true, t, e, etp) : dense;
    const EmbeddingParams emb = embeddingParams(m, config.training.seq_length, t, p);
    const std::vector<StageLayers> stages = stageLayers(config, false);
    const ForwardShape prefill = prefillShape(config, inf);
    const ForwardShape decode = decodeShape(config, inf);
    const Bytes kvLayerToken = kvBytesPerTokenLayer(m, inf.kv_cache_dtype, t);
    const std::string wname(servingDtypeName(inf.weights_dtype));

    for (std::int64_t r = 0; r < p; ++r) {
        InferenceRank rank;
        rank.pipeline_rank = static_cast<int>(r);
        std::int64_t layerP = 0;
        bool hasDense = false, hasMoe = false;
        for (std::size_t s = static_cast<std::size_t>(r); s < stages.size(); s += static_cast<std::size_t>(p)) {
            for (std::int64_t l = stages[s].first; l < stages[s].first + stages[s].count; ++l) {
                const bool isMoe = m.isMoeLayer(l);
                (isMoe ? hasMoe : hasDense) = true;
                const LayerParams &lp = isMoe ? moe : dense;
                layerP += lp.dense.params + lp.expert.params;
                ++rank.layers;
            }
        }
        const bool first = r == 0, last = r == p - 1;
        std::int64_t headP = 0;
        if (first)
            headP += emb.word.params + emb.position.params;
        if (last)
            headP += emb.output.params + emb.finalNorm.params;
        rank.parameters = layerP + headP;
        const auto add = [&](InferenceCategory c, std::string label, Bytes bytes, std::string formula) {
            rank.device[static_cast<std::size_t>(c)] += bytes;
            rank.entries.push_back({c, std::move(label), bytes, std::move(formula)});
        };
        add(InferenceCategory::Weights, "Transformer layers", servedWeightBytes(layerP, inf.weights_dtype),
            num(layerP) + " parameters (" + num(rank.layers) + " layers, /t = " + num(t)
                + (m.isMoe() ? ", experts /e = " + num(e) : std::string()) + ") in " + wname
                + (inf.weights_dtype == ServingDtype::INT8 || inf.weights_dtype == ServingDtype::INT4
                       ? " + an fp16 scale and a zero point per " + num(kQuantGroupSize) + " weights"
                   : inf.weights_dtype == ServingDtype::FP8 ? " + an fp32 scale per 128×128 block"
                                                            : ""));
        if (headP > 0)
            add(InferenceCategory::Weights, "Embeddings and output layer", servedWeightBytes(headP, head),
                num(headP) + " parameters in " + std::string(servingDtypeName(head)) + " (not quantised)");
        const Bytes kv = rank.layers * kvLayerToken * out.cached_tokens * inf.batch_size;
        add(InferenceCategory::KvCache, "KV cache", kv,
            num(rank.layers) + " layers × " + num(kvLayerToken) + " B per token per layer × " + num(out.cached_tokens)
                + " tokens × " + num(inf.batch_size) + (inf.batch_size == 1 ? " sequence" : " sequences")
                + (m.multi_latent_attention    ? " (MLA latent + rotary key, whole on every TP rank)"
                   : kvHeadsPerRank(m, t) == 1 ? " (1 KV head per rank)"
                                               : " (" + num(kvHeadsPerRank(m, t)) + " KV heads per rank)"));
        rank.prefill = forwardWorkingSet(config, prefill, hasDense, hasMoe, last);
        rank.decode = forwardWorkingSet(config, decode, hasDense, hasMoe, last);
        const bool prefillWider = rank.prefill.total >= rank.decode.total;
        const WorkingSet &widest = prefillWider ? rank.prefill : rank.decode;
        add(InferenceCategory::Activations,
            prefillWider ? "Working set of a prefill forward" : "Working set of a decode step", widest.total,
            "max(prefill " + gb(rank.prefill.total) + ", decode " + gb(rank.decode.total) + "); " + widest.formula);
        for (const ReservePart &part : runtimeReserveParts(config, rank.pipeline_rank))
            add(InferenceCategory::Runtime, part.label, part.bytes, part.formula);
        for (Bytes b : rank.device)
            rank.device_total_bytes += b;
        rank.fits = rank.device_total_bytes <= config.hardware.hbm_bytes;
        if (rank.device_total_bytes > out.peak_bytes) {
            out.peak_bytes = rank.device_total_bytes;
            out.peak_rank = rank.pipeline_rank;
        }
        out.ranks.push_back(std::move(rank));
    }
    return out;
}

} // namespace memledger
