// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/timeline/timeline.h"

#include <cstdint>
#include <vector>

namespace memledger {

// What each lifetime of a rank's timeline is made of, tensor by tensor: the
// requests PyTorch's caching allocator sees for it (core/timeline/allocationstream.h).
// - A model-state row: the rank's parameter tensors (core/model/parameters.h,
//   module by module), its bytes shared in proportion to their elements.
//   Weights one tensor each, except in Megatron's contiguous parameter buffer
//   (the distributed optimizer's, grad_buffer contiguous with ZeRO >= 1),
//   one allocation; gradients one buffer (grad_buffer contiguous) or each
//   parameter's .grad (on_demand, per layer half as the backward makes them);
//   optimizer states one tensor per state per parameter (fp32 master,
//   moments: torch.optim and Apex / Transformer Engine FusedAdam alike).
// - A layer half's saved activations: its saved tensors kept on the device
//   (core/model/activations.h), in forward order; what recompute rebuilds:
//   the tensors it rebuilds.
// - A working set, the loss's temporaries: their tensors
//   (TransientActivations' parts); Adam's step scratch: two temporaries of
//   one tensor (torch.optim's for-loop) or one per parameter tensor (foreach).
// A lifetime whose bytes the tensors do not make up exactly (an
// activation-balance slice, full recompute's checkpoint) is one request, as
// is every other kind (communication buffers, weight gradients, the
// optimizer's scratch).
class LifetimeTensors
{
public:
    LifetimeTensors(const Config &config, const RankLedger &ledger, int pipelineRank);

    // The sizes of the tensors `l` is, summing to its bytes, in allocation
    // order; empty when it is one request. Written into `parts`, whose buffer
    // a caller keeps from one lifetime to the next.
    void partsOf(const Lifetime &l, std::vector<Bytes> &parts) const;
    // Where in its layer's forward each tensor of `l` is made, when `l` is
    // a layer half's kept tensors or the tensors its forward makes and does
    // not keep (one position per part, or one for a single request;
    // positions index the layer's saved-tensor list): the allocator's stream
    // interleaves the two as the forward makes them. Empty otherwise.
    void forwardPositions(const Lifetime &l, std::vector<std::int32_t> &positions) const;
    // Whether `l` is allocated once and lives through every iteration (a
    // model-state or buffer row of the ledger).
    bool allocatedOnce(const Lifetime &l) const;
    // Of such a lifetime's parts, how many come first, before the first
    // iteration; the rest are made by the first optimizer step: the
    // optimizer's moments, which torch.optim and Apex / Transformer Engine
    // FusedAdam create lazily, in their first step() (fp32 master weights
    // are made with the optimizer, before training).
    std::size_t partsBeforeTraining(const Lifetime &l, std::size_t parts) const;

private:
    struct Halves
    {
        std::vector<Bytes> attention, mlp;
        std::vector<std::int32_t> attentionAt, mlpAt; // each tensor's position in the layer's list
        void add(bool inAttention, Bytes bytes, std::size_t position)
        {
            (inAttention ? attention : mlp).push_back(bytes);
            (inAttention ? attentionAt : mlpAt).push_back(static_cast<std::int32_t>(position));
        }
    };
    struct LayerKind
    {
        Halves kept, all; // saved tensors kept on the device; all of them (what full recompute rebuilds)
        std::vector<Bytes> core; // selective recompute's attention core
        Halves recomputed; // tensor_policies' (and per-op checkpointing's) recomputed tensors, by half
        std::vector<std::int64_t> attentionParams, mlpParams, expertParams; // parameter tensors, elements
    };
    const LayerKind &kindOf(std::int32_t layer) const;
    const std::vector<std::int64_t> &groupParams(ParamGroup group) const;
    std::vector<std::int64_t> listGroupParams(ParamGroup group) const;
    void rowParts(const LedgerEntry &entry, std::vector<Bytes> &parts) const;
    void gradientParts(const Lifetime &l, const LedgerEntry &entry, std::vector<Bytes> &parts) const;
    void optimizerScratchParts(const Lifetime &l, std::vector<Bytes> &parts) const;
    // Per group: its parameter tensors on this rank, listed once.
    std::vector<std::int64_t> m_groupParams[5];

    const Config &m_config;
    const RankLedger &m_ledger;
    int m_rank = 0;
    LayerKind m_dense, m_moe;
    std::vector<Bytes> m_firstStage, m_lastStage;
    std::vector<Bytes> m_mlpBackward, m_attentionBackward, m_forwardWorkingSet, m_lossForward, m_lossBackward;
    std::vector<std::int64_t> m_layers; // the global layers this rank holds
    std::vector<std::int64_t> m_embedding, m_output; // first stage's, last stage's parameter tensors
    int m_optimizerStates = 1; // state tensors per parameter
    bool m_master = false; // the first of them an fp32 master copy
};

} // namespace memledger
