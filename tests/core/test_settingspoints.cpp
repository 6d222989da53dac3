// SPDX-License-Identifier: MIT
// The settings a preset can express, placed on each planner's frontier
// (issue 6): Megatron's full uniform recompute is seed 002 §2's segmenting,
// its selective recompute is on the roofline frontier of §3.3, and storing
// everything keeps the layer graph's total.
#include "core/planner/settingspoints.h"
#include "core/planner/tensorplan.h"
#include "core/time/costmodel.h"
#include "core/time/steptime.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace memledger;

namespace {

StrategyConfig full(RecomputeMethod method, std::int64_t k)
{
    StrategyConfig st;
    st.recompute_granularity = RecomputeGranularity::Full;
    st.recompute_method = method;
    st.recompute_num_layers = k;
    return st;
}

std::vector<int> range(int from, int to)
{
    std::vector<int> v(std::size_t(std::max(0, to - from)));
    std::iota(v.begin(), v.end(), from);
    return v;
}

const SettingPoint &byLabel(const std::vector<SettingPoint> &settings, const std::string &label)
{
    auto it = std::find_if(settings.begin(), settings.end(), [&](const SettingPoint &s) { return s.label == label; });
    REQUIRE(it != settings.end());
    return *it;
}

} // namespace

TEST_CASE("settings on a chain: full uniform k is seed 002's segmenting", "[settings][chain]")
{
    const Chain chain = uniformChain(16);
    // k = 1 checkpoints every layer: nothing to recompute, the frontier's store-all end.
    const std::vector<int> every = megatronCheckpoints(full(RecomputeMethod::Uniform, 1), 16);
    CHECK(every == range(1, 16));
    const ChainPlan one = evaluateChain(chain, every);
    const auto frontier = frontierDP(chain);
    CHECK(one.recompute == 0);
    CHECK(one.peak == frontier.back().peak);
    // No full recompute keeps the same outputs, and so does every block k:
    // under the chain model a one-layer segment recomputes nothing.
    CHECK(megatronCheckpoints(StrategyConfig{}, 16) == every);
    for (int k : {1, 5, 16})
        CHECK(megatronCheckpoints(full(RecomputeMethod::Block, k), 16) == every);
    // k = 4 is √n (reference section 5): memory 9, recompute 12, where the frontier recomputes 9.
    const std::vector<int> four = megatronCheckpoints(full(RecomputeMethod::Uniform, 4), 16);
    CHECK(four == uniformPlan(chain).checkpoints);
    const ChainPlan p4 = evaluateChain(chain, four);
    CHECK(p4.peak == 9);
    CHECK(p4.recompute == 12);
    // k at or above the layers: one group, the whole chain recomputed from x(0).
    CHECK(megatronCheckpoints(full(RecomputeMethod::Uniform, 16), 16).empty());
    CHECK(megatronCheckpoints(full(RecomputeMethod::Uniform, 40), 16).empty());
}

TEST_CASE("settings on a chain: groups restart at each virtual chunk", "[settings][chain]")
{
    // Two chunks of 6 layers: Megatron groups within a chunk, and the second chunk's input is kept.
    CHECK(megatronCheckpoints(full(RecomputeMethod::Uniform, 3), 12, 2) == std::vector<int>{3, 6, 9});
    CHECK(megatronCheckpoints(full(RecomputeMethod::Uniform, 4), 12, 2) == std::vector<int>{4, 6, 10});
    CHECK(megatronCheckpoints(full(RecomputeMethod::Uniform, 6), 12, 2) == std::vector<int>{6});
}

TEST_CASE("chain settings of a configured model: the current one marked, the useful ones drawn", "[settings][chain]")
{
    const Config config = test::scenario("llama-3-70b-128xh100",
                                         {"strategy.recompute_granularity=full", "strategy.recompute_method=uniform",
                                          "strategy.recompute_num_layers=2"});
    const Chain chain = chainFromConfig(config);
    REQUIRE(chain.layers() == 20);
    const auto settings = chainSettings(config, chain);
    REQUIRE(settings.size() == 1 + 20 + 20);
    const SettingPoint &two = byLabel(settings, "full, uniform, 2 layers");
    CHECK(two.current);
    CHECK(two.exact);
    CHECK(std::count_if(settings.begin(), settings.end(), [](const SettingPoint &s) { return s.exact; }) == 1);
    CHECK(two.checkpoints == std::vector<int>{2, 4, 6, 8, 10, 12, 14, 16, 18});
    CHECK(two.memory == evaluateChain(chain, two.checkpoints).peak);
    // Megatron re-runs each group of two whole: every one of the 20 layers'
    // forward work again, as the step time charges it (the layer's
    // collectives are the step time's communication parts).
    const CostModel cm = costModel(config);
    const double perLayer = cm.dense.recompute.seconds - cm.dense.recomputeComm.total();
    CHECK(perLayer == Approx(cm.dense.forward.seconds - cm.dense.forwardComm.total()));
    CHECK(two.cost == Approx(20 * perLayer));

    const auto markers = settingMarkers(settings);
    // Store-all keeps the same outputs as uniform 1 and every block k at no
    // recompute: it alone is drawn there, the others beaten.
    const auto storeAll = std::find_if(markers.begin(), markers.end(), [&](const SettingMarker &m) {
        return settings[std::size_t(m.settings.front())].label == "no full recompute";
    });
    REQUIRE(storeAll != markers.end());
    CHECK(storeAll->settings.size() == 1);
    CHECK(storeAll->cost == 0);
    for (const SettingMarker &m : markers)
        CHECK(settings[std::size_t(m.settings.front())].label != "full, uniform, 1 layer");
    // Exactly one marker is current, and no drawn marker beats another.
    CHECK(std::count_if(markers.begin(), markers.end(), [](const SettingMarker &m) { return m.current; }) == 1);
    for (const SettingMarker &a : markers)
        for (const SettingMarker &b : markers)
            if (!b.current)
                CHECK_FALSE(((a.memory < b.memory && a.cost <= b.cost) || (a.memory <= b.memory && a.cost < b.cost)));
    // Every setting lies on or above the exact frontier.
    const auto frontier = frontierDP(chain);
    for (const SettingPoint &s : settings) {
        double best = INFINITY;
        for (const ChainPlan &p : frontier)
            if (p.peak <= s.memory * (1 + 1e-12))
                best = std::min(best, p.recompute);
        CHECK(best <= s.cost * (1 + 1e-12) + 1e-15);
    }
    // The least memory of all: a frontier point at no more memory names a setting only if one fits.
    CHECK(nearestMarkerAtMost(markers, frontier.front().peak * 0.5) == -1);
    const int nearest = nearestMarkerAtMost(markers, storeAll->memory);
    REQUIRE(nearest >= 0);
    CHECK(markers[std::size_t(nearest)].cost == 0);
}

TEST_CASE("tensor settings: store-all is the layer's total, selective is on the roofline frontier",
          "[settings][tensorplan]")
{
    // GPT-3's layer without TP or FlashAttention (seed 002 §3.3).
    const Config config = test::scenario("gpt-3-175b-64gpus-tp-only", {"parallelism.tensor_model_parallel_size=1",
                                                                       "parallelism.pipeline_model_parallel_size=1",
                                                                       "strategy.recompute_granularity=selective"});
    const LayerGraph g = layerGraph(config);
    const auto settings = tensorSettings(config, g, TensorCost::Roofline, false);
    REQUIRE(settings.size() == 3);
    const SettingPoint &none = byLabel(settings, "none");
    const SettingPoint &sel = byLabel(settings, "selective");
    const SettingPoint &all = byLabel(settings, "full");
    CHECK(none.memory == double(g.total()));
    CHECK(none.cost == 0);
    const TensorPlan selective = evaluateTensorPlan(g, selectivePlan(g), TensorCost::Roofline);
    CHECK(sel.memory == double(selective.deviceBytes));
    CHECK(sel.cost == selective.overhead);
    CHECK(sel.current);
    CHECK(sel.exact);
    CHECK_FALSE(none.current);
    const auto roof = tensorFrontier(g, TensorCost::Roofline, false);
    CHECK(markerAt(settingMarkers(settings), double(roof.front().deviceBytes), roof.front().overhead) >= 0); // full
    CHECK(all.memory == double(g.nodes[0].bytes));
    CHECK(all.cost == Approx(roof.front().overhead));
    bool onFrontier = false;
    for (const TensorPlan &p : roof)
        onFrontier = onFrontier || (double(p.deviceBytes) == sel.memory && p.overhead == Approx(sel.cost));
    CHECK(onFrontier);
    // FLOPs alone price the same plan at under a fifth (softmax and dropout are memory-bound).
    const auto flops = tensorSettings(config, g, TensorCost::Flops, false);
    CHECK(byLabel(flops, "selective").cost < sel.cost / 5);
    CHECK(byLabel(flops, "selective").memory == sel.memory);
}

TEST_CASE("tensor settings: activation offload where there is a host link", "[settings][tensorplan]")
{
    Config config = test::scenario("llama-3-70b-128xh100");
    const LayerGraph g = layerGraph(config);
    const auto settings = tensorSettings(config, g, TensorCost::Roofline, true);
    REQUIRE(settings.size() == 5);
    const SettingPoint &off = byLabel(settings, "none + activation offload");
    CHECK(off.memory == double(g.nodes[0].bytes)); // only the layer input stays
    CHECK(off.edit.activationOffload == OffloadTarget::CPU);
    const TensorPlan expect = evaluateTensorPlan(g, off.fates, TensorCost::Roofline);
    CHECK(off.cost == expect.overhead);
    CHECK(expect.offloadedBytes == g.total() - g.nodes[0].bytes);
    // The scenario's own plan is selective without offload.
    CHECK(byLabel(settings, "selective").exact);
    // Applying a setting makes it the configuration's own.
    const Config applied = applySetting(config, off.edit);
    CHECK(applied.strategy.activation_offload == OffloadTarget::CPU);
    CHECK(applied.strategy.recompute_granularity == RecomputeGranularity::None);
    CHECK(byLabel(tensorSettings(applied, g, TensorCost::Roofline, true), "none + activation offload").exact);
    // Without a host link there is nothing to offload to.
    config.hardware.host_link_bytes_per_s = 0;
    CHECK(tensorSettings(config, layerGraph(config), TensorCost::Roofline, true).size() == 3);
}

TEST_CASE("setting markers: merged points, the current one speaks, beaten ones left out", "[settings]")
{
    auto point = [](std::string label, double memory, double cost, bool current = false, bool exact = false) {
        SettingPoint s;
        s.label = std::move(label);
        s.memory = memory;
        s.cost = cost;
        s.current = current;
        s.exact = exact;
        return s;
    };
    const std::vector<SettingPoint> settings
        = {point("a", 10, 0), point("b", 4, 3),       point("c", 10, 0, true, true),
           point("d", 6, 5),  point("e", 6, 5, true), point("f", 8, 6)};
    // d, e and f are beaten by b, but e is current; c is current and exact, so it speaks for a.
    const auto markers = settingMarkers(settings);
    REQUIRE(markers.size() == 3);
    CHECK(markers[0].settings == std::vector<int>{2, 0});
    CHECK(markers[0].current);
    CHECK(markers[1].settings == std::vector<int>{1});
    CHECK(markers[2].settings == std::vector<int>{4, 3});
    CHECK(nearestMarkerAtMost(markers, 9.9) == 1);
    CHECK(nearestMarkerAtMost(markers, 10) == 0);
    CHECK(nearestMarkerAtMost(markers, 3) == -1);
    CHECK(markerAt(markers, 4, 3) == 1);
    CHECK(markerAt(markers, 4, 2) == -1);
    CHECK(markers[2].beaten);
    CHECK_FALSE(markers[0].beaten);
    // Kept, the beaten ones are flagged and never the nearest.
    const auto all = settingMarkers(settings, true);
    REQUIRE(all.size() == 4);
    CHECK(all[3].settings == std::vector<int>{5});
    CHECK(all[3].beaten);
    CHECK(nearestMarkerAtMost(all, 8) == 1);
}

TEST_CASE("A chain setting quotes the recompute its applied plan's step time charges", "[settings][chain][steptime]")
{
    // Issue 34: the view had quoted Chen's count (a segment's last layer not
    // re-run: 51.6 ms for uniform 2 on Llama-3-70B) where the applied plan's
    // step time charges every layer (about 75 ms), and uniform 1 and 2 the
    // same. Megatron re-runs a checkpointed group whole: full uniform k, any
    // k, re-runs all 20 layers of the rank; block k only the first k of its
    // chunk (one chunk here).
    const Config config = test::scenario("llama-3-70b-128xh100");
    const auto settings = chainSettings(config, chainFromConfig(config));
    const CostModel full = costModel(applySetting(config, byLabel(settings, "full, uniform, 1 layer").edit));
    const double perLayer = full.dense.recompute.seconds - full.dense.recomputeComm.total();
    const double m = double(config.microBatches());
    for (const char *label : {"full, uniform, 1 layer", "full, uniform, 2 layers", "full, uniform, 5 layers",
                              "full, block, 2 layers", "full, block, 7 layers", "no full recompute"}) {
        CAPTURE(label);
        const SettingPoint &s = byLabel(settings, label);
        const StepTime applied = estimateStepTime(applySetting(config, s.edit));
        CHECK(s.cost == Approx(applied.recompute / m));
        const std::string name = label;
        const double layers = name.rfind("full, uniform", 0) == 0 ? 20.0
                              : name == "full, block, 2 layers"   ? 2.0
                              : name == "full, block, 7 layers"   ? 7.0
                                                                  : 0.0;
        CHECK(s.cost == Approx(layers * perLayer).margin(1e-12));
    }
}

TEST_CASE("Full recompute by the block method re-runs only each chunk's first k layers", "[steptime][timeline]")
{
    // Megatron-LM's TransformerBlock._checkpointed_forward, method "block":
    // the first recompute_num_layers layers of a chunk are checkpointed one
    // by one, the rest run without recompute. On Llama-3-70B's 20 layers a
    // rank, block 5 re-runs a quarter of what uniform re-runs, in the step
    // time and in the simulated iteration alike.
    const auto with = [](const std::string &method, int k) {
        return test::scenario("llama-3-70b-128xh100",
                              {"strategy.recompute_granularity=full", "strategy.recompute_method=" + method,
                               "strategy.recompute_num_layers=" + std::to_string(k)});
    };
    const Config uniform = with("uniform", 1), block = with("block", 5), all = with("block", 20);
    CHECK(estimateStepTime(block).recompute == Approx(estimateStepTime(uniform).recompute * 5.0 / 20.0));
    CHECK(estimateStepTime(all).recompute == Approx(estimateStepTime(uniform).recompute));
    CHECK(simulateIteration(block).recompute_s == Approx(simulateIteration(uniform).recompute_s * 5.0 / 20.0));
    CHECK(estimateStepTime(block).total < estimateStepTime(uniform).total);
}

TEST_CASE("A selective plan's chain point is selective, not store-all", "[settings][chain]")
{
    // The default Llama plan recomputes selectively: without full recompute
    // it keeps its granularity, so its point is the plan itself.
    const Config config = test::scenario("llama-3-70b-128xh100");
    REQUIRE(config.strategy.recompute_granularity == RecomputeGranularity::Selective);
    const auto settings = chainSettings(config, chainFromConfig(config));
    const SettingPoint &own = byLabel(settings, "no full recompute");
    CHECK(own.edit.granularity == RecomputeGranularity::Selective);
    CHECK(own.current);
    CHECK(own.exact);
    CHECK(applySetting(config, own.edit) == config);
    // A fully recomputing plan's way back stores all.
    const Config fullPlan = applySetting(config, byLabel(settings, "full, uniform, 2 layers").edit);
    CHECK(byLabel(chainSettings(fullPlan, chainFromConfig(fullPlan)), "no full recompute").edit.granularity
          == RecomputeGranularity::None);
}

TEST_CASE("settings carry a structured kind: a view tags its marker without reading the label", "[settings]")
{
    // The chain view of a 20-layer rank: no full recompute, then full uniform
    // k and full block k for k = 1..20, each kind with its k in the edit.
    const Config config = test::scenario("llama-3-70b-128xh100");
    const Chain chain = chainFromConfig(config);
    const auto chainPoints = chainSettings(config, chain);
    REQUIRE(chainPoints.size() == 41);
    CHECK(chainPoints[0].kind == SettingKind::NoFullRecompute);
    for (std::size_t k = 1; k <= 20; ++k) {
        const SettingPoint &uniform = chainPoints[k];
        const SettingPoint &block = chainPoints[20 + k];
        CHECK(uniform.kind == SettingKind::FullUniform);
        CHECK(block.kind == SettingKind::FullBlock);
        CHECK(uniform.edit.numLayers == std::int64_t(k));
        CHECK(block.edit.numLayers == std::int64_t(k));
        CHECK(uniform.edit.method == RecomputeMethod::Uniform);
        CHECK(block.edit.method == RecomputeMethod::Block);
    }
    CHECK(byLabel(chainPoints, "full, block, 3 layers").kind == SettingKind::FullBlock);

    // The per-tensor view: three kinds, the offloading two of them again with the host link.
    const LayerGraph g = layerGraph(config);
    const auto tensor = tensorSettings(config, g, TensorCost::Roofline, true);
    REQUIRE(tensor.size() == 5);
    const std::vector<SettingKind> kinds
        = {SettingKind::None, SettingKind::Selective, SettingKind::Full, SettingKind::None, SettingKind::Selective};
    for (std::size_t i = 0; i < tensor.size(); ++i) {
        CAPTURE(tensor[i].label);
        CHECK(tensor[i].kind == kinds[i]);
        CHECK((tensor[i].edit.activationOffload == OffloadTarget::CPU) == (i >= 3));
    }

    // A configuration's own per-tensor rules come first, as their own kind.
    const Config policies
        = test::scenario("llama-3-70b-128xh100",
                         {"strategy.recompute_granularity=none", "strategy.tensor_policies={\"mlp.*\":\"recompute\"}"});
    const auto own = tensorSettings(policies, layerGraph(policies), TensorCost::Roofline, false);
    REQUIRE_FALSE(own.empty());
    CHECK(own.front().kind == SettingKind::TensorPolicies);
    CHECK(own.front().exact);
}
