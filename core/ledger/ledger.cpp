// SPDX-License-Identifier: MIT
#include "core/ledger/ledger.h"

#include "core/base/textcat.h"
#include "core/check/validate.h"
#include "core/config/framework.h"
#include "core/ledger/balance.h"
#include "core/ledger/ledgerchoices.h"
#include "core/ledger/scheduledledger.h"
#include "core/model/activations.h"
#include "core/model/cpexchange.h"
#include "core/model/deepep.h"
#include "core/model/fp8.h"
#include "core/model/gradoffload.h"
#include "core/model/modelstates.h"
#include "core/model/muon.h"
#include "core/model/parameters.h"
#include "core/model/policymatch.h"
#include "core/model/runtimereserve.h"
#include "core/schedule/schedule.h"
#include "core/schedule/stagelayers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memledger {

std::string_view placementName(Placement p)
{
    switch (p) {
    case Placement::Device:
        return "device";
    case Placement::Host:
        return "host";
    case Placement::NVMe:
        return "nvme";
    }
    return "device";
}

std::vector<std::int64_t> Ledger::largestParameterTensors() const
{
    std::vector<std::int64_t> out;
    out.reserve(ranks.size());
    for (const RankLedger &r : ranks)
        out.push_back(r.largest_parameter_tensor);
    return out;
}

bool Ledger::fits() const
{
    return std::all_of(ranks.begin(), ranks.end(), [](const RankLedger &r) { return r.fits; });
}

bool Ledger::hostFits() const
{
    return std::all_of(ranks.begin(), ranks.end(), [](const RankLedger &r) { return r.host_fits; });
}

bool hostFits(Bytes hostTotalBytes, Bytes hostCapacityBytes)
{
    return hostTotalBytes <= hostCapacityBytes;
}

double shareOfRank(const RankLedger &rank, const LedgerEntry &entry)
{
    const Bytes total = entry.placement == Placement::Device ? rank.device_total_bytes : rank.host_total_bytes;
    return total > 0 ? static_cast<double>(entry.bytes) / static_cast<double>(total) : 0.0;
}

double shareOfCapacity(const Ledger &ledger, const RankLedger &rank)
{
    return ledger.capacity_bytes > 0
               ? static_cast<double>(rank.device_total_bytes) / static_cast<double>(ledger.capacity_bytes)
               : 0.0;
}

namespace {

std::string num(std::int64_t v)
{
    return formatThousands(v);
}

std::string dec(double v)
{
    char buf[32];
    if (std::floor(v) == v)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

Placement placementOf(OffloadTarget t)
{
    return t == OffloadTarget::CPU ? Placement::Host : (t == OffloadTarget::NVMe ? Placement::NVMe : Placement::Device);
}

class RankBuilder
{
public:
    explicit RankBuilder(RankLedger &rank)
        : m_rank(rank)
    { }

    // The row added, valid until the next one; null when it holds nothing.
    LedgerEntry *add(Category c, Placement where, std::string label, Bytes bytes, std::string formula,
                     std::string note = {})
    {
        if (bytes <= 0)
            return nullptr;
        m_rank.entries.push_back({c, where, std::move(label), bytes, std::move(formula), std::move(note)});
        const int i = static_cast<int>(c);
        if (where == Placement::Device)
            m_rank.device[i] += bytes;
        else
            m_rank.host[i] += bytes;
        return &m_rank.entries.back();
    }

private:
    RankLedger &m_rank;
};

// What addModelStates' rows depend on besides the configuration.
struct ModelStatesKey
{
    ParamGroup which;
    std::int64_t params, factoredState, matrixParams, group, fp8Primary;
    bool operator==(const ModelStatesKey &) const = default;
};

struct Context
{
    const Config &config;
    std::int64_t t, p, v, d, cp, e, etp, m, dp, edp;
    // ZeRO's shard groups: dp and edp, or under HSDP (data_parallel_shard_size)
    // the part of each that shards, the rest replicating.
    std::int64_t shardGroup, edpShard;
    StateBytes sb;
    std::vector<StageLayers> stages; // layers of each virtual stage (chunk k of rank r: k·p + r)
    LayerParams denseLayer, moeLayer;
    EmbeddingParams emb;
    LayerActivations denseAct, moeAct;
    StageActivations stageAct;
    std::vector<std::vector<PipelineOp>> splitOps; // every rank's op order, for the schedules that split backwards
    std::string granularity; // granularityText(strategy), once per evaluation
    // chunkActivations by layer count, for a model whose layers are all alike
    // (every chunk of a count is the same); empty for MoE models.
    mutable std::vector<std::pair<std::int64_t, ChunkActivations>> chunkCache = {};
    // addModelStates' rows, by where an earlier rank holds them (copied from
    // there, not kept twice): ledger.ranks is sized once before any rank is built.
    struct RowsAt
    {
        ModelStatesKey key;
        const RankLedger *rank;
        std::size_t first, count;
    };
    mutable std::vector<RowsAt> modelStatesCache = {};
};

// Weights, gradients and optimizer states of one parameter group.
// fp8Primary: elements of the group's linear weights kept as FP8 primary
// weights (fp8_param_gather under Transformer Engine), which have no 16-bit copy.
void addModelStates(RankBuilder &rb, RankLedger &rank, const Context &x, ParamGroup which, std::string_view what,
                    const ParamCount &pc, std::int64_t group, std::string_view groupName, std::int64_t fp8Primary = 0)
{
    if (pc.params <= 0)
        return;
    const std::size_t first = rank.entries.size();
    // The rows depend only on the group and its counts: most ranks hold the
    // same layers, so a rank like one before takes a copy of its rows.
    const ModelStatesKey key{which, pc.params, pc.factoredState, pc.matrixParams, group, fp8Primary};
    for (const Context::RowsAt &at : x.modelStatesCache)
        if (at.key == key) {
            for (std::size_t i = at.first; i < at.first + at.count; ++i) {
                const LedgerEntry &e = at.rank->entries[i];
                rb.add(e.category, e.placement, e.label, e.bytes, e.formula, e.note)->stream = e.stream;
            }
            for (std::size_t i = first; i < rank.entries.size(); ++i)
                rank.entries[i].group = which;
            return;
        }
    const int zero = x.config.parallelism.zero_stage;
    // Muon updates the hidden matrices of the layers; embeddings and the output layer stay with AdamW.
    const std::int64_t muonElements
        = x.sb.muon && (which == ParamGroup::Layers || which == ParamGroup::Experts) ? pc.matrixParams : 0;
    const ModelStates ms = modelStates(x.sb, pc.params, pc.factoredState, zero, group, muonElements);
    const std::string shard = zero >= 1 && group > 1
                                  ? cat(" / ", num(group), " (ZeRO-", std::to_string(zero), " over ", groupName, ")")
                                  : std::string();
    const auto sharded
        = [&](int fromStage) { return zero >= fromStage ? std::string_view(shard) : std::string_view(); };
    const std::string params = cat(num(pc.params), " params");

    const OffloadTarget po = x.config.strategy.param_offload;
    if (fp8Primary > 0) {
        // Megatron's --fp8-param-gather builds the linear layers under
        // Transformer Engine's fp8_model_init: their weights are FP8 tensors
        // (the "FP8 weight copies" row), with no 16-bit copy beside them.
        const std::int64_t rest = std::max<std::int64_t>(pc.params - fp8Primary, 0);
        rb.add(Category::Weights, placementOf(po), std::string(what),
               modelStates(x.sb, rest, 0, zero, group, 0).weights,
               cat("(", params, " − ", num(fp8Primary), " FP8 primary linear weights) × ", x.sb.weightWhy, sharded(3)),
               "fp8_param_gather: the linear layers' weights are FP8 primary weights (Transformer Engine's "
               "fp8_model_init), counted with the FP8 weight copies; the 16-bit copy is kept for the rest");
    } else {
        rb.add(Category::Weights, placementOf(po), std::string(what), ms.weights,
               cat(params, " × ", x.sb.weightWhy, sharded(3)),
               po != OffloadTarget::None
                   ? "parameters offloaded (ZeRO-Infinity); layers are gathered to the device when used"
                   : "");
    }
    const OffloadTarget go = x.config.strategy.grad_offload;
    LedgerEntry *gradients
        = rb.add(Category::Gradients, placementOf(go), std::string(what), ms.gradients,
                 cat(params, " × ", x.sb.gradWhy, sharded(2)),
                 go != OffloadTarget::None ? "gradient offload: sent to the host bucket by bucket during backward "
                                             "(ZeRO-Offload); the device keeps a double buffer"
                                           : "");
    // FSDP2 makes each unit's sharded gradients as its reduce-scatter's
    // output, on the reduce-scatter stream (foreach_reduce).
    if (gradients && fsdpPerBlock(x.config))
        gradients->stream = kFsdpReduceScatterStream;

    const bool sum = x.sb.optWhy.find(" + ") != std::string::npos;
    std::string formula = sum ? cat(params, " × (", x.sb.optWhy, ")") : cat(params, " × ", x.sb.optWhy);
    if (x.sb.factored)
        formula = params + " × " + std::to_string(x.sb.master) + " B master + " + num(pc.factoredState)
                  + " row/column elements × 4 B (Adafactor)";
    if (x.sb.muon)
        formula = params + " × " + std::to_string(x.sb.master) + " B master + " + num(muonElements)
                  + " matrix elements × " + dec(x.sb.states) + " B momentum (Muon) + " + num(pc.params - muonElements)
                  + " other elements × " + dec(x.sb.fallbackStates) + " B (AdamW)";
    const OffloadTarget oo = x.config.strategy.optimizer_offload;
    formula += sharded(1);
    rb.add(Category::OptimizerStates, placementOf(oo), std::string(what), ms.optimizer, std::move(formula),
           oo != OffloadTarget::None
               ? "optimizer offloaded: the update runs on the CPU (ZeRO-Offload); gradients stream out, "
                 "updated weights stream back"
               : "");
    for (std::size_t i = first; i < rank.entries.size(); ++i)
        rank.entries[i].group = which;
    x.modelStatesCache.push_back({key, &rank, first, rank.entries.size() - first});
}

// The double buffer of gradient offload and Muon's Newton–Schulz working set.
void addOptimizerStepRows(RankBuilder &rb, RankLedger &rank, const Context &x, std::int64_t r,
                          const ParamCount &layersDense, const ParamCount &layersExpert)
{
    const Config &config = x.config;
    if (config.strategy.grad_offload != OffloadTarget::None) {
        const std::int64_t bucket = std::min(config.strategy.ddp_bucket_size, rank.parameters);
        rb.add(Category::Gradients, Placement::Device, "Gradient offload double buffer",
               gradOffloadBufferBytes(config.strategy.ddp_bucket_size, rank.parameters, x.sb.grad),
               "2 buckets × " + num(bucket) + " elements (strategy.ddp_bucket_size, capped at the rank's parameters) × "
                   + x.sb.gradWhy,
               "one bucket filled by backward while the other drains to the host (DeepSpeed's reduce_bucket_size "
               "plays this part)");
    }
    // An offloaded step is timed as CPU-Adam (validate warns): no device working set.
    if (!x.sb.muon || config.strategy.optimizer_offload != OffloadTarget::None
        || layersDense.matrixParams + layersExpert.matrixParams <= 0)
        return;
    const ParamCount full = muonFullMatrices(config, x.stages, r);
    const std::size_t before = rank.entries.size();
    rb.add(Category::OptimizerStates, Placement::Device, "Muon Newton–Schulz working set (transient)",
           muonWorkingSetBytes(full),
           "largest full matrix m×n (m ≤ n): (3mn + 2m²) = " + num(full.nsWorkingElements) + " elements × "
               + std::to_string(dtypeBytes(kNewtonSchulzDtype)) + " B " + std::string(dtypeName(kNewtonSchulzDtype))
               + " (gathered G, X and the next X, m×n; A = X·Xᵀ and B = b·A + c·A·A, m×m)",
           "alive only during the optimizer step: each of the rank's " + num(full.matrices)
               + " matrices is gathered whole on demand, one at a time, for " + std::to_string(kNewtonSchulzSteps)
               + " Newton–Schulz iterations (Moonlight's Distributed Muon), not the whole model at once");
    if (rank.entries.size() > before)
        rank.entries.back().transient = true;
}

std::string granularityText(const StrategyConfig &s)
{
    if (!s.tensor_policies.empty() && s.recompute_granularity != RecomputeGranularity::Full)
        return cat("tensor_policies over ", granularityName(s.recompute_granularity), " recompute");
    switch (s.recompute_granularity) {
    case RecomputeGranularity::None:
        return "all saved tensors kept";
    case RecomputeGranularity::Selective:
        return "selective recompute: attention core dropped";
    case RecomputeGranularity::Full:
        return "full recompute";
    case RecomputeGranularity::SelectiveOp:
        return "per-op selective checkpointing (torchtitan): matmul, attention and reduce-scatter outputs kept, "
               "every second matmul and the rest recomputed";
    }
    return "";
}

// The activations of each of rank r's chunks: an MoE model's computed per
// chunk (their layers' kinds differ), a dense model's shared by layer count.
struct RankChunks
{
    std::vector<ChunkActivations> own; // never reallocated: `chunks` points into it
    std::vector<const ChunkActivations *> chunks; // chunk k of the rank
};

RankChunks chunksOf(const Context &x, std::int64_t r)
{
    const Config &config = x.config;
    RankChunks out;
    if (config.model.isMoe())
        out.own.reserve(static_cast<std::size_t>(x.v));
    out.chunks.reserve(static_cast<std::size_t>(x.v));
    for (std::int64_t k = 0; k < x.v; ++k) {
        const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
        if (config.model.isMoe()) {
            out.own.push_back(chunkActivations(config, x.denseAct, x.moeAct, sl.first, sl.count));
            out.chunks.push_back(&out.own.back());
            continue;
        }
        auto hit = std::find_if(x.chunkCache.begin(), x.chunkCache.end(),
                                [&](const auto &c) { return c.first == sl.count; });
        if (hit == x.chunkCache.end()) {
            x.chunkCache.emplace_back(sl.count, chunkActivations(config, x.denseAct, x.moeAct, sl.first, sl.count));
            hit = std::prev(x.chunkCache.end());
        }
        out.chunks.push_back(&hit->second);
    }
    return out;
}

// The zero-bubble schedules and DualPipe: counted along the rank's op
// order, each chunk's groups and pending weight passes weighed by their bytes.
InFlightAtPeak countedPeak(const Context &x, std::int64_t r, const RankChunks &rc, bool full)
{
    std::vector<double> groupBytes, weightBytes;
    double working = 0;
    for (const ChunkActivations *c : rc.chunks) {
        const ChunkActivations &ca = *c;
        groupBytes.push_back(double(ca.stored));
        weightBytes.push_back(double(ca.weightPass));
        working = std::max(working, double(ca.recomputeWorkingSet));
    }
    return inFlightAlong(x.splitOps[static_cast<std::size_t>(r)], groupBytes, weightBytes, full ? working : 0.0);
}

// Rank r's saved activations summed over its chunks, each chunk's
// micro-batches in flight at the peak times what one of them keeps.
struct ActivationSums
{
    Bytes stored = 0; // all chunk-micro-batches on the rank
    Bytes storedOneEach = 0; // one micro-batch of each chunk, for the per-layer figure
    Bytes workingSet = 0; // full recompute: one group re-materialised in backward
    std::int64_t inFlightTotal = 0;
    std::int64_t layerMicroBatches = 0; // Σ over chunks: in-flight micro-batches × the chunk's layers
    bool even = true; // every chunk holds as many layers as the first
    Bytes weightPending = 0; // split schedules: inputs of the weight passes not yet run
    std::int64_t weightPendingCount = 0;
    Bytes policyHost = 0; // tensors strategy.tensor_policies keep on the host, all in-flight micro-batches
    Bytes policyTransit = 0; // the largest layer's offloaded tensors
};

ActivationSums sumChunks(const Context &x, std::int64_t r, const RankChunks &rc, const InFlightAtPeak *peak)
{
    ActivationSums s;
    for (std::int64_t k = 0; k < x.v; ++k) {
        const std::size_t ki = static_cast<std::size_t>(k);
        const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
        s.even &= sl.count == x.stages[static_cast<std::size_t>(r)].count;
        const std::int64_t inFlight = peak ? peak->groups[ki] : inFlightOfChunk(x.config.parallelism, x.m, r, k);
        s.inFlightTotal += inFlight;
        s.layerMicroBatches += inFlight * sl.count;
        const ChunkActivations &ca = *rc.chunks[ki];
        s.stored += ca.stored * inFlight;
        s.storedOneEach += ca.stored;
        s.policyHost += ca.offloaded * inFlight;
        for (Bytes b : ca.layerOffloaded)
            s.policyTransit = std::max(s.policyTransit, b);
        s.workingSet = std::max(s.workingSet, ca.recomputeWorkingSet);
        if (peak) {
            s.weightPending += ca.weightPass * peak->weightPending[ki];
            s.weightPendingCount += peak->weightPending[ki];
        }
    }
    return s;
}

// The transformer layers' row: in-flight micro-batches × layers × one layer's
// bytes, split between the device and the host under activation offload.
void addLayerRows(RankBuilder &rb, const RankLedger &rank, const Context &x, std::int64_t r, const ActivationSums &s)
{
    const StrategyConfig &st = x.config.strategy;
    const std::string perLayer = formatGB(static_cast<double>(rank.layer_activation_bytes));
    std::string formula;
    if (x.v > 1 && s.even)
        formula = cat(num(s.inFlightTotal), " in-flight chunk-micro-batches × ",
                      num(x.stages[static_cast<std::size_t>(r)].count), " layers × ", perLayer, " per layer (",
                      x.granularity, "; ", dec(rank.in_flight_microbatches), " stage-micro-batches)");
    else if (x.v > 1)
        formula = cat(num(s.layerMicroBatches),
                      " layer-micro-batches (each chunk's in-flight micro-batches × its layers, "
                      "pipeline_layout) × ",
                      perLayer, " per layer (", x.granularity, ")");
    else
        formula = cat(CountText(rank.in_flight_microbatches, "in-flight micro-batch", "in-flight micro-batches"), " × ",
                      CountText(double(rank.layers), "layer", "layers"), " × ", perLayer, " per layer (", x.granularity,
                      ")");
    if (st.activation_offload != OffloadTarget::None && s.inFlightTotal > 0) {
        // On the device: the group being computed and one per staging buffer
        // still draining (or already prefetched); the rest waits on the host.
        const std::int64_t onDevice = std::min<std::int64_t>(s.inFlightTotal, st.activation_offload_buffers + 1);
        const Bytes device = s.stored * onDevice / s.inFlightTotal;
        rb.add(
            Category::Activations, Placement::Device, "Transformer layers", device,
            formula + " × " + num(onDevice) + "/" + num(s.inFlightTotal) + " on the device (1 computing + "
                + countOf(double(st.activation_offload_buffers), "staging buffer", "staging buffers") + ")",
            "activation offload: saved activations go to the host after each forward and return before the backward");
        rb.add(Category::Activations, Placement::Host, "Transformer layers (offloaded)", s.stored - device,
               num(s.inFlightTotal - onDevice) + "/" + num(s.inFlightTotal) + " of " + formatGB(double(s.stored)));
    } else {
        rb.add(Category::Activations, Placement::Device, "Transformer layers", s.stored, std::move(formula));
    }
}

// What strategy.tensor_policies send to the host, and the copies in transit.
void addPolicyOffloadRows(RankBuilder &rb, const Context &x, const ActivationSums &s)
{
    if (s.policyHost <= 0)
        return;
    const LayerActivations &la = x.denseAct;
    rb.add(Category::Activations, Placement::Host, "Tensors offloaded by tensor_policies", s.policyHost,
           cat(CountText(double(s.inFlightTotal), "in-flight chunk-micro-batch", "in-flight chunk-micro-batches"),
               " × each chunk's layers × ", formatGB(double(la.offloaded)), " per layer"),
           "each offloaded tensor goes to the host once its layer's forward has produced it and returns "
           "for that layer's backward (quantised first where the fate is quantize_fp8+offload)");
    // One layer's tensors still leaving the device while the next layer
    // runs forward, or already back while the layer after it runs backward,
    // and those of the layer computing.
    rb.add(Category::Activations, Placement::Device, "Offloaded tensors in transit", 2 * s.policyTransit,
           cat("2 layers × ", formatGB(double(s.policyTransit)), " (one copying, one in use)"),
           "per-tensor offload hides each layer's copies under its neighbours' compute");
}

// The split schedules' weight passes that have not run yet keep their operands.
void addDeferredWeightRow(RankBuilder &rb, const Context &x, const ActivationSums &s)
{
    if (s.weightPending <= 0)
        return;
    const Config &config = x.config;
    rb.add(Category::Activations, Placement::Device, "Inputs of deferred weight passes", s.weightPending,
           countOf(double(s.weightPendingCount), "micro-batch", "micro-batches") + " past B, before W × "
               + formatGB(double(s.weightPending / s.weightPendingCount))
               + (config.strategy.tensor_policies.empty()
                      ? " (each linear layer's input and output gradient)"
                      : " (each linear layer's input as its tensor policy left it for B: FP8 when quantised, "
                        "back on the device when offloaded, whole when recomputed; and its output gradient)")
               + (config.strategy.deferred_wgrad_grad == DeferredWgradGrad::FP8
                          && config.training.fp8_recipe != Fp8Recipe::None
                      ? ", the output gradients as the FP8 copy W's GEMM reads (deferred_wgrad_grad fp8)"
                      : ""),
           std::string(scheduleName(config.parallelism.schedule()))
               + " splits each backward: B frees what only the input gradients needed, W (the weight "
                 "gradients) runs later and keeps its GEMM operands until then");
}

// The first and last stages' extras, on the chunks that hold those stages
// (DualPipe: both ends of the pipe hold one of each direction).
void addStageExtras(RankBuilder &rb, const Context &x, std::int64_t r, const InFlightAtPeak *peak)
{
    const ParallelismConfig &par = x.config.parallelism;
    const auto inFlightOf = [&](std::int64_t k) {
        return peak ? peak->groups[static_cast<std::size_t>(k)] : inFlightOfChunk(par, x.m, r, k);
    };
    for (std::int64_t k = 0; k < x.v; ++k) {
        if (!isFirstStage(par, r, k))
            continue;
        const std::int64_t inFlight = inFlightOf(k);
        for (const SavedTensor &s : x.stageAct.first)
            rb.add(Category::Activations, Placement::Device, cat("Embedding: ", s.name), s.bytes * inFlight,
                   cat(num(inFlight), " micro-batches × (", s.formula, ")"));
    }
    for (std::int64_t k = 0; k < x.v; ++k) {
        if (!isLastStage(par, r, k))
            continue;
        const std::int64_t inFlight = inFlightOf(k);
        Bytes lastBytes = 0;
        std::string parts;
        for (const SavedTensor &s : x.stageAct.last) {
            lastBytes += s.bytes;
            append(parts, parts.empty() ? "" : " + ", s.name, " ", s.formula);
        }
        rb.add(Category::Activations, Placement::Device, "Output layer and loss", lastBytes * inFlight,
               cat(CountText(double(inFlight), "micro-batch", "micro-batches"), " × (", parts, ")"),
               x.config.strategy.cross_entropy == CrossEntropy::VocabParallel
                   ? "the loss keeps the fp32 softmax of the vocabulary-parallel logits (Megatron cross entropy)"
                   : "the loss keeps the fp32 log-softmax of the logits for its backward (F.cross_entropy)");
    }
}

void addActivations(RankBuilder &rb, RankLedger &rank, const Context &x, std::int64_t r)
{
    const Config &config = x.config;
    const StrategyConfig &st = config.strategy;
    const bool full = st.recompute_granularity == RecomputeGranularity::Full;
    const RankChunks rc = chunksOf(x, r);
    const bool counted = splitsBackward(config.parallelism.schedule());
    InFlightAtPeak peak;
    if (counted)
        peak = countedPeak(x, r, rc, full);
    const InFlightAtPeak *countedAt = counted ? &peak : nullptr;
    const ActivationSums s = sumChunks(x, r, rc, countedAt);
    rank.in_flight_chunks = s.inFlightTotal;
    // In stage-micro-batches: v chunks make a stage, but each of DualPipe's two is a whole stage.
    rank.in_flight_microbatches
        = static_cast<double>(s.inFlightTotal) / static_cast<double>(x.v / pipelineDirections(config.parallelism));
    rank.layer_activation_bytes = rank.layers > 0 ? s.storedOneEach / rank.layers : 0;

    addLayerRows(rb, rank, x, r, s);
    addPolicyOffloadRows(rb, x, s);
    addDeferredWeightRow(rb, x, s);
    // A split schedule's peak may fall between backwards, pending Ws alive and no group being rebuilt.
    if (full && (!counted || peak.duringBackward))
        rb.add(Category::Activations, Placement::Device, "Recompute working set", s.workingSet,
               "one "
                   + std::string(st.recompute_method == RecomputeMethod::Uniform
                                     ? "group of " + countOf(double(st.recompute_num_layers), "layer", "layers")
                                     : "layer")
                   + " re-materialised for its backward, one micro-batch",
               "full recompute keeps each group's input and rebuilds the group's activations during its backward");
    addStageExtras(rb, x, r, countedAt);
}

// DeepEP (strategy.moe_token_dispatcher "deepep"): the dispatch sends each
// token once to every rank that holds one of its experts, reading it in
// place, and the received tokens (and the combine's reduced outputs) are
// tensors PyTorch allocates at the counts DeepEP's layout pass finds; its own
// NVLink and RDMA buffers are DeepEP's, outside the caching allocator.
void addDeepEp(RankBuilder &rb, const Config &config, std::int64_t tokens, std::int64_t e)
{
    const ModelConfig &m = config.model;
    const std::int64_t A = activationBytes(config);
    const std::int64_t ranks = std::min(m.moe_router_topk, e);
    const Bytes recv = tokens * ranks * m.hidden_size * A;
    const Bytes combine = tokens * m.hidden_size * A;
    rb.add(Category::Communication, Placement::Device, "MoE dispatch and combine (DeepEP)", recv + combine,
           cat("dispatch receive ", num(tokens), " tokens × ", num(ranks), " ranks at most (min(k, e)) × h × ",
               std::to_string(A), " B + combine receive ", num(tokens), " tokens × h × ", std::to_string(A), " B"),
           "DeepEP sends a token once to each rank holding one of its experts and allocates the receive tensors at "
           "the counts its layout pass finds (balanced routing: what a rank sends)");
    const std::int64_t hiddenBytes = m.hidden_size * std::max<std::int64_t>(A, 2);
    const std::optional<DeepEpBuffer> buf = deepEpBuffer(e, hiddenBytes);
    if (!buf)
        return; // validate() refuses the plan
    rb.add(Category::Runtime, Placement::Device, "DeepEP buffers", buf->nvl + buf->rdma,
           cat("NVLink ", formatGB(double(buf->nvl)), " (", num(buf->nvlRecvTokens), "-token receive queues × ",
               num(buf->channels), " channels × ", num(std::min<std::int64_t>(e, 8)), " peers) + RDMA ",
               formatGB(double(buf->rdma)), " (", num(buf->rdmaRecvTokens), "-token queues × ", num(buf->channels),
               " channels × ", num(e / 8), " nodes, send and receive)"),
           cat("deep_ep.Buffer as Megatron-LM's fused_a2a sizes it for ", num(e), " ranks and tokens of h × ",
               std::to_string(std::max<std::int64_t>(A, 2)),
               " B: allocated by DeepEP (cudaMalloc, NVSHMEM), not PyTorch's allocator"));
}

// Megatron's alltoall dispatcher: every token copy sent (s·b·k) and, for
// dropless routing, a receive buffer for the worst case.
void addAllToAll(RankBuilder &rb, const Config &config, std::int64_t tokens, std::int64_t e, bool sp)
{
    const ModelConfig &m = config.model;
    const std::int64_t A = activationBytes(config);
    const std::int64_t copies = tokens * m.moe_router_topk;
    const Bytes send = copies * m.hidden_size * A;
    Bytes recv = 0;
    std::string recvWhy;
    if (config.strategy.moe_expert_capacity_factor > 0) {
        recv = static_cast<Bytes>(std::ceil(config.strategy.moe_expert_capacity_factor * static_cast<double>(copies)))
               * m.hidden_size * A;
        recvWhy = "capacity factor " + dec(config.strategy.moe_expert_capacity_factor) + " × " + num(copies)
                  + " token copies";
    } else {
        const std::int64_t local = m.num_experts / e;
        const std::int64_t worst = e * tokens * std::min(m.moe_router_topk, local);
        recv = worst * m.hidden_size * A;
        recvWhy = "worst case: all " + num(e) + " ranks send every token to this rank's " + num(local) + " experts ("
                  + num(worst) + " copies)";
    }
    rb.add(Category::Communication, Placement::Device, "MoE all-to-all buffers", send + recv,
           "send " + num(copies) + " token copies (s·b/c" + std::string(sp ? "/t" : "") + "·k) × h × "
               + std::to_string(A) + " B + receive " + recvWhy + " × h × " + std::to_string(A) + " B",
           config.strategy.moe_expert_capacity_factor > 0
               ? "static shapes from the capacity factor"
               : "dropless routing: receive buffer sized for the worst case");
}

// FSDP2's all-gather outputs, on its copy-in stream (foreach_all_gather):
// a forward keeps each unit's until the next unit's is copied out
// (wait_for_unshard frees the previous all_gather_state), so two units' are
// alive as the next one's arrives, with the next one's shards cast to the
// compute dtype (_get_param_all_gather_inputs' flat copy, freed once copied
// in). `block`: one block's gathered bytes; `unit`: the other unit's (0
// where the rank has none): the [norm, output] unit after the last block,
// or under strategy.fsdp_root_unit the root unit (embedding, final norm,
// output layer), gathered first, before the first block's.
void addFsdpAllGatherBuffers(RankBuilder &rb, const Context &x, Bytes block, Bytes unit, const std::string &computeWhy)
{
    const std::int64_t world = x.shardGroup;
    const bool root = x.config.strategy.fsdp_root_unit;
    const Bytes blocks = 2 * block + block / world;
    const Bytes withUnit
        = root ? std::max(unit + unit / world, unit + block + block / world) : block + unit + unit / world;
    const bool byUnit = withUnit > blocks;
    const std::string unitText
        = root
              ? (unit + unit / world >= unit + block + block / world
                     ? cat("the root unit's ", num(unit), " B gathered with its shards cast (1/", num(world), " of it)")
                     : cat("the root unit's ", num(unit), " B and the first block's ", num(block),
                           " B gathered, with the block's shards cast (1/", num(world), " of it)"))
              : cat("the last block's ", num(block), " B and the output layer unit's ", num(unit),
                    " B gathered, with the unit's shards cast (1/", num(world), " of it)");
    LedgerEntry *e = rb.add(
        Category::Communication, Placement::Device, "FSDP all-gather buffers", byUnit ? withUnit : blocks,
        byUnit ? cat(unitText, ", at ", computeWhy, " a parameter")
               : cat("2 blocks × ", num(block), " B gathered, with one block's shards cast (1/", num(world),
                     " of it), at ", computeWhy, " a parameter"),
        "FSDP2 all-gathers on its copy-in stream, whose pool the caching allocator keeps for it; a forward frees a "
        "unit's all-gather output once the next unit's is copied out");
    if (e)
        e->stream = kFsdpAllGatherStream;
}

// FSDP2's root unit (fsdp_root_unit) reduce-scatters once autograd has
// finished: its forward inputs (the token ids) need no gradient, so no
// post-backward hook fires for it and FSDP2's final callback
// (_root_post_backward_final_callback) runs its post_backward. Until then the
// output layer's unsharded gradient, made right after the loss's backward,
// waits; the embedding's is made last; then foreach_reduce copies both into
// one reduce-scatter input in the reduce dtype. Without pipeline parallelism
// only: under it each stage's root is its own, and its gradients accumulate
// unsharded anyway.
void addRootUnitGradients(RankBuilder &rb, const Context &x, std::int64_t embedding, std::int64_t output)
{
    if (x.p != 1 || x.dp <= 1 || embedding + output <= 0)
        return;
    const Config &config = x.config;
    const std::string dtype(dtypeName(config.training.params_dtype));
    LedgerEntry *e = rb.add(
        Category::Communication, Placement::Device, "FSDP root unit's output-layer gradient", output * x.sb.compute,
        cat(num(output), " params (final norm, output layer) × ", std::to_string(x.sb.compute), " B unsharded ", dtype,
            " gradients"),
        "fsdp_root_unit: the root unit is reduce-scattered by FSDP2's final callback, once the backward is done, so "
        "the output layer's unsharded gradient waits from its backward to the backward's end");
    if (e)
        e->window = BackwardWindow::FromOutputLayer;
    const std::int64_t root = embedding + output;
    e = rb.add(Category::Communication, Placement::Device, "FSDP reduce-scatter of the root unit's gradients",
               embedding * x.sb.compute + root * x.sb.grad,
               cat(num(embedding), " embedding params × ", std::to_string(x.sb.compute), " B unsharded ", dtype,
                   " gradients + ", num(root), " root params × ", x.sb.gradWhy, " reduce-scatter input"),
               "fsdp_root_unit: at the backward's end FSDP2's final callback copies the root unit's unsharded "
               "gradients into one reduce-scatter input (foreach_reduce), beside the first block's");
    if (e)
        e->window = BackwardWindow::End;
}

void addCommunication(RankBuilder &rb, const RankLedger &rank, const Context &x, std::int64_t moeLayers,
                      const ParamCount &denseOnRank, const ParamCount &expertOnRank, std::int64_t outputUnitParams)
{
    const Config &config = x.config;
    const int zero = config.parallelism.zero_stage;
    const LayerParams &lp = moeLayers > 0 ? x.moeLayer : x.denseLayer;
    const std::int64_t layerParams = lp.dense.params + lp.expert.params;
    if ((x.dp > 1 || x.edp > 1) && fsdpPerBlock(config) && rank.layers > 0) {
        // PyTorch FSDP reduce-scatters each block's gradients when its
        // backward ends: autograd's unsharded gradients in params_dtype are
        // cast into a reduce-scatter input in the reduce dtype (FSDP2's
        // foreach_reduce), which stays until the next block's reduce-scatter
        // waits on it; the next block's gradients are then being made.
        LedgerEntry *e = rb.add(
            Category::Communication, Placement::Device, "FSDP reduce-scatter of one block's gradients",
            layerParams * (x.sb.compute + x.sb.grad),
            cat(num(layerParams), " params of one block × (", std::to_string(x.sb.compute), " B unsharded ",
                dtypeName(config.training.params_dtype), " gradients + ", x.sb.gradWhy, " reduce-scatter input)"),
            "PyTorch FSDP reduces per block (fully_shard unit), not in ddp_bucket_size buckets; only while the "
            "blocks run their backward (FSDP2's post-backward hook, foreach_reduce)");
        if (e)
            e->window = BackwardWindow::Layers;
    } else if ((x.dp > 1 || x.edp > 1) && config.strategy.framework == Framework::DeepSpeed
               && (zero == 1 || zero == 2)) {
        // DeepSpeed ZeRO-1/2 (deepspeed/runtime/zero/stage_1_and_2.py,
        // backward()): each backward allocates an "ipg" buffer of
        // reduce_bucket_size elements in the model's dtype that the gradients
        // are copied into for their reduce-scatter, and a second one with
        // overlap_comm so one fills while the other reduces.
        const std::int64_t elems
            = std::min<std::int64_t>(config.strategy.ddp_bucket_size, denseOnRank.params + expertOnRank.params);
        const int buffers = config.strategy.overlap_grad_reduce ? 2 : 1;
        rb.add(Category::Communication, Placement::Device, "ZeRO gradient buckets (ipg buffers)",
               buffers * elems * x.sb.compute,
               cat(std::to_string(buffers), buffers == 2 ? " buffers (overlap_comm)" : " buffer", " × ", num(elems),
                   " elements (reduce_bucket_size = strategy.ddp_bucket_size, capped at the rank's parameters) × ",
                   std::to_string(x.sb.compute), " B (", dtypeName(config.training.params_dtype), ")"),
               "DeepSpeed copies each bucket of gradients into its contiguous ipg buffer before reducing it; "
               "overlap_comm (strategy.overlap_grad_reduce) keeps two");
    } else if (x.dp > 1 || x.edp > 1) {
        // Gradient reduction: one bucket in flight (PyTorch DDP copies into buckets;
        // Megatron reduces in place but NCCL still stages a bucket's worth).
        const std::int64_t elems
            = std::min<std::int64_t>(config.strategy.ddp_bucket_size, denseOnRank.params + expertOnRank.params);
        rb.add(
            Category::Communication, Placement::Device, "Gradient reduction bucket", elems * x.sb.grad,
            cat(num(elems), " elements (strategy.ddp_bucket_size, capped at the rank's parameters) × ", x.sb.gradWhy));
    }
    if (zero >= 3 && rank.layers > 0) {
        // torchao's float8 all-gather (torchtitan's enable_fsdp_float8_all_gather,
        // strategy.fp8_param_gather; off by default): the linear weights travel and land in FP8.
        std::int64_t inFp8 = 0;
        if (fp8ParamGatherInForce(config) && config.strategy.fp8_implementation == Fp8Implementation::Torchao) {
            const Fp8LayerWeights f8 = fp8LayerWeights(config.model, moeLayers > 0, x.t, x.e, x.etp);
            inFp8 = f8.dense + f8.expert;
        }
        const std::string computeWhy
            = cat(std::to_string(x.sb.compute), " B (", dtypeName(config.training.params_dtype),
                  inFp8 > 0 ? ", of which " + num(inFp8) + " linear weights at 1 B (FP8 all-gather)" : "", ")");
        if (fsdpKeepsGathered(config)) {
            // Every block's gathered parameters stay from its forward to its backward.
            const std::int64_t blocks = rank.layers;
            rb.add(Category::Communication, Placement::Device, "FSDP gathered parameters kept for backward",
                   blocks * ((layerParams - inFp8) * x.sb.compute + inFp8),
                   cat(num(blocks), " blocks × ", num(layerParams), " params × ", computeWhy),
                   x.p > 1 ? "PyTorch's pipelining runs every micro-batch but the last without resharding after "
                             "backward (set_reshard_after_backward(False)), so each block stays gathered through the "
                             "micro-batches"
                           : "fsdp_reshard_after_forward false: gathered once for the forward, kept for the backward");
        } else if (const std::optional<std::int64_t> prefetch = config.strategy.zero3_prefetch_bucket_size) {
            // DeepSpeed gathers module by module: the running module's parameters
            // (the largest tensor's at worst) and a prefetch bucket of the next
            // ones, never more than the live cap.
            const std::int64_t live
                = config.strategy.zero3_max_live_parameters.value_or(std::numeric_limits<std::int64_t>::max());
            const std::int64_t elements = std::min(rank.largest_parameter_tensor + *prefetch, live);
            rb.add(Category::Communication, Placement::Device, "ZeRO-3 gathered parameters", elements * x.sb.compute,
                   cat("min(largest tensor ", num(rank.largest_parameter_tensor), " + stage3_prefetch_bucket_size ",
                       num(*prefetch), ", stage3_max_live_parameters ",
                       config.strategy.zero3_max_live_parameters ? num(live) : std::string("unset"), ") × ",
                       computeWhy),
                   "DeepSpeed ZeRO-3 gathers each module's parameters as it runs and prefetches the next modules' up "
                   "to the bucket (deepspeed/runtime/zero/partitioned_param_coordinator.py)");
        } else if (fsdpPerBlock(config)) {
            rb.add(Category::Communication, Placement::Device, "FSDP gathered parameters",
                   (layerParams - inFp8) * x.sb.compute + inFp8,
                   cat("1 block × ", num(layerParams), " params × ", computeWhy),
                   "FSDP2 copies a block's all-gather out into its parameters on the compute stream as the block "
                   "starts and frees them when it ends (reshard), in the forward and again in the backward");
        } else {
            // The layer being computed and the one prefetched, gathered over the data-parallel group.
            rb.add(Category::Communication, Placement::Device, "ZeRO-3 gathered parameters",
                   2 * ((layerParams - inFp8) * x.sb.compute + inFp8),
                   cat("2 layers (current + prefetch) × ", num(layerParams), " params × ", computeWhy));
        }
        if (fsdpPerBlock(config))
            addFsdpAllGatherBuffers(rb, x, (layerParams - inFp8) * x.sb.compute + inFp8,
                                    outputUnitParams * x.sb.compute, computeWhy);
    }
    if (moeLayers > 0 && x.e > 1) {
        const bool sp = config.parallelism.sequence_parallel && x.t > 1;
        const std::int64_t tokens
            = config.training.seq_length / x.cp * config.training.micro_batch_size / (sp ? x.t : 1);
        if (config.strategy.moe_token_dispatcher == MoeDispatcher::DeepEP)
            addDeepEp(rb, config, tokens, x.e);
        else
            addAllToAll(rb, config, tokens, x.e, sp);
    }
}

// Context parallelism's key and value exchange for the attention in flight
// (core/model/cpexchange.h).
void addContextParallel(RankBuilder &rb, const RankLedger &rank, const Context &x)
{
    if (rank.layers == 0)
        return;
    const CpExchange ex = contextParallelExchange(x.config);
    rb.add(Category::Communication, Placement::Device, std::move(ex.label), ex.bytes, std::move(ex.formula),
           std::move(ex.note));
}

// Everything the ranks' rows share, computed once per evaluation. `splitOps`:
// every rank's op order when the caller has scheduled it already; null:
// schedule here. `matched`: the tensor_policies rules the totals pass
// matched, for validation.
Context contextOf(const Config &config, const std::vector<std::vector<PipelineOp>> *splitOps, std::uint64_t &matched)
{
    const ParallelismConfig &par = config.parallelism;
    const ModelConfig &model = config.model;
    const std::int64_t t = par.tensor_model_parallel_size, p = par.pipeline_model_parallel_size;
    const std::int64_t d = par.data_parallel_size, cp = par.context_parallel_size;
    const std::int64_t e = par.expert_model_parallel_size, etp = par.expertTensorParallel();
    const std::int64_t m = config.microBatches();
    const LayerParams denseLayer = layerParams(model, false, t, e, etp);
    // The totals pass also says which tensor_policies rules matched.
    std::uint64_t matchedDense = 0, matchedMoe = 0;
    LayerActivations denseAct = layerActivationsMatched(config, false, matchedDense);
    LayerActivations moeAct = model.isMoe() ? layerActivationsMatched(config, true, matchedMoe) : denseAct;
    matched = matchedDense | matchedMoe;
    std::vector<std::vector<PipelineOp>> ops;
    if (splitsBackward(par.schedule()))
        ops = splitOps ? *splitOps : scheduleAllOps(par, m, weightPassShare(config, denseAct, moeAct));
    Context x{.config = config,
              .t = t,
              .p = p,
              .v = par.virtual_pipeline_model_parallel_size,
              .d = d,
              .cp = cp,
              .e = e,
              .etp = etp,
              .m = m,
              .dp = d * cp,
              .edp = model.isMoe() ? std::max<std::int64_t>(1, t * cp * d / (etp * e)) : 1,
              .shardGroup = par.dataParallelShard() * cp,
              .edpShard = model.isMoe() ? std::max<std::int64_t>(
                              1, t * cp * d / (etp * e) / std::max<std::int64_t>(1, d / par.dataParallelShard()))
                                        : 1,
              .sb = stateBytes(config.training),
              .stages = stageLayers(config),
              .denseLayer = denseLayer,
              .moeLayer = model.isMoe() ? layerParams(model, true, t, e, etp) : denseLayer,
              .emb = embeddingParams(model, config.training.seq_length, t, p),
              .denseAct = std::move(denseAct),
              .moeAct = std::move(moeAct),
              .stageAct = stageActivations(config),
              .splitOps = std::move(ops),
              .granularity = granularityText(config.strategy)};
    x.chunkCache.reserve(x.stages.size()); // never reallocated: addActivations keeps pointers into it
    return x;
}

// The last stage's own parameters: the output layer and the final norm, and
// the multi-token prediction modules' projections and norms.
std::string outputLayerLabel(const Config &config)
{
    return config.model.mtp_num_layers > 0 ? "Output layer, final norm and MTP projection"
                                           : "Output layer and final norm";
}

// The parameters rank r holds, by the groups its model-state rows shard differently.
struct RankParams
{
    ParamCount layersDense, layersExpert, firstStage, lastStage;
    std::int64_t moeLayers = 0;
};

// Counts rank r's parameters, layer by layer and its stage extras, and sets
// the rank's layer and parameter counts.
RankParams rankParamsOf(RankLedger &rank, const Context &x, std::int64_t r)
{
    const Config &config = x.config;
    RankParams rp;
    for (std::int64_t k = 0; k < x.v; ++k) {
        const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
        for (std::int64_t i = 0; i < sl.count; ++i) {
            const bool moe = config.model.isMoeLayer(sl.first + i);
            rp.moeLayers += moe;
            const LayerParams &lp = moe ? x.moeLayer : x.denseLayer;
            rp.layersDense += lp.dense;
            rp.layersExpert += lp.expert;
        }
    }
    rank.layers = rankLayers(x.stages, x.p, r);
    bool first = false, last = false;
    for (std::int64_t k = 0; k < x.v; ++k) {
        first |= isFirstStage(config.parallelism, r, k);
        last |= isLastStage(config.parallelism, r, k);
    }
    if (first) {
        rp.firstStage += x.emb.word;
        rp.firstStage += x.emb.position;
    }
    if (last) {
        rp.lastStage += x.emb.output;
        rp.lastStage += x.emb.finalNorm;
        rp.lastStage += x.emb.mtp;
        // Multi-token prediction embeds the next tokens with the first stage's
        // embedding: the same tensor where the rank holds both (DualPipe, the
        // DeepSeek-V3 report §3.2.3), else a copy.
        if (!first)
            rp.lastStage += x.emb.mtpEmbedding;
    }
    rank.parameters = rp.layersDense.params + rp.layersExpert.params + rp.firstStage.params + rp.lastStage.params;
    rank.largest_parameter_tensor
        = std::max({rp.layersDense.largest, rp.layersExpert.largest, rp.firstStage.largest, rp.lastStage.largest});
    return rp;
}

// What fp32 parameters (training.fp32_params) and FSDP per block add beside
// the model states: the compute copies of the weights, the gathered output
// layer through the loss, and under pipeline parallelism the gradients that
// stay unsharded over the micro-batches.
void addComputeCopies(RankBuilder &rb, RankLedger &rank, const Context &x, const RankParams &rp)
{
    const Config &config = x.config;
    const std::string compute = cat(std::to_string(x.sb.compute), " B (", dtypeName(config.training.params_dtype), ")");
    if (config.training.fp32_params && config.parallelism.zero_stage < 3 && x.sb.compute < x.sb.weight) {
        // torch.autocast casts each weight as its layer runs and autograd saves the
        // copy for the backward; full recompute saves none, so one layer's at a time.
        const bool full = config.strategy.recompute_granularity == RecomputeGranularity::Full;
        const LayerParams &lp = rp.moeLayers > 0 ? x.moeLayer : x.denseLayer;
        const std::int64_t layers = full ? std::min<std::int64_t>(rank.layers, 1) * (lp.dense.params + lp.expert.params)
                                         : rp.layersDense.params + rp.layersExpert.params;
        const std::int64_t params = layers + rp.lastStage.params;
        rb.add(Category::Weights, Placement::Device, "Weights cast for compute (autocast)", params * x.sb.compute,
               cat(num(params),
                   full ? " params (one layer under full recompute, and the output layer) × "
                        : " params (the rank's layers and output layer) × ",
                   compute),
               "torch.autocast's copies of the fp32 weights, saved by autograd for each layer's backward");
    }
    if (!fsdpPerBlock(config))
        return;
    if (config.strategy.framework == Framework::Torchtitan && config.strategy.fsdp_root_unit) {
        const std::int64_t root = rp.firstStage.params + rp.lastStage.params;
        if (root > 0)
            rb.add(Category::Communication, Placement::Device, "FSDP gathered root unit", root * x.sb.compute,
                   cat(num(root), " params (", rp.firstStage.params > 0 ? "embedding" : "",
                       rp.firstStage.params > 0 && rp.lastStage.params > 0 ? ", " : "",
                       rp.lastStage.params > 0 ? "final norm, output layer" : "", ") × ", compute),
                   "fsdp_root_unit: torchtitan before July 2025 (#1094) shards the whole model last, so the "
                   "parameters outside the blocks form FSDP2's root unit, which is not resharded after forward "
                   "(FSDP2's lazy init: \"for the root, do not reshard after forward\"): gathered from the "
                   "forward's start to the end of the backward");
        addRootUnitGradients(rb, x, rp.firstStage.params, rp.lastStage.params);
    } else if (config.strategy.framework == Framework::Torchtitan && rp.lastStage.params > 0) {
        rb.add(Category::Communication, Placement::Device, "FSDP gathered output layer and final norm",
               rp.lastStage.params * x.sb.compute, cat(num(rp.lastStage.params), " params × ", compute),
               "torchtitan shards [norm, output] as one unit that is not resharded after forward: the loss's "
               "backward needs it at once (torchtitan distributed/fsdp.py)");
    }
    if (x.p == 1)
        return;
    // PyTorch's pipelining: set_requires_gradient_sync(False) until the last
    // micro-batch, so FSDP accumulates each block's unsharded gradients in the
    // reduce dtype (FSDPParam's unsharded_accumulated_grad) until then.
    const auto accumulated = [&](ParamGroup group, std::string label, const ParamCount &pc) {
        const std::size_t before = rank.entries.size();
        rb.add(Category::Gradients, Placement::Device, std::move(label), pc.params * x.sb.grad,
               cat(num(pc.params), " params × ", x.sb.gradWhy, ", unsharded"),
               "FSDP under pipeline parallelism: gradients accumulate unsharded over the micro-batches and are "
               "reduce-scattered after the last one (PyTorch's pipelining sets requires_gradient_sync False before)");
        if (rank.entries.size() > before)
            rank.entries.back().group = group;
    };
    ParamCount layers = rp.layersDense;
    layers += rp.layersExpert;
    accumulated(ParamGroup::Layers, "Transformer layers, accumulated unsharded", layers);
    accumulated(ParamGroup::Embeddings, "Embeddings, accumulated unsharded", rp.firstStage);
    accumulated(ParamGroup::OutputLayer, outputLayerLabel(x.config) + ", accumulated unsharded", rp.lastStage);
}

// Every row of rank r, in the ledger's order: model states, FP8 copies, the
// optimizer step's buffers, activations, communication, the runtime reserve.
void addRankRows(RankLedger &rank, const Context &x, std::int64_t r)
{
    const Config &config = x.config;
    RankBuilder rb(rank);
    const RankParams rp = rankParamsOf(rank, x, r);
    const bool hsdp = x.shardGroup != x.dp;
    const std::string_view dpName = hsdp ? (x.cp > 1 ? "the HSDP shard group (data_parallel_shard_size·c)"
                                                     : "the HSDP shard group (data_parallel_shard_size)")
                                         : (x.cp > 1 ? "d·c" : "d");
    // FP8 primary weights: the linear weights of the rank's layers, as Fp8LedgerRows counts their copies.
    std::int64_t fp8Dense = 0, fp8Expert = 0;
    if (fp8PrimaryWeights(config)) {
        const Fp8LayerWeights dense = fp8LayerWeights(config.model, false, x.t, x.e, x.etp);
        const Fp8LayerWeights moe = rp.moeLayers > 0 ? fp8LayerWeights(config.model, true, x.t, x.e, x.etp) : dense;
        fp8Dense = dense.dense * (rank.layers - rp.moeLayers) + moe.dense * rp.moeLayers;
        fp8Expert = moe.expert * rp.moeLayers;
    }
    addModelStates(rb, rank, x, ParamGroup::Layers, "Transformer layers", rp.layersDense, x.shardGroup, dpName,
                   fp8Dense);
    addModelStates(rb, rank, x, ParamGroup::Experts, "Routed experts", rp.layersExpert, x.edpShard,
                   hsdp ? "the expert-data-parallel shard group" : "the expert-data-parallel group", fp8Expert);
    addModelStates(rb, rank, x, ParamGroup::Embeddings, "Embeddings", rp.firstStage, x.shardGroup, dpName);
    addModelStates(rb, rank, x, ParamGroup::OutputLayer, outputLayerLabel(config), rp.lastStage, x.shardGroup, dpName);
    for (const Fp8Row &row : fp8LedgerRows(config, rank.layers - rp.moeLayers, rp.moeLayers, x.shardGroup, x.edpShard))
        rb.add(row.category, Placement::Device, row.label, row.bytes, row.formula, row.note);

    addOptimizerStepRows(rb, rank, x, r, rp.layersDense, rp.layersExpert);
    addActivations(rb, rank, x, r);
    ParamCount denseOnRank = rp.layersDense;
    denseOnRank += rp.firstStage;
    denseOnRank += rp.lastStage;
    // The unit gathered besides the blocks (addFsdpAllGatherBuffers): the root
    // unit under fsdp_root_unit, else torchtitan's [norm, output].
    const std::int64_t unitParams = config.strategy.framework != Framework::Torchtitan ? 0
                                    : config.strategy.fsdp_root_unit ? rp.firstStage.params + rp.lastStage.params
                                                                     : rp.lastStage.params;
    addCommunication(rb, rank, x, rp.moeLayers, denseOnRank, rp.layersExpert, unitParams);
    addContextParallel(rb, rank, x);
    addComputeCopies(rb, rank, x, rp);

    // The runtime reserve: one row, or one per named part (core/model/runtimereserve.h).
    for (ReservePart &part : runtimeReserveParts(config, r))
        rb.add(Category::Runtime, Placement::Device, std::move(part.label), part.bytes, std::move(part.formula),
               std::move(part.source));
}

// Rank r's totals and verdicts: the device total against the HBM (and the
// ledger's peak), host DRAM rows against host_bytes, NVMe rows against
// nvme_bytes (an NVMe offload, ZeRO-Infinity, does not use the host's
// memory), with a warning for each that is over.
void addRankTotals(Ledger &ledger, RankLedger &rank, const HardwareConfig &hw, std::int64_t r)
{
    for (int i = 0; i < kCategoryCount; ++i) {
        rank.device_total_bytes += rank.device[i];
        rank.host_total_bytes += rank.host[i];
    }
    rank.fits = rank.device_total_bytes <= hw.hbm_bytes;
    if (rank.device_total_bytes > ledger.peak_bytes) {
        ledger.peak_bytes = rank.device_total_bytes;
        ledger.peak_rank = rank.pipeline_rank;
    }
    Bytes dram = 0, nvme = 0;
    for (const LedgerEntry &e : rank.entries) {
        if (e.placement == Placement::Host)
            dram += e.bytes;
        else if (e.placement == Placement::NVMe)
            nvme += e.bytes;
    }
    const bool dramFits = hostFits(dram, hw.host_bytes);
    const bool nvmeFits = hostFits(nvme, hw.nvme_bytes);
    rank.host_fits = dramFits && nvmeFits;
    if (!dramFits)
        ledger.warnings.push_back({"hardware.host_bytes",
                                   "rank " + std::to_string(r) + " needs " + formatGB(static_cast<double>(dram))
                                       + " of host memory, more than the "
                                       + formatGB(static_cast<double>(hw.host_bytes)) + " per GPU",
                                   "offload to NVMe or shard with ZeRO", Problem::Severity::Warning});
    if (!nvmeFits)
        ledger.warnings.push_back({"hardware.nvme_bytes",
                                   "rank " + std::to_string(r) + " needs " + formatGB(static_cast<double>(nvme))
                                       + " of NVMe, more than the " + formatGB(static_cast<double>(hw.nvme_bytes))
                                       + " per GPU",
                                   "shard with ZeRO over more GPUs", Problem::Severity::Warning});
}

// `splitOps`: every rank's op order when the caller has scheduled it already; null: schedule here.
Ledger ledgerOf(const Config &config, const std::vector<std::vector<PipelineOp>> *splitOps)
{
    std::uint64_t matched = 0;
    const Context x = contextOf(config, splitOps, matched);

    Ledger ledger;
    ledger.total_parameters = totalParameters(config);
    ledger.gpus = config.parallelism.gpus();
    ledger.micro_batches = x.m;
    ledger.capacity_bytes = config.hardware.hbm_bytes;
    ledger.usable_bytes = config.hardware.hbm_bytes - maxRuntimeReserveBytes(config);
    ledger.host_capacity_bytes = config.hardware.host_bytes;
    for (const Problem &pr : validateMatched(config, matched))
        if (!pr.isError())
            ledger.warnings.push_back(pr);

    ledger.ranks.resize(static_cast<std::size_t>(x.p));
    for (std::int64_t r = 0; r < x.p; ++r) {
        RankLedger &rank = ledger.ranks[static_cast<std::size_t>(r)];
        rank.pipeline_rank = static_cast<int>(r);
        rank.entries.reserve(24); // a rank's rows (and balancing's), so that adding them never moves the ones before
        addRankRows(rank, x, r);
        addRankTotals(ledger, rank, config.hardware, r);
    }
    // The choices in force, in words: every number explains itself (docs/accounting.md).
    ledger.choices = ledgerChoices(config, x.sb, x.denseAct);
    balanceActivations(ledger, config); // strategy.pipeline_activation_balance: moves rows, then re-totals
    return ledger;
}

} // namespace

Ledger computeLedger(const Config &config)
{
    return ledgerOf(config, nullptr);
}

Ledger computeLedger(const Config &config, const std::vector<std::vector<PipelineOp>> &ops)
{
    return ledgerOf(config, &ops);
}

} // namespace memledger
