// SPDX-License-Identifier: MIT
#include "core/model/runtimereserve.h"

#include "core/base/textcat.h"

#include <algorithm>

namespace memledger {

namespace {

constexpr Bytes kNcclConnectionBuffers = kNcclSimpleBuffer + kNcclLl128Buffer + kNcclLlBuffer;

std::string gb(Bytes bytes)
{
    return formatGB(static_cast<double>(bytes));
}

std::string num(std::int64_t n)
{
    return std::to_string(n);
}

} // namespace

ReserveDegrees reserveDegreesOf(const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    return {.t = par.tensor_model_parallel_size,
            .p = par.pipeline_model_parallel_size,
            .v = par.virtual_pipeline_model_parallel_size,
            .d = par.data_parallel_size,
            .c = par.context_parallel_size,
            .e = par.expert_model_parallel_size,
            .etp = par.expertTensorParallel(),
            .moe = config.model.isMoe(),
            .deepEp = config.strategy.moe_token_dispatcher == MoeDispatcher::DeepEP,
            .megatronGroups = config.strategy.framework == Framework::Megatron,
            .tiedEmbedding = !config.model.untie_embeddings_and_output_weights,
            .cpComm = config.strategy.cp_comm_type,
            .gpusPerNode = config.hardware.gpus_per_node};
}

// Megatron's rank order (parallel_state: t fastest, then c, d, p): a group
// spans nodes when its ranks lie further apart than one node's GPUs.
std::vector<NcclGroup> ncclGroups(const ReserveDegrees &g, std::int64_t rank)
{
    std::vector<NcclGroup> out;
    const std::int64_t G = g.gpusPerNode;
    auto add = [&](std::string name, std::string degree, std::int64_t ranks, std::int64_t peers, std::int64_t span) {
        out.push_back({std::move(name), std::move(degree), ranks, peers, span > G});
    };
    if (g.t > 1)
        add("tensor-parallel group", cat("t = ", num(g.t)), g.t, 0, g.t);
    if (g.d * g.c > 1) // gradients reduced (and ZeRO's parameters gathered) over d·c
        add("data-parallel group", g.c > 1 ? cat("d·c = ", num(g.d * g.c)) : cat("d = ", num(g.d)), g.d * g.c, 0,
            g.t * g.c * g.d);
    if (g.c > 1) {
        const std::int64_t peers = g.cpComm == CpCommType::AllGather ? 0
                                   : g.cpComm == CpCommType::A2A     ? g.c - 1
                                                                     : std::min<std::int64_t>(2, g.c - 1);
        add("context-parallel group", cat("c = ", num(g.c)), g.c, peers, g.t * g.c);
    }
    const bool edge = rank == 0 || rank == g.p - 1;
    if (g.p > 1) // sends to the previous and the next stage; interleaved chunks wrap from the last to the first
        add("pipeline group", cat("p = ", num(g.p)), g.p, edge && g.v == 1 ? 1 : std::min<std::int64_t>(2, g.p - 1),
            g.t * g.c * g.d * g.p);
    if (g.moe && g.e > 1 && !g.deepEp) // the token all-to-all, point to point
        add("expert-parallel group", cat("e = ", num(g.e)), g.e, g.e - 1, g.t * g.e);
    const std::int64_t edp = g.moe ? std::max<std::int64_t>(1, g.t * g.c * g.d / (g.etp * g.e)) : 1;
    if (g.moe && edp > 1)
        add("expert-data-parallel group", cat("t·d·c/(etp·e) = ", num(edp)), edp, 0, g.t * g.c * g.d);
    if (g.megatronGroups && g.t > 1 && g.p > 1) // the gradient norm's all-reduce (clip_grad_norm)
        add("model-parallel group", cat("t·p = ", num(g.t * g.p)), g.t * g.p, 0, g.t * g.c * g.d * g.p);
    if (g.megatronGroups && g.tiedEmbedding && g.p > 1 && edge)
        add("embedding group", "first and last stage", 2, 0, g.t * g.c * g.d * g.p);
    return out;
}

Bytes ncclGroupBytes(const NcclGroup &group, std::int64_t channels)
{
    if (group.peers > 0)
        return group.peers * kNcclP2pChannelsPerPeer * kNcclSimpleBuffer;
    return channels * kNcclConnectionBuffers * (group.spansNodes ? 2 : 1);
}

namespace {

ReservePart ncclPart(const NcclGroup &group, std::int64_t channels)
{
    const Bytes bytes = ncclGroupBytes(group, channels);
    std::string formula
        = group.peers > 0
              ? cat(num(group.peers), " peer", group.peers > 1 ? "s" : "", " × ", num(kNcclP2pChannelsPerPeer),
                    " channels × 4 MiB Simple buffer = ", gb(bytes))
              : cat("hardware.nccl_channels ", num(channels), " × (4 MiB Simple + 4.6875 MiB LL128 + 0.5 MiB LL)",
                    group.spansNodes ? " × 2 (ring and tree: the group spans nodes)" : "", " = ", gb(bytes));
    std::string source
        = group.peers > 0
              ? "an estimate: NCCL runs sends and all-to-alls point to point on NCCL_NCHANNELS_PER_NET_PEER (2) "
                "channels per peer, each connection's Simple buffer (NCCL_BUFFSIZE, 4 MiB) on one of its ends"
              : "an estimate: NCCL's default buffers per channel of a connection (src/init.cc: NCCL_BUFFSIZE 4 MiB, "
                "NCCL_LL128_BUFFSIZE, NCCL_LL_BUFFSIZE), one ring connection's on each rank; NCCL picks the "
                "channel count from the topology (its INFO log prints it), which nccl_channels stands for";
    return {cat("NCCL buffers: ", group.name, " (", group.degree, ")"), bytes, std::move(formula), std::move(source)};
}

} // namespace

std::vector<ReservePart> runtimeReserveParts(const Config &config, std::int64_t rank)
{
    const HardwareConfig &hw = config.hardware;
    if (hw.runtime_reserve == RuntimeReserveMode::Bytes)
        return {{"Runtime reserve", hw.runtime_reserve_bytes,
                 cat("hardware.runtime_reserve_bytes = ", gb(hw.runtime_reserve_bytes)),
                 "CUDA context, cuBLAS/NCCL workspaces: one budget (2 GB is a common one on Hopper- and "
                 "Ampere-class GPUs); hardware.runtime_reserve \"modelled\" names its parts"}};
    std::vector<ReservePart> parts;
    parts.push_back({"CUDA context and loaded kernels", hw.cuda_context_bytes,
                     cat("hardware.cuda_context_bytes = ", gb(hw.cuda_context_bytes)),
                     "device memory the driver takes outside PyTorch's allocator; PyTorch PR #86509 measured "
                     "666,632,192 B with every kernel loaded (CUDA_MODULE_LOADING=DEFAULT) and 287,047,680 B "
                     "lazily, each with one 20 MiB allocator segment; under LAZY (PyTorch's default since 1.13) a "
                     "run loads the kernels it launches, at most all of them"});
    parts.push_back(
        {"cuBLAS workspace", hw.cublas_workspace_bytes,
         cat("hardware.cublas_workspace_bytes = ", gb(hw.cublas_workspace_bytes), " (one handle, the compute stream)"),
         "PyTorch's CublasHandlePool.cpp allocates it through the caching allocator once per handle "
         "and stream and keeps it (CUBLAS_WORKSPACE_CONFIG, default \":4096:8\" = 32 MiB on Hopper and "
         "later, \":4096:2:16:8\" = 8.125 MiB before); counted here since the allocator's simulated "
         "requests do not hold it"});
    for (const NcclGroup &group : ncclGroups(reserveDegreesOf(config), rank))
        parts.push_back(ncclPart(group, hw.nccl_channels));
    return parts;
}

Bytes runtimeReserveBytes(const HardwareConfig &hw, const ReserveDegrees &deg, std::int64_t rank)
{
    if (hw.runtime_reserve == RuntimeReserveMode::Bytes)
        return hw.runtime_reserve_bytes;
    Bytes total = hw.cuda_context_bytes + hw.cublas_workspace_bytes;
    for (const NcclGroup &group : ncclGroups(deg, rank))
        total += ncclGroupBytes(group, hw.nccl_channels);
    return total;
}

Bytes runtimeReserveBytes(const Config &config, std::int64_t rank)
{
    return runtimeReserveBytes(config.hardware, reserveDegreesOf(config), rank);
}

Bytes maxRuntimeReserveBytes(const Config &config)
{
    // Ranks differ only at the edges (the embedding group, one pipeline neighbour): the first, a middle one.
    const std::int64_t p = config.parallelism.pipeline_model_parallel_size;
    return std::max(runtimeReserveBytes(config, 0), runtimeReserveBytes(config, p > 2 ? 1 : 0));
}

} // namespace memledger
