// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/ledger/ledger.h"

#include <cstdint>
#include <vector>

namespace memledger {

// Cross-rank activation balancing (strategy.pipeline_activation_balance =
// "auto"). Under 1F1B rank r holds p − r micro-batches' activations (Narayanan
// et al. 2021, §2.2): the first ranks are full while the last have memory
// free. The ranks above the mean park part of their saved activations in the
// memory of the ranks below it, over NVLink inside a node and the network
// across nodes, and take them back before their backward: a remote offload
// whose currency is the interconnect's bandwidth instead of the host link's.

// Whether every GPU of pipeline rank a and its counterpart on rank b (the
// same tensor-, context- and data-parallel index) share a node of
// `gpusPerNode` GPUs. In Megatron's default rank order (tp-cp-dp-pp, the
// pipeline outermost) pipeline rank r holds the global ranks
// [r·t·c·d, (r + 1)·t·c·d); two stages share a node when both blocks lie in
// the same node.
bool pipelineRanksShareNode(const ParallelismConfig &parallelism, std::int64_t gpusPerNode, std::int64_t a,
                            std::int64_t b);

// Water-filling over the ranks' device totals: the level L at which what the
// ranks above it can give (each at most its `movable` bytes) equals what the
// ranks below it can take without rising above L. Every byte given is taken:
// Σ out = Σ in.
struct WaterFill
{
    Bytes level = 0;
    std::vector<Bytes> out; // per rank: bytes parked elsewhere
    std::vector<Bytes> in; // per rank: bytes held for others
};
WaterFill waterFill(const std::vector<Bytes> &totals, const std::vector<Bytes> &movable);

// Donors matched to receivers: each donor in rank order gives first to the
// receivers in its own node, then to the others, the last ranks first.
std::vector<ParkedActivations> pairParked(const WaterFill &fill, const Config &config);

// Applies the balance to a finished ledger: shrinks each donor's
// "Transformer layers" row (by at most n − 1 of its n in-flight groups: the
// one being computed stays), adds a "Parked activations from rank j" row to
// each receiver, recomputes the totals, the fits and the peak, and explains
// the choice. Does nothing unless the strategy asks for it and p > 1.
void balanceActivations(Ledger &ledger, const Config &config);

// The copies of one saved group (chunk-micro-batch) of a donor. Its parked
// share, the layers saved first, leaves once they are computed and comes back
// while the backward runs through the rest of the group: the copy back has
// (1 − share) · backward to hide under, and stalls the backward for what does
// not fit. The copy out has the rest of the forward and the ops until the
// group's backward, and never stalls compute (the tensors stay where they are
// until sent).
struct BalanceCopy
{
    double copySeconds = 0; // bytes / link
    double windowSeconds = 0; // (1 − share) · backward
    double stallSeconds = 0; // max(0, copy − window)
    double neededBytesPerS = 0; // bytes / window: the link that would hide it
};
BalanceCopy balanceCopy(double bytes, double share, double backwardSeconds, double linkBytesPerS);

// A donor's link rate over all its receivers: its parked bytes over the time
// its copy stream takes to send each receiver its part (NVLink and network
// parts one after the other); 0 for a rank that parks nothing.
double donorLinkBytesPerS(const Ledger &ledger, int rank);

// A rank's device activations as they were before balancing (what the
// staircase draws as the unbalanced outline).
Bytes unbalancedActivationBytes(const RankLedger &rank);

// The share of each saved group (chunk-micro-batch) a donor parks: its
// parked bytes over its layer activations before balancing; 0 for others.
double parkedShare(const Ledger &ledger, int rank);

} // namespace memledger
