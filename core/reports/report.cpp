// SPDX-License-Identifier: MIT
#include "core/reports/report.h"

#include "core/base/units.h"
#include "core/model/activations.h"
#include "core/model/tensorpolicy.h"
#include "core/reports/steptimereport.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace memledger {

using nlohmann::json;

namespace {

json byCategory(const ByCategory &values)
{
    json o = json::object();
    for (Category c : kCategories)
        o[std::string(categoryKey(c))] = values[static_cast<int>(c)];
    return o;
}

std::string gb(Bytes b)
{
    return formatGB(static_cast<double>(b));
}

std::string percent(double part, double whole)
{
    return formatPercent(whole > 0 ? part / whole : 0.0, 0);
}

std::string inFlight(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, v == static_cast<double>(static_cast<long long>(v)) ? "%.0f" : "%.2f", v);
    return buf;
}

// strategy.pipeline_activation_balance in one line; empty when nothing is parked.
std::string balanceLine(const Ledger &l)
{
    if (l.parked.empty())
        return {};
    Bytes moved = 0;
    bool nvlink = false, network = false;
    for (const ParkedActivations &pa : l.parked) {
        moved += pa.bytes;
        nvlink |= pa.nvlink;
        network |= !pa.nvlink;
    }
    return "Activation balance: " + gb(moved) + " of saved activations parked on other ranks over "
           + (nvlink && network ? "NVLink and the network" : (nvlink ? "NVLink" : "the network")) + "; peak "
           + gb(l.unbalanced_peak_bytes) + " → " + gb(l.peak_bytes) + " (level " + gb(l.balance_level_bytes) + ")";
}

// The plan's verdict: with the allocator simulated, what runs out (reserved
// memory plus the runtime reserve); the allocated peak beside it.
std::string verdict(const Ledger &l, const PlanReserved *reserved)
{
    const RankLedger &peak = l.ranks[static_cast<std::size_t>(l.peak_rank)];
    const std::string allocated
        = "rank " + std::to_string(l.peak_rank) + " needs " + gb(l.peak_bytes) + " of " + gb(l.capacity_bytes) + " ("
          + percent(static_cast<double>(l.peak_bytes), static_cast<double>(l.capacity_bytes)) + ")";
    if (!reserved)
        return "Peak: " + allocated + " — " + (peak.fits ? "fits" : "does NOT fit")
               + (l.fits() ? "" : "; some ranks do not fit");
    return "Peak: rank " + std::to_string(reserved->peak_rank) + " needs " + gb(reserved->peak_bytes) + " of "
           + gb(reserved->capacity_bytes) + " ("
           + percent(static_cast<double>(reserved->peak_bytes), static_cast<double>(reserved->capacity_bytes))
           + ") reserved with the runtime reserve — " + (reserved->fits() ? "fits" : "does NOT fit")
           + "; allocated at the simulated peak, " + allocated;
}

const RankReserved *reservedOf(const PlanReserved *reserved, int rank)
{
    if (!reserved)
        return nullptr;
    for (const RankReserved &r : reserved->ranks)
        if (r.pipeline_rank == rank)
            return &r;
    return nullptr;
}

// The host-memory verdict in words (RankLedger::host_fits); empty when
// nothing is offloaded and nothing is over the host memory.
std::string hostVerdict(const Ledger &l)
{
    Bytes most = 0;
    std::vector<int> over;
    for (const RankLedger &r : l.ranks) {
        most = std::max(most, r.host_total_bytes);
        if (!r.host_fits)
            over.push_back(r.pipeline_rank);
    }
    if (most == 0 && over.empty())
        return {};
    std::string text = "Host: the fullest rank offloads " + gb(most) + " of " + gb(l.host_capacity_bytes)
                       + " host memory per GPU — ";
    if (over.empty())
        return text + "fits";
    text += over.size() == 1 ? "does NOT fit (rank " : "does NOT fit (ranks ";
    for (std::size_t i = 0; i < over.size(); ++i)
        text += (i > 0 ? ", " : "") + std::to_string(over[i]);
    return text + ")";
}

// Each rank's reserved memory, and what it is made of at its peak.
std::string reservedSection(const PlanReserved &reserved)
{
    std::ostringstream out;
    out << "## Reserved memory\n\nWhat PyTorch's CUDA caching allocator (" << allocatorSummary(reserved.settings)
        << ") reserves for each rank's tensors, two iterations simulated request by request: at the reserved peak, "
           "the blocks in use, the free bytes beside them in their segments (fragmentation) and the wholly free "
           "segments it keeps cached; then the runtime reserve, which the allocator never sees.\n\n"
        << "| rank | Allocated peak | Reserved | In use at its peak | Fragmentation | Cached | Runtime | Device peak | "
           "Cache emptied | Fits |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n";
    for (const RankReserved &r : reserved.ranks)
        out << "| " << r.pipeline_rank << " | " << gb(r.allocated_peak) << " | **" << gb(r.reserved_peak) << "** | "
            << gb(r.allocated_at_reserved_peak) << " | " << gb(r.fragmentation) << " | " << gb(r.cached) << " | "
            << gb(r.runtime_bytes) << " | **" << gb(r.device_peak_bytes) << "** | " << r.alloc_retries << " | "
            << (r.fits ? "yes" : (r.ooms > 0 ? "**no** (out of memory)" : "**no**")) << " |\n";
    out << "\n";
    return out.str();
}

} // namespace

// The same plan through PyTorch's caching allocator: what its busiest rank
// reserves, what that is made of, and the runtime reserve on top.
std::string reservedVerdict(const PlanReserved &reserved)
{
    const RankReserved &peak = reserved.ranks[static_cast<std::size_t>(reserved.peak_rank)];
    std::string text = "Reserved: rank " + std::to_string(reserved.peak_rank) + " reaches " + gb(reserved.peak_bytes)
                       + " of " + gb(reserved.capacity_bytes) + " — " + (reserved.fits() ? "fits" : "does NOT fit")
                       + ": " + gb(peak.reserved_peak) + " reserved by PyTorch's caching allocator ("
                       + gb(peak.allocated_at_reserved_peak) + " in use, " + gb(peak.fragmentation) + " fragmented, "
                       + gb(peak.cached) + " cached) + " + gb(peak.runtime_bytes) + " runtime reserve";
    if (peak.ooms > 0)
        text += "; " + std::to_string(peak.ooms) + " request(s) fail even after the cache is emptied";
    else if (peak.alloc_retries > 0)
        text += "; the cache is emptied " + std::to_string(peak.alloc_retries)
                + " time(s) to make room (each a device synchronisation)";
    return text;
}

std::string parallelSummary(const Config &config)
{
    const ParallelismConfig &p = config.parallelism;
    std::ostringstream s;
    s << "t=" << p.tensor_model_parallel_size << " p=" << p.pipeline_model_parallel_size;
    if (p.virtual_pipeline_model_parallel_size > 1)
        s << " v=" << p.virtual_pipeline_model_parallel_size;
    s << " d=" << p.data_parallel_size;
    if (p.context_parallel_size > 1)
        s << " c=" << p.context_parallel_size;
    if (p.expert_model_parallel_size > 1)
        s << " e=" << p.expert_model_parallel_size;
    if (p.sequence_parallel)
        s << " +SP";
    if (p.zero_stage > 0)
        s << " ZeRO-" << p.zero_stage;
    return s.str();
}

json allocatorToJson(const AllocatorConfig &a)
{
    const auto optional = [](const auto &v) { return v ? json(*v) : json(nullptr); };
    return {{"expandable_segments", a.expandable_segments},
            {"max_split_size_mb", optional(a.max_split_size_mb)},
            {"garbage_collection_threshold", optional(a.garbage_collection_threshold)},
            {"per_process_memory_fraction", optional(a.per_process_memory_fraction)}};
}

std::string allocatorSummary(const AllocatorConfig &a)
{
    std::string text;
    const auto add = [&](const std::string &part) { text += (text.empty() ? "" : ", ") + part; };
    if (a.expandable_segments)
        add("expandable segments");
    if (a.max_split_size_mb)
        add("max_split_size " + std::to_string(*a.max_split_size_mb) + " MB");
    if (a.per_process_memory_fraction)
        add("memory fraction " + formatPercentCompact(*a.per_process_memory_fraction));
    if (a.garbage_collection_threshold)
        add("garbage collection above " + formatPercentCompact(*a.garbage_collection_threshold));
    return text.empty() ? "PyTorch's defaults" : text;
}

json reservedToJson(const RankReserved &r)
{
    return {{"reserved_bytes", r.reserved_peak},      {"allocated_peak_bytes", r.allocated_peak},
            {"fragmentation_bytes", r.fragmentation}, {"cached_free_bytes", r.cached},
            {"alloc_retries", r.alloc_retries},       {"allocator_ooms", r.ooms}};
}

json ledgerToJson(const Config &config, const Ledger &l, const PlanReserved *reserved)
{
    json doc = json::object();
    doc["name"] = config.name;
    doc["total_parameters"] = l.total_parameters;
    doc["gpus"] = l.gpus;
    doc["micro_batches"] = l.micro_batches;
    doc["capacity_bytes"] = l.capacity_bytes;
    doc["usable_bytes"] = l.usable_bytes;
    // The verdict: reserved memory plus the runtime reserve when the allocator
    // was simulated (what runs out), else the allocated peak.
    doc["peak_rank"] = reserved ? reserved->peak_rank : l.peak_rank;
    doc["peak_bytes"] = reserved ? reserved->peak_bytes : l.peak_bytes;
    doc["fits"] = reserved ? reserved->fits() : l.fits();
    doc["allocated_peak_rank"] = l.peak_rank;
    doc["allocated_peak_bytes"] = l.peak_bytes;
    doc["allocated_fits"] = l.fits();
    if (reserved) {
        doc["reserved_peak_rank"] = reserved->peak_rank;
        doc["reserved_peak_bytes"] = reserved->peak_bytes;
        doc["reserved_fits"] = reserved->fits();
        doc["allocator"] = allocatorToJson(reserved->settings);
    }
    doc["host_capacity_bytes"] = l.host_capacity_bytes;
    doc["host_fits"] = l.hostFits();
    json ranks = json::array();
    for (const RankLedger &r : l.ranks) {
        json rj = json::object();
        rj["pipeline_rank"] = r.pipeline_rank;
        rj["parameters"] = r.parameters;
        rj["layers"] = r.layers;
        rj["device_bytes"] = byCategory(r.device);
        rj["device_total_bytes"] = r.device_total_bytes;
        rj["host_bytes"] = byCategory(r.host);
        rj["host_total_bytes"] = r.host_total_bytes;
        rj["fits"] = r.fits;
        rj["allocated_fits"] = r.fits;
        if (const RankReserved *rr = reservedOf(reserved, r.pipeline_rank)) {
            rj.update(reservedToJson(*rr));
            rj["device_peak_bytes"] = rr->device_peak_bytes;
            rj["reserved_fits"] = rr->fits;
            rj["fits"] = rr->fits;
        }
        rj["host_fits"] = r.host_fits;
        rj["in_flight_microbatches"] = r.in_flight_microbatches;
        rj["in_flight_chunks"] = r.in_flight_chunks;
        rj["layer_activation_bytes"] = r.layer_activation_bytes;
        if (config.strategy.pipeline_activation_balance == ActivationBalance::Auto) {
            rj["parked_out_bytes"] = r.parked_out_bytes;
            rj["parked_in_bytes"] = r.parked_in_bytes;
            rj["unbalanced_device_total_bytes"] = r.unbalancedDeviceTotal();
        }
        json entries = json::array();
        for (const LedgerEntry &e : r.entries) {
            entries.push_back({{"category", categoryKey(e.category)},
                               {"placement", placementName(e.placement)},
                               {"label", e.label},
                               {"bytes", e.bytes},
                               {"formula", e.formula},
                               {"note", e.note}});
            if (e.transient) // alive only during the optimizer step (Muon's Newton–Schulz working set)
                entries.back()["transient"] = true;
            if (e.window == BackwardWindow::Layers) // alive only while the layers run their backward
                entries.back()["layer_backward"] = true;
            else if (e.window != BackwardWindow::None) // the root unit's gradients: part of each backward
                entries.back()["backward_window"]
                    = e.window == BackwardWindow::FromOutputLayer ? "from_output_layer" : "end";
            if (e.atPeak) // the simulated peak's working set beyond the other rows
                entries.back()["at_peak"] = true;
        }
        rj["entries"] = std::move(entries);
        ranks.push_back(std::move(rj));
    }
    doc["ranks"] = std::move(ranks);
    if (config.strategy.pipeline_activation_balance == ActivationBalance::Auto) {
        json transfers = json::array();
        for (const ParkedActivations &pa : l.parked)
            transfers.push_back({{"from", pa.from},
                                 {"to", pa.to},
                                 {"bytes", pa.bytes},
                                 {"link", pa.nvlink ? "nvlink" : "network"},
                                 {"link_bytes_per_s", pa.link_bytes_per_s}});
        doc["activation_balance"] = {{"level_bytes", l.balance_level_bytes},
                                     {"unbalanced_peak_bytes", l.unbalanced_peak_bytes},
                                     {"transfers", std::move(transfers)}};
    }
    json warnings = json::array();
    for (const Problem &p : l.warnings)
        warnings.push_back({{"path", p.path}, {"message", p.message}, {"suggestion", p.suggestion}});
    doc["warnings"] = std::move(warnings);
    doc["choices"] = l.choices;
    // Each saved tensor of one layer with its fate (strategy.tensor_policies over recompute_granularity).
    const auto tensors = [&](bool moe) {
        json list = json::array();
        const bool full = config.strategy.recompute_granularity == RecomputeGranularity::Full;
        for (const SavedTensor &s : layerActivations(config, moe).tensors)
            list.push_back({{"name", s.name},
                            {"bytes", s.bytes},
                            {"fate", full ? (s.name == "input_norm.input" ? "store" : "recompute")
                                          : std::string(tensorFateName(s.fate))},
                            {"placed_bytes", full ? (s.name == "input_norm.input" ? s.bytes : 0) : s.placed}});
        return list;
    };
    doc["layer_tensors"] = tensors(false);
    if (config.model.isMoe())
        doc["moe_layer_tensors"] = tensors(true);
    doc["step_time"] = stepTimeToJson(config, estimateStepTime(config));
    return doc;
}

std::string ledgerToTable(const Config &config, const Ledger &l, const PlanReserved *reserved)
{
    std::ostringstream out;
    out << config.name << " — " << formatThousands(l.total_parameters) << " parameters on "
        << countOf(double(l.gpus), "GPU", "GPUs") << " (" << parallelSummary(config) << "), "
        << countOf(double(l.micro_batches), "micro-batch", "micro-batches") << " of "
        << config.training.micro_batch_size << " × " << config.training.seq_length << " tokens\n";
    out << config.hardware.name << ": " << gb(l.capacity_bytes) << " (" << formatGiB(double(l.capacity_bytes))
        << ") HBM, usable " << gb(l.usable_bytes) << " after the runtime reserve\n\n";
    char line[512];
    std::snprintf(line, sizeof line, "%4s %11s %11s %11s %11s %11s %10s %12s %11s %11s %9s %5s\n", "rank", "weights",
                  "gradients", "optimizer", "activations", "comm", "runtime", "device total", "reserved", "host",
                  "in-flight", "fits");
    out << line;
    for (const RankLedger &r : l.ranks) {
        const RankReserved *rr = reservedOf(reserved, r.pipeline_rank);
        std::snprintf(line, sizeof line, "%4d %11s %11s %11s %11s %11s %10s %12s %11s %11s %9s %5s\n", r.pipeline_rank,
                      gb(r.device[0]).c_str(), gb(r.device[1]).c_str(), gb(r.device[2]).c_str(),
                      gb(r.device[3]).c_str(), gb(r.device[4]).c_str(), gb(r.device[5]).c_str(),
                      gb(r.device_total_bytes).c_str(), rr ? gb(rr->reserved_peak).c_str() : "—",
                      gb(r.host_total_bytes).c_str(), inFlight(r.in_flight_microbatches).c_str(),
                      (rr ? rr->fits : r.fits) ? "yes" : "NO");
        out << line;
    }
    out << "\n" << verdict(l, reserved) << "\n";
    if (reserved)
        out << reservedVerdict(*reserved) << "\n";
    if (const std::string host = hostVerdict(l); !host.empty())
        out << host << "\n";
    if (!l.parked.empty())
        out << balanceLine(l) << "\n";
    out << stepTimeLine(estimateStepTime(config)) << "\n";
    for (const Problem &p : l.warnings)
        out << "warning: " << p.toString() << "\n";
    return out.str();
}

std::string ledgerToCsv(const Ledger &l, const PlanReserved *reserved)
{
    std::ostringstream out;
    out << "pipeline_rank";
    for (Category c : kCategories)
        out << "," << categoryKey(c);
    out << ",device_total_bytes";
    for (Category c : kCategories)
        out << ",host_" << categoryKey(c);
    out << ",host_total_bytes,fits,in_flight_microbatches,layer_activation_bytes";
    if (reserved)
        out << ",reserved_bytes,allocated_peak_bytes,device_peak_bytes,reserved_fits";
    out << "\n";
    for (const RankLedger &r : l.ranks) {
        const RankReserved *rr = reservedOf(reserved, r.pipeline_rank);
        out << r.pipeline_rank;
        for (Bytes b : r.device)
            out << "," << b;
        out << "," << r.device_total_bytes;
        for (Bytes b : r.host)
            out << "," << b;
        out << "," << r.host_total_bytes << "," << (r.fits ? "true" : "false") << "," << r.in_flight_microbatches << ","
            << r.layer_activation_bytes;
        if (rr)
            out << "," << rr->reserved_peak << "," << rr->allocated_peak << "," << rr->device_peak_bytes << ","
                << (rr->fits ? "true" : "false");
        out << "\n";
    }
    return out.str();
}

std::string ledgerToMarkdown(const Config &config, const Ledger &l, const PlanReserved *reserved)
{
    std::ostringstream out;
    out << "# " << config.name << "\n\n";
    if (!config.description.empty())
        out << config.description << "\n\n";
    out << "- Model: " << formatThousands(l.total_parameters) << " parameters, " << config.model.num_layers
        << " layers, h = " << config.model.hidden_size << "\n";
    out << "- Plan: " << countOf(double(l.gpus), "GPU", "GPUs") << " (" << parallelSummary(config) << "), "
        << countOf(double(l.micro_batches), "micro-batch", "micro-batches") << " of "
        << config.training.micro_batch_size << " × " << config.training.seq_length << " tokens per iteration\n";
    out << "- Device: " << config.hardware.name << ", " << gb(l.capacity_bytes) << " = "
        << formatGiB(double(l.capacity_bytes)) << " (usable " << gb(l.usable_bytes) << " after the runtime reserve)\n";
    out << "- " << verdict(l, reserved) << "\n";
    if (reserved)
        out << "- " << reservedVerdict(*reserved) << "\n";
    if (const std::string host = hostVerdict(l); !host.empty())
        out << "- " << host << "\n";
    if (!l.parked.empty())
        out << "- " << balanceLine(l) << "\n";
    out << "\n";
    if (reserved)
        out << reservedSection(*reserved);

    out << "| rank |";
    for (Category c : kCategories)
        out << " " << categoryLabel(c) << " |";
    out << " Device total | Host | In-flight | Fits |\n|---:|";
    for (int i = 0; i < kCategoryCount; ++i)
        out << "---:|";
    out << "---:|---:|---:|:---:|\n";
    for (const RankLedger &r : l.ranks) {
        out << "| " << r.pipeline_rank << " |";
        for (Bytes b : r.device)
            out << " " << gb(b) << " |";
        out << " **" << gb(r.device_total_bytes) << "** | " << gb(r.host_total_bytes) << " | "
            << inFlight(r.in_flight_microbatches) << " | "
            << ([&] {
                   const RankReserved *rr = reservedOf(reserved, r.pipeline_rank);
                   return rr ? rr->fits : r.fits;
               }()
                    ? "yes"
                    : "**no**")
            << " |\n";
    }

    for (const RankLedger &r : l.ranks) {
        out << "\n## Rank " << r.pipeline_rank << " — " << gb(r.device_total_bytes) << " on the device";
        if (r.host_total_bytes > 0)
            out << ", " << gb(r.host_total_bytes) << " on the host";
        out << "\n\n"
            << formatThousands(r.parameters) << " parameters, " << r.layers << " transformer layers, "
            << countOf(r.in_flight_microbatches, "micro-batch", "micro-batches") << " in flight at the peak.\n\n";
        out << "| Category | Where | Entry | Bytes | How it is computed |\n|---|---|---|---:|---|\n";
        for (const LedgerEntry &e : r.entries) {
            out << "| " << categoryLabel(e.category) << " | " << placementName(e.placement) << " | " << e.label << " | "
                << gb(e.bytes) << " | " << e.formula;
            if (!e.note.empty())
                out << " — *" << e.note << "*";
            out << " |\n";
        }
    }

    const auto account = [&](const char *title, const LayerActivations &la) {
        out << "\n## " << title << "\n\nWhat autograd saves for backward in one layer, one micro-batch, on one rank "
            << "(s = sequence, b = micro-batch, h = hidden, a = heads, t = tensor-parallel split):\n\n"
            << "| Tensor | Bytes | Fate | Formula |\n|---|---:|---|---|\n";
        const bool full = config.strategy.recompute_granularity == RecomputeGranularity::Full;
        for (const SavedTensor &s : la.tensors) {
            out << "| " << s.name << (s.attentionCore ? " (attention core)" : "") << " | " << gb(s.bytes) << " | ";
            if (full)
                out << (s.name == "input_norm.input" ? "store (checkpoint)" : "recompute (full)");
            else
                out << tensorFateName(s.fate)
                    << (quantizes(s.fate) && s.placed != s.bytes ? " → " + gb(s.placed) : std::string());
            out << " | " << s.formula << " |\n";
        }
        out << "| **total** | **" << gb(la.total) << "** | ";
        if (!full)
            out << "kept " << gb(la.kept) << (la.offloaded > 0 ? ", host " + gb(la.offloaded) : std::string());
        out << " | selective recompute keeps " << gb(la.total - la.attentionCore) << ", full recompute keeps the input "
            << gb(la.checkpoint) << " |\n";
    };
    bool anyDense = false;
    for (std::int64_t i = 0; i < config.model.num_layers; ++i)
        anyDense |= !config.model.isMoeLayer(i);
    if (anyDense)
        account(config.model.isMoe() ? "Activations of one dense layer" : "Activations of one layer",
                layerActivations(config, false));
    if (config.model.isMoe())
        account("Activations of one MoE layer", layerActivations(config, true));

    out << stepTimeToMarkdown(config, estimateStepTime(config));

    out << "\n## Choices in force\n\n";
    for (const std::string &c : l.choices)
        out << "- " << c << "\n";
    if (!l.warnings.empty()) {
        out << "\n## Warnings\n\n";
        for (const Problem &p : l.warnings)
            out << "- `" << p.path << "`: " << p.message << (p.suggestion.empty() ? "" : " (" + p.suggestion + ")")
                << "\n";
    }
    return out.str();
}

} // namespace memledger
