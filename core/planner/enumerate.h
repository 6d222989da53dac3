// SPDX-License-Identifier: MIT
#pragma once

// The search's first step (searchPlans, core/planner/search.h): every split of
// the GPUs enumerated and bounded, with per value of each dimension the
// candidate with the least bound, the fastest within the limit and the rules
// that skipped it. Internal to the search: confirm.h and verdicts.h read it.

#include "core/config/config.h"
#include "core/planner/search.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

// The search's parts share these names; a namespace of their own keeps them
// from meeting another file's Candidate or Slot.
namespace memledger::plansearch {

constexpr int kRecomputeChoices = 3; // none, selective, full (uniform, one layer per group)
constexpr std::array<RecomputeGranularity, kRecomputeChoices> kGranularities
    = {RecomputeGranularity::None, RecomputeGranularity::Selective, RecomputeGranularity::Full};

// The search splits the L layers over the p·v virtual stages of any plan
// that gives each at least one: evenly where p·v divides them, else as
// balancedLayout (core/config/editrules.h) does, the remainder one layer each
// to the inner stages first, then to the first and the last, which also hold
// the embedding and the loss. Where p·v divides L + 2 that is the split of
// Megatron's account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split, the first and the last stage a layer
// lighter (Llama 3 405B's 126 layers on 16 stages: 7, fourteen times 8, 7;
// Llama 3 report §3.3.2; with v = 8 its "first model chunk on the first stage
// has only the embedding"); DeepSeek-V3's 61 layers on 16 ranks are 3, 4×13,
// 3, 3 (Megatron's --pipeline-model-parallel-layout takes any such split).
// Every rank holds a layer; with v > 1 only those two edge chunks may hold
// none, as Llama 3's did.
inline bool splitsLayers(std::int64_t layers, std::int64_t p, std::int64_t v)
{
    return v <= 1 ? layers >= p : layers + 2 >= p * v;
}
// Whether that split needs a pipeline_layout (p·v does not divide L).
inline bool unevenChunks(std::int64_t layers, std::int64_t p, std::int64_t v)
{
    return splitsLayers(layers, p, v) && layers % (p * v) != 0;
}
// The layers of virtual stage `stage` of `stages` in that split, without
// building the layout (the step-time inputs ask per candidate).
inline std::int64_t stageLayers(std::int64_t layers, std::int64_t stages, std::int64_t stage)
{
    const std::int64_t extra = layers % stages;
    const std::int64_t inner = std::max<std::int64_t>(stages - 2, 0);
    std::int64_t n = layers / stages;
    if (stage > 0 && stage + 1 < stages)
        n += stage - 1 < extra; // the inner stages first
    else if (stage == 0)
        n += extra > inner; // then the first
    else
        n += extra > inner + (stages > 1 ? 1 : 0); // then the last
    return n;
}
// The layers of each (virtual) stage of an uneven split, in stage order
// (chunk k of rank r is stage k·p + r).
std::vector<std::int64_t> unevenLayout(std::int64_t layers, std::int64_t p, std::int64_t v = 1);

// One enumerated plan, compact: the search keeps those passing the bound.
struct Candidate
{
    double time = 0;
    Bytes bound = 0;
    std::int32_t t, p, v, d, c, e, mbs;
    std::uint8_t zero, recompute, offload, sp; // offload: bit 0 optimizer (CPU-Adam), bit 1 activations
};

// Ties in estimated time go to the simpler plan: no offload, less sharding,
// less recompute, shallower pipeline, narrower tensor split, larger micro-batch.
inline auto rankKey(const Candidate &x)
{
    return std::make_tuple(x.time, x.offload, x.zero, x.recompute, x.p, x.t, x.c, x.v, x.e, -x.mbs, x.sp);
}

constexpr std::size_t kDims = kSearchDimensions.size();

inline std::size_t dimIndex(SearchDimension d)
{
    return static_cast<std::size_t>(d);
}

// Rules that skipped a value, as bits: set on the value the rule tested and on
// every value of the enclosing loops, so a value that no plan has can say
// which rules ruled out every split with it.
constexpr std::uint32_t kTGpus = 1u << 0; // t does not divide N
constexpr std::uint32_t kTNode = 1u << 1; // t beyond the NVLink node
constexpr std::uint32_t kTHeads = 1u << 2;
constexpr std::uint32_t kTGroups = 1u << 3;
constexpr std::uint32_t kTFfn = 1u << 4;
constexpr std::uint32_t kTSharedFfn = 1u << 5;
constexpr std::uint32_t kTExpertFfn = 1u << 6; // the expert FFN does not divide by the expert tensor-parallel size
constexpr std::uint32_t kCGpus = 1u << 7; // t × c does not divide N
// (bit 8 was t × c beyond the node: context parallelism may now span nodes)
constexpr std::uint32_t kCSeq = 1u << 9; // s not a multiple of 2c
constexpr std::uint32_t kPGpus = 1u << 10; // t × c × p does not divide N
// (bit 11 was p not dividing L: the search now splits any p up to L, unevenly where it must)
constexpr std::uint32_t kEGroup = 1u << 12; // t × c × d not a multiple of etp × e
constexpr std::uint32_t kVNeedsP = 1u << 13; // interleaving with p = 1
constexpr std::uint32_t kVLayers = 1u << 14; // p × v exceeds L
constexpr std::uint32_t kSpRule = 1u << 15; // MoE with t > 1 needs sequence parallelism, and t | s / c
constexpr std::uint32_t kBatch = 1u << 16; // micro-batch × d does not divide the global batch
constexpr std::uint32_t kInterleaveBatch
    = 1u << 17; // interleaving needs the micro-batches per replica to be a multiple of p

// Per value of a dimension: the candidate with the least bound, the fastest
// one within the limit, and the rules that skipped it.
struct Slot
{
    Candidate least{};
    Candidate fastest{};
    std::uint32_t why = 0;
    Slot()
    {
        least.bound = std::numeric_limits<Bytes>::max();
        fastest.time = std::numeric_limits<double>::infinity();
    }
    bool tried() const { return least.bound != std::numeric_limits<Bytes>::max(); }
    bool kept() const { return fastest.time != std::numeric_limits<double>::infinity(); }
    void fold(const Candidate &leastIn, const Candidate &fastestIn)
    {
        if (leastIn.bound < least.bound)
            least = leastIn;
        if (fastestIn.time < fastest.time)
            fastest = fastestIn;
    }
};

struct Domain
{
    std::vector<std::int64_t> values;
    std::vector<Slot> slots;
    void set(std::vector<std::int64_t> v)
    {
        values = std::move(v);
        slots.assign(values.size(), Slot{});
    }
    std::size_t indexOf(std::int64_t v) const
    {
        return static_cast<std::size_t>(std::find(values.begin(), values.end(), v) - values.begin());
    }
};

struct Facts
{
    std::int64_t N, G, L, s, GB, heads, groups, ffn, sharedFfn, moeFfn, etp;
    bool moe, etpFixed;
    double gatherBytes = -1; // per parameter, ZeRO's weight gathers (fp8_param_gather); < 0: the weights' own
};

// The values each dimension takes (or is refused), each with its slot, and
// the candidates that passed the bound.
struct Enumeration
{
    std::array<Domain, kDims> domains;
    std::vector<Candidate> kept;
    std::int64_t candidates = 0;
    std::int64_t prunedByBound = 0;
    // The data-parallel sizes of the splits that every rule but the global
    // batch's allowed: what a global batch must be a multiple of (one
    // micro-batch per replica) for the search to have plans.
    std::vector<std::int64_t> batchSplits;
    Domain &operator[](SearchDimension d) { return domains[dimIndex(d)]; }
};

// A candidate's value of a dimension, as ValueVerdict::value encodes it.
std::int64_t valueOf(const Candidate &x, SearchDimension d);

// Every split of the GPUs (t, c, p, d, e, v, sequence parallelism, micro-batch),
// the divisibility rules each breaks recorded in the slots of the values it tried.
Enumeration enumerateCandidates(const Config &base, const SearchOptions &opt, const Facts &f, Bytes limit);

} // namespace memledger::plansearch
