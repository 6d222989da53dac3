// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"

#include <cstdint>
#include <optional>

namespace memledger {

// The buffer DeepEP's high-throughput kernels register for one
// expert-parallel group (deep_ep.Buffer, as Megatron-LM's fused_a2a.get_buffer
// sizes it: the larger of the dispatch and combine configs' size hints,
// csrc/legacy/config.hpp get_nvl_buffer_size_hint / get_rdma_buffer_size_hint,
// with the configs deep_ep/buffers/legacy.py recommends for the group size and
// Buffer.num_sms = 20). DeepEP allocates it itself (cudaMalloc shared by IPC
// for NVLink, NVSHMEM's symmetric heap for RDMA), outside PyTorch's caching
// allocator.
struct DeepEpBuffer
{
    Bytes nvl = 0; // NVLink peers within a node (8 at most)
    Bytes rdma = 0; // other nodes; none for a group of 8 or fewer
    std::int64_t nvlRecvTokens = 0; // the chunked receive queue each config asks for (the larger)
    std::int64_t rdmaRecvTokens = 0;
    std::int64_t channels = 0; // num_sms / 2: each channel's queues run on a pair of SMs
};

// `epRanks`: the expert-parallel group; `hiddenBytes`: h × max(element size, 2)
// (fused_a2a.get_hidden_bytes). Nothing for a group size DeepEP has no config for.
std::optional<DeepEpBuffer> deepEpBuffer(std::int64_t epRanks, std::int64_t hiddenBytes);

} // namespace memledger
