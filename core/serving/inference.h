// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/model/kvcache.h"
#include "core/serving/inferenceactivations.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// The same model served instead of trained (seed 001's contrast): weights in
// the serving dtype, the KV cache of every sequence, one forward's working
// set (an activation dies once the next layer has read it) and the runtime
// reserve. No gradients, no optimizer states, nothing kept for a backward.

// Weight-only int8/int4 store one scale and one zero point per group of input
// channels of each output column: the GPTQ / AWQ checkpoint layout (fp16
// `scales`, `qzeros` packed at the weight's bit width) with group size 128,
// AutoAWQ's default `q_group_size` and the usual GPTQ `group_size`.
constexpr std::int64_t kQuantGroupSize = 128;
constexpr int kQuantScaleBytes = 2; // fp16
// fp8 weights carry one fp32 scale per 128 × 128 block (DeepSeek-V3 report
// §3.3, the `weight_block_size` of its checkpoint, read by vLLM).
constexpr std::int64_t kFp8BlockElements = 128 * 128;
constexpr int kFp8ScaleBytes = 4;

// Bytes of `params` weights stored as `dtype`, scales included.
Bytes servedWeightBytes(std::int64_t params, ServingDtype dtype);

enum class InferenceCategory { Weights, KvCache, Activations, Runtime };
constexpr int kInferenceCategoryCount = 4;
constexpr std::array<InferenceCategory, kInferenceCategoryCount> kInferenceCategories = {
    InferenceCategory::Weights, InferenceCategory::KvCache, InferenceCategory::Activations, InferenceCategory::Runtime};
std::string_view inferenceCategoryKey(InferenceCategory c); // "kv_cache" (JSON keys)
std::string_view inferenceCategoryLabel(InferenceCategory c); // "KV cache"

struct InferenceEntry
{
    InferenceCategory category = InferenceCategory::Weights;
    std::string label;
    Bytes bytes = 0;
    std::string formula; // with the values substituted
};

/// One pipeline rank of the serving split (every tensor-parallel rank of it holds the same).
struct InferenceRank
{
    int pipeline_rank = 0;
    std::int64_t layers = 0;
    std::int64_t parameters = 0; // held by this rank (elements)
    std::array<Bytes, kInferenceCategoryCount> device{};
    Bytes device_total_bytes = 0;
    bool fits = false; // device total <= hbm capacity
    WorkingSet prefill; // one prefill forward
    WorkingSet decode; // one decode step
    std::vector<InferenceEntry> entries;
};

struct InferenceLedger
{
    InferenceConfig settings; // resolved: context_length is set
    std::int64_t total_parameters = 0;
    std::int64_t cached_tokens = 0; // per sequence, after the sliding window
    Bytes kv_cache_bytes_per_token = 0; // whole model, one sequence, before any split
    Bytes weights_bytes = 0; // whole model in weights_dtype, before any split
    std::vector<InferenceRank> ranks;
    int peak_rank = 0;
    Bytes peak_bytes = 0;
    Bytes capacity_bytes = 0;
    Bytes training_peak_bytes = 0; // the training plan's peak for the same preset (peakLedger)
    bool fits() const;
};

// Serving split: t divides weights and KV heads, p the layers, e the routed
// experts (ETP inside each). Precondition: validate(config) has no errors.
// `trainingPeak`: the training plan's peak when the caller has it
// (core/timeline/peakledger.h); else it is simulated here.
InferenceLedger computeInference(const Config &config, std::optional<Bytes> trainingPeak = std::nullopt);

} // namespace memledger
