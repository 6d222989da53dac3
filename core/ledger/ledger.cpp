// SPDX-License-Identifier: MIT
#include "core/ledger/ledger.h"

#include "core/base/textcat.h"
#include "core/check/validate.h"
#include "core/ledger/balance.h"
#include "core/ledger/scheduledledger.h"
#include "core/model/activations.h"
#include "core/model/fp8.h"
#include "core/model/gradoffload.h"
#include "core/model/modelstates.h"
#include "core/model/muon.h"
#include "core/model/parameters.h"
#include "core/model/policymatch.h"
#include "core/schedule/schedule.h"
#include "core/schedule/stagelayers.h"

#include <algorithm>
#include <cmath>

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

    void add(Category c, Placement where, std::string label, Bytes bytes, std::string formula, std::string note = {})
    {
        if (bytes <= 0)
            return;
        m_rank.entries.push_back({c, where, std::move(label), bytes, std::move(formula), std::move(note)});
        const int i = static_cast<int>(c);
        if (where == Placement::Device)
            m_rank.device[i] += bytes;
        else
            m_rank.host[i] += bytes;
    }

private:
    RankLedger &m_rank;
};

// What addModelStates' rows depend on besides the configuration.
struct ModelStatesKey
{
    ParamGroup which;
    std::int64_t params, factoredState, matrixParams, group;
    bool operator==(const ModelStatesKey &) const = default;
};

struct Context
{
    const Config &config;
    std::int64_t t, p, v, d, cp, e, etp, m, dp, edp;
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
    mutable std::vector<std::pair<std::int64_t, ChunkActivations>> chunkCache;
    // addModelStates' rows, by where an earlier rank holds them (copied from
    // there, not kept twice): ledger.ranks is sized once before any rank is built.
    struct RowsAt
    {
        ModelStatesKey key;
        const RankLedger *rank;
        std::size_t first, count;
    };
    mutable std::vector<RowsAt> modelStatesCache;
};

// Weights, gradients and optimizer states of one parameter group.
void addModelStates(RankBuilder &rb, RankLedger &rank, const Context &x, ParamGroup which, std::string_view what,
                    const ParamCount &pc, std::int64_t group, std::string_view groupName)
{
    if (pc.params <= 0)
        return;
    const std::size_t first = rank.entries.size();
    // The rows depend only on the group and its counts: most ranks hold the
    // same layers, so a rank like one before takes a copy of its rows.
    const ModelStatesKey key{which, pc.params, pc.factoredState, pc.matrixParams, group};
    for (const Context::RowsAt &at : x.modelStatesCache)
        if (at.key == key) {
            for (std::size_t i = at.first; i < at.first + at.count; ++i) {
                const LedgerEntry &e = at.rank->entries[i];
                rb.add(e.category, e.placement, e.label, e.bytes, e.formula, e.note);
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
    rb.add(Category::Weights, placementOf(po), std::string(what), ms.weights,
           cat(params, " × ", x.sb.weightWhy, sharded(3)),
           po != OffloadTarget::None
               ? "parameters offloaded (ZeRO-Infinity); layers are gathered to the device when used"
               : "");
    const OffloadTarget go = x.config.strategy.grad_offload;
    rb.add(Category::Gradients, placementOf(go), std::string(what), ms.gradients,
           cat(params, " × ", x.sb.gradWhy, sharded(2)),
           go != OffloadTarget::None ? "gradient offload: sent to the host bucket by bucket during backward "
                                       "(ZeRO-Offload); the device keeps a double buffer"
                                     : "");

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
    }
    return "";
}

void addActivations(RankBuilder &rb, RankLedger &rank, const Context &x, std::int64_t r)
{
    const Config &config = x.config;
    const StrategyConfig &st = config.strategy;
    const bool full = st.recompute_granularity == RecomputeGranularity::Full;
    const std::int64_t n = st.recompute_num_layers;
    Bytes stored = 0; // all chunk-micro-batches on the rank
    Bytes storedOneEach = 0; // one micro-batch of each chunk, for the per-layer figure
    Bytes workingSet = 0; // full recompute: one group re-materialised in backward
    std::int64_t inFlightTotal = 0;
    std::int64_t layerMicroBatches = 0; // Σ over chunks: in-flight micro-batches × the chunk's layers
    bool even = true;
    std::vector<ChunkActivations> own; // an MoE model's chunks (their layers' kinds differ)
    if (config.model.isMoe())
        own.reserve(static_cast<std::size_t>(x.v)); // never reallocated: `chunks` points into it
    std::vector<const ChunkActivations *> chunks;
    chunks.reserve(static_cast<std::size_t>(x.v));
    for (std::int64_t k = 0; k < x.v; ++k) {
        const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
        if (config.model.isMoe()) {
            own.push_back(chunkActivations(config, x.denseAct, x.moeAct, sl.first, sl.count));
            chunks.push_back(&own.back());
            continue;
        }
        auto hit = std::find_if(x.chunkCache.begin(), x.chunkCache.end(),
                                [&](const auto &c) { return c.first == sl.count; });
        if (hit == x.chunkCache.end()) {
            x.chunkCache.emplace_back(sl.count, chunkActivations(config, x.denseAct, x.moeAct, sl.first, sl.count));
            hit = std::prev(x.chunkCache.end());
        }
        chunks.push_back(&hit->second);
    }
    // The zero-bubble schedules and DualPipe: counted along the rank's op
    // order, each chunk's groups and pending weight passes weighed by their bytes.
    const bool counted = splitsBackward(config.parallelism.schedule());
    InFlightAtPeak peak;
    if (counted) {
        std::vector<double> groupBytes, weightBytes;
        double working = 0;
        for (const ChunkActivations *c : chunks) {
            const ChunkActivations &ca = *c;
            groupBytes.push_back(double(ca.stored));
            weightBytes.push_back(double(ca.weightPass));
            working = std::max(working, double(ca.recomputeWorkingSet));
        }
        peak = inFlightAlong(x.splitOps[static_cast<std::size_t>(r)], groupBytes, weightBytes, full ? working : 0.0);
    }
    Bytes weightPending = 0;
    std::int64_t weightPendingCount = 0;
    Bytes policyHost = 0; // tensors strategy.tensor_policies keep on the host, all in-flight micro-batches
    Bytes policyTransit = 0; // the largest layer's offloaded tensors
    for (std::int64_t k = 0; k < x.v; ++k) {
        const std::size_t ki = static_cast<std::size_t>(k);
        const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
        even &= sl.count == x.stages[static_cast<std::size_t>(r)].count;
        const std::int64_t inFlight = counted ? peak.groups[ki] : inFlightOfChunk(config.parallelism, x.m, r, k);
        inFlightTotal += inFlight;
        layerMicroBatches += inFlight * sl.count;
        const ChunkActivations &ca = *chunks[ki];
        stored += ca.stored * inFlight;
        storedOneEach += ca.stored;
        policyHost += ca.offloaded * inFlight;
        for (Bytes b : ca.layerOffloaded)
            policyTransit = std::max(policyTransit, b);
        workingSet = std::max(workingSet, ca.recomputeWorkingSet);
        if (counted) {
            weightPending += ca.weightPass * peak.weightPending[ki];
            weightPendingCount += peak.weightPending[ki];
        }
    }
    rank.in_flight_chunks = inFlightTotal;
    // In stage-micro-batches: v chunks make a stage, but each of DualPipe's two is a whole stage.
    rank.in_flight_microbatches
        = static_cast<double>(inFlightTotal) / static_cast<double>(x.v / pipelineDirections(config.parallelism));
    rank.layer_activation_bytes = rank.layers > 0 ? storedOneEach / rank.layers : 0;

    const std::string perLayer = formatGB(static_cast<double>(rank.layer_activation_bytes));
    std::string formula;
    if (x.v > 1 && even)
        formula = cat(num(inFlightTotal), " in-flight chunk-micro-batches × ",
                      num(x.stages[static_cast<std::size_t>(r)].count), " layers × ", perLayer, " per layer (",
                      x.granularity, "; ", dec(rank.in_flight_microbatches), " stage-micro-batches)");
    else if (x.v > 1)
        formula = cat(num(layerMicroBatches),
                      " layer-micro-batches (each chunk's in-flight micro-batches × its layers, "
                      "pipeline_layout) × ",
                      perLayer, " per layer (", x.granularity, ")");
    else
        formula = cat(CountText(rank.in_flight_microbatches, "in-flight micro-batch", "in-flight micro-batches"), " × ",
                      CountText(double(rank.layers), "layer", "layers"), " × ", perLayer, " per layer (", x.granularity,
                      ")");
    if (st.activation_offload != OffloadTarget::None && inFlightTotal > 0) {
        // On the device: the group being computed and one per staging buffer
        // still draining (or already prefetched); the rest waits on the host.
        const std::int64_t onDevice = std::min<std::int64_t>(inFlightTotal, st.activation_offload_buffers + 1);
        const Bytes device = stored * onDevice / inFlightTotal;
        rb.add(
            Category::Activations, Placement::Device, "Transformer layers", device,
            formula + " × " + num(onDevice) + "/" + num(inFlightTotal) + " on the device (1 computing + "
                + countOf(double(st.activation_offload_buffers), "staging buffer", "staging buffers") + ")",
            "activation offload: saved activations go to the host after each forward and return before the backward");
        rb.add(Category::Activations, Placement::Host, "Transformer layers (offloaded)", stored - device,
               num(inFlightTotal - onDevice) + "/" + num(inFlightTotal) + " of " + formatGB(double(stored)));
    } else {
        rb.add(Category::Activations, Placement::Device, "Transformer layers", stored, std::move(formula));
    }
    if (policyHost > 0) {
        const LayerActivations &la = x.denseAct;
        rb.add(Category::Activations, Placement::Host, "Tensors offloaded by tensor_policies", policyHost,
               cat(CountText(double(inFlightTotal), "in-flight chunk-micro-batch", "in-flight chunk-micro-batches"),
                   " × each chunk's layers × ", formatGB(double(la.offloaded)), " per layer"),
               "each offloaded tensor goes to the host once its layer's forward has produced it and returns "
               "for that layer's backward (quantised first where the fate is quantize_fp8+offload)");
        // One layer's tensors still leaving the device while the next layer
        // runs forward, or already back while the layer after it runs backward,
        // and those of the layer computing.
        rb.add(Category::Activations, Placement::Device, "Offloaded tensors in transit", 2 * policyTransit,
               cat("2 layers × ", formatGB(double(policyTransit)), " (one copying, one in use)"),
               "per-tensor offload hides each layer's copies under its neighbours' compute");
    }
    if (weightPending > 0)
        rb.add(Category::Activations, Placement::Device, "Inputs of deferred weight passes", weightPending,
               countOf(double(weightPendingCount), "micro-batch", "micro-batches") + " past B, before W × "
                   + formatGB(double(weightPending / weightPendingCount))
                   + (config.strategy.tensor_policies.empty()
                          ? " (each linear layer's input and output gradient)"
                          : " (each linear layer's input as its tensor policy left it for B: FP8 when quantised, "
                            "back on the device when offloaded, whole when recomputed; and its output gradient)"),
               std::string(scheduleName(config.parallelism.schedule()))
                   + " splits each backward: B frees what only the input gradients needed, W (the weight "
                     "gradients) runs later and keeps its GEMM operands until then");
    // A split schedule's peak may fall between backwards, pending Ws alive and no group being rebuilt.
    if (full && (!counted || peak.duringBackward))
        rb.add(Category::Activations, Placement::Device, "Recompute working set", workingSet,
               "one "
                   + std::string(st.recompute_method == RecomputeMethod::Uniform
                                     ? "group of " + countOf(double(n), "layer", "layers")
                                     : "layer")
                   + " re-materialised for its backward, one micro-batch",
               "full recompute keeps each group's input and rebuilds the group's activations during its backward");

    // The first and last stages' extras, on the chunks that hold those stages
    // (DualPipe: both ends of the pipe hold one of each direction).
    const auto inFlightOf = [&](std::int64_t k) {
        return counted ? peak.groups[static_cast<std::size_t>(k)] : inFlightOfChunk(config.parallelism, x.m, r, k);
    };
    for (std::int64_t k = 0; k < x.v; ++k) {
        if (!isFirstStage(config.parallelism, r, k))
            continue;
        const std::int64_t inFlight = inFlightOf(k);
        for (const SavedTensor &s : x.stageAct.first)
            rb.add(Category::Activations, Placement::Device, cat("Embedding: ", s.name), s.bytes * inFlight,
                   cat(num(inFlight), " micro-batches × (", s.formula, ")"));
    }
    for (std::int64_t k = 0; k < x.v; ++k) {
        if (!isLastStage(config.parallelism, r, k))
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
               "the loss keeps the fp32 softmax of the vocabulary-parallel logits (Megatron cross entropy)");
    }
}

// strategy.tensor_policies in words: the rules and what they do to one layer.
std::string tensorPolicyChoice(const Config &config, const LayerActivations &la)
{
    const StrategyConfig &st = config.strategy;
    if (st.recompute_granularity == RecomputeGranularity::Full)
        return "Tensor policies: not applied under full recompute, which keeps only each group's input.";
    std::string rules;
    for (const TensorPolicy &p : st.tensor_policies)
        append(rules, rules.empty() ? "" : ", ", p.pattern, " → ", tensorFateName(p.fate));
    std::string out = cat("Tensor policies (", rules, ") over ", granularityName(st.recompute_granularity),
                          " recompute: per layer ", formatGB(double(la.kept)), " kept of ", formatGB(double(la.total)),
                          ", ", formatGB(double(la.recomputed)), " recomputed, ", formatGB(double(la.offloaded)),
                          " offloaded to the host");
    if (la.quantizedFrom > 0)
        append(out, "; ", formatGB(double(la.quantizedFrom)), " quantised to ", formatGB(double(la.quantized)),
               " (fp8 e4m3, one ", quantScaleName(st.activation_quant_scale_dtype), " scale per ",
               num(st.activation_quant_block_size),
               " elements, dequantised in the backward; 1-byte masks and fp32 statistics unchanged)");
    out += '.';
    return out;
}

// What the schedule means for memory, in the ledger's explanation.
std::string_view scheduleNote(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::OneFOneB:
        return "; rank r holds min(p − r, m) of them.";
    case PipelineSchedule::ZbH1:
        return "; each backward split into B (input gradients) and W (weight gradients), rank r deferring r of its "
               "Ws to the cool-down (Qi et al. 2023, ZB-H1): 1F1B's peak, W's operands held from B to W.";
    case PipelineSchedule::ZbH2:
        return "; B and W split, the warm-up filled with 2(p − r) − 1 forwards (Qi et al. 2023, ZB-H2): no bubble "
               "for (2p − 1)/p of 1F1B's first-rank activations.";
    case PipelineSchedule::ZbV:
        return "; two chunks per rank in a V (rank r holds stages r and 2p − 1 − r), B and W split and W filling "
               "the bubbles under 1F1B's first-rank memory (Qi et al. 2024, ZB-V); counted along the op order.";
    case PipelineSchedule::DualPipe:
        return "; two pipelines in opposite directions, each with half the micro-batches: every rank holds its "
               "stage of each, two copies of the model's parameters, and up to p + 1 stage-micro-batches "
               "(DeepSeek-V3 report, deepseek-ai/DualPipe).";
    case PipelineSchedule::DualPipeV:
        return "; DualPipe cut in half: a V of 2p stages over p ranks, one copy of the parameters, up to 2p + 1 "
               "chunk-micro-batches (deepseek-ai/DualPipe).";
    default:
        return ".";
    }
}

void addCommunication(RankBuilder &rb, const RankLedger &rank, const Context &x, std::int64_t moeLayers,
                      const ParamCount &denseOnRank, const ParamCount &expertOnRank)
{
    const Config &config = x.config;
    const int zero = config.parallelism.zero_stage;
    // Gradient reduction: one bucket in flight (PyTorch DDP copies into buckets;
    // Megatron reduces in place but NCCL still stages a bucket's worth).
    if (x.dp > 1 || x.edp > 1) {
        const std::int64_t elems
            = std::min<std::int64_t>(config.strategy.ddp_bucket_size, denseOnRank.params + expertOnRank.params);
        rb.add(
            Category::Communication, Placement::Device, "Gradient reduction bucket", elems * x.sb.grad,
            cat(num(elems), " elements (strategy.ddp_bucket_size, capped at the rank's parameters) × ", x.sb.gradWhy));
    }
    if (zero >= 3 && rank.layers > 0) {
        // The layer being computed and the one prefetched, gathered over the data-parallel group.
        const LayerParams &lp = moeLayers > 0 ? x.moeLayer : x.denseLayer;
        const std::int64_t gathered = 2 * (lp.dense.params + lp.expert.params);
        // torchao's float8 all-gather (torchtitan): the linear weights travel and land in FP8.
        std::int64_t inFp8 = 0;
        if (config.training.fp8_recipe != Fp8Recipe::None
            && config.strategy.fp8_implementation == Fp8Implementation::Torchao) {
            const Fp8LayerWeights f8 = fp8LayerWeights(config.model, moeLayers > 0, x.t, x.e, x.etp);
            inFp8 = 2 * (f8.dense + f8.expert);
        }
        rb.add(Category::Communication, Placement::Device, "ZeRO-3 gathered parameters",
               (gathered - inFp8) * x.sb.weight + inFp8,
               "2 layers (current + prefetch) × " + num(lp.dense.params + lp.expert.params) + " params × "
                   + x.sb.weightWhy
                   + (inFp8 > 0 ? ", of which " + num(inFp8) + " linear weights at 1 B (FP8 all-gather)" : ""));
    }
    if (moeLayers > 0 && x.e > 1) {
        const ModelConfig &m = config.model;
        const std::int64_t A = activationBytes(config);
        const bool sp = config.parallelism.sequence_parallel && x.t > 1;
        const std::int64_t tokens
            = config.training.seq_length / x.cp * config.training.micro_batch_size / (sp ? x.t : 1);
        const std::int64_t copies = tokens * m.moe_router_topk;
        const Bytes send = copies * m.hidden_size * A;
        Bytes recv = 0;
        std::string recvWhy;
        if (config.strategy.moe_expert_capacity_factor > 0) {
            recv = static_cast<Bytes>(
                       std::ceil(config.strategy.moe_expert_capacity_factor * static_cast<double>(copies)))
                   * m.hidden_size * A;
            recvWhy = "capacity factor " + dec(config.strategy.moe_expert_capacity_factor) + " × " + num(copies)
                      + " token copies";
        } else {
            const std::int64_t local = m.num_experts / x.e;
            const std::int64_t worst = x.e * tokens * std::min(m.moe_router_topk, local);
            recv = worst * m.hidden_size * A;
            recvWhy = "worst case: all " + num(x.e) + " ranks send every token to this rank's " + num(local)
                      + " experts (" + num(worst) + " copies)";
        }
        rb.add(Category::Communication, Placement::Device, "MoE all-to-all buffers", send + recv,
               "send " + num(copies) + " token copies (s·b/c" + std::string(sp ? "/t" : "") + "·k) × h × "
                   + std::to_string(A) + " B + receive " + recvWhy + " × h × " + std::to_string(A) + " B",
               config.strategy.moe_expert_capacity_factor > 0
                   ? "static shapes from the capacity factor"
                   : "dropless routing: receive buffer sized for the worst case");
    }
}

// `splitOps`: every rank's op order when the caller has scheduled it already; null: schedule here.
Ledger ledgerOf(const Config &config, const std::vector<std::vector<PipelineOp>> *splitOps)
{
    const ParallelismConfig &par = config.parallelism;
    Context x{config,
              par.tensor_model_parallel_size,
              par.pipeline_model_parallel_size,
              par.virtual_pipeline_model_parallel_size,
              par.data_parallel_size,
              par.context_parallel_size,
              par.expert_model_parallel_size,
              par.expertTensorParallel(),
              config.microBatches(),
              0,
              0,
              stateBytes(config.training),
              {},
              {},
              {},
              {},
              {},
              {},
              {},
              {},
              {},
              {},
              {}};
    x.granularity = granularityText(config.strategy);
    x.dp = x.d * x.cp;
    x.edp = config.model.isMoe() ? std::max<std::int64_t>(1, x.t * x.cp * x.d / (x.etp * x.e)) : 1;
    x.stages = stageLayers(config);
    x.chunkCache.reserve(x.stages.size()); // never reallocated: addActivations keeps pointers into it
    x.denseLayer = layerParams(config.model, false, x.t, x.e, x.etp);
    x.moeLayer = config.model.isMoe() ? layerParams(config.model, true, x.t, x.e, x.etp) : x.denseLayer;
    x.emb = embeddingParams(config.model, config.training.seq_length, x.t, x.p);
    // The totals pass also says which tensor_policies rules matched, for validation below.
    std::uint64_t matched = 0, matchedMoe = 0;
    x.denseAct = layerActivationsMatched(config, false, matched);
    x.moeAct = config.model.isMoe() ? layerActivationsMatched(config, true, matchedMoe) : x.denseAct;
    x.stageAct = stageActivations(config);
    if (splitsBackward(par.schedule()))
        x.splitOps = splitOps ? *splitOps : scheduleAllOps(par, x.m, weightPassShare(config, x.denseAct, x.moeAct));

    Ledger ledger;
    ledger.total_parameters = totalParameters(config);
    ledger.gpus = par.gpus();
    ledger.micro_batches = x.m;
    ledger.capacity_bytes = config.hardware.hbm_bytes;
    ledger.usable_bytes = config.hardware.usableBytes();
    ledger.host_capacity_bytes = config.hardware.host_bytes;
    for (const Problem &pr : validateMatched(config, matched | matchedMoe))
        if (!pr.isError())
            ledger.warnings.push_back(pr);

    ledger.ranks.resize(static_cast<std::size_t>(x.p));
    const std::string reserveFormula = cat("hardware.runtime_reserve_bytes = ",
                                           formatGB(static_cast<double>(config.hardware.runtime_reserve_bytes)));
    for (std::int64_t r = 0; r < x.p; ++r) {
        RankLedger &rank = ledger.ranks[static_cast<std::size_t>(r)];
        rank.pipeline_rank = static_cast<int>(r);
        rank.entries.reserve(24); // a rank's rows (and balancing's), so that adding them never moves the ones before
        RankBuilder rb(rank);

        ParamCount layersDense, layersExpert, firstStage, lastStage;
        std::int64_t moeLayers = 0;
        for (std::int64_t k = 0; k < x.v; ++k) {
            const StageLayers &sl = x.stages[static_cast<std::size_t>(k * x.p + r)];
            for (std::int64_t i = 0; i < sl.count; ++i) {
                const bool moe = config.model.isMoeLayer(sl.first + i);
                moeLayers += moe;
                const LayerParams &lp = moe ? x.moeLayer : x.denseLayer;
                layersDense += lp.dense;
                layersExpert += lp.expert;
            }
        }
        rank.layers = rankLayers(x.stages, x.p, r);
        bool first = false, last = false;
        for (std::int64_t k = 0; k < x.v; ++k) {
            first |= isFirstStage(config.parallelism, r, k);
            last |= isLastStage(config.parallelism, r, k);
        }
        if (first) {
            firstStage += x.emb.word;
            firstStage += x.emb.position;
        }
        if (last) {
            lastStage += x.emb.output;
            lastStage += x.emb.finalNorm;
        }
        rank.parameters = layersDense.params + layersExpert.params + firstStage.params + lastStage.params;
        rank.largest_parameter_tensor
            = std::max({layersDense.largest, layersExpert.largest, firstStage.largest, lastStage.largest});

        const std::string_view dpName = x.cp > 1 ? "d·c" : "d";
        addModelStates(rb, rank, x, ParamGroup::Layers, "Transformer layers", layersDense, x.dp, dpName);
        addModelStates(rb, rank, x, ParamGroup::Experts, "Routed experts", layersExpert, x.edp,
                       "the expert-data-parallel group");
        addModelStates(rb, rank, x, ParamGroup::Embeddings, "Embeddings", firstStage, x.dp, dpName);
        addModelStates(rb, rank, x, ParamGroup::OutputLayer, "Output layer and final norm", lastStage, x.dp, dpName);
        for (const Fp8Row &row : fp8LedgerRows(config, rank.layers - moeLayers, moeLayers, x.dp, x.edp))
            rb.add(row.category, Placement::Device, row.label, row.bytes, row.formula, row.note);

        addOptimizerStepRows(rb, rank, x, r, layersDense, layersExpert);
        addActivations(rb, rank, x, r);
        ParamCount denseOnRank = layersDense;
        denseOnRank += firstStage;
        denseOnRank += lastStage;
        addCommunication(rb, rank, x, moeLayers, denseOnRank, layersExpert);

        rb.add(Category::Runtime, Placement::Device, "Runtime reserve", config.hardware.runtime_reserve_bytes,
               reserveFormula,
               "CUDA context, cuBLAS/NCCL workspaces and allocator slack (2 GB is a common budget on Hopper- and "
               "Ampere-class GPUs)");

        for (int i = 0; i < kCategoryCount; ++i) {
            rank.device_total_bytes += rank.device[i];
            rank.host_total_bytes += rank.host[i];
        }
        rank.fits = rank.device_total_bytes <= config.hardware.hbm_bytes;
        if (rank.device_total_bytes > ledger.peak_bytes) {
            ledger.peak_bytes = rank.device_total_bytes;
            ledger.peak_rank = rank.pipeline_rank;
        }
        // Host DRAM rows against host_bytes, NVMe rows against nvme_bytes:
        // an NVMe offload (ZeRO-Infinity) does not use the host's memory.
        Bytes dram = 0, nvme = 0;
        for (const LedgerEntry &e : rank.entries) {
            if (e.placement == Placement::Host)
                dram += e.bytes;
            else if (e.placement == Placement::NVMe)
                nvme += e.bytes;
        }
        const bool dramFits = hostFits(dram, config.hardware.host_bytes);
        const bool nvmeFits = hostFits(nvme, config.hardware.nvme_bytes);
        rank.host_fits = dramFits && nvmeFits;
        if (!dramFits)
            ledger.warnings.push_back({"hardware.host_bytes",
                                       "rank " + std::to_string(r) + " needs " + formatGB(static_cast<double>(dram))
                                           + " of host memory, more than the "
                                           + formatGB(static_cast<double>(config.hardware.host_bytes)) + " per GPU",
                                       "offload to NVMe or shard with ZeRO", Problem::Severity::Warning});
        if (!nvmeFits)
            ledger.warnings.push_back({"hardware.nvme_bytes",
                                       "rank " + std::to_string(r) + " needs " + formatGB(static_cast<double>(nvme))
                                           + " of NVMe, more than the "
                                           + formatGB(static_cast<double>(config.hardware.nvme_bytes)) + " per GPU",
                                       "shard with ZeRO over more GPUs", Problem::Severity::Warning});
    }

    // The choices in force, in words: every number explains itself (docs/accounting.md).
    const StrategyConfig &st = config.strategy;
    // Built with cat (one allocation each): these are rebuilt on every evaluation.
    ledger.choices.reserve(16);
    const std::string A = std::to_string(activationBytes(config));
    ledger.choices.push_back(
        st.dropout_mask_dtype == DropoutMaskDtype::Bool
            ? cat("Activations are ", A,
                  "-byte elements; dropout masks are 1-byte bool (dropout_mask_dtype = bool, as fused dropout kernels "
                  "save).")
            : cat("Activations are ", A, "-byte elements; dropout masks are ", A,
                  "-byte (dropout_mask_dtype = activation, as PyTorch's unfused dropout saves)."));
    ledger.choices.push_back(
        st.norm_stats_dtype == NormStatsDtype::None
            ? std::string("Norm statistics: not counted (norm_stats_dtype = none, as Korthikanti et al.'s formulas).")
            : cat("Norm statistics: ", st.norm_stats_dtype == NormStatsDtype::FP32 ? "fp32" : "activation-dtype",
                  config.model.normalization == Normalization::LayerNorm ? " mean and rstd" : " rstd",
                  " per token (norm_stats_dtype = ", normStatsName(st.norm_stats_dtype), ")."));
    ledger.choices.push_back(
        st.flash_attention
            ? std::string("Attention: FlashAttention; the s×s scores are never stored, only an fp32 log-sum-exp per "
                          "row.")
            : cat("Attention: unfused; softmax output",
                  config.model.attention_dropout > 0 ? ", dropout mask and dropout output" : "",
                  " are stored per head (the 5as²b term)."));
    if (par.sequence_parallel && x.t > 1)
        ledger.choices.push_back(
            st.sp_linear_saves == SpLinearSaves::Shard
                ? "Sequence parallel: linears save their sequence-sharded input and all-gather it again in backward "
                  "(sp_linear_saves = shard, as Megatron)."
                : "Sequence parallel: linears save their all-gathered input (sp_linear_saves = gathered).");
    ledger.choices.push_back(st.recompute_granularity == RecomputeGranularity::Full
                                 ? cat("Recompute: ", granularityName(st.recompute_granularity), " (",
                                       methodName(st.recompute_method), ", ",
                                       CountText(double(st.recompute_num_layers), "layer", "layers"), ").")
                                 : cat("Recompute: ", granularityName(st.recompute_granularity), "."));
    if (!st.tensor_policies.empty())
        ledger.choices.push_back(tensorPolicyChoice(config, x.denseAct));
    ledger.choices.push_back(cat("Pipeline: ", scheduleName(par.schedule()), " over ",
                                 CountText(double(x.p), "stage", "stages"), " with ", num(x.m),
                                 " micro-batches per iteration", scheduleNote(par.schedule())));
    if (!par.pipeline_layout.empty()) {
        std::string counts;
        for (std::size_t s = 0; s < par.pipeline_layout.size(); ++s)
            counts += (s ? "," : "") + num(par.pipeline_layout[s]);
        ledger.choices.push_back("Stages: layers per virtual stage from pipeline_layout [" + counts
                                 + "] (stage k·p + r is chunk k of rank r), not num_layers / (p·v).");
    }
    ledger.choices.push_back(cat("Gradients: ", x.sb.gradWhy, " per parameter; optimizer: ", x.sb.optWhy, "."));
    ledger.choices.push_back(
        st.grad_buffer == GradBuffer::Contiguous
            ? "Gradient memory: one contiguous buffer for the whole iteration (Megatron's DDP grad buffer)."
            : "Gradient memory: created layer by layer in the first backward and freed after the optimizer step "
              "(PyTorch's .grad with zero_grad(set_to_none=True)).");
    ledger.choices.push_back(
        st.cross_entropy == CrossEntropy::VocabParallel
            ? "Loss: Megatron's vocab-parallel cross entropy saves an fp32 softmax and turns it into the "
              "gradient in place."
            : "Loss: PyTorch's F.cross_entropy on fp32 logits saves the log-softmax; its backward holds two "
              "fp32 vocabulary-sized gradients at once.");
    if (config.training.optimizer == Optimizer::Adam || config.training.optimizer == Optimizer::AdamW)
        ledger.choices.push_back(
            st.optimizer_kernel == OptimizerKernel::Fused ? "Optimizer step: a fused Adam kernel (Apex or Transformer "
                                                            "Engine FusedAdam, torch fused=True) updates in place."
            : st.optimizer_kernel == OptimizerKernel::Foreach
                ? "Optimizer step: torch.optim's foreach Adam allocates sqrt(exp_avg_sq) for the whole shard at once."
                : "Optimizer step: torch.optim's single-tensor Adam allocates two temporaries of one parameter tensor "
                  "at a time.");
    if (const std::string fp8 = fp8Choice(config); !fp8.empty())
        ledger.choices.push_back(fp8);
    if (x.sb.muon)
        ledger.choices.push_back(
            "Optimizer: Muon on the layers' 2-D matrices (one momentum buffer each), AdamW on embeddings, output "
            "layer, norms and biases (Moonlight); Newton–Schulz runs "
            + std::to_string(kNewtonSchulzSteps)
            + " bf16 iterations per matrix, each gathered whole on demand under TP or ZeRO; every rank "
            + (config.training.muon_newton_schulz == MuonNewtonSchulz::Redundant
                   ? "computes all its matrices whole (muon_newton_schulz = redundant, as Moonlight's Distributed "
                     "Muon)."
                   : "iterates on 1/(d·c) of the matrices (muon_newton_schulz = layer_wise, as Megatron-LM's "
                     "LayerWiseDistributedOptimizer)."));
    if (st.grad_offload != OffloadTarget::None)
        ledger.choices.push_back(
            "Gradient offload: gradients stream to the host during backward through a device double buffer of two "
            "ddp_bucket_size buckets; the optimizer step runs on the CPU and the updated weights come back "
            "(ZeRO-Offload).");
    if (config.model.isMoe())
        ledger.choices.push_back(
            "MoE: expert activations assume balanced routing (top-" + num(config.model.moe_router_topk)
            + " copies per token); all-to-all buffers are sized for "
            + (st.moe_expert_capacity_factor > 0 ? "the capacity factor." : "the worst case (dropless)."));
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
