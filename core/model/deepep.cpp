// SPDX-License-Identifier: MIT
#include "core/model/deepep.h"

#include <algorithm>
#include <array>

namespace memledger {

namespace {

// One recommended Config (deep_ep/buffers/legacy.py get_dispatch_config /
// get_combine_config): the chunked token counts that size the buffers.
struct ChunkConfig
{
    std::int64_t nvlRecv, rdmaSend, rdmaRecv;
};
struct GroupConfigs
{
    std::int64_t ranks;
    ChunkConfig dispatch, combine;
};

constexpr std::array<GroupConfigs, 12> kConfigs = {{
    {2, {256, 6, 128}, {256, 6, 128}},
    {4, {256, 6, 128}, {256, 6, 128}},
    {8, {256, 6, 128}, {256, 6, 128}},
    {16, {288, 20, 128}, {288, 12, 128}},
    {24, {288, 8, 128}, {288, 8, 128}},
    {32, {288, 8, 128}, {288, 8, 128}},
    {48, {288, 8, 128}, {288, 8, 128}},
    {64, {288, 8, 128}, {288, 8, 128}},
    {96, {480, 12, 128}, {480, 8, 128}},
    {128, {560, 12, 128}, {560, 8, 128}},
    {144, {720, 12, 128}, {720, 8, 128}},
    {160, {720, 12, 128}, {720, 8, 128}},
}};

constexpr std::int64_t kNumSms = 20; // deep_ep Buffer.num_sms
constexpr std::int64_t kMaxNvlPeers = 8; // NUM_MAX_NVL_PEERS
constexpr std::int64_t kMaxTopK = 128;
constexpr std::int64_t kMaxScales = 128;
constexpr std::int64_t kSourceMetaBytes = 8; // internode::SourceMeta: two ints
constexpr std::int64_t kTopkIdxBytes = 8; // topk_idx_t: int64 (EP_NUM_TOPK_IDX_BITS 64)

std::int64_t alignUp(std::int64_t a, std::int64_t b)
{
    return (a + b - 1) / b * b;
}

// Config's constructor rounds the RDMA receive queue up to whole send chunks.
std::int64_t rdmaRecv(const ChunkConfig &c)
{
    return alignUp(c.rdmaRecv, c.rdmaSend);
}

Bytes nvlHint(std::int64_t recvTokens, std::int64_t hiddenBytes, std::int64_t ranks)
{
    const std::int64_t rdmaRanks = std::max<std::int64_t>(ranks / kMaxNvlPeers, 1);
    const std::int64_t nvlRanks = std::min(ranks, kMaxNvlPeers);
    const std::int64_t lanes = kNumSms / 2 * nvlRanks; // channels × NVLink peers
    Bytes b = lanes * (2 * rdmaRanks + 3) * 4;
    b += lanes * recvTokens
         * (hiddenBytes + kSourceMetaBytes + kMaxTopK * kTopkIdxBytes + kMaxTopK * 4 + kMaxScales * 4);
    return alignUp(b, 128);
}

Bytes rdmaHint(std::int64_t recvTokens, std::int64_t hiddenBytes, std::int64_t ranks)
{
    if (ranks <= kMaxNvlPeers)
        return 0;
    const std::int64_t lanes = kNumSms / 2 * (ranks / kMaxNvlPeers); // channels × RDMA peers
    Bytes b = lanes * (kMaxNvlPeers * 2 + 2) * 2 * 4;
    // Send and receive halves: the token, its metadata, top-k indices and
    // weights, scales and an int4 of signals per token.
    b += lanes * recvTokens * 2
         * (hiddenBytes + kSourceMetaBytes + kMaxTopK * kTopkIdxBytes + kMaxTopK * 4 + kMaxScales * 4 + 16);
    return alignUp(b, 128);
}

} // namespace

std::optional<DeepEpBuffer> deepEpBuffer(std::int64_t epRanks, std::int64_t hiddenBytes)
{
    const auto it
        = std::find_if(kConfigs.begin(), kConfigs.end(), [&](const GroupConfigs &g) { return g.ranks == epRanks; });
    if (it == kConfigs.end())
        return std::nullopt;
    DeepEpBuffer out;
    out.channels = kNumSms / 2;
    out.nvlRecvTokens = std::max(it->dispatch.nvlRecv, it->combine.nvlRecv);
    out.rdmaRecvTokens = std::max(rdmaRecv(it->dispatch), rdmaRecv(it->combine));
    for (const ChunkConfig &c : {it->dispatch, it->combine}) {
        out.nvl = std::max(out.nvl, nvlHint(c.nvlRecv, hiddenBytes, epRanks));
        out.rdma = std::max(out.rdma, rdmaHint(rdmaRecv(c), hiddenBytes, epRanks));
    }
    return out;
}

} // namespace memledger
