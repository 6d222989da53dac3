// SPDX-License-Identifier: MIT
// The runtime reserve in named parts (hardware.runtime_reserve "modelled",
// docs/accounting.md "Runtime"): each part against the figure it cites,
// worked by hand here: PyTorch PR #86509's CUDA context, PyTorch's default
// CUBLAS_WORKSPACE_CONFIG, NCCL's default buffers per channel and connection
// (src/init.cc) times the communicators the plan's groups create.
#include "core/check/validate.h"
#include "core/ledger/ledger.h"
#include "core/model/runtimereserve.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/reserved.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

// PyTorch PR #86509: cudaMemGetInfo's used bytes after one 6.4 MB tensor,
// every kernel loaded eagerly; the tensor sits in one 20 MiB segment of the
// caching allocator (a request under 10 MiB gets a 20 MiB segment).
constexpr Bytes kContext = 666632192 - 20 * 1024 * 1024; // 645,660,672 B
// CUBLAS_WORKSPACE_CONFIG ":4096:8": 8 chunks of 4096 KiB.
constexpr Bytes kCublas = 8 * 4096 * 1024; // 33,554,432 B
// NCCL's defaults for one connection on one channel: Simple 1 << 22; LL128
// NCCL_LL128_ELEMS_PER_THREAD 120 × NCCL_LL128_MAX_NTHREADS 640 × NCCL_STEPS
// 8 × 8 B; LL NCCL_LL_LINES_PER_THREAD 8 × NCCL_LL_MAX_NTHREADS 512 × 8 steps
// × 16 B.
constexpr Bytes kConnection = 4194304 + 4915200 + 524288; // 9,633,792 B
constexpr Bytes kRing16 = 16 * kConnection; // 16 channels, one ring connection: 154,140,672 B
constexpr Bytes kP2pPeer = 2 * 4194304; // 2 channels per peer, a Simple buffer each: 8,388,608 B

Bytes reserveRowBytes(const RankLedger &rank)
{
    Bytes sum = 0;
    for (const LedgerEntry &e : rank.entries)
        if (e.category == Category::Runtime && !e.atPeak)
            sum += e.bytes;
    return sum;
}

} // namespace

TEST_CASE("The flat runtime reserve stays one row of runtime_reserve_bytes", "[runtimereserve]")
{
    const Config c = scenario("llama-3-70b-128xh100");
    const Ledger l = computeLedger(c);
    for (const RankLedger &rank : l.ranks) {
        CHECK(entryBytes(rank, Category::Runtime, "Runtime reserve") == 2000000000);
        CHECK(reserveRowBytes(rank) == 2000000000);
    }
    CHECK(l.usable_bytes == 85899345920 - 2000000000);
}

TEST_CASE("Llama 3 70B on 128 H100s (t 8, p 4, d 4): the modelled reserve, part by part", "[runtimereserve]")
{
    const Config c = scenario("llama-3-70b-128xh100", {"hardware.runtime_reserve=modelled"});
    const Ledger l = computeLedger(c);
    const RankLedger &rank = l.ranks[1];
    CHECK(entryBytes(rank, Category::Runtime, "CUDA context and loaded kernels") == kContext);
    CHECK(entryBytes(rank, Category::Runtime, "cuBLAS workspace") == kCublas);
    // t = 8 inside one node of 8: a ring.
    CHECK(entryBytes(rank, Category::Runtime, "NCCL buffers: tensor-parallel group (t = 8)") == kRing16);
    // d = 4 ranks 8 apart span 32 GPUs: a ring and a tree.
    CHECK(entryBytes(rank, Category::Runtime, "NCCL buffers: data-parallel group (d = 4)") == 2 * kRing16);
    // A middle stage sends to two neighbours.
    CHECK(entryBytes(rank, Category::Runtime, "NCCL buffers: pipeline group (p = 4)") == 2 * kP2pPeer);
    // Megatron's model-parallel group (the gradient norm), 32 ranks over 4 nodes.
    CHECK(entryBytes(rank, Category::Runtime, "NCCL buffers: model-parallel group (t·p = 32)") == 2 * kRing16);
    constexpr Bytes kTotal = kContext + kCublas + kRing16 + 2 * kRing16 + 2 * kP2pPeer + 2 * kRing16;
    static_assert(kTotal == 1466695680);
    // Llama 3 unties its embeddings: no embedding group; the edge stages of 1F1B send to one neighbour.
    CHECK(reserveRowBytes(l.ranks[2]) == kTotal);
    CHECK(reserveRowBytes(l.ranks[0]) == kTotal - kP2pPeer);
    CHECK(reserveRowBytes(l.ranks[3]) == kTotal - kP2pPeer);
    CHECK(l.usable_bytes == 85899345920 - kTotal);
    CHECK_FALSE(hasErrors(validate(c)));
}

TEST_CASE("GPT-3's tied embedding adds the embedding group on the first and last stage only", "[runtimereserve]")
{
    const Config c = scenario("gpt-3-175b-64gpus-tp-only", {"hardware.runtime_reserve=modelled"});
    const Ledger l = computeLedger(c);
    REQUIRE(l.ranks.size() == 8);
    // t 8, p 8, d 1: no data-parallel group; the model-parallel group spans 64 GPUs;
    // 1F1B: a middle stage sends to two neighbours, an edge stage to one.
    constexpr Bytes kMiddle = kContext + kCublas + kRing16 + 2 * kP2pPeer + 2 * kRing16;
    // The embedding group: stage 0 and stage 7, 56 GPUs apart.
    constexpr Bytes kEdge = kMiddle - kP2pPeer + 2 * kRing16;
    CHECK(reserveRowBytes(l.ranks[0]) == kEdge);
    CHECK(reserveRowBytes(l.ranks[3]) == kMiddle);
    CHECK(reserveRowBytes(l.ranks[7]) == kEdge);
    CHECK(entryBytes(l.ranks[7], Category::Runtime, "NCCL buffers: embedding group (first and last stage)")
          == 2 * kRing16);
    // The usable line is the device less the largest rank's reserve.
    CHECK(l.usable_bytes == c.hardware.hbm_bytes - kEdge);
}

TEST_CASE("Under FSDP the communicators are the mesh's: no model-parallel group", "[runtimereserve]")
{
    const Config c = scenario("llama-3.1-8b-8xh100-torchtitan-fsdp", {"hardware.runtime_reserve=modelled"});
    const Ledger l = computeLedger(c);
    // d 8 inside one node: the FSDP group's ring, nothing else.
    CHECK(reserveRowBytes(l.ranks[0]) == kContext + kCublas + kRing16);
}

TEST_CASE("MoE's all-to-all is point to point with every other rank of the expert group", "[runtimereserve]")
{
    const Config c = scenario("mixtral-8x22b-64xh100-dropless", {"hardware.runtime_reserve=modelled"});
    const Ledger l = computeLedger(c);
    // e = 8: 7 peers × 2 channels × 4 MiB.
    CHECK(entryBytes(l.ranks[1], Category::Runtime, "NCCL buffers: expert-parallel group (e = 8)") == 7 * kP2pPeer);
    // Through DeepEP the tokens use DeepEP's own buffer, its own row, and no NCCL point-to-point channels.
    const Config deep = scenario("mixtral-8x22b-64xh100-dropless",
                                 {"hardware.runtime_reserve=modelled", "strategy.moe_token_dispatcher=deepep"});
    const Ledger ld = computeLedger(deep);
    CHECK(entryBytes(ld.ranks[1], Category::Runtime, "NCCL buffers: expert-parallel group (e = 8)") == 0);
    CHECK(entryBytes(ld.ranks[1], Category::Runtime, "DeepEP buffers") > 0);
}

TEST_CASE("The channel count and the buffers are the preset's", "[runtimereserve]")
{
    const Config c = scenario("llama-3-70b-128xh100",
                              {"hardware.runtime_reserve=modelled", "hardware.nccl_channels=8",
                               "hardware.cuda_context_bytes=287047680", "hardware.cublas_workspace_bytes=8519680"});
    const Ledger l = computeLedger(c);
    CHECK(entryBytes(l.ranks[0], Category::Runtime, "NCCL buffers: tensor-parallel group (t = 8)") == 8 * kConnection);
    CHECK(entryBytes(l.ranks[0], Category::Runtime, "CUDA context and loaded kernels") == 287047680);
    // ":4096:2:16:8": 2 chunks of 4096 KiB and 8 of 16 KiB.
    CHECK(entryBytes(l.ranks[0], Category::Runtime, "cuBLAS workspace") == 2 * 4096 * 1024 + 8 * 16 * 1024);
}

TEST_CASE("What runs out adds the modelled parts on top of what the allocator reserves", "[runtimereserve]")
{
    const Config c = scenario("seed-000-7b-b-checkpointing", {"hardware.runtime_reserve=modelled"});
    const PlanPeak plan = planPeak(c);
    const PlanReserved reserved = simulateReserved(c, plan.timeline);
    // One GPU: no communicator at all.
    REQUIRE(reserved.ranks.size() == 1);
    CHECK(reserved.ranks[0].runtime_bytes == kContext + kCublas);
    CHECK(reserved.ranks[0].device_peak_bytes == reserved.ranks[0].reserved_peak + kContext + kCublas);
}

TEST_CASE("runtime_reserve_bytes beside a modelled reserve is a warning that it is not used", "[runtimereserve]")
{
    const Config c = scenario("llama-3-70b-128xh100",
                              {"hardware.runtime_reserve=modelled", "hardware.runtime_reserve_bytes=3000000000"});
    bool warned = false;
    for (const Problem &p : validate(c))
        warned |= p.path == "hardware.runtime_reserve_bytes" && !p.isError();
    CHECK(warned);
}
