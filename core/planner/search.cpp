// SPDX-License-Identifier: MIT
#include "core/planner/search.h"

#include "core/planner/tensorplan.h"

#include "core/activations.h"
#include "core/costmodel.h"
#include "core/modelstates.h"
#include "core/parameters.h"
#include "core/schedule.h"
#include "core/validate.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
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
constexpr std::array<RecomputeGranularity, kRecomputeChoices> kGranularities = {
    RecomputeGranularity::None, RecomputeGranularity::Selective, RecomputeGranularity::Full};

std::vector<std::int64_t> divisorsOf(std::int64_t n, std::int64_t cap)
{
    std::vector<std::int64_t> out;
    for (std::int64_t k = 1; k <= n && k <= cap; ++k)
        if (n % k == 0)
            out.push_back(k);
    return out;
}

double ring(double participants, double bytes, double bandwidth)
{
    return participants > 1 ? 2.0 * (participants - 1) / participants * bytes / bandwidth : 0.0;
}

// Everything that depends on (t, c, sequence parallelism, micro-batch) only:
// per-layer saved bytes and roofline times, computed once through the same
// functions the ledger and the cost model use.
struct Shape {
    std::array<Bytes, kRecomputeChoices> storedDense{}, storedMoe{};
    Bytes workingSet = 0;     // full recompute: one layer rebuilt (the smaller layer kind)
    Bytes firstStage = 0;     // embedding activations per micro-batch
    Bytes lastStage = 0;      // output layer and loss per micro-batch
    double forward = 0, backward = 0;                 // per layer, averaged over layer kinds
    std::array<double, kRecomputeChoices> recompute{}; // per layer
    double outForward = 0, outBackward = 0;
    double tpBytes = 0;   // one tensor-parallel collective's buffer
    double kvBytes = 0;   // one layer's K and V on this rank (context parallel all-gather)
    double p2pBytes = 0;  // one activation between stages
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

Shape shapeOf(const Config &base, std::int64_t t, std::int64_t c, bool sp, std::int64_t mbs, std::int64_t firstMoeLayer)
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
        cfg.strategy.recompute_method = RecomputeMethod::Uniform;
        cfg.strategy.recompute_num_layers = 1;
        // A layer index of each kind, so chunkActivations sees that kind.
        std::int64_t denseLayer = 0;
        while (denseLayer < cfg.model.num_layers && cfg.model.isMoeLayer(denseLayer))
            ++denseLayer;
        sh.storedDense[g] = chunkActivations(cfg, dense, moe, denseLayer, 1).stored;
        sh.storedMoe[g] = firstMoeLayer >= 0 ? chunkActivations(cfg, dense, moe, firstMoeLayer, 1).stored : sh.storedDense[g];
        const CostModel cm = costModel(cfg);
        sh.recompute[g] = (1 - moeShare) * cm.dense.recompute.seconds + moeShare * cm.moe.recompute.seconds;
        if (g == 0) {
            sh.forward = (1 - moeShare) * cm.dense.forward.seconds + moeShare * cm.moe.forward.seconds;
            sh.backward = (1 - moeShare) * cm.dense.backward.seconds + moeShare * cm.moe.backward.seconds;
            sh.outForward = cm.outputForward.seconds;
            sh.outBackward = cm.outputBackward.seconds;
        }
    }
    sh.workingSet = std::min(dense.total, moe.total);
    const StageActivations sa = stageActivations(cfg);
    for (const SavedTensor &s : sa.first)
        sh.firstStage += s.bytes;
    for (const SavedTensor &s : sa.last)
        sh.lastStage += s.bytes;
    const double A = activationBytes(cfg);
    const double tokens = double(cfg.training.seq_length) / double(c) * double(mbs);
    const double h = double(cfg.model.hidden_size);
    sh.tpBytes = A * tokens * h;
    sh.p2pBytes = A * tokens * h / (sp && t > 1 ? double(t) : 1.0);
    const double kvDim = cfg.model.multi_latent_attention
        ? double(cfg.model.kv_lora_rank + cfg.model.qk_pos_emb_head_dim)
        : double(cfg.model.queryGroups() * cfg.model.headDim()) * 2.0 / double(t);
    sh.kvBytes = A * tokens * kvDim;
    return sh;
}

// One enumerated plan, compact: the search keeps those passing the bound.
struct Candidate {
    double time = 0;
    Bytes bound = 0;
    std::int32_t t, p, v, d, c, e, mbs;
    std::int8_t zero, recompute, offload, sp; // offload: bit 0 optimizer (CPU-Adam), bit 1 activations
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
    cfg.training.micro_batch_size = x.mbs;
    cfg.training.global_batch_size = globalBatch;
    cfg.strategy.recompute_granularity = kGranularities[static_cast<std::size_t>(x.recompute)];
    cfg.strategy.recompute_method = RecomputeMethod::Uniform;
    cfg.strategy.recompute_num_layers = 1;
    cfg.strategy.optimizer_offload = (x.offload & 1) ? OffloadTarget::CPU : OffloadTarget::None;
    cfg.strategy.param_offload = OffloadTarget::None;
    cfg.strategy.activation_offload = (x.offload & 2) ? OffloadTarget::CPU : OffloadTarget::None;
    cfg.name = base.name + " t" + std::to_string(x.t) + " p" + std::to_string(x.p) + (x.v > 1 ? " v" + std::to_string(x.v) : "")
        + " d" + std::to_string(x.d) + (x.c > 1 ? " c" + std::to_string(x.c) : "") + (x.e > 1 ? " e" + std::to_string(x.e) : "")
        + " b" + std::to_string(x.mbs) + " zero" + std::to_string(x.zero) + " " + std::string(granularityName(cfg.strategy.recompute_granularity))
        + ((x.offload & 1) ? " cpu-adam" : "") + ((x.offload & 2) ? " act-offload" : "");
    return cfg;
}

struct StepInputs {
    double layersOnRank, microBatches, p, v, t, c, dp, gpusPerNode;
    double forward, backward, recompute, outForward, outBackward;
    double tpBytes, kvBytes, p2pBytes;
    double paramsOnRank;   // before ZeRO: what the data-parallel group reduces
    double gradBytes, weightBytes, optimizerBytesPerParam;
    bool full, zero3, offload, sharded;
    bool activationOffload = false;
    double offloadBytes = 0; // saved activations of one micro-batch on the rank
};

StepTime stepTime(const StepInputs &in, const HardwareConfig &hw)
{
    StepTime st;
    const double Lr = in.layersOnRank, m = in.microBatches;
    const double nvlink = hw.nvlink_bytes_per_s;
    const double tp = Lr * (in.full ? 6.0 : 4.0) * ring(in.t, in.tpBytes, nvlink);
    const double cpBw = in.t * in.c <= in.gpusPerNode ? nvlink : hw.network_bytes_per_s;
    const double cp = in.c > 1 ? Lr * 2.0 * (in.c - 1) * in.kvBytes / cpBw : 0.0;
    const double work = Lr * (in.forward + in.backward) + in.outForward + in.outBackward;
    const double rec = Lr * in.recompute;
    st.compute = m * work;
    st.recompute = m * rec;
    st.tensorComm = m * tp;
    st.contextComm = m * cp;
    st.bubble = (in.p - 1) / in.v * (work + rec + tp + cp);
    if (in.p > 1) {
        const double bw = in.t * in.dp < in.gpusPerNode ? nvlink : hw.network_bytes_per_s;
        st.pipelineComm = 2.0 * in.v * m * in.p2pBytes / bw;
    }
    if (in.dp > 1) {
        const double bw = in.t * in.dp <= in.gpusPerNode ? nvlink : hw.network_bytes_per_s;
        const double full = ring(in.dp, in.paramsOnRank * in.gradBytes, bw) * (in.zero3 ? 1.5 : 1.0);
        st.dataComm = std::max(0.0, full - Lr * in.backward); // hidden under the last micro-batch's backward
    }
    const double shard = in.paramsOnRank / (in.sharded ? in.dp : 1.0);
    if (in.offload)
        st.optimizer = shard * (in.gradBytes + in.weightBytes) / hw.host_link_bytes_per_s + shard * kCpuAdamSecondsPerParam;
    else
        st.optimizer = shard * (2.0 * in.optimizerBytesPerParam + in.gradBytes + in.weightBytes) / hw.hbm_bytes_per_s;
    if (in.activationOffload)
        st.activationOffload = m * offloadStall(in.offloadBytes, hw.host_link_bytes_per_s, Lr * in.forward, Lr * in.backward);
    st.total = st.compute + st.recompute + st.tensorComm + st.contextComm + st.bubble + st.pipelineComm + st.dataComm
        + st.optimizer + st.activationOffload;
    return st;
}

// Dense parameters of the last rank (which also holds the output layer), the
// group the data-parallel reduction and the optimizer step cover.
double paramsOnLastRank(const Config &c)
{
    const ParallelismConfig &par = c.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size, p = par.pipeline_model_parallel_size;
    const std::int64_t v = par.virtual_pipeline_model_parallel_size;
    const LayerParams dense = layerParams(c.model, false, t, par.expert_model_parallel_size, par.expertTensorParallel());
    const LayerParams moe = c.model.isMoe() ? layerParams(c.model, true, t, par.expert_model_parallel_size, par.expertTensorParallel()) : dense;
    double params = 0;
    const std::int64_t Lc = c.model.num_layers / (p * v);
    for (std::int64_t k = 0; k < v; ++k)
        for (std::int64_t i = 0; i < Lc; ++i) {
            const LayerParams &lp = c.model.isMoeLayer((k * p + p - 1) * Lc + i) ? moe : dense;
            params += double(lp.dense.params + lp.expert.params);
        }
    const EmbeddingParams emb = embeddingParams(c.model, c.training.seq_length, t, p);
    params += double(emb.output.params + emb.finalNorm.params);
    if (p == 1)
        params += double(emb.word.params + emb.position.params);
    return params;
}

} // namespace

StepTime estimateStepTime(const Config &c, std::int64_t gpusPerNode)
{
    const ParallelismConfig &par = c.parallelism;
    std::int64_t firstMoe = -1;
    for (std::int64_t l = 0; l < c.model.num_layers && firstMoe < 0; ++l)
        if (c.model.isMoeLayer(l))
            firstMoe = l;
    const Shape sh = shapeOf(c, par.tensor_model_parallel_size, par.context_parallel_size, par.sequence_parallel,
                             c.training.micro_batch_size, firstMoe);
    const StateBytes sb = stateBytes(c.training);
    const int g = static_cast<int>(c.strategy.recompute_granularity);
    StepInputs in{double(c.model.num_layers / par.pipeline_model_parallel_size), double(c.microBatches()),
                  double(par.pipeline_model_parallel_size), double(par.virtual_pipeline_model_parallel_size),
                  double(par.tensor_model_parallel_size), double(par.context_parallel_size),
                  double(par.data_parallel_size * par.context_parallel_size), double(gpusPerNode),
                  sh.forward, sh.backward, sh.recompute[static_cast<std::size_t>(g)], sh.outForward, sh.outBackward,
                  sh.tpBytes, sh.kvBytes, sh.p2pBytes, paramsOnLastRank(c), double(sb.grad), double(sb.weight),
                  sb.optimizerPerParam(), c.strategy.recompute_granularity == RecomputeGranularity::Full,
                  par.zero_stage >= 3, c.strategy.optimizer_offload != OffloadTarget::None, par.zero_stage >= 1};
    in.activationOffload = c.strategy.activation_offload != OffloadTarget::None;
    in.offloadBytes = double(sh.storedDense[static_cast<std::size_t>(g)]) * in.layersOnRank;
    return stepTime(in, c.hardware);
}

SearchResult searchPlans(const Config &baseIn, const SearchOptions &opt)
{
    const auto started = std::chrono::steady_clock::now();
    SearchResult res;
    const Config &base = baseIn;
    const ModelConfig &model = base.model;
    const std::int64_t N = opt.gpus, L = model.num_layers, s = base.training.seq_length;
    const std::int64_t GB = base.globalBatch();
    const std::int64_t heads = model.num_attention_heads, groups = model.queryGroups();
    const StateBytes sb = stateBytes(base.training);
    const Bytes limit = static_cast<Bytes>(std::floor(opt.margin * double(base.hardware.hbm_bytes)));
    res.limitBytes = limit;
    std::int64_t firstMoe = -1;
    for (std::int64_t l = 0; l < L && firstMoe < 0; ++l)
        if (model.isMoeLayer(l))
            firstMoe = l;

    std::map<std::tuple<std::int64_t, std::int64_t, bool, std::int64_t>, Shape> shapes;
    auto shapeFor = [&](std::int64_t t, std::int64_t c, bool sp, std::int64_t mbs) -> const Shape & {
        auto key = std::make_tuple(t, c, sp, mbs);
        auto it = shapes.find(key);
        if (it == shapes.end())
            it = shapes.emplace(key, shapeOf(base, t, c, sp, mbs, firstMoe)).first;
        return it->second;
    };

    std::vector<Candidate> kept;
    ParallelismConfig par;
    const std::int64_t buffers = base.strategy.activation_offload_buffers;
    for (std::int64_t t : divisorsOf(N, opt.gpusPerNode)) {
        if (heads % t || groups % t || model.ffn() % t
            || (model.moe_shared_expert_intermediate_size > 0 && model.moe_shared_expert_intermediate_size % t))
            continue;
        const std::int64_t etp = base.parallelism.expert_tensor_parallel_size > 0 ? base.parallelism.expert_tensor_parallel_size : t;
        if (model.isMoe() && model.moeFfn() % etp)
            continue;
        const LayerParams lpDense = layerParams(model, false, t, 1, etp);
        for (std::int64_t c : divisorsOf(N / t, opt.gpusPerNode / t > 0 ? opt.gpusPerNode / t : 1)) {
            if (c > 1 && s % (2 * c))
                continue;
            for (std::int64_t p : divisorsOf(N / (t * c), L)) {
                if (L % p)
                    continue;
                const std::int64_t d = N / (t * c * p);
                const std::int64_t dp = d * c;
                const EmbeddingParams emb = embeddingParams(model, s, t, p);
                for (std::int64_t e : model.isMoe() ? divisorsOf(model.num_experts, t * c * d) : std::vector<std::int64_t>{1}) {
                    if (model.isMoe() && (t * c * d) % (etp * e))
                        continue;
                    const LayerParams lpMoe = model.isMoe() ? layerParams(model, true, t, e, etp) : lpDense;
                    const std::int64_t edp = model.isMoe() ? std::max<std::int64_t>(1, t * c * d / (etp * e)) : 1;
                    for (std::int64_t v = 1; v <= (p > 1 ? opt.maxVirtual : 1); ++v) {
                        if (L % (p * v))
                            continue;
                        const std::int64_t Lc = L / (p * v);
                        // Parameters and layer kinds of the first and last rank.
                        struct RankParams {
                            ParamCount dense, expert, stage;
                            std::int64_t moeLayers = 0, layers = 0;
                        };
                        std::array<RankParams, 2> rp;
                        const std::array<std::int64_t, 2> rankIds = {0, p - 1};
                        for (int w = 0; w < 2; ++w) {
                            for (std::int64_t k = 0; k < v; ++k)
                                for (std::int64_t i = 0; i < Lc; ++i) {
                                    const bool moe = model.isMoeLayer((k * p + rankIds[w]) * Lc + i);
                                    rp[w].moeLayers += moe;
                                    rp[w].dense += (moe ? lpMoe : lpDense).dense;
                                    rp[w].expert += (moe ? lpMoe : lpDense).expert;
                                }
                            rp[w].layers = Lc * v;
                            if (rankIds[w] == 0) {
                                rp[w].stage += emb.word;
                                rp[w].stage += emb.position;
                            }
                            if (rankIds[w] == p - 1) {
                                rp[w].stage += emb.output;
                                rp[w].stage += emb.finalNorm;
                            }
                        }
                        // Device model states per rank for each ZeRO stage and optimizer placement.
                        std::array<std::array<std::array<Bytes, 2>, 4>, 2> states{};
                        for (int w = 0; w < 2; ++w)
                            for (int z = 0; z < 4; ++z) {
                                const ModelStates a = modelStates(sb, rp[w].dense.params, rp[w].dense.factoredState, z, dp);
                                const ModelStates b = modelStates(sb, rp[w].expert.params, rp[w].expert.factoredState, z, edp);
                                const ModelStates cst = modelStates(sb, rp[w].stage.params, rp[w].stage.factoredState, z, dp);
                                Bytes comm = 0;
                                const std::int64_t onRank = rp[w].dense.params + rp[w].expert.params + rp[w].stage.params;
                                if (dp > 1 || edp > 1)
                                    comm += std::min<std::int64_t>(base.strategy.ddp_bucket_size, onRank) * sb.grad;
                                if (z >= 3 && rp[w].layers > 0) {
                                    const LayerParams &lp = rp[w].moeLayers > 0 ? lpMoe : lpDense;
                                    comm += 2 * (lp.dense.params + lp.expert.params) * sb.weight;
                                }
                                const Bytes wg = a.weights + a.gradients + b.weights + b.gradients + cst.weights + cst.gradients;
                                const Bytes o = a.optimizer + b.optimizer + cst.optimizer;
                                states[w][z][0] = wg + o + comm;
                                states[w][z][1] = wg + comm;
                            }
                        const double paramsLast = double(rp[1].dense.params + rp[1].expert.params + rp[1].stage.params);
                        for (int spi = 0; spi < (t > 1 ? 2 : 1); ++spi) {
                            const bool sp = spi == 1;
                            if (sp && (s / c) % t)
                                continue;
                            if (model.isMoe() && t > 1 && !sp)
                                continue;
                            for (std::int64_t mbs = 1; mbs <= opt.maxMicroBatch; mbs *= 2) {
                                if (GB % (mbs * d))
                                    continue;
                                const std::int64_t m = GB / (mbs * d);
                                if (v > 1 && m % p)
                                    continue;
                                const Shape &sh = shapeFor(t, c, sp, mbs);
                                par.tensor_model_parallel_size = t;
                                par.pipeline_model_parallel_size = p;
                                par.virtual_pipeline_model_parallel_size = v;
                                par.data_parallel_size = d;
                                par.context_parallel_size = c;
                                par.pipeline_schedule.reset();
                                std::array<std::int64_t, 2> inFlight{}, inFlightFirst{}, inFlightLast{};
                                for (int w = 0; w < 2; ++w)
                                    for (std::int64_t k = 0; k < v; ++k)
                                        inFlight[w] += inFlightOfChunk(par, m, rankIds[w], k);
                                inFlightFirst[0] = inFlightOfChunk(par, m, 0, 0);
                                inFlightLast[1] = inFlightOfChunk(par, m, p - 1, v - 1);
                                for (int g = 0; g < kRecomputeChoices; ++g) {
                                    std::array<Bytes, 2> acts{}, layerActs{};
                                    for (int w = 0; w < 2; ++w) {
                                        // Chunks may mix layer kinds: the smaller kind bounds every layer.
                                        const std::size_t gi = static_cast<std::size_t>(g);
                                        const Bytes perLayer = rp[w].moeLayers == 0 ? sh.storedDense[gi]
                                            : rp[w].moeLayers == rp[w].layers       ? sh.storedMoe[gi]
                                                                                    : std::min(sh.storedDense[gi], sh.storedMoe[gi]);
                                        layerActs[w] = perLayer * Lc * inFlight[w];
                                        acts[w] = (g == 2 ? sh.workingSet : 0) + base.hardware.runtime_reserve_bytes;
                                        if (rankIds[w] == 0)
                                            acts[w] += sh.firstStage * inFlightFirst[0];
                                        if (rankIds[w] == p - 1)
                                            acts[w] += sh.lastStage * inFlightLast[1];
                                    }
                                    StepInputs in{double(L / p), double(m), double(p), double(v), double(t), double(c),
                                                  double(dp), double(opt.gpusPerNode), sh.forward, sh.backward,
                                                  sh.recompute[static_cast<std::size_t>(g)], sh.outForward, sh.outBackward,
                                                  sh.tpBytes, sh.kvBytes, sh.p2pBytes, paramsLast, double(sb.grad),
                                                  double(sb.weight), sb.optimizerPerParam(), g == 2, false, false, false};
                                    in.offloadBytes = double(sh.storedDense[static_cast<std::size_t>(g)]) * double(L / p);
                                    // Activation offload keeps the group computing and one per staging buffer (as the ledger).
                                    std::array<Bytes, 2> offloadedActs{};
                                    for (int w = 0; w < 2; ++w) {
                                        const std::int64_t onDevice = std::min<std::int64_t>(inFlight[w], buffers + 1);
                                        offloadedActs[w] = inFlight[w] > 0 ? layerActs[w] * onDevice / inFlight[w] : 0;
                                    }
                                    for (int z = 0; z < 4; ++z)
                                        for (int off = 0; off < 4; ++off) {
                                            ++res.candidates;
                                            const int opt1 = off & 1;
                                            const std::array<Bytes, 2> layer = (off & 2) ? offloadedActs : layerActs;
                                            const Bytes bound = std::max(states[0][z][opt1] + acts[0] + layer[0],
                                                                         states[1][z][opt1] + acts[1] + layer[1]);
                                            if (bound > limit) {
                                                ++res.prunedByBound;
                                                continue;
                                            }
                                            in.zero3 = z >= 3;
                                            in.sharded = z >= 1;
                                            in.offload = opt1 == 1;
                                            in.activationOffload = (off & 2) != 0;
                                            Candidate x;
                                            x.time = stepTime(in, base.hardware).total;
                                            x.bound = bound;
                                            x.t = int(t), x.p = int(p), x.v = int(v), x.d = int(d), x.c = int(c), x.e = int(e);
                                            x.mbs = int(mbs);
                                            x.zero = std::int8_t(z), x.recompute = std::int8_t(g), x.offload = std::int8_t(off);
                                            x.sp = std::int8_t(sp);
                                            kept.push_back(x);
                                        }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    // Fastest first; confirm each with the ledger until `top` fit.
    auto slower = [](const Candidate &a, const Candidate &b) { return rankKey(a) > rankKey(b); };
    std::make_heap(kept.begin(), kept.end(), slower);
    while (!kept.empty() && static_cast<int>(res.plans.size()) < opt.top) {
        std::pop_heap(kept.begin(), kept.end(), slower);
        const Candidate x = kept.back();
        kept.pop_back();
        Config cfg = configOf(base, x, GB);
        bool invalid = false;
        for (const Problem &pr : validate(cfg))
            invalid = invalid || pr.isError();
        ++res.ledgersRun;
        if (invalid) {
            ++res.rejectedByLedger;
            continue;
        }
        Ledger ledger = computeLedger(cfg);
        if (ledger.peak_bytes > limit) {
            ++res.rejectedByLedger;
            continue;
        }
        SearchPlan plan;
        plan.time = estimateStepTime(cfg, opt.gpusPerNode);
        plan.config = std::move(cfg);
        plan.ledger = std::move(ledger);
        plan.estimateBytes = x.bound;
        res.plans.push_back(std::move(plan));
    }
    if (res.candidates == 0)
        res.notes.push_back("no split of " + std::to_string(N) + " GPUs is valid for this model (t must divide the heads, "
                            "query groups and FFN width; p must divide the layers; the global batch of " + std::to_string(GB)
                            + " must divide into micro-batches over d)");
    else if (res.plans.empty())
        res.notes.push_back("none of " + std::to_string(res.candidates) + " plans stays under "
                            + std::to_string(opt.margin) + " × device memory; add GPUs, shorten the sequence or use a larger device");
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return res;
}

} // namespace memledger
