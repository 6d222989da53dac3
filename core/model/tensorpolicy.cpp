// SPDX-License-Identifier: MIT
#include "core/model/tensorpolicy.h"

#include <algorithm>
#include <iterator>

namespace memledger {

bool globMatch(std::string_view pattern, std::string_view name)
{
    // Iterative wildcard match with one backtrack point: linear in practice.
    std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
    while (n < name.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
            ++p;
            ++n;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

namespace {

bool isGlob(std::string_view pattern)
{
    return pattern.find_first_of("*?") != std::string_view::npos;
}

} // namespace

std::optional<TensorFate> policyFor(const std::vector<TensorPolicy> &policies, std::string_view name)
{
    const TensorPolicy *best = nullptr;
    for (const TensorPolicy &rule : policies) {
        if (!isGlob(rule.pattern)) {
            if (rule.pattern == name)
                return rule.fate;
            continue;
        }
        if (!globMatch(rule.pattern, name))
            continue;
        if (!best || rule.pattern.size() > best->pattern.size()
            || (rule.pattern.size() == best->pattern.size() && rule.pattern < best->pattern))
            best = &rule;
    }
    if (best)
        return best->fate;
    return std::nullopt;
}

bool selectiveOpKeeps(std::string_view name)
{
    static constexpr std::string_view kKept[] = {
        "input_norm.input", // the block's input: the checkpoint's own
        "attention.q",
        "attention.v", // wq's and wv's outputs (matmuls 1 and 3; wk's, the 2nd, is recomputed)
        "attention.proj.input",
        "attention.softmax_lse", // the attention kernel's output and log-sum-exp
        "attention.proj.reduce_scatter", // wo (the 4th matmul) recomputed, its reduce-scatter kept
        "mlp.fc1.gate", // w1's output (the 5th; w3's, the 6th, is recomputed)
        "mlp.fc1.output", // without a gated MLP, fc1's output (the 5th; fc2, the 6th, recomputed)
        "mlp.fc2.output", // w2's output (the 7th)
        "mlp.fc2.reduce_scatter",
    };
    return std::find(std::begin(kKept), std::end(kKept), name) != std::end(kKept);
}

TensorFate granularityFate(const StrategyConfig &st, std::string_view name, bool attentionCore)
{
    if (st.recompute_granularity == RecomputeGranularity::SelectiveOp)
        return selectiveOpKeeps(name) ? TensorFate::Store : TensorFate::Recompute;
    return st.recompute_granularity == RecomputeGranularity::Selective && attentionCore ? TensorFate::Recompute
                                                                                        : TensorFate::Store;
}

TensorFate tensorFate(const StrategyConfig &st, std::string_view name, bool attentionCore, bool layerInput)
{
    const TensorFate base = granularityFate(st, name, attentionCore);
    if (st.tensor_policies.empty())
        return base;
    const TensorFate f = policyFor(st.tensor_policies, name).value_or(base);
    return layerInput && f == TensorFate::Recompute ? TensorFate::Store : f;
}

bool quantizes(TensorFate f)
{
    return f == TensorFate::QuantizeFp8 || f == TensorFate::QuantizeFp8Offload || f == TensorFate::QuantizeE5M6;
}

bool offloads(TensorFate f)
{
    return f == TensorFate::Offload || f == TensorFate::QuantizeFp8Offload;
}

bool leavesDevice(TensorFate f)
{
    return f == TensorFate::Recompute || offloads(f);
}

Bytes quantizedBytes(const StrategyConfig &st, Bytes bytes, int elementBytes, int activationElementBytes,
                     TensorFate fate)
{
    if (elementBytes <= 1 || elementBytes != activationElementBytes)
        return bytes;
    const Bytes elements = bytes / elementBytes;
    const Bytes block = st.activation_quant_block_size > 0 ? st.activation_quant_block_size : 1;
    const Bytes scale = st.activation_quant_scale_dtype == QuantScale::E8M0 ? 1 : 4;
    const Bytes data = fate == TensorFate::QuantizeE5M6 ? (elements * 12 + 7) / 8 : elements;
    return data + (elements + block - 1) / block * scale;
}

} // namespace memledger
