// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memledger {

// Checkpointing a chain of n layers (Chen et al. 2016; seed 002 §2).
//
// Layer l (1..n) maps x(l-1) to x(l); x(0) is the chain's input. A plan keeps
// a set of checkpoints C ⊂ {1..n-1} (x(0) is always kept); they cut the chain
// into segments (i, j]. The forward pass keeps only the checkpoints. The
// backward runs the segments last to first: a segment recomputes
// x(i+1)..x(j-1) from x(i) (layers i+1..j-1: layer j's backward needs only
// its input x(j-1), so layer j itself is never recomputed) and back-propagates.
//
// Memory model (units of the sizes): while segment (i, j] runs its backward
// the device holds
//     every checkpoint up to and including x(i), x(0) counted
//   + the segment's outputs x(i+1)..x(j), all rematerialised
//   + one gradient buffer of max(size x(i), size x(i+1)): the segment's
//     backward ends at its first layer, whose output gradient and input
//     gradient have those sizes.
// Checkpoints after x(i) are already released, which is why later segments
// should be shorter. The peak is the largest segment. Recompute is the sum of
// the recomputed layers' costs.
//
// Why these conventions: they are the ones, among the variants tried (the
// input counted or not; the gradient sized as x(j), x(i), x(i+1), the largest
// in the segment or the chain, one or two gradients; x(j) counted or not),
// under which every figure of seed 002 §2 (reference section 5) comes out at
// once: √n on a 16-layer unit chain 9 / 12 and the frontier's 9 at memory 9;
// n = 1024 65 units and 1.97n forward steps; the recursive scheme 13 units
// and 5.5n; the min-memory optimum [1,5,4,3,2,1]; the non-uniform chain's √n
// 27 / 36, the optimum's recompute 5 at memory 27 and memory 15 at recompute
// 36; Chen's greedy at B = 2 reaching 38 (tests/data/chain_cases.json). On
// unit chains the buffer is 1 whichever way it is sized; only the
// non-uniform chain's "memory 15" separates max(x(i), x(i+1)) from x(j)
// (which gives 14) and from the segment's largest gradient (16).
struct Chain
{
    std::vector<double> size; // size[l]: bytes (or units) of x(l), l = 0..n
    std::vector<double> cost; // cost[l - 1]: recompute cost of layer l, l = 1..n
    int layers() const { return static_cast<int>(cost.size()); }
};

Chain uniformChain(int n);
// Layer l odd: output sizeOdd and cost costOdd, even: sizeEven, costEven; the
// input x(0) has sizeOdd (seed 002's non-uniform chain: 1/4 sizes, 4/1 costs).
Chain alternatingChain(int n, double sizeOdd, double sizeEven, double costOdd, double costEven);
// The configured model's layers on one rank: sizes are the layer input each
// layer checkpoints (bytes, one micro-batch), costs the roofline forward time.
Chain chainFromConfig(const Config &config);

struct ChainPlan
{
    std::string name;
    std::vector<int> checkpoints; // kept outputs, ascending, in 1..n-1 (empty for the recursive scheme)
    double peak = 0;
    double recompute = 0;
    double forward = 0; // the first forward plus the recompute: "forward steps" on a unit chain
    std::vector<int> segmentLengths() const;
    int layers = 0;
};

// Peak and recompute of a single-level checkpoint set under the model above.
ChainPlan evaluateChain(const Chain &chain, std::vector<int> checkpoints, std::string name = "plan");

ChainPlan uniformPlan(const Chain &chain); // a checkpoint every round(√n) layers
ChainPlan recursivePlan(const Chain &chain); // bisection: keep the midpoint, recurse right then left
// Chen's algorithm 3: accumulate output sizes and checkpoint the layer at
// which the running sum exceeds the budget B, then restart the sum.
ChainPlan greedyPlan(const Chain &chain, double budget);

// The Pareto frontier of (peak, recompute), lowest peak first; each point is
// the first plan found with those values. Exhaustive: all 2^(n-1) sets, n ≤ 20
// (ties go to the lowest bitmask, bit l-1 for checkpoint l).
std::vector<ChainPlan> frontierExhaustive(const Chain &chain);
// Exact dynamic programme over (checkpoint position, kept bytes, peak so far,
// recompute) labels with dominance pruning; agrees with the exhaustive search.
std::vector<ChainPlan> frontierDP(const Chain &chain);

// The least recompute with peak ≤ budget (infinity when none fits), exact.
ChainPlan bestUnderBudget(const Chain &chain, double budget);

} // namespace memledger
