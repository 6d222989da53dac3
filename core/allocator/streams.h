// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

namespace memledger {

// A CUDA stream, as the caching allocator sees it: each stream has its own
// pool, and a block freed by one stream's tensor serves only that stream's
// later requests until empty_cache gives its segment back
// (c10/cuda/CUDACachingAllocator.cpp, BlockPool keyed by stream).
using StreamId = std::int32_t;

// The streams a simulated training step allocates on.
enum : StreamId {
    kComputeStream = 0, // the default stream: the model's forward, backward and optimizer step
    kCopyStream = 1, // activation offload: tensors copied back from the host
    // PyTorch FSDP2 (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
    // foreach_reduce): each unit's reduce-scatter output, which becomes the
    // sharded parameters' .grad, is allocated on the reduce-scatter stream.
    kFsdpReduceScatterStream = 2,
    // FSDP2's foreach_all_gather: each unit's all-gather output (and its
    // input, the shards cast to the compute dtype) on the copy-in stream.
    kFsdpAllGatherStream = 3,
};

} // namespace memledger
