// SPDX-License-Identifier: MIT
#include "core/planner/search.h"

#include "core/check/validate.h"
#include "core/model/activations.h"
#include "core/model/fp8.h"
#include "core/model/modelstates.h"
#include "core/model/parameters.h"
#include "core/planner/tensorplan.h"
#include "core/planner/tryschedules.h"
#include "core/planner/trystrategies.h"
#include "core/schedule/schedule.h"
#include "core/time/costmodel.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace memledger {

Problems checkSearchOptions(const SearchOptions &o)
{
    Problems out;
    if (o.gpus < 1 || o.gpus > 1000000)
        out.push_back({"--gpus", "must be a GPU count from 1 to 1,000,000, got " + std::to_string(o.gpus)});
    if (o.top < 1)
        out.push_back({"--top", "must be at least 1, got " + std::to_string(o.top)});
    if (!(o.margin > 0.0 && o.margin <= 1.0))
        out.push_back({"--margin", "must be a fraction of the device memory in (0, 1], got " + std::to_string(o.margin),
                       "0.8 keeps the estimate under 80 % of HBM"});
    if (o.gpusPerNode < 1)
        out.push_back({"gpus_per_node", "must be at least 1"});
    return out;
}

namespace {

constexpr int kRecomputeChoices = 3; // none, selective, full (uniform, one layer per group)
constexpr std::array<RecomputeGranularity, kRecomputeChoices> kGranularities
    = {RecomputeGranularity::None, RecomputeGranularity::Selective, RecomputeGranularity::Full};

std::vector<std::int64_t> divisorsOf(std::int64_t n, std::int64_t cap)
{
    std::vector<std::int64_t> out;
    for (std::int64_t k = 1; k <= n && k <= cap; ++k)
        if (n % k == 0)
            out.push_back(k);
    return out;
}

// Everything that depends on (t, c, sequence parallelism, micro-batch) only:
// per-layer saved bytes and kernel costs, computed once through the same
// functions the ledger and the cost model use.
struct Shape
{
    std::array<Bytes, kRecomputeChoices> storedDense{}, storedMoe{};
    Bytes workingSet = 0; // full recompute: one layer rebuilt (the smaller layer kind)
    Bytes firstStage = 0; // embedding activations per micro-batch
    Bytes lastStage = 0; // output layer and loss per micro-batch
    std::array<LayerCost, kRecomputeChoices> layer{}; // one layer, averaged over layer kinds
    OpCost outForward, outBackward;
    double p2pNvlink = 0, p2pNetwork = 0; // one pipeline send, inside a node or across
};

Config withShape(const Config &base, std::int64_t t, std::int64_t c, bool sp, std::int64_t mbs)
{
    Config cfg = base;
    cfg.parallelism.tensor_model_parallel_size = t;
    cfg.parallelism.context_parallel_size = c;
    cfg.parallelism.sequence_parallel = sp;
    cfg.training.micro_batch_size = mbs;
    return cfg;
}

Shape shapeOf(const Config &base, std::int64_t t, std::int64_t c, bool sp, std::int64_t mbs, std::int64_t firstMoeLayer,
              std::int64_t gpusPerNode)
{
    Config cfg = withShape(base, t, c, sp, mbs);
    Shape sh;
    const LayerActivations dense = layerActivations(cfg, false, false);
    const LayerActivations moe = cfg.model.isMoe() ? layerActivations(cfg, true, false) : dense;
    const double L = double(cfg.model.num_layers);
    double moeShare = 0;
    if (cfg.model.isMoe()) {
        std::int64_t n = 0;
        for (std::int64_t l = 0; l < cfg.model.num_layers; ++l)
            n += cfg.model.isMoeLayer(l);
        moeShare = double(n) / L;
    }
    for (int g = 0; g < kRecomputeChoices; ++g) {
        cfg.strategy.recompute_granularity = kGranularities[g];
        if (kGranularities[g] == RecomputeGranularity::Full)
            cfg.strategy.tensor_policies.clear(); // as the plan's preset will have it
        cfg.strategy.recompute_method = RecomputeMethod::Uniform;
        cfg.strategy.recompute_num_layers = 1;
        // A layer index of each kind, so chunkActivations sees that kind.
        std::int64_t denseLayer = 0;
        while (denseLayer < cfg.model.num_layers && cfg.model.isMoeLayer(denseLayer))
            ++denseLayer;
        // What a layer keeps depends on the granularity (and the preset's tensor_policies).
        const LayerActivations keptDense = layerActivations(cfg, false, false);
        const LayerActivations keptMoe = cfg.model.isMoe() ? layerActivations(cfg, true, false) : keptDense;
        sh.storedDense[g] = chunkActivations(cfg, keptDense, keptMoe, denseLayer, 1).stored;
        sh.storedMoe[g] = firstMoeLayer >= 0 ? chunkActivations(cfg, keptDense, keptMoe, firstMoeLayer, 1).stored
                                             : sh.storedDense[g];
        const CostModel cm = costModel(cfg, gpusPerNode);
        sh.layer[g] = mixedLayerCost(cm.dense, cm.moe, moeShare);
        sh.outForward = cm.outputForward;
        sh.outBackward = cm.outputBackward;
    }
    sh.workingSet = std::min(dense.total, moe.total);
    const StageActivations sa = stageActivations(cfg);
    for (const SavedTensor &s : sa.first)
        sh.firstStage += s.bytes;
    for (const SavedTensor &s : sa.last)
        sh.lastStage += s.bytes;
    sh.p2pNvlink = pipelineSendSeconds(cfg, true);
    sh.p2pNetwork = pipelineSendSeconds(cfg, false);
    return sh;
}

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
auto rankKey(const Candidate &x)
{
    return std::make_tuple(x.time, x.offload, x.zero, x.recompute, x.p, x.t, x.c, x.v, x.e, -x.mbs, x.sp);
}

Config configOf(const Config &base, const Candidate &x, std::int64_t globalBatch)
{
    Config cfg = base;
    ParallelismConfig &par = cfg.parallelism;
    par.tensor_model_parallel_size = x.t;
    par.pipeline_model_parallel_size = x.p;
    par.virtual_pipeline_model_parallel_size = x.v;
    par.data_parallel_size = x.d;
    par.context_parallel_size = x.c;
    par.expert_model_parallel_size = x.e;
    par.sequence_parallel = x.sp != 0;
    par.zero_stage = x.zero;
    par.pipeline_schedule.reset(); // interleaved when v > 1, else 1F1B
    par.pipeline_layout.clear(); // the search splits the layers evenly
    cfg.training.micro_batch_size = x.mbs;
    cfg.training.global_batch_size = globalBatch;
    cfg.strategy.recompute_granularity = kGranularities[static_cast<std::size_t>(x.recompute)];
    if (cfg.strategy.recompute_granularity == RecomputeGranularity::Full)
        cfg.strategy.tensor_policies.clear(); // full recompute keeps only each layer's input: nothing to refine
    cfg.strategy.recompute_method = RecomputeMethod::Uniform;
    cfg.strategy.recompute_num_layers = 1;
    cfg.strategy.optimizer_offload = (x.offload & 1) ? OffloadTarget::CPU : OffloadTarget::None;
    cfg.strategy.param_offload = OffloadTarget::None;
    cfg.strategy.activation_offload = (x.offload & 2) ? OffloadTarget::CPU : OffloadTarget::None;
    // Balancing and gradient offload are tried on the answer afterwards
    // (core/planner/trystrategies.h); the bound counts neither.
    cfg.strategy.pipeline_activation_balance = ActivationBalance::None;
    cfg.strategy.grad_offload = OffloadTarget::None;
    cfg.name = base.name + " t" + std::to_string(x.t) + " p" + std::to_string(x.p)
               + (x.v > 1 ? " v" + std::to_string(x.v) : "") + " d" + std::to_string(x.d)
               + (x.c > 1 ? " c" + std::to_string(x.c) : "") + (x.e > 1 ? " e" + std::to_string(x.e) : "") + " b"
               + std::to_string(x.mbs) + " zero" + std::to_string(x.zero) + " "
               + std::string(granularityName(cfg.strategy.recompute_granularity)) + ((x.offload & 1) ? " cpu-adam" : "")
               + ((x.offload & 2) ? " act-offload" : "");
    return cfg;
}

// ---- Verdicts: why each value of each dimension is or is not in the answer.

constexpr std::size_t kDims = kSearchDimensions.size();

std::size_t dimIndex(SearchDimension d)
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
constexpr std::uint32_t kCNode = 1u << 8; // t × c beyond the node
constexpr std::uint32_t kCSeq = 1u << 9; // s not a multiple of 2c
constexpr std::uint32_t kPGpus = 1u << 10; // t × c × p does not divide N
constexpr std::uint32_t kPLayers = 1u << 11; // p does not divide L
constexpr std::uint32_t kEGroup = 1u << 12; // t × c × d not a multiple of etp × e
constexpr std::uint32_t kVNeedsP = 1u << 13; // interleaving with p = 1
constexpr std::uint32_t kVLayers = 1u << 14; // p × v does not divide L
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

std::vector<std::int64_t> allDivisors(std::int64_t n)
{
    std::vector<std::int64_t> low, high;
    for (std::int64_t k = 1; k * k <= n; ++k)
        if (n % k == 0) {
            low.push_back(k);
            if (k != n / k)
                high.push_back(n / k);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

// Every degree up to the NVLink node (those that do not divide N included, so
// the answer says why t = 3 is out), then the first divisor of N beyond it.
std::vector<std::int64_t> upToNode(std::int64_t n, std::int64_t node)
{
    std::vector<std::int64_t> out;
    for (std::int64_t k = 1; k <= std::min(n, node); ++k)
        out.push_back(k);
    for (std::int64_t k : allDivisors(n))
        if (k > node) {
            out.push_back(k);
            break;
        }
    return out;
}

std::int64_t valueOf(const Candidate &x, SearchDimension d)
{
    switch (d) {
    case SearchDimension::T:
        return x.t;
    case SearchDimension::P:
        return x.p;
    case SearchDimension::V:
        return x.v;
    case SearchDimension::D:
        return x.d;
    case SearchDimension::C:
        return x.c;
    case SearchDimension::E:
        return x.e;
    case SearchDimension::MicroBatch:
        return x.mbs;
    case SearchDimension::ZeroStage:
        return x.zero;
    case SearchDimension::Recompute:
        return x.recompute;
    case SearchDimension::Offload:
        return x.offload;
    case SearchDimension::Schedule: // what configOf leaves: interleaved when v > 1, else 1F1B; -1 without a pipeline
        return x.p < 2
                   ? -1
                   : static_cast<std::int64_t>(x.v > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB);
    case SearchDimension::ActivationBalance:
    case SearchDimension::GradOffload:
    case SearchDimension::Fp8Recipe:
        return 0; // not enumerated: tryStrategies decides them
    }
    return 0;
}

std::string labelOf(SearchDimension d, std::int64_t v)
{
    if (d == SearchDimension::Recompute)
        return std::string(granularityName(static_cast<RecomputeGranularity>(v)));
    if (d == SearchDimension::Offload) {
        constexpr std::array<const char *, 4> names = {"none", "optimizer", "activations", "optimizer+activations"};
        return names[static_cast<std::size_t>(v & 3)];
    }
    if (d == SearchDimension::Schedule)
        return std::string(scheduleName(static_cast<PipelineSchedule>(v)));
    return std::to_string(v);
}

// The value in a sentence: "t = 3", "micro-batch 4", "ZeRO 1", "full recompute".
std::string phraseOf(SearchDimension d, std::int64_t v)
{
    switch (d) {
    case SearchDimension::MicroBatch:
        return "micro-batch " + std::to_string(v);
    case SearchDimension::ZeroStage:
        return "ZeRO " + std::to_string(v);
    case SearchDimension::Recompute: {
        constexpr std::array<const char *, 3> names = {"no recompute", "selective recompute", "full recompute"};
        return names[static_cast<std::size_t>(std::clamp<std::int64_t>(v, 0, 2))];
    }
    case SearchDimension::Offload: {
        constexpr std::array<const char *, 4> names
            = {"no offload", "the optimizer on the CPU", "activations offloaded to the host",
               "the optimizer on the CPU and activations on the host"};
        return names[static_cast<std::size_t>(v & 3)];
    }
    case SearchDimension::Schedule:
        return "the " + std::string(scheduleName(static_cast<PipelineSchedule>(v))) + " schedule";
    default:
        return std::string(dimensionName(d)) + " = " + std::to_string(v);
    }
}

// "a", "a or b", "a, b or c".
std::string orList(const std::vector<std::string> &items)
{
    std::string out;
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (k > 0)
            out += k + 1 == items.size() ? " or " : ", ";
        out += items[k];
    }
    return out;
}

std::string joined(const std::vector<std::string> &items, const char *sep)
{
    std::string out;
    for (std::size_t k = 0; k < items.size(); ++k)
        out += (k > 0 ? sep : "") + items[k];
    return out;
}

// Formats bytes rounded down to the digits formatGB shows, so "needs at least"
// never overstates the bound.
std::string floorGB(Bytes bytes)
{
    const double a = static_cast<double>(bytes);
    double quantum = 1;
    for (const double unit : {1e12, 1e9, 1e6, 1e3})
        if (a >= unit) {
            quantum = unit * (a >= 100 * unit ? 0.1 : a >= 10 * unit ? 0.01 : 0.001);
            break;
        }
    return formatGB(std::floor(a / quantum) * quantum);
}

// 0.8 -> "80 %", 0.825 -> "82.5 %".
std::string percentOf(double fraction)
{
    char text[32];
    const double pct = fraction * 100.0;
    std::snprintf(text, sizeof text, std::fabs(pct - std::round(pct)) < 1e-9 ? "%.0f %%" : "%.1f %%", pct);
    return text;
}

struct Facts
{
    std::int64_t N, G, L, s, GB, heads, groups, ffn, sharedFfn, moeFfn, etp;
    bool moe, etpFixed;
    double gatherBytes = -1; // per parameter, ZeRO's weight gathers (fp8_param_gather); < 0: the weights' own
};

// Bytes per parameter of ZeRO's weight gathers under any ZeRO stage ≥ 1 (stepTime uses it only there).
double searchGatherBytes(Config base)
{
    base.parallelism.zero_stage = std::max(1, base.parallelism.zero_stage);
    return fp8ParamGatherInForce(base) ? fp8GatherBytesPerParam(base) : -1.0;
}

// Why no valid plan has this value, from the rules that skipped it.
std::string structuralReason(SearchDimension d, std::int64_t v, std::uint32_t why, const Facts &f)
{
    const std::string it = phraseOf(d, v), N = std::to_string(f.N), G = std::to_string(f.G);
    const std::string L = std::to_string(f.L), GB = std::to_string(f.GB);
    std::vector<std::string> own, other;
    if (d == SearchDimension::T) {
        std::vector<std::string> divides;
        if (why & kTHeads)
            divides.push_back("the " + std::to_string(f.heads) + " attention heads");
        if ((why & kTGroups) && f.groups != f.heads)
            divides.push_back("the " + std::to_string(f.groups) + " query groups");
        if (why & kTFfn)
            divides.push_back("the FFN width of " + std::to_string(f.ffn));
        if (why & kTSharedFfn)
            divides.push_back("the shared-expert FFN width of " + std::to_string(f.sharedFfn));
        if ((why & kTExpertFfn) && !f.etpFixed)
            divides.push_back("the expert FFN width of " + std::to_string(f.moeFfn));
        if (why & kTGpus)
            divides.push_back("the " + N + " GPUs");
        if (!divides.empty())
            own.push_back(it + " does not divide " + orList(divides));
        if ((why & kTExpertFfn) && f.etpFixed)
            own.push_back("the expert FFN width of " + std::to_string(f.moeFfn)
                          + " does not divide by the expert tensor-parallel size " + std::to_string(f.etp));
        if (why & kTNode)
            own.push_back(it + " leaves the " + G + "-GPU NVLink node");
    }
    if (d == SearchDimension::C) {
        if ((why & kCGpus) && f.N % v)
            own.push_back(it + " does not divide the " + N + " GPUs");
        if ((why & kCNode) && v > f.G)
            own.push_back(it + " leaves the " + G + "-GPU NVLink node");
        if (why & kCSeq)
            own.push_back("the " + std::to_string(f.s)
                          + "-token sequence does not split into 2c = " + std::to_string(2 * v) + " chunks");
    }
    if (d == SearchDimension::P && (why & kPLayers))
        own.push_back(it + " does not divide the " + L + " layers");
    if (d == SearchDimension::D && (why & kBatch) && f.GB % v)
        own.push_back(it + " does not divide the global batch of " + GB + " sequences");
    if (d == SearchDimension::V && (why & kVNeedsP)) {
        // p = 1 cannot interleave; say what ruled out every p > 1 as well.
        std::vector<std::string> withP;
        if (why & kVLayers)
            withP.push_back("p × " + std::to_string(v) + " does not divide the " + L + " layers");
        if (why & kInterleaveBatch)
            withP.push_back("the micro-batches per replica are not a multiple of p");
        if (!(why & ~(kVNeedsP | kVLayers | kInterleaveBatch)))
            return withP.empty() ? it + " interleaves pipeline stages, which needs p > 1"
                                 : it + " needs p > 1, and for every p > 1 here " + orList(withP);
    }
    if (d == SearchDimension::MicroBatch && (why & kBatch))
        own.push_back(it + " does not divide the global batch per data-parallel replica (" + GB + " / d)");
    if (!own.empty())
        return joined(own, "; ");

    if ((why & kCGpus) && !(d == SearchDimension::C && f.N % v))
        other.push_back("t × c does not divide the " + N + " GPUs");
    if ((why & kCNode) && !(d == SearchDimension::C && v > f.G))
        other.push_back("t × c leaves the " + G + "-GPU NVLink node");
    if ((why & kCSeq) && d != SearchDimension::C)
        other.push_back("the " + std::to_string(f.s) + "-token sequence does not split into 2 × c chunks");
    if (why & kPGpus)
        other.push_back("t × c × p does not divide the " + N + " GPUs");
    if ((why & kPLayers) && d != SearchDimension::P)
        other.push_back("p does not divide the " + L + " layers");
    if (why & kEGroup)
        other.push_back("t × c × d is not a multiple of the expert tensor-parallel size × e");
    if (why & kVNeedsP)
        other.push_back("interleaving needs p > 1");
    if (why & kVLayers)
        other.push_back("p × v does not divide the " + L + " layers");
    if (why & kSpRule)
        other.push_back("an MoE model with t > 1 needs sequence parallelism, which needs t to divide the sequence per "
                        "context rank");
    if ((why & kBatch) && d != SearchDimension::MicroBatch && !(d == SearchDimension::D && f.GB % v))
        other.push_back("micro-batch × d does not divide the global batch of " + GB);
    if (why & kInterleaveBatch)
        other.push_back("interleaving needs the micro-batches per replica to be a multiple of p");
    if (!other.empty() || !own.empty()) {
        own.insert(own.end(), other.begin(), other.end());
        return "no valid plan has " + it + ": every split with it breaks a rule (" + joined(own, "; ") + ")";
    }
    if (d == SearchDimension::D)
        return it + " leaves " + std::to_string(f.N / v)
               + " GPUs per replica, and no valid t × c × p makes that "
                 "(t × c within the "
               + G + "-GPU node, p dividing the " + L + " layers)";
    return "no valid split of the " + N + " GPUs reaches " + it;
}

} // namespace

double percentSlower(double seconds, double fastest)
{
    return fastest > 0 ? (seconds / fastest - 1.0) * 100.0 : 0.0;
}

std::vector<std::size_t> paretoPlans(const SearchResult &result)
{
    std::vector<std::size_t> order(result.plans.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    const auto peak = [&](std::size_t i) { return result.plans[i].ledger.peak_bytes; };
    const auto time = [&](std::size_t i) { return result.plans[i].time.total; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return time(a) != time(b) ? time(a) < time(b) : peak(a) < peak(b);
    });
    // Fastest first: a plan joins when it needs less memory than every faster one.
    std::vector<std::size_t> out;
    for (std::size_t i : order)
        if (out.empty() || peak(i) < peak(out.back()))
            out.push_back(i);
    return out;
}

std::string_view dimensionName(SearchDimension d)
{
    constexpr std::array<std::string_view, kDims> names = {"t",
                                                           "p",
                                                           "v",
                                                           "d",
                                                           "c",
                                                           "e",
                                                           "micro_batch_size",
                                                           "zero_stage",
                                                           "recompute_granularity",
                                                           "offload",
                                                           "pipeline_schedule",
                                                           "pipeline_activation_balance",
                                                           "grad_offload",
                                                           "fp8_recipe"};
    return names[dimIndex(d)];
}

std::string_view dimensionTitle(SearchDimension d)
{
    constexpr std::array<std::string_view, kDims> titles = {"tensor-parallel degree",
                                                            "pipeline-parallel degree",
                                                            "virtual pipeline chunks per rank",
                                                            "data-parallel degree",
                                                            "context-parallel degree",
                                                            "expert-parallel degree",
                                                            "micro-batch size",
                                                            "ZeRO stage",
                                                            "activation recompute",
                                                            "offload",
                                                            "pipeline schedule",
                                                            "cross-rank activation balancing",
                                                            "gradient offload",
                                                            "FP8 recipe"};
    return titles[dimIndex(d)];
}

std::int64_t dimensionValue(const Config &config, SearchDimension d)
{
    const ParallelismConfig &par = config.parallelism;
    switch (d) {
    case SearchDimension::T:
        return par.tensor_model_parallel_size;
    case SearchDimension::P:
        return par.pipeline_model_parallel_size;
    case SearchDimension::V:
        return par.virtual_pipeline_model_parallel_size;
    case SearchDimension::D:
        return par.data_parallel_size;
    case SearchDimension::C:
        return par.context_parallel_size;
    case SearchDimension::E:
        return par.expert_model_parallel_size;
    case SearchDimension::MicroBatch:
        return config.training.micro_batch_size;
    case SearchDimension::ZeroStage:
        return par.zero_stage;
    case SearchDimension::Recompute:
        return static_cast<std::int64_t>(config.strategy.recompute_granularity);
    case SearchDimension::Offload:
        return (config.strategy.optimizer_offload != OffloadTarget::None ? 1 : 0)
               | (config.strategy.activation_offload != OffloadTarget::None ? 2 : 0);
    case SearchDimension::Schedule:
        return static_cast<std::int64_t>(par.schedule());
    case SearchDimension::ActivationBalance:
        return static_cast<std::int64_t>(config.strategy.pipeline_activation_balance);
    case SearchDimension::GradOffload:
        return config.strategy.grad_offload != OffloadTarget::None ? 1 : 0;
    case SearchDimension::Fp8Recipe:
        return static_cast<std::int64_t>(config.training.fp8_recipe);
    }
    return 0;
}

std::string_view verdictKindName(VerdictKind k)
{
    switch (k) {
    case VerdictKind::InTop:
        return "top";
    case VerdictKind::Structural:
        return "structural";
    case VerdictKind::Memory:
        return "memory";
    case VerdictKind::Slower:
        return "slower";
    case VerdictKind::Ledger:
        return "ledger";
    }
    return "structural";
}

namespace {

// ---- Enumerate and bound: every split, its lower bound and, within the limit, its estimated step time.

// The values each dimension takes (or is refused), each with its slot, and
// the candidates that passed the bound.
struct Enumeration
{
    std::array<Domain, kDims> domains;
    std::vector<Candidate> kept;
    std::int64_t candidates = 0;
    std::int64_t prunedByBound = 0;
    Domain &operator[](SearchDimension d) { return domains[dimIndex(d)]; }
};

// The loops from the outside in.
constexpr std::array<SearchDimension, 7> kLoops
    = {SearchDimension::T, SearchDimension::C, SearchDimension::P,         SearchDimension::D,
       SearchDimension::E, SearchDimension::V, SearchDimension::MicroBatch};

void setDomains(Enumeration &en, const Facts &f, const ModelConfig &model, const SearchOptions &opt)
{
    en[SearchDimension::T].set(upToNode(f.N, f.G));
    en[SearchDimension::C].set(upToNode(f.N, f.G));
    en[SearchDimension::P].set(divisorsOf(f.N, f.L));
    en[SearchDimension::D].set(allDivisors(f.N));
    en[SearchDimension::E].set(model.isMoe() ? divisorsOf(model.num_experts, f.N) : std::vector<std::int64_t>{1});
    std::vector<std::int64_t> v, mbs;
    for (std::int64_t k = 1; k <= std::max<std::int64_t>(1, opt.maxVirtual); ++k)
        v.push_back(k);
    for (std::int64_t k = 1; k <= opt.maxMicroBatch; k *= 2)
        mbs.push_back(k);
    en[SearchDimension::V].set(v);
    en[SearchDimension::MicroBatch].set(mbs);
    en[SearchDimension::ZeroStage].set({0, 1, 2, 3});
    en[SearchDimension::Recompute].set({0, 1, 2});
    en[SearchDimension::Offload].set({0, 1, 2, 3});
    std::vector<std::int64_t> schedules; // every PipelineSchedule, index = value
    for (PipelineSchedule k :
         {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved, PipelineSchedule::ZbH1,
          PipelineSchedule::ZbH2, PipelineSchedule::ZbV, PipelineSchedule::DualPipe, PipelineSchedule::DualPipeV})
        schedules.push_back(static_cast<std::int64_t>(k));
    en[SearchDimension::Schedule].set(schedules);
}

// The divisibility rules on t (kT* bits) that it breaks.
std::uint32_t tensorRules(const Facts &f, const ModelConfig &model, std::int64_t t, std::int64_t etp)
{
    return (f.N % t ? kTGpus : 0) | (t > f.G ? kTNode : 0) | (f.heads % t ? kTHeads : 0) | (f.groups % t ? kTGroups : 0)
           | (f.ffn % t ? kTFfn : 0) | (f.sharedFfn > 0 && f.sharedFfn % t ? kTSharedFfn : 0)
           | (model.isMoe() && f.moeFfn % etp ? kTExpertFfn : 0);
}

// Parameters and layer kinds of one pipeline rank.
struct RankParams
{
    ParamCount dense, expert, stage;
    std::int64_t moeLayers = 0, layers = 0;
};

// The first and the last pipeline rank of a split (the same rank when p = 1):
// the two whose stage extras make them the busiest, which the bound uses.
struct EdgeRanks
{
    std::array<std::int64_t, 2> ids{}; // 0, p − 1
    std::array<RankParams, 2> params;
    // Device model states per rank, ZeRO stage and optimizer placement (0: device, 1: CPU).
    std::array<std::array<std::array<Bytes, 2>, 4>, 2> states{};
};

EdgeRanks edgeRanks(const Config &base, const StateBytes &sb, const LayerParams &lpDense, const LayerParams &lpMoe,
                    const EmbeddingParams &emb, std::int64_t p, std::int64_t v, std::int64_t dp, std::int64_t edp)
{
    const ModelConfig &model = base.model;
    const std::int64_t Lc = model.num_layers / (p * v);
    EdgeRanks out;
    out.ids = {0, p - 1};
    for (int w = 0; w < 2; ++w) {
        RankParams &rp = out.params[w];
        for (std::int64_t k = 0; k < v; ++k)
            for (std::int64_t i = 0; i < Lc; ++i) {
                const bool moe = model.isMoeLayer((k * p + out.ids[w]) * Lc + i);
                rp.moeLayers += moe;
                rp.dense += (moe ? lpMoe : lpDense).dense;
                rp.expert += (moe ? lpMoe : lpDense).expert;
            }
        rp.layers = Lc * v;
        if (out.ids[w] == 0) {
            rp.stage += emb.word;
            rp.stage += emb.position;
        }
        if (out.ids[w] == p - 1) {
            rp.stage += emb.output;
            rp.stage += emb.finalNorm;
        }
    }
    for (int w = 0; w < 2; ++w) {
        const RankParams &rp = out.params[w];
        for (int z = 0; z < 4; ++z) {
            const ModelStates a = modelStates(sb, rp.dense.params, rp.dense.factoredState, z, dp);
            const ModelStates b = modelStates(sb, rp.expert.params, rp.expert.factoredState, z, edp);
            const ModelStates cst = modelStates(sb, rp.stage.params, rp.stage.factoredState, z, dp);
            Bytes comm = 0;
            const std::int64_t onRank = rp.dense.params + rp.expert.params + rp.stage.params;
            if (dp > 1 || edp > 1)
                comm += std::min<std::int64_t>(base.strategy.ddp_bucket_size, onRank) * sb.grad;
            if (z >= 3 && rp.layers > 0) {
                const LayerParams &lp = rp.moeLayers > 0 ? lpMoe : lpDense;
                comm += 2 * (lp.dense.params + lp.expert.params) * sb.weight;
            }
            const Bytes wg = a.weights + a.gradients + b.weights + b.gradients + cst.weights + cst.gradients;
            const Bytes o = a.optimizer + b.optimizer + cst.optimizer;
            out.states[w][z][0] = wg + o + comm;
            out.states[w][z][1] = wg + comm;
        }
    }
    return out;
}

// Micro-batch groups in flight on the edge ranks, and of their first and last stage.
struct InFlight
{
    std::array<std::int64_t, 2> groups{}; // every chunk of the first, of the last rank
    std::int64_t firstStage = 0; // rank 0, chunk 0
    std::int64_t lastStage = 0; // rank p − 1, chunk v − 1
};

InFlight inFlightOf(const Candidate &x, std::int64_t m, const EdgeRanks &edge)
{
    ParallelismConfig par;
    par.tensor_model_parallel_size = x.t;
    par.pipeline_model_parallel_size = x.p;
    par.virtual_pipeline_model_parallel_size = x.v;
    par.data_parallel_size = x.d;
    par.context_parallel_size = x.c;
    InFlight out;
    for (int w = 0; w < 2; ++w)
        for (std::int64_t k = 0; k < x.v; ++k)
            out.groups[w] += inFlightOfChunk(par, m, edge.ids[w], k);
    out.firstStage = inFlightOfChunk(par, m, 0, 0);
    out.lastStage = inFlightOfChunk(par, m, x.p - 1, x.v - 1);
    return out;
}

// What stepTime needs for a candidate under recompute choice g, from the
// costs of its shape; ZeRO and offload are set per candidate.
StepInputs stepInputsOf(const Facts &f, const Config &base, const StateBytes &sb, const Shape &sh, std::size_t g,
                        const Candidate &x, std::int64_t m, double paramsLast)
{
    const std::int64_t dp = std::int64_t(x.d) * x.c;
    const double layersOnRank = double(f.L / x.p);
    const LayerCost &layer = sh.layer[g];
    return {
        .layersOnRank = layersOnRank,
        .microBatches = double(m),
        .p = double(x.p),
        .v = double(x.v),
        // The plan's schedule (pipeline_schedule unset: interleaved when v > 1), for overlap_param_gather's window.
        .schedule = x.v > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB,
        .dataParallel = double(dp),
        .dataOnNvlink = double(x.t * dp) <= double(f.G),
        .layer = layer,
        .outputForward = sh.outForward,
        .outputBackward = sh.outBackward,
        .p2pSeconds = std::int64_t(x.t) * x.c * x.d < f.G ? sh.p2pNvlink : sh.p2pNetwork,
        // Megatron-LM's overlap_p2p_comm applies to the interleaved schedule only.
        .overlapP2p = base.strategy.overlap_p2p_comm && x.v > 1 && x.p > 1,
        // As estimateStepTime: the bubble is made of an average rank's micro-batch.
        .bubbleStageSeconds = layersOnRank * (layer.forward.seconds + layer.backward.seconds + layer.recompute.seconds)
                              + (sh.outForward.seconds + sh.outBackward.seconds) / double(x.p),
        .paramsOnRank = paramsLast,
        .gradBytes = double(sb.grad),
        .weightBytes = double(sb.weight),
        .optimizerBytesPerParam = sb.optimizerPerParam(),
        .gatherBytes = f.gatherBytes,
        .overlapGradReduce = base.strategy.overlap_grad_reduce,
        .overlapParamGather = base.strategy.overlap_param_gather,
        .bucketParams = double(base.strategy.ddp_bucket_size),
        .offloadBytes = double(sh.storedDense[g]) * double(f.L / x.p),
    };
}

// Every recompute, ZeRO and offload choice of one split and micro-batch:
// each candidate's bound, its step time when within the limit, kept and
// folded into the ZeRO, recompute and offload slots and into `here`.
void boundCandidates(Enumeration &en, Slot &here, const Facts &f, const Config &base, const StateBytes &sb,
                     const Shape &sh, const EdgeRanks &edge, const InFlight &inFlight, Candidate x, std::int64_t m,
                     Bytes limit)
{
    const std::int64_t Lc = f.L / (std::int64_t(x.p) * x.v);
    const std::int64_t buffers = base.strategy.activation_offload_buffers;
    const double paramsLast
        = double(edge.params[1].dense.params + edge.params[1].expert.params + edge.params[1].stage.params);
    Slot *zeroSlots = en[SearchDimension::ZeroStage].slots.data();
    Slot *recomputeSlots = en[SearchDimension::Recompute].slots.data();
    Slot *offloadSlots = en[SearchDimension::Offload].slots.data();
    for (int g = 0; g < kRecomputeChoices; ++g) {
        const std::size_t gi = static_cast<std::size_t>(g);
        std::array<Bytes, 2> acts{}, layerActs{};
        for (int w = 0; w < 2; ++w) {
            // Chunks may mix layer kinds: the smaller kind bounds every layer.
            const RankParams &rp = edge.params[w];
            const Bytes perLayer = rp.moeLayers == 0           ? sh.storedDense[gi]
                                   : rp.moeLayers == rp.layers ? sh.storedMoe[gi]
                                                               : std::min(sh.storedDense[gi], sh.storedMoe[gi]);
            layerActs[w] = perLayer * Lc * inFlight.groups[w];
            acts[w] = (g == 2 ? sh.workingSet : 0) + base.hardware.runtime_reserve_bytes;
            if (edge.ids[w] == 0)
                acts[w] += sh.firstStage * inFlight.firstStage;
            if (edge.ids[w] == x.p - 1)
                acts[w] += sh.lastStage * inFlight.lastStage;
        }
        StepInputs in = stepInputsOf(f, base, sb, sh, gi, x, m, paramsLast);
        // Activation offload keeps the group computing and one per staging buffer (as the ledger).
        std::array<Bytes, 2> offloadedActs{};
        for (int w = 0; w < 2; ++w) {
            const std::int64_t onDevice = std::min<std::int64_t>(inFlight.groups[w], buffers + 1);
            offloadedActs[w] = inFlight.groups[w] > 0 ? layerActs[w] * onDevice / inFlight.groups[w] : 0;
        }
        x.recompute = std::uint8_t(g);
        Slot &rs = recomputeSlots[g];
        for (int z = 0; z < 4; ++z) {
            x.zero = std::uint8_t(z);
            Slot &zs = zeroSlots[z];
            for (int off = 0; off < 4; ++off) {
                ++en.candidates;
                const int opt1 = off & 1;
                const std::array<Bytes, 2> layer = (off & 2) ? offloadedActs : layerActs;
                const Bytes bound = std::max(edge.states[0][z][opt1] + acts[0] + layer[0],
                                             edge.states[1][z][opt1] + acts[1] + layer[1]);
                x.offload = std::uint8_t(off);
                x.bound = bound;
                x.time = std::numeric_limits<double>::infinity();
                Slot &os = offloadSlots[off];
                if (bound < here.least.bound)
                    here.least = x;
                if (bound < zs.least.bound)
                    zs.least = x;
                if (bound < rs.least.bound)
                    rs.least = x;
                if (bound < os.least.bound)
                    os.least = x;
                if (bound > limit) {
                    ++en.prunedByBound;
                    continue;
                }
                in.zeroStage = z;
                in.optimizerOffloadLink = opt1 == 1 ? base.hardware.host_link_bytes_per_s : 0.0; // CPU-Adam
                in.activationOffload = (off & 2) != 0;
                x.time = stepTime(in, base.hardware).total;
                en.kept.push_back(x);
                if (x.time < here.fastest.time)
                    here.fastest = x;
                if (x.time < zs.fastest.time)
                    zs.fastest = x;
                if (x.time < rs.fastest.time)
                    rs.fastest = x;
                if (x.time < os.fastest.time)
                    os.fastest = x;
            }
        }
    }
}

// Every split of the GPUs (t, c, p, d, e, v, sequence parallelism, micro-batch),
// the divisibility rules each breaks recorded in the slots of the values it tried.
Enumeration enumerateCandidates(const Config &base, const SearchOptions &opt, const Facts &f, Bytes limit)
{
    const ModelConfig &model = base.model;
    const StateBytes sb = stateBytes(base.training);
    std::int64_t firstMoe = -1;
    for (std::int64_t l = 0; l < f.L && firstMoe < 0; ++l)
        if (model.isMoeLayer(l))
            firstMoe = l;
    std::map<std::tuple<std::int64_t, std::int64_t, bool, std::int64_t>, Shape> shapes;
    auto shapeFor = [&](std::int64_t t, std::int64_t c, bool sp, std::int64_t mbs) -> const Shape & {
        auto key = std::make_tuple(t, c, sp, mbs);
        auto it = shapes.find(key);
        if (it == shapes.end())
            it = shapes.emplace(key, shapeOf(base, t, c, sp, mbs, firstMoe, f.G)).first;
        return it->second;
    };

    Enumeration en;
    setDomains(en, f, model, opt);
    // The index of each loop's current value; a refused value marks the rule on
    // every enclosing loop's value too.
    std::array<std::size_t, kDims> at{};
    auto refuse = [&](std::size_t depth, std::uint32_t why) {
        for (std::size_t k = 0; k < depth; ++k)
            en[kLoops[k]].slots[at[dimIndex(kLoops[k])]].why |= why;
    };
    const std::int64_t N = f.N, L = f.L, s = f.s;
    const std::vector<std::int64_t> &tValues = en[SearchDimension::T].values;
    for (std::size_t ti = 0; ti < tValues.size(); ++ti) {
        const std::int64_t t = tValues[ti];
        at[dimIndex(SearchDimension::T)] = ti;
        const std::int64_t etp = f.etp > 0 ? f.etp : t;
        if (const std::uint32_t tWhy = tensorRules(f, model, t, etp)) {
            refuse(1, tWhy);
            continue;
        }
        const LayerParams lpDense = layerParams(model, false, t, 1, etp);
        const std::vector<std::int64_t> &cValues = en[SearchDimension::C].values;
        for (std::size_t ci = 0; ci < cValues.size(); ++ci) {
            const std::int64_t c = cValues[ci];
            at[dimIndex(SearchDimension::C)] = ci;
            const std::uint32_t cWhy
                = ((N / t) % c ? kCGpus : 0) | (t * c > f.G ? kCNode : 0) | (c > 1 && s % (2 * c) ? kCSeq : 0);
            if (cWhy) {
                refuse(2, cWhy);
                continue;
            }
            const std::vector<std::int64_t> &pValues = en[SearchDimension::P].values;
            for (std::size_t pi = 0; pi < pValues.size(); ++pi) {
                const std::int64_t p = pValues[pi];
                at[dimIndex(SearchDimension::P)] = pi;
                if ((N / (t * c)) % p) {
                    refuse(3, kPGpus);
                    continue;
                }
                const std::int64_t d = N / (t * c * p);
                at[dimIndex(SearchDimension::D)] = en[SearchDimension::D].indexOf(d);
                if (L % p) {
                    refuse(4, kPLayers);
                    continue;
                }
                const EmbeddingParams emb = embeddingParams(model, s, t, p);
                const std::vector<std::int64_t> &eValues = en[SearchDimension::E].values;
                for (std::size_t ei = 0; ei < eValues.size(); ++ei) {
                    const std::int64_t e = eValues[ei];
                    at[dimIndex(SearchDimension::E)] = ei;
                    if (model.isMoe() && (e > t * c * d || (t * c * d) % (etp * e))) {
                        refuse(5, kEGroup);
                        continue;
                    }
                    const LayerParams lpMoe = model.isMoe() ? layerParams(model, true, t, e, etp) : lpDense;
                    const std::int64_t edp = model.isMoe() ? std::max<std::int64_t>(1, t * c * d / (etp * e)) : 1;
                    const std::vector<std::int64_t> &vValues = en[SearchDimension::V].values;
                    for (std::size_t vi = 0; vi < vValues.size(); ++vi) {
                        const std::int64_t v = vValues[vi];
                        at[dimIndex(SearchDimension::V)] = vi;
                        if (v > 1 && p == 1) {
                            refuse(6, kVNeedsP);
                            continue;
                        }
                        if (L % (p * v)) {
                            refuse(6, kVLayers);
                            continue;
                        }
                        const EdgeRanks edge = edgeRanks(base, sb, lpDense, lpMoe, emb, p, v, d * c, edp);
                        for (int spi = 0; spi < (t > 1 ? 2 : 1); ++spi) {
                            const bool sp = spi == 1;
                            if ((sp && (s / c) % t) || (model.isMoe() && t > 1 && !sp)) {
                                refuse(6, kSpRule);
                                continue;
                            }
                            const std::vector<std::int64_t> &mbsValues = en[SearchDimension::MicroBatch].values;
                            for (std::size_t bi = 0; bi < mbsValues.size(); ++bi) {
                                const std::int64_t mbs = mbsValues[bi];
                                at[dimIndex(SearchDimension::MicroBatch)] = bi;
                                if (f.GB % (mbs * d)) {
                                    refuse(7, kBatch);
                                    continue;
                                }
                                const std::int64_t m = f.GB / (mbs * d);
                                if (v > 1 && m % p) {
                                    refuse(7, kInterleaveBatch);
                                    continue;
                                }
                                Candidate x{};
                                x.t = int(t), x.p = int(p), x.v = int(v), x.d = int(d), x.c = int(c), x.e = int(e);
                                x.mbs = int(mbs);
                                x.sp = std::uint8_t(sp);
                                // This loop's least bound and fastest plan, folded into the
                                // outer dimensions' slots.
                                Slot here;
                                boundCandidates(en, here, f, base, sb, shapeFor(t, c, sp, mbs), edge,
                                                inFlightOf(x, m, edge), x, m, limit);
                                for (const SearchDimension dim : kLoops)
                                    en[dim].slots[at[dimIndex(dim)]].fold(here.least, here.fastest);
                                // The enumeration's own schedules, on pipelined plans: 1F1B, or
                                // interleaved when v > 1 (p = 1 runs no pipeline schedule).
                                if (const std::int64_t k = valueOf(x, SearchDimension::Schedule); k >= 0)
                                    en[SearchDimension::Schedule].slots[static_cast<std::size_t>(k)].fold(here.least,
                                                                                                          here.fastest);
                            }
                        }
                    }
                }
            }
        }
    }
    return en;
}

// ---- Confirm by the ledger.

auto identityOf(const Candidate &x)
{
    return std::make_tuple(x.t, x.p, x.v, x.d, x.c, x.e, x.mbs, int(x.zero), int(x.recompute), int(x.offload),
                           int(x.sp));
}

// Puts candidates to validate() and computeLedger, each at most once (the
// fastest plan of several values is often the same one).
class LedgerCheck
{
public:
    LedgerCheck(const Config &base, std::int64_t globalBatch, Bytes limit, std::int64_t &ledgersRun)
        : m_base(base)
        , m_globalBatch(globalBatch)
        , m_limit(limit)
        , m_ledgersRun(ledgersRun)
    { }
    // The configuration of a candidate when it is valid and its ledger stays under the limit.
    std::optional<std::pair<Config, Ledger>> operator()(const Candidate &x)
    {
        Config cfg = configOf(m_base, x, m_globalBatch);
        const auto known = m_confirmed.find(identityOf(x));
        if (known != m_confirmed.end() && !known->second)
            return std::nullopt;
        Ledger ledger;
        if (known == m_confirmed.end()) {
            ++m_ledgersRun;
            bool ok = !hasErrors(validate(cfg));
            if (ok) {
                ledger = computeLedger(cfg);
                ok = ledger.peak_bytes <= m_limit;
            }
            m_confirmed.emplace(identityOf(x), ok);
            if (!ok)
                return std::nullopt;
        }
        return std::make_pair(std::move(cfg), std::move(ledger));
    }

private:
    const Config &m_base;
    std::int64_t m_globalBatch;
    Bytes m_limit;
    std::int64_t &m_ledgersRun;
    std::map<decltype(identityOf(Candidate{})), bool> m_confirmed;
};

// Pops `kept` fastest first, confirming each with the ledger, until `top`
// fit; what is left of `kept` stays a heap for the verdicts. Returns the
// search's own estimate for the best plan (0 when none fits).
double confirmFastest(std::vector<Candidate> &kept, LedgerCheck &check, const SearchOptions &opt, SearchResult &res)
{
    auto slower = [](const Candidate &a, const Candidate &b) { return rankKey(a) > rankKey(b); };
    std::make_heap(kept.begin(), kept.end(), slower);
    double bestTime = 0;
    while (!kept.empty() && static_cast<int>(res.plans.size()) < opt.top) {
        std::pop_heap(kept.begin(), kept.end(), slower);
        const Candidate x = kept.back();
        kept.pop_back();
        auto ok = check(x);
        if (!ok) {
            ++res.rejectedByLedger;
            continue;
        }
        if (res.plans.empty())
            bestTime = x.time;
        SearchPlan plan;
        plan.time = estimateStepTime(ok->first, opt.gpusPerNode);
        plan.config = std::move(ok->first);
        plan.ledger = std::move(ok->second);
        plan.estimateBytes = x.bound;
        res.plans.push_back(std::move(plan));
    }
    return bestTime;
}

// Why no plan came back, when none did.
void addEmptyAnswerNotes(SearchResult &res, const Facts &f, const SearchOptions &opt)
{
    if (res.candidates == 0)
        res.notes.push_back("no split of " + std::to_string(f.N)
                            + " GPUs is valid for this model (t must divide the heads, "
                              "query groups and FFN width; p must divide the layers; the global batch of "
                            + std::to_string(f.GB) + " must divide into micro-batches over d)");
    else if (res.plans.empty())
        res.notes.push_back("none of " + std::to_string(res.candidates) + " plans stays under "
                            + std::to_string(opt.margin)
                            + " × device memory; add GPUs, shorten the sequence or use a larger device");
}

// ---- "Why not" verdicts, value by value.

struct VerdictContext
{
    const Config &base;
    const SearchOptions &opt;
    const Facts &facts;
    Bytes limit;
    std::string limitText; // "64.0 GB (80 % of 80.0 GB)"
    double bestTime;
};

void memoryVerdict(ValueVerdict &vv, const Slot &slot, const std::string &it, const VerdictContext &vc)
{
    vv.kind = VerdictKind::Memory;
    vv.leastPeakBytes = slot.least.bound;
    vv.example = configOf(vc.base, slot.least, vc.facts.GB);
    std::string need = floorGB(slot.least.bound), lim = formatGB(double(vc.limit));
    vv.reason
        = "every plan with " + it + " needs at least " + need + " on its busiest GPU; the limit is " + vc.limitText;
    if (need == lim)
        vv.reason += " (" + formatThousands(slot.least.bound) + " > " + formatThousands(vc.limit) + " bytes)";
}

// The fastest plan with this value, confirmed; else the next fastest, a few at most.
void slowerOrLedgerVerdict(ValueVerdict &vv, SearchDimension d, const Slot &slot, const std::string &it,
                           const std::vector<Candidate> &kept, LedgerCheck &check, const SearchResult &res,
                           const VerdictContext &vc)
{
    std::optional<std::pair<Config, Ledger>> ok;
    Candidate found = slot.fastest;
    ok = check(found);
    if (!ok) {
        std::vector<Candidate> others;
        for (const Candidate &x : kept)
            if (valueOf(x, d) == vv.value && identityOf(x) != identityOf(found))
                others.push_back(x);
        constexpr std::size_t kTries = 8;
        const std::size_t n = std::min(others.size(), kTries);
        std::partial_sort(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(n), others.end(),
                          [](const Candidate &a, const Candidate &b) { return rankKey(a) < rankKey(b); });
        for (std::size_t j = 0; j < n && !ok; ++j)
            if ((ok = check(others[j])))
                found = others[j];
    }
    if (!ok) {
        vv.kind = VerdictKind::Ledger;
        vv.reason = "plans with " + it
                    + " pass the search's lower bound, but the fastest of them fail the full ledger "
                      "(over the limit of "
                    + vc.limitText + ") or validation";
        return;
    }
    vv.kind = VerdictKind::Slower;
    vv.stepTimeSeconds = found.time;
    vv.slowerPercent = percentSlower(found.time, vc.bestTime);
    vv.example = std::move(ok->first);
    char line[160];
    if (vv.slowerPercent >= 0.05)
        std::snprintf(line, sizeof line, "%.3f s a step, %.1f %% slower than the best (%.3f s)", found.time,
                      vv.slowerPercent, vc.bestTime);
    else
        std::snprintf(line, sizeof line,
                      "%.3f s a step, a tie with the best within 0.1 %%, ranked below the top %zu "
                      "(ties go to the simpler plan)",
                      found.time, res.plans.size());
    vv.reason = "fits, but the fastest plan with " + it + " takes " + line;
    if (vv.slowerPercent >= 0.05 && !res.plans.empty())
        vv.reason
            += "; " + stepTimeDifference(estimateStepTime(*vv.example, vc.opt.gpusPerNode), res.plans.front().time);
}

// The pipeline sizes p ≥ 2 that some valid split has and that schedule `s`
// can run on: ZB-V and DualPipeV cut the layers into 2p equal chunks,
// DualPipe pairs rank r with rank p − 1 − r (validate() holds the same rules).
std::vector<std::int64_t> pipelineSizesFor(const Enumeration &en, PipelineSchedule s, std::int64_t layers)
{
    const Domain &pd = en.domains[dimIndex(SearchDimension::P)];
    std::vector<std::int64_t> out;
    for (std::size_t k = 0; k < pd.values.size(); ++k) {
        const std::int64_t p = pd.values[k];
        if (p < 2 || !pd.slots[k].tried())
            continue;
        if ((s == PipelineSchedule::ZbV || s == PipelineSchedule::DualPipeV) && layers % (2 * p) != 0)
            continue;
        if (s == PipelineSchedule::DualPipe && p % 2 != 0)
            continue;
        out.push_back(p);
    }
    return out;
}

// The fastest confirmed plan at a pipeline size schedule `s` can run on (its
// own schedule 1F1B or interleaved): the plan trySplitSchedules falls back to.
std::optional<SearchPlan> fastestPipelinedPlan(const Enumeration &en, PipelineSchedule s, LedgerCheck &check,
                                               const SearchOptions &opt, std::int64_t layers)
{
    const Domain &pd = en.domains[dimIndex(SearchDimension::P)];
    std::vector<Candidate> order;
    for (const std::int64_t p : pipelineSizesFor(en, s, layers)) {
        const Slot &slot = pd.slots[pd.indexOf(p)];
        if (slot.kept())
            order.push_back(slot.fastest);
    }
    std::sort(order.begin(), order.end(),
              [](const Candidate &a, const Candidate &b) { return rankKey(a) < rankKey(b); });
    for (const Candidate &x : order)
        if (auto ok = check(x)) {
            SearchPlan plan;
            plan.time = estimateStepTime(ok->first, opt.gpusPerNode);
            plan.config = std::move(ok->first);
            plan.estimateBytes = x.bound;
            return plan;
        }
    return std::nullopt;
}

std::string sizesText(const std::vector<std::int64_t> &sizes)
{
    std::vector<std::string> items;
    for (const std::int64_t p : sizes)
        items.push_back(std::to_string(p));
    return joined(items, ", ");
}

// Schedule values the enumeration does not produce itself: GPipe, which it
// never tries, and the split schedules, which trySplitSchedules tried on the
// fastest pipelined plans. Returns false for 1F1B and interleaved plans that
// the enumeration visited, which take the other dimensions' path.
bool scheduleVerdict(ValueVerdict &vv, const Slot &slot, const Enumeration &en, const std::vector<ScheduleTry> &tries,
                     const std::vector<DimensionVerdicts> &done, const SearchResult &res, const VerdictContext &vc)
{
    const auto s = static_cast<PipelineSchedule>(vv.value);
    const std::string it = phraseOf(SearchDimension::Schedule, vv.value);
    const std::string L = std::to_string(vc.facts.L);
    if (s == PipelineSchedule::GPipe) {
        vv.kind = VerdictKind::Structural;
        vv.reason = "the search does not try " + it
                    + ": it has 1F1B's bubble ((p − 1) stage-micro-batches, Narayanan et al. 2021) but holds all m "
                      "micro-batches' activations instead of at most p, so a 1F1B plan is never slower nor larger";
        return true;
    }
    if (s == PipelineSchedule::OneFOneB || s == PipelineSchedule::Interleaved) {
        if (slot.tried())
            return false;
        vv.kind = VerdictKind::Structural;
        const DimensionVerdicts &v = done.at(dimIndex(SearchDimension::V));
        const auto two
            = std::find_if(v.values.begin(), v.values.end(), [](const ValueVerdict &x) { return x.value == 2; });
        if (s == PipelineSchedule::OneFOneB)
            vv.reason
                = "no valid split of the " + std::to_string(vc.facts.N) + " GPUs has a pipeline (p ≥ 2) to run " + it;
        else if (two == v.values.end())
            vv.reason = "the search tries no interleaving: its chunks per rank stop at 1";
        else
            vv.reason = "no valid plan interleaves (v ≥ 2): " + two->reason;
        return true;
    }
    const auto t = std::find_if(tries.begin(), tries.end(), [&](const ScheduleTry &x) { return x.schedule == s; });
    if (t == tries.end())
        return false;
    const std::vector<std::int64_t> pipelined = pipelineSizesFor(en, PipelineSchedule::ZbH1, vc.facts.L);
    const std::vector<std::int64_t> usable = pipelineSizesFor(en, s, vc.facts.L);
    // "the 2 plans it was tried on (...)", "the plan it was tried on (...)".
    const bool one = t->tried == 1;
    const std::string onTried = (one ? std::string("the plan") : "the " + std::to_string(t->tried) + " plans")
                                + " it was tried on (the fastest pipelined " + (one ? "one)" : "ones)");
    if (pipelined.empty()) {
        vv.kind = VerdictKind::Structural;
        vv.reason = it + " needs a pipeline (p ≥ 2), and no valid split here has one";
        const DimensionVerdicts &pv = done.at(dimIndex(SearchDimension::P));
        for (const ValueVerdict &x : pv.values)
            if (x.value >= 2 && x.kind == VerdictKind::Structural) {
                vv.reason += " (" + x.reason + ")";
                break;
            }
    } else if (usable.empty()) {
        vv.kind = VerdictKind::Structural;
        if (s == PipelineSchedule::DualPipe)
            vv.reason = it + " pairs rank r with rank p − 1 − r, so p must be even; no valid p here is (p = "
                        + sizesText(pipelined) + ")";
        else
            vv.reason = it + " places two chunks on each rank in a V, so the " + L
                        + " layers must split evenly into 2p chunks; no valid p (" + sizesText(pipelined) + ") does"
                        + (vc.facts.L % 2 != 0 ? " (" + L + " is odd)" : "");
    } else if (t->fastestFit) {
        const SearchPlan &fit = *t->fastestFit;
        const StepTime &best = res.plans.front().time;
        vv.kind = VerdictKind::Slower;
        vv.stepTimeSeconds = fit.time.total;
        vv.slowerPercent = percentSlower(fit.time.total, best.total);
        vv.example = fit.config;
        char line[200];
        if (vv.slowerPercent >= 0.05)
            std::snprintf(line, sizeof line, "%.3f s a step, %.1f %% slower than the best (%.3f s)", fit.time.total,
                          vv.slowerPercent, best.total);
        else
            std::snprintf(line, sizeof line,
                          "%.3f s a step, a tie with the best within 0.1 %%, ranked below the top %zu", fit.time.total,
                          res.plans.size());
        vv.reason = "fits on " + (one ? onTried : std::to_string(t->faster + t->slower) + " of " + onTried)
                    + ", but the fastest plan with " + it + " takes " + line;
        if (vv.slowerPercent >= 0.05)
            vv.reason += "; " + stepTimeDifference(fit.time, best);
    } else if (t->leastOver) {
        vv.kind = VerdictKind::Memory;
        vv.leastPeakBytes = t->leastOver->ledger.peak_bytes;
        vv.example = t->leastOver->config;
        vv.reason = (one ? "on " : "on each of ") + onTried + ", " + it + " needs at least "
                    + floorGB(vv.leastPeakBytes) + " on its busiest GPU; the limit is " + vc.limitText;
    } else if (!t->invalid.empty()) {
        vv.kind = VerdictKind::Structural;
        vv.reason = it + " is not valid on " + (one ? "" : "any of ") + onTried + " (p = " + sizesText(usable)
                    + " could run it): " + t->invalid;
    } else {
        // No pipelined plan to put it on: every one is over the limit already.
        const Domain &pd = en.domains[dimIndex(SearchDimension::P)];
        const Slot *least = nullptr;
        bool kept = false;
        for (const std::int64_t p : usable) {
            const Slot &ps = pd.slots[pd.indexOf(p)];
            kept |= ps.kept();
            if (!least || ps.least.bound < least->least.bound)
                least = &ps;
        }
        if (kept || !least) {
            vv.kind = VerdictKind::Ledger;
            vv.reason = "the pipelined plans " + it
                        + " could run on pass the search's lower bound but fail the full ledger (over the limit of "
                        + vc.limitText + ") or validation, so it had no plan to run on";
        } else {
            vv.kind = VerdictKind::Memory;
            vv.leastPeakBytes = least->least.bound;
            vv.example = configOf(vc.base, least->least, vc.facts.GB);
            vv.reason = it + " needs a pipeline, and every pipelined plan needs at least " + floorGB(vv.leastPeakBytes)
                        + " on its busiest GPU under 1F1B or interleaving already; the limit is " + vc.limitText;
        }
    }
    return true;
}

std::vector<DimensionVerdicts> dimensionVerdicts(const Enumeration &en, LedgerCheck &check, const SearchResult &res,
                                                 const VerdictContext &vc, const std::vector<ScheduleTry> &tries)
{
    std::vector<DimensionVerdicts> out;
    const std::string topText = "in the top " + std::to_string(res.plans.size());
    for (const SearchDimension d : kSearchDimensions) {
        const Domain &dm = en.domains[dimIndex(d)];
        DimensionVerdicts dv;
        dv.dimension = d;
        for (std::size_t k = 0; k < dm.values.size(); ++k) {
            const Slot &slot = dm.slots[k];
            ValueVerdict vv;
            vv.value = dm.values[k];
            vv.label = labelOf(d, vv.value);
            const std::string it = phraseOf(d, vv.value);
            const bool inTop = std::any_of(res.plans.begin(), res.plans.end(), [&](const SearchPlan &p) {
                return dimensionValue(p.config, d) == vv.value;
            });
            if (inTop) {
                vv.kind = VerdictKind::InTop;
                vv.reason = it + " is " + topText;
            } else if (d == SearchDimension::Schedule && scheduleVerdict(vv, slot, en, tries, out, res, vc)) {
                // GPipe, the split schedules, or a schedule no valid split runs
            } else if (!slot.tried()) {
                vv.kind = VerdictKind::Structural;
                vv.reason = structuralReason(d, vv.value, slot.why, vc.facts);
            } else if (!slot.kept()) {
                memoryVerdict(vv, slot, it, vc);
            } else {
                slowerOrLedgerVerdict(vv, d, slot, it, en.kept, check, res, vc);
            }
            dv.values.push_back(std::move(vv));
        }
        out.push_back(std::move(dv));
    }
    return out;
}

// The plans a strategy might bring under the limit: per value of every
// enumerated dimension, the split with the least bound (those over the limit
// by the bound or, once tryStrategies runs their ledgers, by the ledger).
// With an answer, the ones faster than its slowest plan (or all, when it has
// room), fastest first; without one, the nearest to fitting first.
std::vector<Config> overLimitPlans(const Enumeration &en, const Config &base, std::int64_t globalBatch,
                                   const SearchOptions &opt, const SearchResult &res)
{
    std::map<decltype(identityOf(Candidate{})), Candidate> unique;
    for (const SearchDimension d : kSearchDimensions)
        for (const Slot &slot : en.domains[dimIndex(d)].slots)
            if (slot.tried())
                unique.emplace(identityOf(slot.least), slot.least);
    std::vector<std::pair<double, Config>> ranked;
    const bool full = static_cast<int>(res.plans.size()) >= opt.top;
    const double slowest = res.plans.empty() ? 0.0 : res.plans.back().time.total;
    for (const auto &[id, x] : unique) {
        Config cfg = configOf(base, x, globalBatch);
        const bool listed = std::any_of(res.plans.begin(), res.plans.end(),
                                        [&](const SearchPlan &p) { return p.config.name == cfg.name; });
        if (listed || hasErrors(validate(cfg)))
            continue;
        double key = double(x.bound);
        if (!res.plans.empty()) {
            key = estimateStepTime(cfg, opt.gpusPerNode).total;
            if (full && key >= slowest)
                continue;
        }
        ranked.emplace_back(key, std::move(cfg));
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<Config> out;
    for (auto &r : ranked)
        out.push_back(std::move(r.second));
    return out;
}

} // namespace

SearchResult searchPlans(const Config &base, const SearchOptions &opt)
{
    const auto started = std::chrono::steady_clock::now();
    const ModelConfig &model = base.model;
    const Facts facts{.N = opt.gpus,
                      .G = opt.gpusPerNode,
                      .L = model.num_layers,
                      .s = base.training.seq_length,
                      .GB = base.globalBatch(),
                      .heads = model.num_attention_heads,
                      .groups = model.queryGroups(),
                      .ffn = model.ffn(),
                      .sharedFfn = model.moe_shared_expert_intermediate_size,
                      .moeFfn = model.moeFfn(),
                      .etp = base.parallelism.expert_tensor_parallel_size,
                      .moe = model.isMoe(),
                      .etpFixed = base.parallelism.expert_tensor_parallel_size > 0,
                      .gatherBytes = searchGatherBytes(base)};
    SearchResult res;
    res.limitBytes = static_cast<Bytes>(std::floor(opt.margin * double(base.hardware.hbm_bytes)));

    Enumeration en = enumerateCandidates(base, opt, facts, res.limitBytes);
    res.candidates = en.candidates;
    res.prunedByBound = en.prunedByBound;

    // Fastest first; confirm each with the ledger until `top` fit.
    LedgerCheck check(base, facts.GB, res.limitBytes, res.ledgersRun);
    double bestTime = confirmFastest(en.kept, check, opt, res);
    // The schedules that split backwards, on the fastest pipelined plans (or,
    // when the answer has none, the fastest confirmed one).
    std::vector<SearchPlan> bases;
    for (const SearchPlan &plan : res.plans)
        if (plan.config.parallelism.pipeline_model_parallel_size >= 2)
            bases.push_back(plan);
    if (bases.empty())
        if (auto plan = fastestPipelinedPlan(en, PipelineSchedule::ZbH1, check, opt, facts.L))
            bases.push_back(std::move(*plan));
    const std::vector<ScheduleTry> tries = trySplitSchedules(res, opt, res.limitBytes, bases, [&](PipelineSchedule s) {
        return fastestPipelinedPlan(en, s, check, opt, facts.L);
    });
    // Balancing, gradient offload and FP8 on the fastest plans and on the nearest ones over the limit.
    std::vector<DimensionVerdicts> strategies
        = tryStrategies(res, base, opt, res.limitBytes, overLimitPlans(en, base, facts.GB, opt, res));
    if (!res.plans.empty()) // a split schedule or a strategy may now be the best: the verdicts measure against it
        bestTime = std::min(bestTime, res.plans.front().time.total);
    addEmptyAnswerNotes(res, facts, opt);

    const VerdictContext vc{.base = base,
                            .opt = opt,
                            .facts = facts,
                            .limit = res.limitBytes,
                            .limitText = formatGB(double(res.limitBytes)) + " (" + percentOf(opt.margin) + " of "
                                         + formatGB(double(base.hardware.hbm_bytes)) + ")",
                            .bestTime = bestTime};
    res.dimensions = dimensionVerdicts(en, check, res, vc, tries);
    for (DimensionVerdicts &dv : strategies)
        res.dimensions[dimIndex(dv.dimension)] = std::move(dv);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return res;
}

} // namespace memledger
