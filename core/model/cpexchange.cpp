// SPDX-License-Identifier: MIT
#include "core/model/cpexchange.h"

#include "core/base/textcat.h"
#include "core/base/units.h"
#include "core/model/activations.h"

#include <algorithm>

namespace memledger {

CpExchange contextParallelExchange(const Config &config, bool withText)
{
    CpExchange ex;
    const std::int64_t c = config.parallelism.context_parallel_size, t = config.parallelism.tensor_model_parallel_size;
    if (c <= 1)
        return ex;
    const ModelConfig &m = config.model;
    const std::int64_t A = activationBytes(config);
    const std::int64_t tokens = config.training.seq_length / c * config.training.micro_batch_size;
    // K and V widths on this tensor-parallel rank (grouped heads are never split below one).
    const std::int64_t kvWidth
        = m.multi_latent_attention ? m.num_attention_heads / t * (m.qk_head_dim + m.qk_pos_emb_head_dim + m.v_head_dim)
                                   : 2 * std::max<std::int64_t>(1, m.queryGroups() / t) * m.headDim();
    const std::int64_t chunk = tokens * kvWidth * A; // one sequence chunk's K and V
    switch (config.strategy.cp_comm_type) {
    case CpCommType::P2P:
        ex.bytes = 2 * chunk;
        break;
    case CpCommType::AllGather:
        // The forward gathers every chunk's K and V once; the backward gathers
        // them again and accumulates this chunk's dK and dV in fp32
        // (convert_to_f32), passing the accumulators round the ring with a
        // send and a receive buffer: three fp32 copies of a chunk.
        ex.bytes = (c + 6) * chunk;
        break;
    case CpCommType::A2A:
        ex.bytes = 2 * tokens * (2 * (m.num_attention_heads / t * m.headDim()) + kvWidth) * A;
        break;
    }
    if (!withText)
        return ex;
    const std::string chunkWhy = cat(formatThousands(tokens), " tokens (s·b/c) × ", formatThousands(kvWidth),
                                     " K and V elements × ", std::to_string(A), " B");
    switch (config.strategy.cp_comm_type) {
    case CpCommType::P2P:
        ex.label = "Context-parallel K/V ring buffers";
        ex.formula = cat("2 chunks (the one in use and the next arriving) × ", chunkWhy);
        ex.note = "cp_comm_type p2p: Transformer Engine's ring (AttnFuncWithCPAndKVP2P) sends each chunk on while the "
                  "next is computed";
        break;
    case CpCommType::AllGather:
        ex.label = "Context-parallel gathered K/V";
        ex.formula
            = cat("(", formatThousands(c), " chunks gathered + 3 fp32 dK/dV copies of one, 6 at 16 bits) × ", chunkWhy);
        ex.note = "cp_comm_type all_gather: PyTorch's context_parallel (the \"allgather\" rotater of "
                  "_templated_ring_attention and its backward) and Llama 3's CP gather the whole sequence's K and V "
                  "for each layer's attention";
        break;
    case CpCommType::A2A:
        ex.label = "Context-parallel all-to-all buffers";
        ex.formula = cat("2 (sent and received) × ", formatThousands(tokens), " tokens × (q and output, K and V) × ",
                         std::to_string(A), " B");
        ex.note = "cp_comm_type a2a: DeepSpeed-Ulysses turns sequence shards into head shards and back with "
                  "all-to-alls";
        break;
    }
    return ex;
}

} // namespace memledger
