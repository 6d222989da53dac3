// SPDX-License-Identifier: MIT
#include "core/reports/inferencereport.h"

#include "core/reports/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace memledger {

using nlohmann::json;

namespace {

std::string gb(Bytes b)
{
    return formatGB(static_cast<double>(b));
}

json workingSetToJson(const WorkingSet &w)
{
    return {{"tokens", w.shape.tokens},
            {"sequences", w.shape.sequences},
            {"query_length", w.shape.query_length},
            {"key_length", w.shape.key_length},
            {"residual_bytes", w.residual},
            {"attention_bytes", w.attention},
            {"mlp_bytes", w.mlp},
            {"moe_routing_bytes", w.moe_routing},
            {"logits_bytes", w.logits},
            {"total_bytes", w.total}};
}

} // namespace

json inferenceToJson(const Config &config, const InferenceLedger &l)
{
    const InferenceConfig &s = l.settings;
    json ranks = json::array();
    for (const InferenceRank &r : l.ranks) {
        json device = json::object();
        for (InferenceCategory c : kInferenceCategories)
            device[std::string(inferenceCategoryKey(c))] = r.device[static_cast<std::size_t>(c)];
        json entries = json::array();
        for (const InferenceEntry &e : r.entries)
            entries.push_back({{"category", inferenceCategoryKey(e.category)},
                               {"label", e.label},
                               {"bytes", e.bytes},
                               {"formula", e.formula}});
        ranks.push_back({{"pipeline_rank", r.pipeline_rank},
                         {"layers", r.layers},
                         {"parameters", r.parameters},
                         {"device_bytes", std::move(device)},
                         {"device_total_bytes", r.device_total_bytes},
                         {"fits", r.fits},
                         {"prefill", workingSetToJson(r.prefill)},
                         {"decode", workingSetToJson(r.decode)},
                         {"entries", std::move(entries)}});
    }
    return {{"name", config.name},
            {"batch_size", s.batch_size},
            {"context_length", s.context_length.value_or(0)},
            {"cached_tokens", l.cached_tokens},
            {"kv_cache_dtype", servingDtypeName(s.kv_cache_dtype)},
            {"weights_dtype", servingDtypeName(s.weights_dtype)},
            {"total_parameters", l.total_parameters},
            {"weights_bytes", l.weights_bytes},
            {"kv_cache_bytes_per_token", l.kv_cache_bytes_per_token},
            {"ranks", std::move(ranks)},
            {"peak_rank", l.peak_rank},
            {"peak_bytes", l.peak_bytes},
            {"capacity_bytes", l.capacity_bytes},
            {"fits", l.fits()},
            {"training_peak_bytes", l.training_peak_bytes}};
}

std::string inferenceToTable(const Config &config, const InferenceLedger &l)
{
    const InferenceConfig &s = l.settings;
    std::ostringstream out;
    out << config.name << " served — " << formatThousands(l.total_parameters) << " parameters in "
        << servingDtypeName(s.weights_dtype) << " (" << parallelSummary(config) << "), " << s.batch_size << " × "
        << s.context_length.value_or(0) << " tokens, KV cache in " << servingDtypeName(s.kv_cache_dtype) << "\n";
    out << "KV cache per token (whole model): " << formatThousands(l.kv_cache_bytes_per_token) << " B; "
        << config.hardware.name << ": " << gb(l.capacity_bytes) << " HBM\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%4s %11s %11s %11s %10s %12s %5s\n", "rank", "weights", "kv cache", "activations",
                  "runtime", "device total", "fits");
    out << line;
    for (const InferenceRank &r : l.ranks) {
        std::snprintf(line, sizeof line, "%4d %11s %11s %11s %10s %12s %5s\n", r.pipeline_rank, gb(r.device[0]).c_str(),
                      gb(r.device[1]).c_str(), gb(r.device[2]).c_str(), gb(r.device[3]).c_str(),
                      gb(r.device_total_bytes).c_str(), r.fits ? "yes" : "NO");
        out << line;
    }
    out << "\nServing peak " << gb(l.peak_bytes) << " per GPU (rank " << l.peak_rank << "); training this plan needs "
        << gb(l.training_peak_bytes) << " per GPU — " << (l.fits() ? "serving fits" : "serving does not fit") << "\n";
    return out.str();
}

} // namespace memledger
