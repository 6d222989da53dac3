// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// The runtime reserve: device memory a training process holds outside what
// PyTorch's caching allocator reserves (docs/accounting.md, "Runtime").
// Under hardware.runtime_reserve "bytes" it is one figure,
// hardware.runtime_reserve_bytes; under "modelled" it is named parts, each
// with its source: the CUDA context and the kernels loaded into it, the
// cuBLAS workspace, and each NCCL communicator's buffers.

// NCCL's default buffers of one connection on one channel, one per protocol
// (NCCL's src/init.cc: DEFAULT_BUFFSIZE, DEFAULT_LL128_BUFFSIZE,
// DEFAULT_LL_BUFFSIZE; NCCL_BUFFSIZE, NCCL_LL128_BUFFSIZE and
// NCCL_LL_BUFFSIZE override them).
inline constexpr Bytes kNcclSimpleBuffer = Bytes(1) << 22; // 4 MiB
inline constexpr Bytes kNcclLl128Buffer = 120 * 640 * 8 * 8; // elements per thread × threads × steps × 8 B
inline constexpr Bytes kNcclLlBuffer = 8 * 512 * 8 * 16; // lines per thread × threads × steps × 16 B
// Point-to-point channels NCCL opens per peer (NCCL_NCHANNELS_PER_NET_PEER's default).
inline constexpr std::int64_t kNcclP2pChannelsPerPeer = 2;

// One NCCL communicator the plan's framework creates on a rank: a process
// group that runs collectives (a ring, and a tree when it spans nodes) or
// that sends to `peers` other ranks (pipeline sends, context parallelism's
// ring, MoE's all-to-all, which NCCL runs as point-to-point sends).
struct NcclGroup
{
    std::string name; // "tensor-parallel group"
    std::string degree; // "t = 8"
    std::int64_t ranks = 1;
    std::int64_t peers = 0; // point-to-point peers; 0: a collective
    bool spansNodes = false;
};

// The degrees the communicators depend on, for one plan (reserveDegreesOf)
// or one candidate of the plan search.
struct ReserveDegrees
{
    std::int64_t t = 1, p = 1, v = 1, d = 1, c = 1, e = 1, etp = 1;
    bool moe = false;
    bool deepEp = false; // tokens through DeepEP's own buffers (its ledger row), not NCCL's point-to-point
    bool megatronGroups = true; // the model-parallel and embedding groups of Megatron's parallel_state
    bool tiedEmbedding = false; // first and last stage all-reduce the shared embedding's gradient
    CpCommType cpComm = CpCommType::P2P;
    std::int64_t gpusPerNode = 8;
};
ReserveDegrees reserveDegreesOf(const Config &config);

// The communicators on pipeline rank `rank`: the embedding group is the first
// and the last rank's only, and without interleaving (v = 1) they send to one
// neighbour, the others to two.
std::vector<NcclGroup> ncclGroups(const ReserveDegrees &deg, std::int64_t rank);

// A communicator's buffers: a collective's ring holds one connection's
// buffers (Simple, LL128, LL) per channel, two when its tree spans nodes; a
// point-to-point group sends and receives through Simple buffers on
// kNcclP2pChannelsPerPeer channels per peer.
Bytes ncclGroupBytes(const NcclGroup &group, std::int64_t channels);

struct ReservePart
{
    std::string label;
    Bytes bytes = 0;
    std::string formula; // with the plan's values
    std::string source; // where the figure comes from
};

// The parts on pipeline rank `rank`. "bytes": one part, "Runtime reserve".
std::vector<ReservePart> runtimeReserveParts(const Config &config, std::int64_t rank);
// Their sum on rank `rank`, and the largest over the plan's ranks.
Bytes runtimeReserveBytes(const Config &config, std::int64_t rank);
Bytes maxRuntimeReserveBytes(const Config &config);
// The same sum from degrees (the plan search's bound; equal to
// runtimeReserveBytes for the plan the degrees describe).
Bytes runtimeReserveBytes(const HardwareConfig &hardware, const ReserveDegrees &deg, std::int64_t rank);

} // namespace memledger
