// SPDX-License-Identifier: MIT
#include "core/model/kvcache.h"

#include <algorithm>

namespace memledger {

std::int64_t kvHeadsPerRank(const ModelConfig &model, std::int64_t t)
{
    return std::max<std::int64_t>(1, model.queryGroups() / std::max<std::int64_t>(1, t));
}

Bytes kvBytesPerTokenLayer(const ModelConfig &model, ServingDtype dtype, std::int64_t t)
{
    const Bytes b = servingDtypeBits(dtype) / 8;
    if (model.multi_latent_attention) // DeepSeek-V2 §2.1.3: (d_c + d_h^R) elements per token per layer
        return (model.kv_lora_rank + model.qk_pos_emb_head_dim) * b;
    return 2 * kvHeadsPerRank(model, t) * model.headDim() * b;
}

Bytes kvCacheBytesPerToken(const Config &config)
{
    return config.model.num_layers * kvBytesPerTokenLayer(config.model, resolvedInference(config).kv_cache_dtype, 1);
}

std::int64_t cachedTokens(const ModelConfig &model, std::int64_t contextLength)
{
    // Mistral 7B's rolling buffer cache keeps the last `sliding_window` tokens.
    return model.sliding_window > 0 ? std::min(contextLength, model.sliding_window) : contextLength;
}

} // namespace memledger
