// SPDX-License-Identifier: MIT
// Store, recompute or offload per tensor of a GPT layer (seed 002 §3.3, §4):
// Megatron's selective recompute on the roofline frontier, FLOPs under-pricing
// the memory-bound softmax/dropout, and a fast host link reaching points PCIe cannot.
#include "core/model/activations.h"
#include "core/planner/tensorplan.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

using namespace memledger;

namespace {

// GPT-3's layer (h = 12288, a = 96, s = 2048, b = 1) without tensor
// parallelism or FlashAttention, so the layer saves sbh(34 + 5as/h) bytes.
Config gpt3Layer(const std::string &hardware = "H100-SXM-80GB")
{
    return test::scenario("gpt-3-175b-64gpus-tp-only",
                          {"parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1",
                           "hardware=" + hardware});
}

} // namespace

TEST_CASE("tensor graph: the 13 tensors of a GPT layer add up to the ledger's layer", "[tensorplan]")
{
    const Config c = gpt3Layer();
    const LayerGraph g = layerGraph(c);
    REQUIRE(g.nodes.size() == 13);
    const LayerActivations la = layerActivations(c, false, true);
    CHECK(g.total() == la.total);
    const Bytes sbh = 2048LL * 1 * 12288;
    const TensorPlan selective = evaluateTensorPlan(g, selectivePlan(g), TensorCost::Roofline);
    // 34·sbh kept (LayerNorm statistics aside: 2 norms × 2 fp32 values per token).
    CHECK(selective.deviceBytes == 34 * sbh + 2 * 2 * 4 * 2048);
    for (std::size_t k = 1; k < g.nodes.size(); ++k)
        for (int dep : g.nodes[k].deps)
            CHECK(dep < static_cast<int>(k)); // a DAG in forward order
}

TEST_CASE("tensor frontier: selective recompute is on the roofline frontier — FLOPs under-price it", "[tensorplan]")
{
    const Config c = gpt3Layer();
    const LayerGraph g = layerGraph(c);
    const TensorPlan selRoof = evaluateTensorPlan(g, selectivePlan(g), TensorCost::Roofline);
    const TensorPlan selFlops = evaluateTensorPlan(g, selectivePlan(g), TensorCost::Flops);
    const auto roof = tensorFrontier(g, TensorCost::Roofline, false);
    const auto flops = tensorFrontier(g, TensorCost::Flops, false);
    // No store/recompute plan keeps at most 34·sbh for less recompute time.
    CHECK(test::minOverheadAt(roof, selRoof.deviceBytes) == Approx(selRoof.overhead));
    bool onFrontier = false;
    for (const TensorPlan &p : roof)
        onFrontier = onFrontier || (p.deviceBytes == selRoof.deviceBytes && p.overhead == Approx(selRoof.overhead));
    CHECK(onFrontier);
    // Seed 002 §3.3: ≈ 5 % of the layer's time by roofline, under 1 % by FLOPs
    // (softmax and dropout over a·s²·b elements are memory-bound).
    CHECK(selRoof.overhead > 0.02);
    CHECK(selRoof.overhead < 0.10);
    CHECK(selFlops.overhead < selRoof.overhead / 5);
    // Full recompute (only the input kept) costs a large share, below one whole forward (1/3).
    const double fullRoof = roof.front().overhead;
    CHECK(roof.front().deviceBytes == g.nodes[0].bytes);
    CHECK(fullRoof > 0.15);
    CHECK(fullRoof < 1.0 / 3.0);
    (void)flops;
}

TEST_CASE("offload: reference section 6 arithmetic", "[tensorplan]")
{
    // 150 MB over 25 GB/s against a 5 ms forward and 10 ms backward: 6 ms out, 1 ms stalled; 30 GB/s hides it.
    CHECK(offloadStall(150e6, 25e9, 5e-3, 10e-3) == Approx(1e-3));
    CHECK(offloadStall(150e6, 30e9, 5e-3, 10e-3) == 0);
}

TEST_CASE("offload: a GH200-class link reaches frontier points PCIe cannot", "[tensorplan]")
{
    Config fast = gpt3Layer();
    Config pcie4 = fast, pcie5 = fast;
    fast.hardware.host_link_bytes_per_s = 450e9; // NVLink-C2C
    pcie4.hardware.host_link_bytes_per_s = 25e9;
    pcie5.hardware.host_link_bytes_per_s = 50e9;
    const auto gh = tensorFrontier(layerGraph(fast), TensorCost::Roofline, true);
    const auto p4 = tensorFrontier(layerGraph(pcie4), TensorCost::Roofline, true);
    const auto p5 = tensorFrontier(layerGraph(pcie5), TensorCost::Roofline, true);
    int reachedOnlyByFastLink = 0;
    for (const TensorPlan &p : gh) {
        CHECK(test::minOverheadAt(p5, p.deviceBytes) >= p.overhead - 1e-12); // a faster link never hurts
        if (test::minOverheadAt(p5, p.deviceBytes) > p.overhead * 1.5 + 1e-9
            && test::minOverheadAt(p4, p.deviceBytes) > p.overhead * 1.5 + 1e-9)
            ++reachedOnlyByFastLink;
    }
    CHECK(reachedOnlyByFastLink > 0);
    // Keeping only the layer input costs no time at all over NVLink-C2C: everything hides.
    CHECK(gh.front().deviceBytes == layerGraph(fast).nodes[0].bytes);
    CHECK(gh.front().overhead == 0);
    // Over PCIe 4 the same plan stalls: the copies outlast the layer's forward
    // and backward (by about 5 % of them on a Hopper-class GEMM rate).
    CHECK(p4.front().overhead > 0.02);
    // Offloading never beats storing on the store/recompute frontier's own terms:
    // with offload allowed every frontier point is at least as good.
    const auto noOffload = tensorFrontier(layerGraph(pcie4), TensorCost::Roofline, false);
    for (const TensorPlan &p : noOffload)
        CHECK(test::minOverheadAt(p4, p.deviceBytes) <= p.overhead + 1e-12);
}
