// SPDX-License-Identifier: MIT
// The host-memory verdict (RankLedger::host_fits, Ledger::hostFits): what a
// rank offloads against hardware.host_bytes, the host memory one GPU has.
// Decided in core so the GUI's host chart and the CLI give the same answer.
#include "core/ledger/ledger.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

// Llama-2-7B counted by hand (seed 000's plan C shape): embedding and the
// untied output layer 32000 · 4096 each; per layer attention 4 · 4096², the
// SwiGLU MLP 3 · 4096 · 11008 and two RMSNorm weights of 4096; the final norm.
constexpr std::int64_t kLlama2Embedding = 32000LL * 4096;
constexpr std::int64_t kLlama2Layer = 4LL * 4096 * 4096 + 3LL * 4096 * 11008 + 2 * 4096;
constexpr std::int64_t kLlama2Parameters = 2 * kLlama2Embedding + 32 * kLlama2Layer + 4096;
static_assert(kLlama2Parameters == 6738415616LL); // Llama-2-7B's published 6.74 B

// ZeRO-Offload with the update on the CPU: fp32 master weights, Adam's two
// fp32 moments on the host, 4 + 4 + 4 = 12 bytes per parameter (Ren et al. 2021).
constexpr Bytes kHostBytes = 12 * kLlama2Parameters; // 80,860,987,392 B

std::string hostBytes(Bytes b)
{
    return "hardware.host_bytes=" + std::to_string(b);
}

bool warnsOfHost(const Ledger &l)
{
    for (const Problem &p : l.warnings)
        if (p.path == "hardware.host_bytes")
            return true;
    return false;
}

} // namespace

TEST_CASE("Host fit: the offloaded optimizer against the host memory per GPU, counted by hand", "[ledger][host]")
{
    const Ledger exact = computeLedger(scenario("seed-000-7b-c-offload", {hostBytes(kHostBytes)}));
    REQUIRE(exact.ranks.size() == 1);
    CHECK(exact.total_parameters == kLlama2Parameters);
    CHECK(exact.ranks[0].host_total_bytes == kHostBytes);
    CHECK(exact.host_capacity_bytes == kHostBytes);
    // Exactly full still fits, as the device verdict counts it (total <= capacity).
    CHECK(exact.ranks[0].host_fits);
    CHECK(exact.hostFits());
    CHECK_FALSE(warnsOfHost(exact));

    // One byte less host memory: over it, and the ledger's warning says so.
    const Ledger over = computeLedger(scenario("seed-000-7b-c-offload", {hostBytes(kHostBytes - 1)}));
    CHECK_FALSE(over.ranks[0].host_fits);
    CHECK_FALSE(over.hostFits());
    CHECK(warnsOfHost(over));
    // The host verdict is its own: the device side is unchanged (≈ 60.6 GB on 80 GB fits).
    CHECK(over.ranks[0].fits);
    CHECK(over.fits());
}

TEST_CASE("Host fit: no host memory means any offloaded byte is over it — nothing offloaded always fits",
          "[ledger][host]")
{
    const Ledger none = computeLedger(scenario("seed-000-7b-c-offload", {hostBytes(0)}));
    CHECK_FALSE(none.hostFits());
    CHECK(warnsOfHost(none));

    const Ledger plain = computeLedger(scenario("seed-000-7b-a-plain", {hostBytes(0)}));
    CHECK(plain.ranks[0].host_total_bytes == 0);
    CHECK(plain.hostFits());
    CHECK_FALSE(warnsOfHost(plain));

    CHECK(hostFits(0, 0));
    CHECK(hostFits(100, 100));
    CHECK_FALSE(hostFits(101, 100));
}

TEST_CASE("Host fit: NVMe rows count against the NVMe, not the host's memory (ZeRO-Infinity)", "[ledger][host]")
{
    // The same 12 bytes per parameter, offloaded to NVMe instead: host memory
    // of zero still fits; NVMe one byte short of them does not.
    const std::string nvme = "strategy.optimizer_offload=nvme";
    const Ledger onNvme = computeLedger(scenario("seed-000-7b-c-offload", {nvme, hostBytes(0)}));
    CHECK(onNvme.ranks[0].host_total_bytes == kHostBytes);
    CHECK(onNvme.hostFits());
    CHECK_FALSE(warnsOfHost(onNvme));

    const Ledger short1 = computeLedger(
        scenario("seed-000-7b-c-offload", {nvme, "hardware.nvme_bytes=" + std::to_string(kHostBytes - 1)}));
    CHECK_FALSE(short1.hostFits());
    bool warned = false;
    for (const Problem &p : short1.warnings)
        warned = warned || p.path == "hardware.nvme_bytes";
    CHECK(warned);
}

TEST_CASE("Host fit: each pipeline rank has its own verdict", "[ledger][host]")
{
    // Plan C over two pipeline stages: each rank offloads the optimizer of its
    // own parameters (the embedding on the first, the output layer and the
    // final norm on the last), so with host memory between the two only the
    // fuller rank is over it.
    const Ledger split
        = computeLedger(scenario("seed-000-7b-c-offload", {"parallelism.pipeline_model_parallel_size=2"}));
    REQUIRE(split.ranks.size() == 2);
    const Bytes first = 12 * (kLlama2Embedding + 16 * kLlama2Layer);
    const Bytes last = 12 * (16 * kLlama2Layer + kLlama2Embedding + 4096);
    CHECK(split.ranks[0].host_total_bytes == first);
    CHECK(split.ranks[1].host_total_bytes == last);
    const Ledger between = computeLedger(
        scenario("seed-000-7b-c-offload", {"parallelism.pipeline_model_parallel_size=2", hostBytes(first)}));
    CHECK(between.ranks[0].host_fits);
    CHECK_FALSE(between.ranks[1].host_fits);
    CHECK_FALSE(between.hostFits());
}
