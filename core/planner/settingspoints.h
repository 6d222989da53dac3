// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/planner/chain.h"
#include "core/planner/tensorplan.h"

#include <optional>
#include <string>
#include <vector>

namespace memledger {

// The plans a preset can express (Megatron's recompute settings and
// activation offload) placed on a planner's frontier under that planner's own
// model, so a view can mark them beside the exact frontier and apply one
// (issue 6). A frontier point that no setting reaches stays a picture: the
// format has no field for "checkpoint after layers 3, 7 and 10".

// What applying a setting changes in the strategy section; unset fields stay.
struct SettingEdit
{
    RecomputeGranularity granularity = RecomputeGranularity::None;
    std::optional<RecomputeMethod> method;
    std::optional<std::int64_t> numLayers;
    std::optional<OffloadTarget> activationOffload;
};
Config applySetting(Config config, const SettingEdit &edit);

// What a setting is, so a view can tag its marker without reading the label:
// the chain view's no full recompute, full uniform k and full block k (k in
// edit.numLayers); the per-tensor view's none, selective and full (with
// activation offload when edit.activationOffload says so), and the
// configuration's own strategy.tensor_policies.
enum class SettingKind { NoFullRecompute, FullUniform, FullBlock, None, Selective, Full, TensorPolicies };

struct SettingPoint
{
    std::string label; // "full, uniform, 4 layers": display text only
    SettingKind kind = SettingKind::None;
    SettingEdit edit;
    double memory = 0; // bytes: the chain's peak, or one layer's device bytes
    double cost
        = 0; // chain: recompute seconds per micro-batch, as the step time charges it; tensor: the overhead fraction
    std::vector<int> checkpoints; // chain: the checkpoints it keeps
    std::vector<Fate> fates; // tensor: every node's fate
    bool current = false; // the configuration's own plan lands on this one
    bool exact = false; // applying it changes nothing: it is the configuration's setting
};

// The checkpoints Megatron's recompute settings keep on a rank's chain of
// `layers` layers in `chunks` equal virtual chunks. Without full recompute
// every layer's output is kept. Full uniform k keeps each chunk's input and
// every k-th layer's output after it, as Megatron's groups of k do. Full
// block k checkpoints each of a chunk's first k layers alone and runs the
// rest normally, so every output is kept: under the chain model a layer's
// backward needs only its input, so a one-layer segment recomputes nothing and
// full uniform 1 and every full block k land on storing everything. What they
// save inside a layer is the per-tensor planner's business.
std::vector<int> megatronCheckpoints(const StrategyConfig &strategy, int layers, int chunks = 1);

// The chain view's settings on chain = chainFromConfig(config): no full
// recompute (the configuration's own granularity when it is not full, else
// none), then full uniform k and full block k for k = 1 .. layers per chunk.
// Memory is evaluateChain's peak of the checkpoints the setting keeps; cost
// the recompute the applied plan's step time charges a micro-batch
// (recomputeSecondsPerMicroBatch), which is what applying it reproduces:
// Megatron re-runs a checkpointed group whole, so every full uniform k
// re-runs every layer, where the chain spares each segment's last one.
// `current` marks those with the configuration's checkpoints and recompute.
std::vector<SettingPoint> chainSettings(const Config &config, const Chain &chain);

// The fates a strategy gives one layer's tensors: none keeps all, selective
// recomputes the attention core (selectivePlan), full recomputes all but the
// input whatever its method (the view is of one recomputed layer), and with
// activation offload every tensor still stored, the input aside, is offloaded.
std::vector<Fate> megatronFates(const StrategyConfig &strategy, const LayerGraph &graph);

// The per-tensor view's settings: none, selective and full (uniform, 1
// layer); with `offload` and a host link also none and selective with
// activation offload (full keeps only the input, which never leaves).
// Evaluated by evaluateTensorPlan under `cost`. A configuration with
// strategy.tensor_policies lands on none of them: its own plan comes first,
// labelled "tensor_policies" (configuredTensorPlan), current and exact.
std::vector<SettingPoint> tensorSettings(const Config &config, const LayerGraph &graph, TensorCost cost, bool offload);

// The settings drawn as markers. Settings at one point merge into one marker
// (the configuration's own setting, else a current one, else the first listed
// speaks for it and is what a click applies). A marker that another beats on
// both axes is flagged `beaten`; unless keepBeaten, it is left out when it is
// not the current plan. Ordered as the settings are.
struct SettingMarker
{
    std::vector<int> settings; // indices into the list; settings[0] speaks for the marker
    double memory = 0;
    double cost = 0;
    bool current = false;
    bool beaten = false;
};
std::vector<SettingMarker> settingMarkers(const std::vector<SettingPoint> &settings, bool keepBeaten = false);

// The unbeaten marker of least cost among those at `memory` or less (ties: the first), or -1.
int nearestMarkerAtMost(const std::vector<SettingMarker> &markers, double memory);

// The marker at (memory, cost) within a relative 1e-9, or -1: a frontier
// point that some setting reaches.
int markerAt(const std::vector<SettingMarker> &markers, double memory, double cost);

} // namespace memledger
