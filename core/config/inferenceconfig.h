// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace memledger {

// The dtypes a served model stores its weights and KV cache in. int8 and
// int4 are weight-only formats with group scales (core/serving/inference.h says which
// convention); they are not KV cache dtypes.
enum class ServingDtype { BF16, FP16, FP8, INT8, INT4 };

inline std::string_view servingDtypeName(ServingDtype d)
{
    switch (d) {
    case ServingDtype::BF16:
        return "bf16";
    case ServingDtype::FP16:
        return "fp16";
    case ServingDtype::FP8:
        return "fp8";
    case ServingDtype::INT8:
        return "int8";
    case ServingDtype::INT4:
        return "int4";
    }
    return "bf16";
}

// Bits of one stored element, before any scales.
inline int servingDtypeBits(ServingDtype d)
{
    switch (d) {
    case ServingDtype::BF16:
    case ServingDtype::FP16:
        return 16;
    case ServingDtype::FP8:
    case ServingDtype::INT8:
        return 8;
    case ServingDtype::INT4:
        return 4;
    }
    return 16;
}

inline constexpr std::initializer_list<ServingDtype> kWeightsDtypes
    = {ServingDtype::BF16, ServingDtype::FP16, ServingDtype::FP8, ServingDtype::INT8, ServingDtype::INT4};
// vLLM's kv_cache_dtype: "auto" (the model's 16-bit dtype) or fp8.
inline constexpr std::initializer_list<ServingDtype> kKvCacheDtypes
    = {ServingDtype::BF16, ServingDtype::FP16, ServingDtype::FP8};

// The optional `inference` section: the same model served (presets/README.md).
struct InferenceConfig
{
    std::int64_t batch_size = 1; // sequences decoded together
    std::optional<std::int64_t> context_length; // prompt + generated tokens per sequence; unset: training.seq_length
    ServingDtype kv_cache_dtype = ServingDtype::BF16;
    ServingDtype weights_dtype = ServingDtype::BF16;
    // Tokens one prefill forward processes (vLLM's max_num_batched_tokens
    // with chunked prefill); 0: the whole batch's prompts at once.
    std::int64_t prefill_chunk_tokens = 0;
    bool operator==(const InferenceConfig &) const = default;
};

} // namespace memledger
