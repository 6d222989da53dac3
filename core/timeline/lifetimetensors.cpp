// SPDX-License-Identifier: MIT
#include "core/timeline/lifetimetensors.h"

#include "core/model/activations.h"
#include "core/model/modelstates.h"
#include "core/model/parameters.h"
#include "core/schedule/schedule.h"
#include "core/schedule/stagelayers.h"

#include <numeric>
#include <string_view>

namespace memledger {

namespace {

// `total` shared in proportion to `weights` into `parts`, adding up to it exactly.
void proportional(Bytes total, const std::vector<std::int64_t> &weights, std::vector<Bytes> &parts)
{
    parts.clear();
    const long double sum = std::accumulate(weights.begin(), weights.end(), 0.0L);
    if (sum <= 0 || total <= 0)
        return;
    long double counted = 0;
    Bytes given = 0;
    for (const std::int64_t w : weights) {
        counted += static_cast<long double>(w);
        const Bytes upTo = static_cast<Bytes>(static_cast<long double>(total) * counted / sum);
        if (upTo > given)
            parts.push_back(upTo - given);
        given = upTo;
    }
}

// `tensors` into `parts` when they make up `total` exactly, else none (one request).
void exactly(Bytes total, const std::vector<Bytes> &tensors, std::vector<Bytes> &parts)
{
    parts.clear();
    if (tensors.size() > 1 && std::accumulate(tensors.begin(), tensors.end(), Bytes(0)) == total)
        parts = tensors;
}

std::size_t mlpCut(const std::vector<SavedTensor> &tensors)
{
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (std::string_view(tensors[i].name).starts_with("pre_mlp_norm"))
            return i;
    return tensors.size();
}

// State tensors per parameter: the fp32 master copy, then the moments.
int optimizerStates(const TrainingConfig &tr)
{
    const int master = stateBytes(tr).master > 0 ? 1 : 0;
    switch (tr.optimizer) {
    case Optimizer::Adam:
    case Optimizer::AdamW:
    case Optimizer::Adam8bit:
        return master + 2;
    case Optimizer::SGD:
    case Optimizer::Muon:
    case Optimizer::Adafactor:
        return master + 1;
    }
    return master + 2;
}

} // namespace

LifetimeTensors::LifetimeTensors(const Config &config, const RankLedger &ledger, int pipelineRank)
    : m_config(config)
    , m_ledger(ledger)
    , m_rank(pipelineRank)
    , m_optimizerStates(optimizerStates(config.training))
    , m_master(stateBytes(config.training).master > 0)
{
    const ParallelismConfig &par = config.parallelism;
    const auto fill = [&](LayerKind &k, bool moe) {
        const LayerActivations la = layerActivations(config, moe, TensorList::NamesOnly);
        const std::size_t cut = mlpCut(la.tensors);
        for (std::size_t i = 0; i < la.tensors.size(); ++i) {
            const SavedTensor &t = la.tensors[i];
            const bool attention = i < cut;
            if ((t.fate == TensorFate::Store || t.fate == TensorFate::QuantizeFp8 || t.fate == TensorFate::QuantizeE5M6)
                && t.placed > 0)
                k.kept.add(attention, t.placed, i);
            k.all.add(attention, t.bytes, i);
            if (t.attentionCore)
                k.core.push_back(t.bytes);
            if (t.fate == TensorFate::Recompute)
                k.recomputed.add(attention, t.bytes, i);
        }
        const std::int64_t t = par.tensor_model_parallel_size, e = par.expert_model_parallel_size,
                           etp = par.expertTensorParallel();
        const ParameterTensors tensors = layerParameterTensors(config.model, moe, t, e, etp);
        const LayerParams counts = layerParams(config.model, moe, t, e, etp);
        std::int64_t attentionParams = counts.dense.params - counts.mlpDense, seen = 0;
        for (const std::int64_t n : tensors.dense) {
            (seen < attentionParams ? k.attentionParams : k.mlpParams).push_back(n);
            seen += n;
        }
        k.expertParams = tensors.expert;
    };
    fill(m_dense, false);
    if (config.model.isMoe())
        fill(m_moe, true);
    const StageActivations stage = stageActivations(config);
    for (const SavedTensor &t : stage.first)
        m_firstStage.push_back(t.bytes);
    for (const SavedTensor &t : stage.last)
        m_lastStage.push_back(t.bytes);
    const TransientActivations ta = transientActivations(config);
    m_mlpBackward = ta.mlpBackwardParts;
    m_attentionBackward = ta.attentionBackwardParts;
    m_forwardWorkingSet = ta.recomputedForwardParts;
    m_lossForward = ta.lossForwardParts;
    m_lossBackward = ta.lossBackwardParts;

    const std::vector<StageLayers> stages = stageLayers(config);
    const EmbeddingTensors emb = embeddingParameterTensors(
        config.model, config.training.seq_length, par.tensor_model_parallel_size, par.pipeline_model_parallel_size);
    const std::int64_t p = par.pipeline_model_parallel_size;
    for (std::int64_t k = 0; k < par.virtual_pipeline_model_parallel_size; ++k) {
        const StageLayers &sl = stages[static_cast<std::size_t>(k * p + pipelineRank)];
        for (std::int64_t i = 0; i < sl.count; ++i)
            m_layers.push_back(sl.first + i);
        if (isFirstStage(par, pipelineRank, k)) {
            m_embedding.insert(m_embedding.end(), emb.word.begin(), emb.word.end());
            m_embedding.insert(m_embedding.end(), emb.position.begin(), emb.position.end());
        }
        if (isLastStage(par, pipelineRank, k)) {
            m_output.insert(m_output.end(), emb.output.begin(), emb.output.end());
            m_output.insert(m_output.end(), emb.finalNorm.begin(), emb.finalNorm.end());
            m_output.insert(m_output.end(), emb.mtp.begin(), emb.mtp.end());
        }
    }
    // The multi-token prediction stage's embedding copy, unless the rank holds the first stage too (DualPipe).
    bool first = false, last = false;
    for (std::int64_t k = 0; k < par.virtual_pipeline_model_parallel_size; ++k) {
        first |= isFirstStage(par, pipelineRank, k);
        last |= isLastStage(par, pipelineRank, k);
    }
    if (last && !first)
        m_output.insert(m_output.end(), emb.mtpEmbedding.begin(), emb.mtpEmbedding.end());
    for (const ParamGroup g :
         {ParamGroup::None, ParamGroup::Layers, ParamGroup::Experts, ParamGroup::Embeddings, ParamGroup::OutputLayer})
        m_groupParams[static_cast<int>(g)] = listGroupParams(g);
}

const std::vector<std::int64_t> &LifetimeTensors::groupParams(ParamGroup group) const
{
    return m_groupParams[static_cast<int>(group)];
}

const LifetimeTensors::LayerKind &LifetimeTensors::kindOf(std::int32_t layer) const
{
    return layer >= 0 && m_config.model.isMoeLayer(layer) ? m_moe : m_dense;
}

std::vector<std::int64_t> LifetimeTensors::listGroupParams(ParamGroup group) const
{
    std::vector<std::int64_t> out;
    switch (group) {
    case ParamGroup::Layers:
        for (const std::int64_t l : m_layers) {
            const LayerKind &k = kindOf(static_cast<std::int32_t>(l));
            out.insert(out.end(), k.attentionParams.begin(), k.attentionParams.end());
            out.insert(out.end(), k.mlpParams.begin(), k.mlpParams.end());
        }
        break;
    case ParamGroup::Experts:
        for (const std::int64_t l : m_layers)
            if (m_config.model.isMoeLayer(l))
                out.insert(out.end(), m_moe.expertParams.begin(), m_moe.expertParams.end());
        break;
    case ParamGroup::Embeddings:
        out = m_embedding;
        break;
    case ParamGroup::OutputLayer:
        out = m_output;
        break;
    case ParamGroup::None:
        break;
    }
    return out;
}

bool LifetimeTensors::allocatedOnce(const Lifetime &l) const
{
    if (l.kind == LifetimeKind::Persistent)
        return true;
    if (l.kind != LifetimeKind::Gradients || l.entry < 0)
        return false;
    // PyTorch's .grad (grad_buffer on_demand) is made in each iteration's
    // first backward and freed by zero_grad; a buffer lives through them all.
    return m_config.strategy.grad_buffer != GradBuffer::OnDemand
           || m_ledger.entries[static_cast<std::size_t>(l.entry)].group == ParamGroup::None;
}

std::size_t LifetimeTensors::partsBeforeTraining(const Lifetime &l, std::size_t parts) const
{
    if (l.entry < 0 || m_ledger.entries[static_cast<std::size_t>(l.entry)].category != Category::OptimizerStates
        || l.kind != LifetimeKind::Persistent)
        return parts;
    // One part each per state per parameter tensor, the master copies first
    // (rowParts); a row kept whole is made in the first step.
    return m_master && parts >= static_cast<std::size_t>(m_optimizerStates)
               ? parts / static_cast<std::size_t>(m_optimizerStates)
               : 0;
}

void LifetimeTensors::rowParts(const LedgerEntry &entry, std::vector<Bytes> &parts) const
{
    parts.clear();
    const std::vector<std::int64_t> &params = groupParams(entry.group);
    if (params.empty())
        return;
    switch (entry.category) {
    case Category::Weights: {
        const bool paramBuffer
            = m_config.strategy.grad_buffer == GradBuffer::Contiguous && m_config.parallelism.zero_stage >= 1;
        if (!paramBuffer)
            proportional(entry.bytes, params, parts);
        return;
    }
    case Category::OptimizerStates: {
        std::vector<std::int64_t> states;
        states.reserve(params.size() * static_cast<std::size_t>(m_optimizerStates));
        for (int s = 0; s < m_optimizerStates; ++s)
            states.insert(states.end(), params.begin(), params.end());
        proportional(entry.bytes, states, parts);
        return;
    }
    default:
        return; // a gradient buffer, a communication buffer: one allocation
    }
}

void LifetimeTensors::gradientParts(const Lifetime &l, const LedgerEntry &entry, std::vector<Bytes> &parts) const
{
    if (l.layer < 0)
        return proportional(l.bytes, groupParams(entry.group), parts);
    const LayerKind &k = kindOf(l.layer);
    if (entry.group == ParamGroup::Experts)
        return proportional(l.bytes, k.expertParams, parts);
    proportional(l.bytes, l.piece == SavedPiece::Mlp ? k.mlpParams : k.attentionParams, parts);
}

// What Adam's step allocates (optimizerStepTemporaries): torch.optim's
// for-loop two temporaries of one tensor; its foreach kernel one per
// parameter tensor of the shard, all at once.
void LifetimeTensors::optimizerScratchParts(const Lifetime &l, std::vector<Bytes> &parts) const
{
    parts.clear();
    if (l.entry >= 0) // a row of the ledger (Muon's Newton–Schulz working set): one buffer
        return;
    switch (m_config.strategy.optimizer_kernel) {
    case OptimizerKernel::SingleTensor:
        if (l.bytes % 2 == 0)
            parts = {l.bytes / 2, l.bytes / 2};
        return;
    case OptimizerKernel::Foreach: {
        std::vector<std::int64_t> all;
        for (const ParamGroup g :
             {ParamGroup::Embeddings, ParamGroup::Layers, ParamGroup::Experts, ParamGroup::OutputLayer}) {
            const std::vector<std::int64_t> &tensors = groupParams(g);
            all.insert(all.end(), tensors.begin(), tensors.end());
        }
        return proportional(l.bytes, all, parts);
    }
    case OptimizerKernel::Fused:
        return;
    }
}

void LifetimeTensors::forwardPositions(const Lifetime &l, std::vector<std::int32_t> &positions) const
{
    positions.clear();
    const bool half = l.piece == SavedPiece::Attention || l.piece == SavedPiece::Mlp;
    if (!half || (l.kind != LifetimeKind::Activations && l.kind != LifetimeKind::ForwardWorkingSet))
        return;
    const LayerKind &k = kindOf(l.layer);
    const Halves &h = l.kind == LifetimeKind::Activations ? k.kept : k.recomputed;
    const bool mlp = l.piece == SavedPiece::Mlp;
    const std::vector<Bytes> &tensors = mlp ? h.mlp : h.attention;
    if (!tensors.empty() && std::accumulate(tensors.begin(), tensors.end(), Bytes(0)) == l.bytes)
        positions = mlp ? h.mlpAt : h.attentionAt;
}

void LifetimeTensors::partsOf(const Lifetime &l, std::vector<Bytes> &parts) const
{
    parts.clear();
    const LayerKind &k = kindOf(l.layer);
    const bool mlp = l.piece == SavedPiece::Mlp;
    switch (l.kind) {
    case LifetimeKind::Persistent:
        if (l.entry >= 0)
            rowParts(m_ledger.entries[static_cast<std::size_t>(l.entry)], parts);
        return;
    case LifetimeKind::Gradients:
        if (l.entry >= 0 && !allocatedOnce(l))
            gradientParts(l, m_ledger.entries[static_cast<std::size_t>(l.entry)], parts);
        return;
    case LifetimeKind::Activations:
        switch (l.piece) {
        case SavedPiece::Attention:
            return exactly(l.bytes, k.kept.attention, parts);
        case SavedPiece::Mlp:
            return exactly(l.bytes, k.kept.mlp, parts);
        case SavedPiece::FirstStage:
            return exactly(l.bytes, m_firstStage, parts);
        case SavedPiece::LastStage:
            return exactly(l.bytes, m_lastStage, parts);
        case SavedPiece::Whole:
            return;
        }
        return;
    case LifetimeKind::RecomputeWorkingSet:
        return exactly(l.bytes, mlp ? k.all.mlp : k.all.attention, parts);
    case LifetimeKind::AttentionRecompute:
        return exactly(l.bytes, k.core, parts);
    case LifetimeKind::TensorRecompute:
        return exactly(l.bytes, mlp ? k.recomputed.mlp : k.recomputed.attention, parts);
    case LifetimeKind::BackwardWorkingSet:
        return exactly(l.bytes, mlp ? m_mlpBackward : m_attentionBackward, parts);
    case LifetimeKind::ForwardWorkingSet:
        if (l.piece == SavedPiece::Attention || l.piece == SavedPiece::Mlp) // a half's unsaved tensors
            return exactly(l.bytes, mlp ? k.recomputed.mlp : k.recomputed.attention, parts);
        return exactly(l.bytes, m_forwardWorkingSet, parts);
    case LifetimeKind::LossTemporaries:
        return exactly(l.bytes, m_lossForward, parts);
    case LifetimeKind::LossBackward:
        return exactly(l.bytes, m_lossBackward, parts);
    case LifetimeKind::OptimizerTemporaries:
        return optimizerScratchParts(l, parts);
    default:
        return;
    }
}

} // namespace memledger
