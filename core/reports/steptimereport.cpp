// SPDX-License-Identifier: MIT
#include "core/reports/steptimereport.h"

#include "core/base/units.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace memledger {

namespace {

// "tensor_comm" -> "tensor comm"
std::string spaced(std::string_view name)
{
    std::string s(name);
    for (char &c : s)
        if (c == '_')
            c = ' ';
    return s;
}

} // namespace

std::vector<std::string> stepTimeChoices(const Config &config)
{
    const StrategyConfig &st = config.strategy;
    std::vector<std::string> out;
    out.push_back("Kernels at " + config.hardware.name
                  + "'s achieved rates (hardware.gemm_efficiency, hbm_efficiency by operation size); collectives "
                    "at its NVLink and network bus bandwidths by message size (nvlink_efficiency, "
                    "network_efficiency). Busiest pipeline rank, micro-batches back to back, bubble (p-1)/v.");
    out.push_back(st.flash_attention ? "FlashAttention: one kernel per pass, causal (half the score work), its "
                                       "backward recomputing the scores (FlashAttention-2)."
                                     : "Unfused attention (Megatron's core attention): QK^T over the whole square, "
                                       "softmax and dropout through HBM, then the product with V.");
    out.push_back(st.overlap_grad_reduce
                      ? "overlap_grad_reduce: gradient buckets are reduced under the last micro-batch's backward "
                        "(Megatron --overlap-grad-reduce, PyTorch DDP)."
                      : "overlap_grad_reduce off (Megatron's default): the data-parallel reduction follows the "
                        "backward, exposed.");
    if (config.parallelism.zero_stage >= 1)
        out.push_back(st.overlap_param_gather
                          ? "overlap_param_gather: ZeRO's all-gather of the updated weights runs bucket by bucket "
                            "under the next iteration's first forwards, only what outlasts them (at least the first "
                            "bucket) exposed (Megatron --overlap-param-gather)."
                          : "overlap_param_gather off (Megatron's default): ZeRO's all-gather of the updated weights "
                            "follows the optimizer step, exposed.");
    if (config.parallelism.pipeline_model_parallel_size > 1)
        out.push_back(overlapP2pInForce(config)
                          ? "overlap_p2p_comm: the interleaved schedule's steady-state pipeline sends run under the "
                            "next chunk's compute (Megatron-LM's default); the warm-up and cool-down sends, (v-1)*p "
                            "each on the last rank, stay exposed."
                      : st.overlap_p2p_comm
                          ? "overlap_p2p_comm not in force: Megatron-LM overlaps pipeline sends only in the "
                            "interleaved schedule (v > 1); every send is exposed."
                          : "overlap_p2p_comm off: every pipeline send and receive is exposed (Megatron-LM's "
                            "--no-overlap-p2p-communication, batched sends).");
    if (config.training.fp8_recipe != Fp8Recipe::None)
        out.push_back(
            std::string("FP8: the linear layers' GEMMs at hardware.peak_fp8_flops, their casts as memory-bound "
                        "kernels")
            + (config.training.fp8_recipe == Fp8Recipe::Tensorwise
                   ? ", each after an amax pass over its 16-bit tensor (current scaling needs the amax "
                     "before it can cast)."
                   : " reading each tensor once (the scale comes from the amax history or the block)."));
    if (config.parallelism.zero_stage >= 1 && config.training.fp8_recipe != Fp8Recipe::None)
        out.push_back(st.fp8_param_gather
                          ? "fp8_param_gather: ZeRO's all-gathers move the linear layers' weights in FP8 (1 byte and "
                            "the scales), the rest in their own dtype (Megatron --fp8-param-gather, torchtitan's "
                            "enable_fsdp_float8_all_gather)."
                          : "fp8_param_gather off (Megatron's default): ZeRO's all-gathers move the 16-bit weights.");
    out.push_back(st.tp_comm_overlap ? "tp_comm_overlap: TP collectives hide behind the GEMMs of the same pass "
                                       "(Megatron --tp-comm-overlap)."
                                     : "tp_comm_overlap off (Megatron's default): TP collectives are exposed.");
    if (st.pipeline_activation_balance == ActivationBalance::Auto
        && config.parallelism.pipeline_model_parallel_size > 1)
        out.push_back("Activation balance: each parked share comes back while the backward runs through the rest of "
                      "its group; what the link cannot carry in that time stalls the backward (activation_balance).");
    if (config.training.optimizer == Optimizer::Muon)
        out.push_back(
            std::string("Muon: 5 Newton–Schulz iterations per layer matrix (3 GEMMs each, 4m²n + 2m³ FLOPs), ")
            + (config.training.muon_newton_schulz == MuonNewtonSchulz::Redundant
                   ? "every rank computing its matrices whole (muon_newton_schulz = redundant)"
                   : "each matrix on one data-parallel rank (muon_newton_schulz = layer_wise)")
            + ", and the bf16 all-gathers that make them whole, in optimizer.");
    if (st.optimizer_offload != OffloadTarget::None)
        out.push_back("Offloaded optimizer step: CPU-Adam at hardware.cpu_adam_params_per_s ("
                      + formatThousands(std::int64_t(config.hardware.cpu_adam_params_per_s))
                      + " parameters/s; ZeRO-Offload's 0.25 s per billion, Ren et al. 2021)"
                      + (st.grad_offload != OffloadTarget::None
                             ? "; gradients stream out during backward through a two-bucket double buffer, the "
                               "stalls and the final drain in grad_offload."
                             : "; gradients copied out after the backward."));
    return out;
}

nlohmann::json stepTimeToJson(const Config &config, const StepTime &t)
{
    nlohmann::json parts = nlohmann::json::object();
    for (const StepTimePart &p : stepTimeParts(t))
        parts[std::string(p.name)] = p.seconds;
    nlohmann::json doc = {{"total_s", t.total},
                          {"mfu", t.mfu},
                          {"model_flops_per_gpu", t.modelFlopsPerGpu},
                          {"parts_s", std::move(parts)},
                          {"choices", stepTimeChoices(config)}};
    // data_comm_exposed split: the gradient reduction and ZeRO's weight gathers.
    doc["data_comm"]
        = {{"grad_reduce_exposed_s", t.dataComm - t.paramGather}, {"param_gather_exposed_s", t.paramGather}};
    if (t.balanceLinkBytesPerS > 0)
        doc["activation_balance"] = {{"exposed_s", t.activationBalance},
                                     {"needed_bytes_per_s", t.balanceNeededBytesPerS},
                                     {"link_bytes_per_s", t.balanceLinkBytesPerS}};
    return doc;
}

std::string stepTimeLine(const StepTime &t)
{
    std::ostringstream out;
    out << "Step time ≈ " << formatSeconds(t.total) << " (MFU " << formatPercent(t.mfu) << "):";
    bool first = true;
    for (const StepTimePart &p : stepTimeParts(t)) {
        if (p.seconds <= 0.0005 * t.total)
            continue;
        out << (first ? " " : ", ") << spaced(p.name) << " " << formatSeconds(p.seconds);
        first = false;
    }
    return out.str();
}

std::string stepTimeToMarkdown(const Config &config, const StepTime &t)
{
    std::ostringstream out;
    out << "\n## Step time (estimate)\n\n"
        << "About " << formatSeconds(t.total) << " per iteration, MFU " << formatPercent(t.mfu) << " (model FLOPs of ";
    char flops[64];
    std::snprintf(flops, sizeof flops, "%.3g", t.modelFlopsPerGpu);
    out << flops << " per GPU against the device's peak over the step).\n\n"
        << "| Part | Seconds | Share |\n|---|---:|---:|\n";
    for (const StepTimePart &p : stepTimeParts(t))
        if (p.seconds > 0)
            out << "| " << spaced(p.name) << " | " << formatSeconds(p.seconds) << " | "
                << formatPercent(t.total > 0 ? p.seconds / t.total : 0) << " |\n";
    if (t.paramGather > 0)
        out << "\nOf the exposed data-parallel communication, " << formatSeconds(t.dataComm - t.paramGather)
            << " is the gradient reduction and " << formatSeconds(t.paramGather)
            << " ZeRO's all-gather of the weights.\n";
    if (t.balanceLinkBytesPerS > 0) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "Activation balance needs %.0f GB/s to hide its copies back; the link gives %.0f GB/s "
                      "(%s exposed).\n",
                      t.balanceNeededBytesPerS / 1e9, t.balanceLinkBytesPerS / 1e9,
                      formatSeconds(t.activationBalance).c_str());
        out << "\n" << line;
    }
    out << "\n";
    for (const std::string &c : stepTimeChoices(config))
        out << "- " << c << "\n";
    return out.str();
}

} // namespace memledger
