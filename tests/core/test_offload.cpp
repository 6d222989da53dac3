// SPDX-License-Identifier: MIT
// Activation offload on a copy stream (seed 002 §4.3-4.4 and exercise 6).
#include "core/time/offload.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("Seed 002 exercise 6: the copy-out stalls the forward, the copy-in hides in the backward",
          "[offload][reference]")
{
    // 5 ms forward, 10 ms backward, 150 MB of saved activations, 25 GB/s: a 6 ms copy.
    const std::vector<ChainLayer> chain(8, ChainLayer{0.005, 0.010, 150e6});
    const ChainResult pcie = simulateOffloadChain(chain, 25e9, 2);
    CHECK(pcie.copyOutSeconds == Approx(7 * 0.006));
    CHECK(pcie.forwardStallSeconds > 0.003);
    CHECK(pcie.backwardStallSeconds == Approx(0.0).margin(1e-12));
    CHECK(pcie.totalSeconds == Approx(pcie.computeSeconds + pcie.forwardStallSeconds));
    // It needs 30 GB/s: then the 5 ms copy fits under the 5 ms forward.
    const ChainResult enough = simulateOffloadChain(chain, 30e9, 2);
    CHECK(enough.forwardStallSeconds == Approx(0.0).margin(1e-12));
    CHECK(enough.overlap() == Approx(1.0));
    CHECK(pcie.overlap() < 1.0);
}

TEST_CASE("Activation offload in the pipeline: fewer bytes on the device, stalls on a slow link", "[offload][timeline]")
{
    const std::vector<std::string> gpipe = {"parallelism.pipeline_schedule=gpipe", "training.global_batch_size=64"};
    std::vector<std::string> offload = gpipe;
    offload.push_back("strategy.activation_offload=cpu");
    const Timeline kept = simulateIteration(scenario("gpt-3-175b-64gpus-tp-sp-selective", gpipe));
    const Timeline moved = simulateIteration(scenario("gpt-3-175b-64gpus-tp-sp-selective", offload));
    CHECK(moved.ranks[0].peak_bytes < kept.ranks[0].peak_bytes);
    CHECK(moved.ranks[0].copies.copyOutSeconds > 0);
    CHECK(moved.ranks[0].copies.copyInSeconds > 0);
    // The ledger agrees: offload never raises device bytes, and the rest is on the host.
    CHECK(moved.ledger.ranks[0].device_total_bytes < kept.ledger.ranks[0].device_total_bytes);
    CHECK(moved.ledger.ranks[0].host[int(Category::Activations)] > 0);
    // A GH200-class link hides more of the copies than PCIe (seed 002 §4.4).
    std::vector<std::string> c2c = offload;
    c2c.push_back("hardware.host_link_bytes_per_s=450e9");
    const Timeline fast = simulateIteration(scenario("gpt-3-175b-64gpus-tp-sp-selective", c2c));
    CHECK(fast.ranks[0].copies.stallSeconds <= moved.ranks[0].copies.stallSeconds);
    CHECK(fast.step_time <= moved.step_time);
}

TEST_CASE("Optimizer offload: gradients out, the CPU update, weights back (ZeRO-Offload)",
          "[offload][timeline][reference]")
{
    // Seed 002 §4.2: ZeRO-Offload's CPU-Adam takes 0.22-0.26 s per billion parameters.
    const Config c = scenario("seed-000-7b-c-offload");
    const Timeline tl = simulateIteration(c);
    const RankTimeline &r = tl.ranks[0];
    const double params = double(tl.ledger.total_parameters);
    CHECK(r.optimizer_cpu_s / (params / 1e9) == Approx(0.25));
    CHECK(r.optimizer_cpu_s / (params / 1e9) >= 0.22);
    CHECK(r.optimizer_cpu_s / (params / 1e9) <= 0.26);
    // bf16 gradients out and bf16 weights back over the A100's PCIe 4.0 link.
    CHECK(r.optimizer_copy_out_s == Approx(2.0 * params / c.hardware.host_link_bytes_per_s));
    CHECK(r.optimizer_copy_in_s == Approx(2.0 * params / c.hardware.host_link_bytes_per_s));
    CHECK(r.optimizer_device_s == 0);
    CHECK(r.optimizer_end - r.optimizer_start
          == Approx(r.optimizer_copy_out_s + r.optimizer_cpu_s + r.optimizer_copy_in_s));
    // On the device the step streams the states through HBM instead: far shorter.
    const Timeline onDevice = simulateIteration(scenario("seed-000-7b-a-plain"));
    CHECK(onDevice.ranks[0].optimizer_device_s > 0);
    CHECK(onDevice.ranks[0].optimizer_device_s < r.optimizer_cpu_s / 10);
}
