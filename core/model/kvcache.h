// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>

namespace memledger {

// The KV cache a served model keeps per token: what the serving ledger counts
// and what validation holds the inference section's batch and context against.

// KV heads one tensor-parallel rank caches: g / t, or one replicated head
// per rank when t > g (vLLM's num_kv_heads, max(1, g // t)).
std::int64_t kvHeadsPerRank(const ModelConfig &model, std::int64_t t);
// The KV cache of one token in one layer on one tensor-parallel rank:
// 2 (K and V) × KV heads × head dim × bytes, or, with multi-latent
// attention, the compressed latent plus the rotary key (kv_lora_rank +
// qk_pos_emb_head_dim), which every tensor-parallel rank holds whole.
Bytes kvBytesPerTokenLayer(const ModelConfig &model, ServingDtype dtype, std::int64_t t);
// The whole model, one sequence, before any parallel split (the CLI's kv_cache_bytes_per_token).
Bytes kvCacheBytesPerToken(const Config &config);
// Tokens a sequence keeps in its cache: the context, capped by the sliding window.
std::int64_t cachedTokens(const ModelConfig &model, std::int64_t contextLength);

} // namespace memledger
