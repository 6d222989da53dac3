// SPDX-License-Identifier: MIT
#include "core/planner/enumerate.h"

#include "core/config/editrules.h"
#include "core/config/framework.h"
#include "core/model/activations.h"
#include "core/model/cpexchange.h"
#include "core/model/modelstates.h"
#include "core/model/parameters.h"
#include "core/model/runtimereserve.h"
#include "core/schedule/schedule.h"
#include "core/time/costmodel.h"
#include "core/time/steptime.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace memledger::plansearch {

std::vector<std::int64_t> unevenLayout(std::int64_t layers, std::int64_t p, std::int64_t v)
{
    // Where p·v divides layers + 2, the most even layout is this split (editrules.h): one rule for the
    // search and for the layout validation suggests.
    return balancedLayout(layers, p * v);
}

namespace {

// The layers of each virtual stage of the search's split: even, or with
// lighter edge chunks (unevenChunks).
std::vector<std::int64_t> searchLayout(std::int64_t layers, std::int64_t p, std::int64_t v)
{
    if (unevenChunks(layers, p, v))
        return unevenLayout(layers, p, v);
    return std::vector<std::int64_t>(static_cast<std::size_t>(p * v), layers / (p * v));
}

// The layers of the rank that holds the most, and of the last rank, in the
// search's split (chunk k of rank r is virtual stage k·p + r).
struct RankLayers
{
    std::int64_t most = 0, last = 0;
};

RankLayers rankLayers(std::int64_t layers, std::int64_t p, std::int64_t v)
{
    RankLayers out;
    for (std::int64_t r = 0; r < p; ++r) {
        std::int64_t n = 0;
        for (std::int64_t k = 0; k < v; ++k)
            n += stageLayers(layers, p * v, k * p + r);
        out.most = std::max(out.most, n);
        if (r == p - 1)
            out.last = n;
    }
    return out;
}

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
    Bytes cpExchange = 0; // context parallelism's K/V exchange (core/model/cpexchange.h)
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
    sh.cpExchange = contextParallelExchange(cfg, false).bytes;
    const StageActivations sa = stageActivations(cfg);
    for (const SavedTensor &s : sa.first)
        sh.firstStage += s.bytes;
    for (const SavedTensor &s : sa.last)
        sh.lastStage += s.bytes;
    sh.p2pNvlink = pipelineSendSeconds(cfg, true);
    sh.p2pNetwork = pipelineSendSeconds(cfg, false);
    return sh;
}

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
    std::array<std::vector<std::int64_t>, 2> chunkLayers; // layers of each of the rank's v chunks
    // Device model states per rank, ZeRO stage and optimizer placement (0: device, 1: CPU).
    std::array<std::array<std::array<Bytes, 2>, 4>, 2> states{};
};

EdgeRanks edgeRanks(const Config &base, const StateBytes &sb, const LayerParams &lpDense, const LayerParams &lpMoe,
                    const EmbeddingParams &emb, std::int64_t p, std::int64_t v, std::int64_t dp, std::int64_t edp)
{
    const ModelConfig &model = base.model;
    const std::vector<std::int64_t> layout = searchLayout(model.num_layers, p, v);
    EdgeRanks out;
    out.ids = {0, p - 1};
    for (int w = 0; w < 2; ++w) {
        RankParams &rp = out.params[w];
        out.chunkLayers[w].assign(static_cast<std::size_t>(v), 0);
        for (std::int64_t k = 0; k < v; ++k) {
            const std::size_t stage = static_cast<std::size_t>(k * p + out.ids[w]);
            std::int64_t first = 0; // the index of the chunk's first layer
            for (std::size_t j = 0; j < stage; ++j)
                first += layout[j];
            out.chunkLayers[w][static_cast<std::size_t>(k)] = layout[stage];
            for (std::int64_t i = 0; i < layout[stage]; ++i) {
                const bool moe = model.isMoeLayer(first + i);
                rp.moeLayers += moe;
                rp.dense += (moe ? lpMoe : lpDense).dense;
                rp.expert += (moe ? lpMoe : lpDense).expert;
            }
            rp.layers += layout[stage];
        }
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
                comm += 2 * (lp.dense.params + lp.expert.params) * sb.compute;
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
    std::array<std::int64_t, 2> layerGroups{}; // the same, each chunk's count times its layers
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
        for (std::int64_t k = 0; k < x.v; ++k) {
            const std::int64_t n = inFlightOfChunk(par, m, edge.ids[w], k);
            out.groups[w] += n;
            out.layerGroups[w] += n * edge.chunkLayers[w][static_cast<std::size_t>(k)];
        }
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
    const LayerCost &layer = sh.layer[g];
    const double perLayer = layer.forward.seconds + layer.backward.seconds + layer.recompute.seconds;
    const double output = sh.outForward.seconds + sh.outBackward.seconds;
    // The busiest rank, as estimateStepTime finds it: under an uneven split
    // the last rank may hold fewer layers than another, so it is the busiest
    // only where the output layer and the loss outweigh the difference
    // (Llama 3 405B's 7-layer last stage is lighter than the others' 8).
    const RankLayers ranks = rankLayers(f.L, x.p, x.v);
    const bool busiestHasOutput = output > double(ranks.most - ranks.last) * perLayer;
    const double layersOnRank = double(busiestHasOutput ? ranks.last : ranks.most);
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
        .outputForward = busiestHasOutput ? sh.outForward : OpCost{},
        .outputBackward = busiestHasOutput ? sh.outBackward : OpCost{},
        .p2pSeconds = std::int64_t(x.t) * x.c * x.d < f.G ? sh.p2pNvlink : sh.p2pNetwork,
        // Megatron-LM's overlap_p2p_comm applies to the interleaved schedule only.
        .overlapP2p = base.strategy.overlap_p2p_comm && x.v > 1 && x.p > 1,
        // As estimateStepTime: the bubble is made of an average rank's micro-batch (L / p layers).
        .bubbleStageSeconds = double(f.L) / double(x.p) * perLayer + output / double(x.p),
        .paramsOnRank = paramsLast,
        .gradBytes = double(sb.grad),
        .weightBytes = double(sb.weight),
        .optimizerBytesPerParam = sb.optimizerPerParam(),
        .gatherBytes = f.gatherBytes,
        .overlapGradReduce = base.strategy.overlap_grad_reduce,
        .overlapParamGather = base.strategy.overlap_param_gather,
        .bucketParams = double(base.strategy.ddp_bucket_size),
        .offloadBytes = double(sh.storedDense[g]) * layersOnRank,
    };
}

// Every recompute, ZeRO and offload choice of one split and micro-batch:
// each candidate's bound, its step time when within the limit, kept and
// folded into the ZeRO, recompute and offload slots and into `here`.
void boundCandidates(Enumeration &en, Slot &here, const Facts &f, const Config &base, const StateBytes &sb,
                     const Shape &sh, const EdgeRanks &edge, const InFlight &inFlight, Candidate x, std::int64_t m,
                     Bytes limit)
{
    const std::int64_t buffers = base.strategy.activation_offload_buffers;
    const double paramsLast
        = double(edge.params[1].dense.params + edge.params[1].expert.params + edge.params[1].stage.params);
    Slot *zeroSlots = en[SearchDimension::ZeroStage].slots.data();
    Slot *recomputeSlots = en[SearchDimension::Recompute].slots.data();
    Slot *offloadSlots = en[SearchDimension::Offload].slots.data();
    // The runtime reserve of each edge rank, as the ledger counts it for this split (its NCCL communicators).
    ReserveDegrees deg = reserveDegreesOf(base);
    deg.t = x.t;
    deg.p = x.p;
    deg.v = x.v;
    deg.d = x.d;
    deg.c = x.c;
    deg.e = x.e;
    deg.etp = base.parallelism.expert_tensor_parallel_size > 0 ? base.parallelism.expert_tensor_parallel_size : x.t;
    const std::array<Bytes, 2> reserve
        = {runtimeReserveBytes(base.hardware, deg, edge.ids[0]), runtimeReserveBytes(base.hardware, deg, edge.ids[1])};
    for (int g = 0; g < kRecomputeChoices; ++g) {
        const std::size_t gi = static_cast<std::size_t>(g);
        std::array<Bytes, 2> acts{}, layerActs{};
        for (int w = 0; w < 2; ++w) {
            // Chunks may mix layer kinds: the smaller kind bounds every layer.
            const RankParams &rp = edge.params[w];
            const Bytes perLayer = rp.moeLayers == 0           ? sh.storedDense[gi]
                                   : rp.moeLayers == rp.layers ? sh.storedMoe[gi]
                                                               : std::min(sh.storedDense[gi], sh.storedMoe[gi]);
            layerActs[w] = perLayer * inFlight.layerGroups[w];
            acts[w] = (g == 2 ? sh.workingSet : 0) + reserve[static_cast<std::size_t>(w)]
                      + (edge.params[w].layers > 0 ? sh.cpExchange : 0);
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
                // ZeRO-3 under torchtitan or Hugging Face is FSDP per block (core/config/framework.h).
                in.fsdpPerBlock = z >= 3 && fsdpFramework(base.strategy.framework);
                if (in.fsdpPerBlock) {
                    const bool reshard = base.strategy.fsdp_reshard_after_forward.value_or(
                        !(base.strategy.framework == Framework::Torchtitan && x.p > 1));
                    in.fsdpGathersPerMicroBatch = x.p > 1 ? 1.0 / double(m) : reshard ? 2.0 : 1.0;
                    const RankParams &last = edge.params[1];
                    in.fsdpBlockParams = double(last.dense.params + last.expert.params)
                                         / double(std::max<std::int64_t>(1, last.layers));
                }
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

// The split the enumeration's loops have chosen so far, from the outside in.
struct Split
{
    std::int64_t t = 0, c = 0, p = 0, d = 0, e = 0, v = 0;
    std::int64_t etp = 0, edp = 1;
    LayerParams lpDense, lpMoe;
    EmbeddingParams emb;
};

// The loops from the outside in, one function per level or two: each tries a
// dimension's values, refuses those that break a rule (marking the rule on the
// values of every enclosing loop too) and hands the rest inwards.
class Enumerator
{
public:
    Enumerator(const Config &base, const SearchOptions &opt, const Facts &f, Bytes limit)
        : m_base(base)
        , m_model(base.model)
        , m_f(f)
        , m_limit(limit)
        , m_sb(stateBytes(base.training))
    {
        for (std::int64_t l = 0; l < f.L && m_firstMoe < 0; ++l)
            if (m_model.isMoeLayer(l))
                m_firstMoe = l;
        setDomains(m_en, f, m_model, opt);
    }

    Enumeration run()
    {
        const std::vector<std::int64_t> &tValues = m_en[SearchDimension::T].values;
        for (std::size_t ti = 0; ti < tValues.size(); ++ti) {
            Split s;
            s.t = tValues[ti];
            select(SearchDimension::T, ti);
            s.etp = m_f.etp > 0 ? m_f.etp : s.t;
            if (const std::uint32_t tWhy = tensorRules(m_f, m_model, s.t, s.etp)) {
                refuse(1, tWhy);
                continue;
            }
            s.lpDense = layerParams(m_model, false, s.t, 1, s.etp);
            splitContextAndPipeline(s);
        }
        return std::move(m_en);
    }

private:
    // The index of each loop's current value.
    void select(SearchDimension d, std::size_t index) { m_at[dimIndex(d)] = index; }
    // A refused value marks the rule on every enclosing loop's value too.
    void refuse(std::size_t depth, std::uint32_t why)
    {
        for (std::size_t k = 0; k < depth; ++k)
            m_en[kLoops[k]].slots[m_at[dimIndex(kLoops[k])]].why |= why;
    }
    const Shape &shapeFor(std::int64_t t, std::int64_t c, bool sp, std::int64_t mbs)
    {
        auto key = std::make_tuple(t, c, sp, mbs);
        auto it = m_shapes.find(key);
        if (it == m_shapes.end())
            it = m_shapes.emplace(key, shapeOf(m_base, t, c, sp, mbs, m_firstMoe, m_f.G)).first;
        return it->second;
    }

    // c, then p (which leaves d = N / (t·c·p)).
    void splitContextAndPipeline(Split s)
    {
        const std::int64_t N = m_f.N;
        const std::vector<std::int64_t> &cValues = m_en[SearchDimension::C].values;
        for (std::size_t ci = 0; ci < cValues.size(); ++ci) {
            s.c = cValues[ci];
            select(SearchDimension::C, ci);
            // t × c may leave the NVLink node: Llama 3 405B's long-context plan runs CP 16 across 16 nodes
            // beside TP 8 (Grattafiori et al. 2024, Table 4 and §3.3.2: [TP, CP, PP, DP] from the inside out),
            // its K/V exchange timed on the network by the cost model (costmodel.cpp, nvlinkCp).
            const std::uint32_t cWhy = ((N / s.t) % s.c ? kCGpus : 0) | (s.c > 1 && m_f.s % (2 * s.c) ? kCSeq : 0);
            if (cWhy) {
                refuse(2, cWhy);
                continue;
            }
            const std::vector<std::int64_t> &pValues = m_en[SearchDimension::P].values;
            for (std::size_t pi = 0; pi < pValues.size(); ++pi) {
                s.p = pValues[pi];
                select(SearchDimension::P, pi);
                if ((N / (s.t * s.c)) % s.p) {
                    refuse(3, kPGpus);
                    continue;
                }
                s.d = N / (s.t * s.c * s.p);
                select(SearchDimension::D, m_en[SearchDimension::D].indexOf(s.d));
                // p runs up to the layer count (setDomains): every rank holds a layer.
                s.emb = embeddingParams(m_model, m_f.s, s.t, s.p);
                splitExpertsAndChunks(s);
            }
        }
    }

    // e, then v, then sequence parallelism.
    void splitExpertsAndChunks(Split s)
    {
        const std::int64_t tcd = s.t * s.c * s.d;
        const std::vector<std::int64_t> &eValues = m_en[SearchDimension::E].values;
        for (std::size_t ei = 0; ei < eValues.size(); ++ei) {
            s.e = eValues[ei];
            select(SearchDimension::E, ei);
            if (m_model.isMoe() && (s.e > tcd || tcd % (s.etp * s.e))) {
                refuse(5, kEGroup);
                continue;
            }
            s.lpMoe = m_model.isMoe() ? layerParams(m_model, true, s.t, s.e, s.etp) : s.lpDense;
            s.edp = m_model.isMoe() ? std::max<std::int64_t>(1, tcd / (s.etp * s.e)) : 1;
            const std::vector<std::int64_t> &vValues = m_en[SearchDimension::V].values;
            for (std::size_t vi = 0; vi < vValues.size(); ++vi) {
                s.v = vValues[vi];
                select(SearchDimension::V, vi);
                if (s.v > 1 && s.p == 1) {
                    refuse(6, kVNeedsP);
                    continue;
                }
                if (!splitsLayers(m_f.L, s.p, s.v)) {
                    refuse(6, kVLayers);
                    continue;
                }
                const EdgeRanks edge = edgeRanks(m_base, m_sb, s.lpDense, s.lpMoe, s.emb, s.p, s.v, s.d * s.c, s.edp);
                for (int spi = 0; spi < (s.t > 1 ? 2 : 1); ++spi) {
                    const bool sp = spi == 1;
                    if ((sp && (m_f.s / s.c) % s.t) || (m_model.isMoe() && s.t > 1 && !sp)) {
                        refuse(6, kSpRule);
                        continue;
                    }
                    boundMicroBatches(s, edge, sp);
                }
            }
        }
    }

    // The micro-batch sizes of one split: each one's candidates bounded, and
    // their least bound and fastest plan folded into every loop's slot.
    void boundMicroBatches(const Split &s, const EdgeRanks &edge, bool sp)
    {
        if (std::find(m_en.batchSplits.begin(), m_en.batchSplits.end(), s.d) == m_en.batchSplits.end())
            m_en.batchSplits.push_back(s.d);
        const std::vector<std::int64_t> &mbsValues = m_en[SearchDimension::MicroBatch].values;
        for (std::size_t bi = 0; bi < mbsValues.size(); ++bi) {
            const std::int64_t mbs = mbsValues[bi];
            select(SearchDimension::MicroBatch, bi);
            if (m_f.GB % (mbs * s.d)) {
                refuse(7, kBatch);
                continue;
            }
            const std::int64_t m = m_f.GB / (mbs * s.d);
            if (s.v > 1 && m % s.p) {
                refuse(7, kInterleaveBatch);
                continue;
            }
            Candidate x{};
            x.t = int(s.t), x.p = int(s.p), x.v = int(s.v), x.d = int(s.d), x.c = int(s.c), x.e = int(s.e);
            x.mbs = int(mbs);
            x.sp = std::uint8_t(sp);
            // This loop's least bound and fastest plan, folded into the
            // outer dimensions' slots.
            Slot here;
            boundCandidates(m_en, here, m_f, m_base, m_sb, shapeFor(s.t, s.c, sp, mbs), edge, inFlightOf(x, m, edge), x,
                            m, m_limit);
            for (const SearchDimension dim : kLoops)
                m_en[dim].slots[m_at[dimIndex(dim)]].fold(here.least, here.fastest);
            // The enumeration's own schedules, on pipelined plans: 1F1B, or
            // interleaved when v > 1 (p = 1 runs no pipeline schedule).
            if (const std::int64_t k = valueOf(x, SearchDimension::Schedule); k >= 0)
                m_en[SearchDimension::Schedule].slots[static_cast<std::size_t>(k)].fold(here.least, here.fastest);
        }
    }

    const Config &m_base;
    const ModelConfig &m_model;
    const Facts &m_f;
    Bytes m_limit;
    StateBytes m_sb;
    std::int64_t m_firstMoe = -1; // the first MoE layer, -1 for a dense model
    std::map<std::tuple<std::int64_t, std::int64_t, bool, std::int64_t>, Shape> m_shapes; // by (t, c, sp, mbs)
    Enumeration m_en;
    std::array<std::size_t, kDims> m_at{};
};

} // namespace

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

Enumeration enumerateCandidates(const Config &base, const SearchOptions &opt, const Facts &f, Bytes limit)
{
    return Enumerator(base, opt, f, limit).run();
}

} // namespace memledger::plansearch
