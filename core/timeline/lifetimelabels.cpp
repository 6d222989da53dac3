// SPDX-License-Identifier: MIT
#include "core/timeline/lifetimelabels.h"

#include "core/base/units.h"

#include <algorithm>
#include <map>
#include <set>

namespace memledger {

std::string lifetimeLabel(const Timeline &tl, const RankTimeline &rank, const Lifetime &l)
{
    const auto where = [&] {
        std::string s = "micro-batch " + std::to_string(l.microbatch);
        if (l.chunk > 0 || (tl.schedule == PipelineSchedule::DualPipe && l.chunk == 0))
            s += ", " + chunkName(tl.schedule, l.chunk);
        return s;
    };
    // The ledger row a lifetime stands for, if it names one.
    const auto entry = [&]() -> const LedgerEntry * {
        const RankLedger &r = tl.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)];
        return l.entry >= 0 && static_cast<std::size_t>(l.entry) < r.entries.size()
                   ? &r.entries[static_cast<std::size_t>(l.entry)]
                   : nullptr;
    };
    switch (l.kind) {
    case LifetimeKind::Persistent:
    case LifetimeKind::Gradients:
        if (const LedgerEntry *e = entry())
            return std::string(categoryLabel(e->category)) + ": " + e->label
                   + (l.layer >= 0 ? ", layer " + std::to_string(l.layer) : std::string());
        return std::string(categoryLabel(l.category));
    case LifetimeKind::Activations:
        if (l.peer >= 0)
            return std::string(l.offloaded ? "Parked activations back from rank " + std::to_string(l.peer) + ", "
                                           : "Saved activations, leaving for rank " + std::to_string(l.peer) + ", ")
                   + (l.layer >= 0 ? "layer " + std::to_string(l.layer) + ", " : std::string()) + where();
        return std::string(l.offloaded ? "Activations back from the host, " : "Saved activations, ")
               + (l.layer >= 0 ? "layer " + std::to_string(l.layer) + ", " : std::string()) + where();
    case LifetimeKind::RecomputeWorkingSet:
        return "Recomputed activations up to layer " + std::to_string(l.layer) + ", " + where();
    case LifetimeKind::AttentionRecompute:
        return "Recomputed attention core of layer " + std::to_string(l.layer) + ", " + where();
    case LifetimeKind::BackwardWorkingSet:
        return "Backward working set of layer " + std::to_string(l.layer) + " (activation gradients), " + where();
    case LifetimeKind::LossTemporaries:
        return "Logits and fp32 loss temporaries, " + where();
    case LifetimeKind::LossBackward:
        return "Cross-entropy gradients (loss backward), " + where();
    case LifetimeKind::ForwardWorkingSet:
        if (l.piece == SavedPiece::Attention || l.piece == SavedPiece::Mlp)
            return "Tensors layer " + std::to_string(l.layer) + "'s "
                   + (l.piece == SavedPiece::Mlp ? "MLP" : "attention")
                   + " half makes in its forward and does not keep (rebuilt for its backward), " + where();
        return "Forward working set of a layer that saves only its input (full recompute), " + where();
    case LifetimeKind::WeightGradient:
        return "Weight gradient before its accumulation into the gradient buffer, " + where();
    case LifetimeKind::WeightPassInputs:
        return "Inputs of a deferred weight pass (linear inputs and output gradients, B to W), " + where();
    case LifetimeKind::CollectiveBuffers:
        if (const LedgerEntry *e = entry())
            return std::string(categoryLabel(l.category)) + ": " + e->label + ", " + where();
        return std::string(categoryLabel(l.category)) + ", " + where();
    case LifetimeKind::OptimizerTemporaries:
        if (const LedgerEntry *e = entry()) // a transient ledger row
            return "Optimizer step: " + e->label;
        return "Optimizer step temporaries";
    case LifetimeKind::TensorRecompute:
        return "Tensors of layer " + std::to_string(l.layer)
               + (l.piece == SavedPiece::Mlp         ? "'s MLP half"
                  : l.piece == SavedPiece::Attention ? "'s attention half"
                                                     : std::string())
               + " recomputed for its backward (per-op checkpointing or tensor_policies), " + where();
    case LifetimeKind::TensorOffloadTransit:
        return "Offloaded tensors of layer " + std::to_string(l.layer) + " in transit to or from the host "
               + "(tensor_policies), " + where();
    case LifetimeKind::ParkedActivations:
        return "Activations parked from rank " + std::to_string(l.peer) + ", " + where();
    case LifetimeKind::KvCache:
        return "KV cache of layer " + std::to_string(l.layer);
    case LifetimeKind::InferenceWorkingSet:
        if (l.chunk == 2)
            return "Logits of each sequence's last position (fp32, for the sampler)";
        if (l.layer < 0)
            return "Residual stream of the serving forward";
        return std::string(l.chunk == 0 ? "Attention" : "MLP") + " working set of layer " + std::to_string(l.layer)
               + " (serving: freed when the layer has run)";
    }
    return "";
}

std::vector<AliveItem> aliveAtPeak(const Timeline &tl, const RankTimeline &rt, std::int64_t chunksPerRank)
{
    std::vector<AliveItem> out;
    std::map<std::int32_t, std::vector<const Lifetime *>> groupsByChunk;
    std::map<std::int32_t, std::vector<const Lifetime *>> gradientsByEntry; // created layer by layer
    std::map<std::int32_t, std::pair<Bytes, std::size_t>> parkedByDonor; // activation balance
    for (const Lifetime &l : rt.lifetimes) {
        if (!(l.start <= rt.peak_time && rt.peak_time < l.end) || l.bytes == 0)
            continue;
        if (l.kind == LifetimeKind::Activations) {
            groupsByChunk[l.chunk].push_back(&l);
            continue;
        }
        if (l.kind == LifetimeKind::Gradients && l.layer >= 0) {
            gradientsByEntry[l.entry].push_back(&l);
            continue;
        }
        if (l.kind == LifetimeKind::ParkedActivations) {
            parkedByDonor[l.peer].first += l.bytes;
            ++parkedByDonor[l.peer].second;
            continue;
        }
        out.push_back({lifetimeLabel(tl, rt, l), l.category, l.bytes});
    }
    for (const auto &[entry, pieces] : gradientsByEntry) {
        Bytes bytes = 0;
        for (const Lifetime *g : pieces)
            bytes += g->bytes;
        Lifetime whole = *pieces.front();
        whole.layer = -1;
        out.push_back(
            {lifetimeLabel(tl, rt, whole) + " (" + countOf(double(pieces.size()), "layer", "layers") + " so far)",
             Category::Gradients, bytes});
    }
    for (const auto &[donor, parked] : parkedByDonor)
        out.push_back({"Activations parked from rank " + std::to_string(donor) + " ("
                           + countOf(double(parked.second), "micro-batch", "micro-batches") + ")",
                       Category::Activations, parked.first});
    for (const auto &[chunk, groups] : groupsByChunk) {
        Bytes bytes = 0;
        std::int32_t lo = groups.front()->microbatch, hi = lo;
        std::set<std::int32_t> microbatches; // a group leaves layer by layer: pieces of one count once
        for (const Lifetime *g : groups) {
            bytes += g->bytes;
            lo = std::min(lo, g->microbatch);
            hi = std::max(hi, g->microbatch);
            microbatches.insert(g->microbatch);
        }
        const std::size_t count = microbatches.size();
        std::string label = "Saved activations of " + countOf(double(count), "micro-batch", "micro-batches")
                            + (count == 1 ? " (" + std::to_string(lo) + ")"
                                          : " (" + std::to_string(lo) + "–" + std::to_string(hi) + ")");
        if (chunksPerRank > 1)
            label += ", " + chunkName(tl.schedule, chunk);
        out.push_back({std::move(label), Category::Activations, bytes});
    }
    std::stable_sort(out.begin(), out.end(), [](const AliveItem &a, const AliveItem &b) { return a.bytes > b.bytes; });
    return out;
}

} // namespace memledger
