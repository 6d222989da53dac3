// SPDX-License-Identifier: MIT
#include "core/time/steptime.h"

#include "core/base/units.h"
#include "core/config/framework.h"
#include "core/ledger/balance.h"
#include "core/ledger/ledger.h"
#include "core/ledger/scheduledledger.h"
#include "core/model/activations.h"
#include "core/model/fp8.h"
#include "core/model/gradoffload.h"
#include "core/model/modelstates.h"
#include "core/model/muon.h"
#include "core/model/parameters.h"
#include "core/schedule/schedule.h"
#include "core/schedule/stagelayers.h"
#include "core/time/kernelcost.h"
#include "core/time/layergraph.h"
#include "core/time/muonstep.h"
#include "core/time/passtimes.h"

#include <algorithm>

namespace memledger {

namespace {

// The transformer layers (global indices) of one pipeline rank, all its chunks.
std::vector<std::int64_t> rankLayers(const Config &config, std::int64_t rank)
{
    const std::int64_t p = std::max<std::int64_t>(1, config.parallelism.pipeline_model_parallel_size);
    const std::vector<StageLayers> stages = stageLayers(config);
    std::vector<std::int64_t> out;
    for (std::size_t s = static_cast<std::size_t>(rank); s < stages.size(); s += static_cast<std::size_t>(p))
        for (std::int64_t i = 0; i < stages[s].count; ++i)
            out.push_back(stages[s].first + i);
    return out;
}

// Dense parameters of the last rank (which also holds the output layer), the
// group the data-parallel reduction and the optimizer step cover. The
// embedding too when the rank also holds a first stage: p = 1, or DualPipe,
// whose last rank runs the reverse direction's first stage.
double paramsOnLastRank(const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    const std::int64_t t = par.tensor_model_parallel_size, p = par.pipeline_model_parallel_size;
    const LayerParams dense
        = layerParams(config.model, false, t, par.expert_model_parallel_size, par.expertTensorParallel());
    const LayerParams moe = config.model.isMoe() ? layerParams(config.model, true, t, par.expert_model_parallel_size,
                                                               par.expertTensorParallel())
                                                 : dense;
    double params = 0;
    for (std::int64_t l : rankLayers(config, p - 1)) {
        const LayerParams &lp = config.model.isMoeLayer(l) ? moe : dense;
        params += double(lp.dense.params + lp.expert.params);
    }
    const EmbeddingParams emb = embeddingParams(config.model, config.training.seq_length, t, p);
    params += double(emb.output.params + emb.finalNorm.params + emb.mtp.params);
    bool first = p == 1;
    for (std::int64_t k = 0; k < par.virtual_pipeline_model_parallel_size; ++k)
        first |= isFirstStage(par, p - 1, k);
    // Multi-token prediction's embedding: the first stage's own, or a copy.
    params += double(first ? emb.word.params + emb.position.params : emb.mtpEmbedding.params);
    return params;
}

// Activation balance: the donor whose copy back hides worst (core/ledger/balance.h),
// one chunk's group of it (chunk 0; chunks of an even split are alike).
void addBalanceInputs(StepInputs &in, const Config &config, const CostModel &cm)
{
    // The ledger of the simulated iteration: ZB-V's order is timed by the passes (passtimes.h).
    const Ledger ledger = computeLedger(config, scheduledOps(config, cm));
    const std::vector<StageLayers> stages = stageLayers(config);
    const LayerActivations dense = layerActivations(config, false, false);
    const LayerActivations moe = config.model.isMoe() ? layerActivations(config, true, false) : dense;
    const std::int64_t v = config.parallelism.virtual_pipeline_model_parallel_size;
    double worst = -1;
    for (const RankLedger &r : ledger.ranks) {
        const double link = donorLinkBytesPerS(ledger, r.pipeline_rank);
        if (r.parked_out_bytes <= 0 || link <= 0)
            continue;
        const double share = parkedShare(ledger, r.pipeline_rank);
        const StageLayers &sl = stages[static_cast<std::size_t>(r.pipeline_rank)];
        const double bytes = share * double(chunkActivations(config, dense, moe, sl.first, sl.count).stored);
        double backward = 0;
        for (std::int64_t i = 0; i < sl.count; ++i) {
            const LayerCost &lc = config.model.isMoeLayer(sl.first + i) ? cm.moe : cm.dense;
            backward += lc.backward.seconds + lc.recompute.seconds;
        }
        const BalanceCopy copy = balanceCopy(bytes, share, backward, link);
        const double ratio = copy.windowSeconds > 0 ? copy.neededBytesPerS / link : 1e300;
        if (ratio > worst) {
            worst = ratio;
            in.balanceGroups = double(microBatchesPerDirection(config.parallelism, config.microBatches()) * v);
            in.balanceBytes = bytes;
            in.balanceShare = share;
            in.balanceBackwardSeconds = backward;
            in.balanceLinkBytesPerS = link;
        }
    }
}

// What of ZeRO's weight all-gather (G seconds) outlasts the forwards it runs
// under with overlap_param_gather, F being one micro-batch's forward through
// all the rank's layers. Megatron chains the bucket gathers across model
// chunks (each forward pre-hook starts the next one), so in the interleaved
// schedule chunk k's weights (G/v of them, gathered after chunks 0..k−1) are
// needed only when its first forward starts, after k·p chunk forwards of
// F/v each (the warm-up runs micro-batches in groups of p per chunk). Without
// interleaving that is G − F.
double paramGatherExposed(double G, double F, double p, double v, PipelineSchedule schedule)
{
    if (schedule != PipelineSchedule::Interleaved || v <= 1)
        return G - F;
    double exposed = -1e300;
    for (double k = 0; k < v; k += 1)
        exposed = std::max(exposed, (k + 1) * G / v - (k * p + 1) * F / v);
    return exposed;
}

} // namespace

bool overlapP2pInForce(const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    return config.strategy.overlap_p2p_comm && par.schedule() == PipelineSchedule::Interleaved
           && par.virtual_pipeline_model_parallel_size > 1 && par.pipeline_model_parallel_size > 1;
}

double pipelineSendSeconds(double p2pSeconds, double p, double v, double microBatches, bool overlapP2p,
                           double chunkPassSeconds)
{
    if (p <= 1)
        return 0.0;
    const double sends = 2.0 * v * microBatches;
    if (!overlapP2p)
        return sends * p2pSeconds;
    // The last rank's warm-up: (p − r − 1)·2 + (v − 1)·p forwards with r = p − 1,
    // or every chunk pass when there are no more micro-batches than ranks.
    const double warmup = microBatches <= p ? v * microBatches : std::min(v * microBatches, (v - 1.0) * p);
    const double blocking = 2.0 * warmup;
    return blocking * p2pSeconds + (sends - blocking) * std::max(0.0, p2pSeconds - chunkPassSeconds);
}

LayerCost mixedLayerCost(const LayerCost &a, const LayerCost &b, double shareOfB)
{
    const auto op = [&](const OpCost &x, const OpCost &y) {
        return OpCost{(1 - shareOfB) * x.flops + shareOfB * y.flops, (1 - shareOfB) * x.bytes + shareOfB * y.bytes,
                      (1 - shareOfB) * x.seconds + shareOfB * y.seconds};
    };
    const auto comm = [&](const PassComm &x, const PassComm &y) {
        return PassComm{(1 - shareOfB) * x.tensor + shareOfB * y.tensor,
                        (1 - shareOfB) * x.context + shareOfB * y.context,
                        (1 - shareOfB) * x.expert + shareOfB * y.expert};
    };
    LayerCost m;
    m.forward = op(a.forward, b.forward);
    m.backward = op(a.backward, b.backward);
    m.recompute = op(a.recompute, b.recompute);
    m.weightGrad = op(a.weightGrad, b.weightGrad);
    m.forwardComm = comm(a.forwardComm, b.forwardComm);
    m.backwardComm = comm(a.backwardComm, b.backwardComm);
    m.recomputeComm = comm(a.recomputeComm, b.recomputeComm);
    return m;
}

// PyTorch FSDP per block (FSDP2's fully_shard on each transformer block):
// every forward gathers each block and, resharded after forward, every
// backward gathers it again, prefetched under the previous block's compute
// (only what outlasts the compute shows); nothing is gathered after the step,
// whose fp32 shards the next forward gathers and casts. Each block's
// gradients are reduce-scattered as its backward ends, under the next
// block's backward: only the last block's shows. HSDP then all-reduces the
// sharded gradients across the replicas.
static void fsdpDataComm(StepTime &st, const StepInputs &in, const HardwareConfig &hw, double m, double fwd, double bwd)
{
    const double gatherBytes = in.gatherBytes >= 0 ? in.gatherBytes : in.weightBytes;
    const double gathers = in.fsdpGathersPerMicroBatch * m
                           * collectiveSeconds(hw, Collective::AllGather, in.paramsOnRank * gatherBytes,
                                               in.dataParallel, in.dataOnNvlink);
    st.paramGather = std::max(0.0, gathers - m * (fwd + bwd));
    const double grads = in.paramsOnRank * in.gradBytes;
    double reduce = collectiveSeconds(hw, Collective::ReduceScatter, grads, in.dataParallel, in.dataOnNvlink);
    const double last
        = collectiveSeconds(hw, Collective::ReduceScatter, std::min(in.fsdpBlockParams, in.paramsOnRank) * in.gradBytes,
                            in.dataParallel, in.dataOnNvlink);
    reduce = std::max(last, reduce - bwd);
    if (in.replicas > 1)
        reduce
            += collectiveSeconds(hw, Collective::AllReduce, grads / in.dataParallel, in.replicas, in.replicasOnNvlink);
    st.dataComm = reduce + st.paramGather;
}

StepTime stepTime(const StepInputs &in, const HardwareConfig &hw)
{
    StepTime st;
    const double Lr = in.layersOnRank, m = in.microBatches;
    const LayerCost &l = in.layer;
    const double fwd = Lr * l.forward.seconds, bwd = Lr * l.backward.seconds, rec = Lr * l.recompute.seconds;
    const double out = in.outputForward.seconds + in.outputBackward.seconds;
    st.tensorComm = m * Lr * (l.forwardComm.tensor + l.backwardComm.tensor + l.recomputeComm.tensor);
    st.contextComm = m * Lr * (l.forwardComm.context + l.backwardComm.context + l.recomputeComm.context);
    st.expertComm = m * Lr * (l.forwardComm.expert + l.backwardComm.expert + l.recomputeComm.expert);
    // DualPipe's paired chunks hide each other's all-to-alls under their
    // computation, the backward's recompute included (it runs inside the
    // backward chunk): a pair takes the longer of its compute and its all-to-alls.
    const double passCompute = std::max(
        0.0, fwd + bwd + rec - Lr * (l.forwardComm.total() + l.backwardComm.total() + l.recomputeComm.total()));
    // What one micro-batch's pair of passes (forward and backward, the rank's
    // chunks) hides: the smaller of its all-to-alls and its computation.
    const double pairSaving = in.overlappedShare > 0 && m > 0 ? std::min(st.expertComm / m, passCompute) : 0.0;
    st.expertComm -= in.overlappedShare * m * pairSaving;
    st.recompute = m * rec - m * Lr * l.recomputeComm.total();
    st.compute = m * (fwd + bwd + out) - m * Lr * (l.forwardComm.total() + l.backwardComm.total());
    // The bubble: one micro-batch through an average rank's chunks, split
    // into F, B and W in the busiest rank's proportions, in the schedule's formula.
    const double stage = in.bubbleStageSeconds >= 0 ? in.bubbleStageSeconds : fwd + bwd + rec;
    const double whole = fwd + bwd + rec;
    const double wgt = Lr * l.weightGrad.seconds;
    const double scale = whole > 0 ? stage / whole : 0.0;
    st.bubble = pipelineBubbleSeconds(in.schedule, in.p, in.v, fwd * scale, (bwd + rec - wgt) * scale, wgt * scale,
                                      pairSaving * scale);
    if (in.p > 1)
        st.pipelineComm = pipelineSendSeconds(in.p2pSeconds, in.p, in.v, m, in.overlapP2p, fwd / in.v);
    if (in.fsdpPerBlock && in.dataParallel * in.replicas > 1)
        fsdpDataComm(st, in, hw, m, fwd, bwd);
    else if (in.dataParallel > 1) {
        // fp8_param_gather: the weights cross the group as FP8 (and scales).
        const double gatherBytes = in.gatherBytes >= 0 ? in.gatherBytes : in.weightBytes;
        const double grads = in.paramsOnRank * in.gradBytes;
        const double bucket = std::min(in.bucketParams, in.paramsOnRank);
        // ZeRO 0 all-reduces the gradients; ZeRO ≥ 1 reduce-scatters them
        // (Megatron's distributed optimizer, DeepSpeed's ZeRO).
        const Collective reduction = in.zeroStage == 0 ? Collective::AllReduce : Collective::ReduceScatter;
        double reduce = collectiveSeconds(hw, reduction, grads, in.dataParallel, in.dataOnNvlink);
        if (in.overlapGradReduce) {
            // Buckets reduce as the last backward produces them; the last one cannot hide.
            const double last
                = collectiveSeconds(hw, reduction, bucket * in.gradBytes, in.dataParallel, in.dataOnNvlink);
            reduce = std::max(last, reduce - bwd);
        }
        double gather = 0;
        if (in.zeroStage >= 1) {
            // The updated weight shards are all-gathered after the optimizer
            // step. With overlap_param_gather Megatron issues the gather bucket
            // by bucket and waits for each in the forward pre-hook of the
            // layers it holds (param_and_grad_buffer.py), so it runs under the
            // next iteration's forwards; the first bucket cannot hide.
            const double weights = in.paramsOnRank * gatherBytes;
            gather = collectiveSeconds(hw, Collective::AllGather, weights, in.dataParallel, in.dataOnNvlink);
            if (in.overlapParamGather) {
                const double first = collectiveSeconds(hw, Collective::AllGather, bucket * gatherBytes, in.dataParallel,
                                                       in.dataOnNvlink);
                gather = std::max(first, paramGatherExposed(gather, fwd, in.p, in.v, in.schedule));
            }
        }
        if (in.zeroStage >= 3) {
            // Every micro-batch gathers the weights for its forward and again for its
            // backward, prefetched under the previous layers' compute.
            const double gathers = 2.0 * m
                                   * collectiveSeconds(hw, Collective::AllGather, in.paramsOnRank * gatherBytes,
                                                       in.dataParallel, in.dataOnNvlink);
            gather += std::max(0.0, gathers - m * (fwd + bwd));
        }
        st.paramGather = gather;
        st.dataComm = reduce + gather;
    }
    const double shard = in.paramsOnRank / (in.zeroStage >= 1 ? in.dataParallel : 1.0);
    st.optimizer = optimizerStepCost(hw, shard, in.optimizerBytesPerParam, in.gradBytes, in.weightBytes,
                                     in.optimizerOffloadLink, in.gradsOnHost)
                       .total();
    st.optimizer += in.muonSeconds;
    if (in.activationOffload)
        st.activationOffload = m * offloadStall(in.offloadBytes, hw.host_link_bytes_per_s, fwd, bwd);
    // Per-tensor offload hides each layer's copies under that layer's own
    // forward and backward (the per-tensor planner's model).
    if (in.policyOffloadBytes > 0)
        st.activationOffload
            += m * Lr
               * offloadStall(in.policyOffloadBytes, hw.host_link_bytes_per_s, l.forward.seconds, l.backward.seconds);
    if (in.balanceBytes > 0 && in.balanceLinkBytesPerS > 0) {
        const BalanceCopy copy
            = balanceCopy(in.balanceBytes, in.balanceShare, in.balanceBackwardSeconds, in.balanceLinkBytesPerS);
        st.activationBalance = in.balanceGroups * copy.stallSeconds;
        st.balanceNeededBytesPerS = copy.neededBytesPerS;
        st.balanceLinkBytesPerS = in.balanceLinkBytesPerS;
    }
    if (in.gradOffloadBytes > 0) {
        // Each micro-batch's backward sends its gradients through the double
        // buffer; after the last one the two buffered buckets still drain.
        const double link = hw.host_link_bytes_per_s;
        st.gradOffload = m * gradOffloadStall(bwd, in.gradOffloadBytes, in.gradOffloadBucketBytes, link)
                         + gradOffloadTail(in.gradOffloadBytes, in.gradOffloadBucketBytes, link);
    }
    st.total = st.compute + st.recompute + st.tensorComm + st.contextComm + st.expertComm + st.bubble + st.pipelineComm
               + st.dataComm + st.optimizer + st.activationOffload + st.activationBalance + st.gradOffload;
    return st;
}

double modelFlopsPerIteration(const Config &config)
{
    const ModelConfig &m = config.model;
    const double s = double(config.training.seq_length);
    const double tokens = double(config.globalBatch()) * s;
    const LayerParams dense = layerParams(m, false, 1, 1, 1);
    const LayerParams moe = m.isMoe() ? layerParams(m, true, 1, 1, 1) : dense;
    const double routed = m.isMoe() ? double(m.moe_router_topk) / double(m.num_experts) : 0.0;
    const double dqk = m.multi_latent_attention ? double(m.qk_head_dim + m.qk_pos_emb_head_dim) : double(m.headDim());
    const double dv = m.multi_latent_attention ? double(m.v_head_dim) : double(m.headDim());
    const double attention = 6.0 * s * double(m.num_attention_heads) * (dqk + dv); // per token and layer
    double perToken = 0;
    for (std::int64_t l = 0; l < m.num_layers; ++l) {
        const LayerParams &lp = m.isMoeLayer(l) ? moe : dense;
        perToken += 6.0 * (double(lp.dense.params) + routed * double(lp.expert.params)) + attention;
    }
    perToken += 6.0 * double(paddedVocab(m, 1)) * double(m.hidden_size);
    return perToken * tokens;
}

// The data-parallel group's collectives: ZeRO's inside the HSDP shard
// groups (all of d without HSDP), the replicas' all-reduce, FSDP per block.
static void setDataParallelInputs(StepInputs &in, const Config &config, std::int64_t gpusPerNode)
{
    const ParallelismConfig &par = config.parallelism;
    in.dataParallel = double(par.dataParallelShard() * par.context_parallel_size);
    in.dataOnNvlink = double(par.tensor_model_parallel_size) * in.dataParallel <= double(gpusPerNode);
    in.replicas = double(par.data_parallel_size / std::max<std::int64_t>(1, par.dataParallelShard()));
    in.replicasOnNvlink = double(par.tensor_model_parallel_size * par.data_parallel_size * par.context_parallel_size)
                          <= double(gpusPerNode);
    in.fsdpPerBlock = fsdpPerBlock(config);
    if (in.fsdpPerBlock) {
        in.fsdpGathersPerMicroBatch = par.pipeline_model_parallel_size > 1 ? 1.0 / double(in.microBatches)
                                      : fsdpReshardAfterForward(config)    ? 2.0
                                                                           : 1.0;
        const LayerParams lp = layerParams(config.model, config.model.isMoe(), par.tensor_model_parallel_size,
                                           par.expert_model_parallel_size, par.expertTensorParallel());
        in.fsdpBlockParams = double(lp.dense.params + lp.expert.params);
    }
}

StepInputs stepInputsOf(const Config &config, std::int64_t gpusPerNode)
{
    if (gpusPerNode <= 0)
        gpusPerNode = std::max<std::int64_t>(1, config.hardware.gpus_per_node);
    const ParallelismConfig &par = config.parallelism;
    const CostModel cm = costModel(config, gpusPerNode);
    // The busiest rank: the most layer work (an uneven pipeline_layout or a mix
    // of dense and MoE layers can make it any rank), the last one's output layer included.
    const std::int64_t p = std::max<std::int64_t>(1, par.pipeline_model_parallel_size);
    // Full recompute by the block method re-runs only each chunk's first layers (recomputesLayer).
    const auto work = [&](const LayerCost &l, bool rerun) {
        return l.forward.seconds + l.backward.seconds + (rerun ? l.recompute.seconds : 0.0);
    };
    const std::vector<StageLayers> stages = stageLayers(config);
    std::vector<std::int64_t> layers;
    std::int64_t moeLayers = 0, busiest = p - 1, busiestReruns = 0;
    bool busiestHasOutput = true;
    double most = -1, all = 0;
    for (std::int64_t r = 0; r < p; ++r) {
        std::vector<std::int64_t> mine;
        std::int64_t moe = 0, reruns = 0;
        bool last = false;
        for (std::int64_t k = 0; k < par.virtual_pipeline_model_parallel_size; ++k)
            last |= isLastStage(par, r, k);
        double seconds = last ? cm.outputForward.seconds + cm.outputBackward.seconds : 0.0;
        for (std::size_t s = static_cast<std::size_t>(r); s < stages.size(); s += static_cast<std::size_t>(p))
            for (std::int64_t i = 0; i < stages[s].count; ++i) {
                const std::int64_t l = stages[s].first + i;
                const bool isMoe = config.model.isMoeLayer(l), rerun = recomputesLayer(config.strategy, i);
                mine.push_back(l);
                moe += isMoe;
                reruns += rerun;
                seconds += work(isMoe ? cm.moe : cm.dense, rerun);
            }
        all += seconds;
        if (seconds > most) {
            most = seconds;
            layers = std::move(mine);
            moeLayers = moe;
            busiest = r;
            busiestHasOutput = last;
            busiestReruns = reruns;
        }
    }
    const StateBytes sb = stateBytes(config.training);
    StepInputs in;
    in.layersOnRank = double(layers.size());
    in.bubbleStageSeconds = all / double(p);
    // DualPipe: each chunk (one direction) carries half the micro-batches.
    in.microBatches = double(microBatchesPerDirection(par, config.microBatches()));
    in.p = double(par.pipeline_model_parallel_size);
    in.v = double(par.virtual_pipeline_model_parallel_size);
    in.schedule = par.schedule();
    in.overlappedShare = overlappedChunkShare(par, config.microBatches(), busiest);
    setDataParallelInputs(in, config, gpusPerNode);
    in.layer = mixedLayerCost(cm.dense, cm.moe, layers.empty() ? 0.0 : double(moeLayers) / double(layers.size()));
    // The average layer's recompute over the rank's layers, those not re-run counting none.
    const double rerunShare = layers.empty() ? 1.0 : double(busiestReruns) / double(layers.size());
    in.layer.recompute.seconds *= rerunShare;
    in.layer.recompute.flops *= rerunShare;
    in.layer.recompute.bytes *= rerunShare;
    in.layer.recomputeComm.tensor *= rerunShare;
    in.layer.recomputeComm.context *= rerunShare;
    in.layer.recomputeComm.expert *= rerunShare;
    // The output layer and the loss are the last stage's: a busiest rank
    // without them (an uneven pipeline_layout that gives the last stage fewer
    // layers, DeepSeek-V3's dense layers first) does not run them.
    if (busiestHasOutput) {
        in.outputForward = cm.outputForward;
        in.outputBackward = cm.outputBackward;
    }
    in.p2pSeconds = cm.p2pSeconds;
    in.overlapP2p = overlapP2pInForce(config);
    in.paramsOnRank = paramsOnLastRank(config);
    in.gradBytes = double(sb.grad);
    in.weightBytes = double(sb.weight);
    // fp32 parameters are gathered as what they are cast to (FSDP's param_dtype).
    in.gatherBytes = double(sb.compute);
    if (fp8ParamGatherInForce(config))
        in.gatherBytes = fp8GatherBytesPerParam(config);
    in.optimizerBytesPerParam = sb.optimizerPerParam();
    in.zeroStage = int(par.zero_stage);
    in.overlapGradReduce = config.strategy.overlap_grad_reduce;
    in.overlapParamGather = config.strategy.overlap_param_gather;
    in.bucketParams = double(config.strategy.ddp_bucket_size);
    in.optimizerOffloadLink = optimizerOffloadLink(config);
    // An MoE layer offloads its own tensors: the mix of the two kinds, as the layer's cost.
    const double moeShareOfLayers = layers.empty() ? 0.0 : double(moeLayers) / double(layers.size());
    in.policyOffloadBytes
        = (1.0 - moeShareOfLayers) * cm.policyOffloadBytes + moeShareOfLayers * cm.policyOffloadBytesMoe;
    in.gradsOnHost = config.strategy.grad_offload != OffloadTarget::None;
    if (in.gradsOnHost) {
        in.gradOffloadBytes = in.paramsOnRank * in.gradBytes / (par.zero_stage >= 2 ? in.dataParallel : 1.0);
        in.gradOffloadBucketBytes = std::min(double(config.strategy.ddp_bucket_size), in.paramsOnRank) * in.gradBytes;
    }
    if (sb.muon && config.strategy.optimizer_offload == OffloadTarget::None)
        in.muonSeconds = muonStep(config.hardware, muonFullMatrices(config, layers),
                                  muonLocalMatrixElements(config, layers), in.dataOnNvlink, muonSharers(config))
                             .seconds();
    in.activationOffload = config.strategy.activation_offload != OffloadTarget::None;
    if (in.activationOffload) {
        const LayerActivations dense = layerActivations(config, false, false);
        const bool full = config.strategy.recompute_granularity == RecomputeGranularity::Full;
        in.offloadBytes = double(full ? dense.total : dense.kept) * in.layersOnRank;
    }
    if (config.strategy.pipeline_activation_balance == ActivationBalance::Auto && p > 1)
        addBalanceInputs(in, config, cm);
    return in;
}

StepTime estimateStepTime(const Config &config, std::int64_t gpusPerNode)
{
    const ParallelismConfig &par = config.parallelism;
    StepTime st = stepTime(stepInputsOf(config, gpusPerNode), config.hardware);
    const double gpus = double(par.tensor_model_parallel_size * par.pipeline_model_parallel_size
                               * par.data_parallel_size * par.context_parallel_size);
    st.modelFlopsPerGpu = modelFlopsPerIteration(config) / gpus;
    st.mfu = st.total > 0 ? st.modelFlopsPerGpu / (st.total * config.hardware.peak_bf16_flops) : 0.0;
    return st;
}

double recomputeSecondsPerMicroBatch(const Config &config)
{
    const StepInputs in = stepInputsOf(config);
    return in.layersOnRank * (in.layer.recompute.seconds - in.layer.recomputeComm.total());
}

std::array<StepTimePart, 12> stepTimeParts(const StepTime &t)
{
    return {{{"compute", t.compute},
             {"recompute", t.recompute},
             {"bubble", t.bubble},
             {"tensor_comm", t.tensorComm},
             {"context_comm", t.contextComm},
             {"expert_comm", t.expertComm},
             {"data_comm_exposed", t.dataComm},
             {"pipeline_comm", t.pipelineComm},
             {"optimizer", t.optimizer},
             {"activation_offload", t.activationOffload},
             {"activation_balance", t.activationBalance},
             {"grad_offload", t.gradOffload}}};
}

std::string stepTimeDifference(const StepTime &slower, const StepTime &faster)
{
    const auto a = stepTimeParts(slower), b = stepTimeParts(faster);
    std::size_t most = 0;
    for (std::size_t i = 1; i < a.size(); ++i)
        if (a[i].seconds - b[i].seconds > a[most].seconds - b[most].seconds)
            most = i;
    return "most of it in " + std::string(a[most].name) + " (+" + formatSeconds(a[most].seconds - b[most].seconds, 3)
           + ")";
}

StepTimePart largestStepTimePart(const StepTime &time)
{
    const auto parts = stepTimeParts(time);
    return *std::max_element(parts.begin(), parts.end(),
                             [](const StepTimePart &a, const StepTimePart &b) { return a.seconds < b.seconds; });
}

} // namespace memledger
