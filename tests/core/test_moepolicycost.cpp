// SPDX-License-Identifier: MIT
// strategy.tensor_policies on MoE layers: what recomputing an expert tensor
// costs, counted by hand from the MoE layer's own shapes. Mixtral 8x22B's
// shape from mistralai/Mixtral-8x22B-v0.1 config.json (hidden_size 6144,
// intermediate_size 16384, num_local_experts 8, num_experts_per_tok 2);
// DeepSeek-V3's from deepseek-ai/DeepSeek-V3 config.json (hidden_size 7168,
// n_routed_experts 256, num_experts_per_tok 8, moe_intermediate_size 2048,
// n_shared_experts 1). Megatron-LM's default expert_tensor_parallel_size is
// the tensor-parallel size, so a Mixtral expert is split over etp = t = 2.
#include "core/config/efficiency.h"
#include "core/planner/tensorplan.h"
#include "core/time/costmodel.h"
#include "core/time/kernelcost.h"
#include "core/time/steptime.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace memledger;

namespace {

const TensorNode &nodeNamed(const LayerGraph &g, const std::string &name)
{
    for (const TensorNode &n : g.nodes)
        if (n.name == name)
            return n;
    FAIL("no node " << name);
    return g.nodes.front();
}

// The Mixtral scenario: s = 4096, b = 1, t = 2 with sequence parallelism, e = 8.
Config mixtral(const std::vector<std::string> &sets)
{
    std::vector<std::string> all = {"strategy.recompute_granularity=none"};
    all.insert(all.end(), sets.begin(), sets.end());
    return test::scenario("mixtral-8x22b-64xh100-dropless", all);
}

Config plain(Config c)
{
    c.strategy.tensor_policies.clear();
    return c;
}

} // namespace

TEST_CASE("MoE tensor policies: a routed expert's fc1 output is priced at the routed copies' GEMM",
          "[tensorpolicy][moe]")
{
    const Config c = mixtral({R"(strategy.tensor_policies={"moe.experts.fc1.output":"recompute"})"});
    const LayerGraph g = moeLayerGraph(plain(c));
    const TensorNode &fc1 = nodeNamed(g, "moe.experts.fc1.output");
    // Each rank holds 4096 / 2 tokens (SP); each goes to 2 experts (top-2);
    // the etp = 2 ranks of an expert all-gather their copies: R = 8192 rows.
    const double R = 4096.0 / 2 * 2 * 2;
    const double h = 6144, fc1Width = 2.0 * 16384 / 2; // gate and up (SwiGLU), split over etp
    const double flops = 2 * R * h * fc1Width; // 1,649,267,441,664
    CHECK(fc1.flops == Approx(1649267441664.0));
    CHECK(fc1.flops == Approx(flops));
    // Read the copies, read one local expert's fc1 weights (8 experts / e = 8), write the output; bf16.
    const double moved = R * h * 2 + 1 * h * fc1Width * 2 + R * fc1Width * 2; // 570,425,344
    CHECK(fc1.bytesMoved == Approx(570425344.0));
    CHECK(fc1.bytesMoved == Approx(moved));
    CHECK(fc1.bytes == Bytes(R * fc1Width * 2)); // what the ledger saves for it: 268,435,456 B

    // Priced as the time model prices a kernel: FLOPs at the achieved GEMM
    // rate, bytes at the achieved HBM bandwidth (H100 SXM's tables).
    const HardwareConfig &hw = c.hardware;
    const double seconds = flops / (hw.peak_bf16_flops * efficiencyAt(hw.gemm_efficiency, flops))
                           + moved / (hw.hbm_bytes_per_s * efficiencyAt(hw.hbm_efficiency, moved));
    const TensorPlan plan = configuredTensorPlan(c, g, TensorCost::Roofline, true);
    CHECK(plan.recomputeSeconds == Approx(seconds).epsilon(1e-9));
    CHECK(configuredTensorPlan(c, g, TensorCost::Flops, true).recomputeSeconds
          == Approx(flops / hw.peak_bf16_flops).epsilon(1e-9));

    // The cost model charges it to every MoE layer; the dense layer's graph
    // has no such tensor (it was priced at nothing before).
    const CostModel cm = costModel(c);
    CHECK(cm.moe.recompute.seconds == Approx(seconds).epsilon(1e-9));
    CHECK(configuredTensorPlan(c, layerGraph(plain(c)), TensorCost::Roofline).recomputeSeconds == 0);
    // And the step time pays it once per layer and micro-batch (every Mixtral layer is MoE).
    const StepTime t0 = estimateStepTime(plain(c)), t1 = estimateStepTime(c);
    const StepInputs in = stepInputsOf(c);
    CHECK(t1.recompute - t0.recompute == Approx(seconds * in.layersOnRank * in.microBatches).epsilon(1e-6));
}

TEST_CASE("MoE tensor policies: recomputing the permuted tokens repeats the dispatch all-to-all", "[tensorpolicy][moe]")
{
    const Config c = mixtral({R"(strategy.tensor_policies={"moe.experts.fc1.input":"recompute"})"});
    const LayerGraph g = moeLayerGraph(plain(c));
    const TensorNode &permuted = nodeNamed(g, "moe.experts.fc1.input");
    // Each rank sends its 2048 tokens × 2 copies × h × 2 B over the e = 8
    // ranks of the expert-parallel group; t·e = 16 GPUs span two 8-GPU nodes:
    // the network. The permute reads and writes the 8192 gathered rows.
    const double message = 4096.0 / 2 * 2 * 6144 * 2; // 50,331,648 B
    CHECK(permuted.commSeconds
          == Approx(collectiveSeconds(c.hardware, Collective::AllToAll, message, 8, false)).epsilon(1e-12));
    CHECK(permuted.commSeconds > 0);
    CHECK(permuted.flops == 0);
    CHECK(permuted.bytesMoved == Approx(2.0 * 8192 * 6144 * 2));
    // The experts' output comes back through the combine, the same size.
    CHECK(nodeNamed(g, "moe.experts.output").commSeconds == Approx(permuted.commSeconds));
}

TEST_CASE("MoE tensor policies: static shapes under a capacity factor pad the experts' rows", "[tensorpolicy][moe]")
{
    const Config c = mixtral({"strategy.moe_expert_capacity_factor=1.25"});
    const LayerGraph g = moeLayerGraph(c); // kept: nodeNamed returns a reference into it
    const TensorNode &fc1 = nodeNamed(g, "moe.experts.fc1.output");
    // 1.25 × 8192 = 10240 rows per rank, padding included.
    CHECK(fc1.flops == Approx(2.0 * 10240 * 6144 * 16384));
    // The saved tensor stays at the balanced size (the ledger's routing assumption).
    CHECK(fc1.bytes == Bytes(8192LL * 16384 * 2));
}

TEST_CASE("MoE tensor policies: DeepSeek-V3's shared expert and four local experts", "[tensorpolicy][moe]")
{
    // t = 1, e = 64: 256 / 64 = 4 experts per rank; 4096 tokens × top-8 = 32768 rows.
    const Config c = test::scenario("deepseek-v3-2048xh100-dualpipe", {"strategy.recompute_granularity=none"});
    const LayerGraph g = moeLayerGraph(c);
    const double h = 7168;
    const TensorNode &shared = nodeNamed(g, "moe.shared_expert.fc1.output");
    CHECK(shared.flops == Approx(2.0 * 4096 * h * 2 * 2048)); // 240,518,168,576: all 4096 tokens, gate and up
    CHECK(shared.bytesMoved == Approx(4096 * h * 2 + h * 2 * 2048 * 2 + 4096 * 2 * 2048 * 2.0));
    const TensorNode &fc1 = nodeNamed(g, "moe.experts.fc1.output");
    CHECK(fc1.flops == Approx(2.0 * 32768 * h * 2 * 2048));
    // Four local experts' fc1 weights (h × 2·2048 each) read once.
    CHECK(fc1.bytesMoved == Approx(32768 * h * 2 + 4 * h * 2 * 2048 * 2 + 32768 * 2 * 2048 * 2.0));
    const TensorNode &fc2 = nodeNamed(g, "moe.experts.output");
    CHECK(fc2.flops == Approx(2.0 * 32768 * 2048 * h));
    // The router: 4096 tokens × h × 256 experts, and a few FLOPs per score.
    CHECK(nodeNamed(g, "moe.router.probs").flops == Approx(2.0 * 4096 * h * 256 + 5.0 * 4096 * 256));
}
