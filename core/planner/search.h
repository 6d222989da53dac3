// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/time/steptime.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// "Find plans that fit" (issue 6): every split of a GPU count into t, p, v, d,
// c, e with every micro-batch size, ZeRO stage, recompute choice and
// offload choice (none, CPU optimizer, activations to the host, both), for one model, device and global batch.
struct SearchOptions
{
    std::int64_t gpus = 8;
    int top = 10;
    // Keep plans whose reserved memory (the caching allocator simulated over the
    // iteration, core/timeline/reserved.h) plus the runtime reserve is at most
    // margin × hbm_bytes: what runs out, so 1 is the device itself and a lower
    // margin an extra safety factor for what the model leaves out.
    double margin = 1.0;
    std::int64_t gpusPerNode = 8; // NVLink domain: t stays inside it; c beyond it exchanges K/V on the network
    // Interleaved chunks per rank tried: 2..maxVirtual. Llama 3 405B ran v = 8 (one layer a chunk: its
    // §3.3.2 edge chunks hold only the embedding and only the loss; plansearch::unevenChunks).
    std::int64_t maxVirtual = 8;
    std::int64_t maxMicroBatch = 16;
};

// Arguments named as on the command line ("--gpus", "--top", "--margin").
Problems checkSearchOptions(const SearchOptions &options);

// The errors of `base` that stop a search (issue 34): those no plan the search
// could choose clears. The search chooses t, p, v, d, c, e, the micro-batch,
// ZeRO, recompute, offload, sequence parallelism, the schedule and the layout
// itself, so "80 layers do not split over p = 3" stops nothing; an error of the
// model, the device, the sequence or the precision does. They are `base`'s own
// problems, worded with its values: those whose field is still in error with
// every chosen setting at its simplest (no split, one sequence per micro-batch,
// nothing sharded, recomputed or offloaded). Empty: the search can run.
Problems searchBlockers(const Config &base);

// The dimensions the search varies, named as the search and the preset name
// them ("t" ... "e", "micro_batch_size", "zero_stage", "recompute_granularity",
// "offload", "pipeline_schedule"), then the strategies
// core/planner/trystrategies.h tries on the answer's plans
// ("pipeline_activation_balance", "grad_offload", "fp8_recipe").
enum class SearchDimension {
    T,
    P,
    V,
    D,
    C,
    E,
    MicroBatch,
    ZeroStage,
    Recompute,
    Offload,
    Schedule,
    ActivationBalance,
    GradOffload,
    Fp8Recipe
};
inline constexpr std::array<SearchDimension, 14> kSearchDimensions
    = {SearchDimension::T,           SearchDimension::P,         SearchDimension::V,
       SearchDimension::D,           SearchDimension::C,         SearchDimension::E,
       SearchDimension::MicroBatch,  SearchDimension::ZeroStage, SearchDimension::Recompute,
       SearchDimension::Offload,     SearchDimension::Schedule,  SearchDimension::ActivationBalance,
       SearchDimension::GradOffload, SearchDimension::Fp8Recipe};
std::string_view dimensionName(SearchDimension dimension);
// "tensor-parallel degree", "micro-batch size", ...
std::string_view dimensionTitle(SearchDimension dimension);
// A configuration's value of a dimension, encoded as ValueVerdict::value.
std::int64_t dimensionValue(const Config &config, SearchDimension dimension);

// Why one value of a dimension is, or is not, in the answer.
enum class VerdictKind {
    InTop, // some returned plan has it
    Structural, // no valid plan has it (divisibility, the NVLink node, the batch)
    Memory, // every plan with it was pruned: its lower bound exceeds the limit
    Slower, // plans with it fit, but none made the top K
    Ledger, // plans with it pass the lower bound, but the ones tried fail the full ledger (MoE)
};
std::string_view verdictKindName(VerdictKind kind); // "top", "structural", "memory", "slower", "ledger"

struct ValueVerdict
{
    // The degree, micro-batch size or ZeRO stage; recompute: int(RecomputeGranularity);
    // offload: bit 0 the optimizer on the CPU, bit 1 activations to the host;
    // pipeline schedule: int(PipelineSchedule), as ParallelismConfig::schedule() resolves it;
    // pipeline_activation_balance and fp8_recipe: the enum's int; grad_offload: 0 none, 1 cpu.
    std::int64_t value = 0;
    std::string label; // "3", "selective", "optimizer+activations"
    VerdictKind kind = VerdictKind::Structural;
    std::string reason; // one sentence that names the value
    // False where the search never tried the value (GPipe, interleaving it does not enumerate, a strategy with
    // no plan to try it on): a Structural verdict then says it was not tried, not that no plan could have it.
    bool tried = true;
    // Memory: the least lower bound of any plan with this value (every one
    // exceeds the limit), and the plan that has it.
    Bytes leastPeakBytes = 0;
    // Slower: the fastest plan with this value that the full ledger confirms,
    // its estimated step time and how much slower than the best plan it is.
    double stepTimeSeconds = 0;
    double slowerPercent = 0;
    std::optional<Config> example; // Memory and Slower: the plan named above
};

struct DimensionVerdicts
{
    SearchDimension dimension = SearchDimension::T;
    std::vector<ValueVerdict> values; // ascending
};

struct SearchPlan
{
    Config config;
    Ledger ledger;
    Bytes estimateBytes = 0; // the search's lower bound on the peak (what it pruned with)
    // What decides: what PyTorch's caching allocator reserves (simulateReserved)
    // plus the runtime reserve, at most the search's limit.
    Bytes reservedBytes = 0;
    StepTime time;
};

struct SearchResult
{
    std::vector<SearchPlan> plans; // best (fastest) first
    std::int64_t candidates = 0; // valid plans enumerated
    std::int64_t prunedByBound = 0; // rejected because the lower bound already exceeds the limit
    std::int64_t ledgersRun = 0; // full ledgers computed to confirm the best and the verdicts' plans
    std::int64_t rejectedByLedger = 0;
    // When no split can cut the global batch (no candidate at all): the
    // nearest global batches below and above it that one can, each a
    // multiple of some valid split's data-parallel size (empty otherwise).
    std::vector<std::int64_t> nearestGlobalBatches;
    Bytes limitBytes = 0;
    double seconds = 0;
    // Why no plan came back (or what most often ruled plans out), in words.
    std::vector<std::string> notes;
    // One entry per SearchDimension, in kSearchDimensions order: every value
    // the search tried or skipped, with why it is or is not in `plans`.
    std::vector<DimensionVerdicts> dimensions;
    const DimensionVerdicts &verdicts(SearchDimension dimension) const
    {
        return dimensions.at(static_cast<std::size_t>(dimension));
    }
};

// Exactness: a candidate is dropped early only when its lower bound (model
// states, stored layer activations and the runtime reserve of its first or
// last pipeline rank: terms the ledger adds in full, every other ledger term
// being non-negative) exceeds the limit. The rest are visited fastest first
// and confirmed with computeLedger, its simulated peak and then what the
// caching allocator reserves plus the runtime reserve (each a lower bound on
// the next, plansearch::ledgerUnder) until `top` fit, so every returned plan's
// peak is the ledger's own and its reservedBytes within the limit.
//
// Verdicts (`dimensions`): the search keeps, per value of every dimension, the
// candidate with the least lower bound and the fastest one within the limit
// (min-bound / best-time slots updated per candidate for ZeRO, recompute and
// offload, folded once per micro-batch loop for the rest), and a mask of the
// divisibility rules that skipped it. A Memory verdict states that least bound,
// which is exact because the bound never exceeds the ledger's peak; a Slower
// verdict's plan is confirmed with computeLedger like the top K.
SearchResult searchPlans(const Config &base, const SearchOptions &options);

// How much slower a step of `seconds` is than one of `fastest`, in percent
// (0 when fastest is not positive): the verdicts' and the plot's measure.
double percentSlower(double seconds, double fastest);

// The returned plans no other returned plan beats on both the peak and the
// step time (as fast and no more memory, better in one): the search's
// memory-against-time frontier, fastest first (indices into result.plans).
std::vector<std::size_t> paretoPlans(const SearchResult &result);

} // namespace memledger
