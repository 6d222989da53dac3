// SPDX-License-Identifier: MIT
// The validator's check of strategy.tensor_policies from the totals-only
// pass (core/model/policymatch.h): which rules match a tensor, against the names
// the per-layer table lists, and the text formatting the ledger leans on
// (to_chars in place of printf) against printf itself.
#include "core/base/units.h"
#include "core/model/activations.h"
#include "core/model/policymatch.h"
#include "core/model/tensorpolicy.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

// What the validator computed before: rule k matches when a listed name does.
std::uint64_t matchedByNames(const Config &c)
{
    std::vector<std::string> names;
    for (bool moe : {false, true}) {
        if (moe && !c.model.isMoe())
            continue;
        for (const SavedTensor &t : layerActivations(c, moe, TensorList::NamesOnly).tensors)
            names.push_back(t.name);
    }
    std::uint64_t bits = 0;
    for (std::size_t k = 0; k < c.strategy.tensor_policies.size() && k < 64; ++k)
        for (const std::string &n : names)
            if (globMatch(c.strategy.tensor_policies[k].pattern, n))
                bits |= std::uint64_t(1) << k;
    return bits;
}

} // namespace

TEST_CASE("matchedPolicies: the rules that match a saved tensor, without listing the names", "[tensorpolicy]")
{
    // GPT-3 (dropout 0.1, no FlashAttention): attention.* matches the
    // attention tensors, mlp.fc1.output is GeLU's input, *dropout_mask the
    // masks; no layer saves a "router" tensor, and a dense layer has no
    // moe.* tensors.
    Config c = scenario("gpt-3-175b-64gpus-tp-only");
    c.strategy.tensor_policies = {{"attention.*", TensorFate::Recompute},
                                  {"mlp.fc1.output", TensorFate::QuantizeFp8},
                                  {"router", TensorFate::Store},
                                  {"*dropout_mask", TensorFate::Store},
                                  {"moe.*", TensorFate::Offload}};
    CHECK(matchedPolicies(c, false) == 0b01011);
    CHECK(matchedPolicies(c, false) == matchedByNames(c));

    // Every shipped scenario, with rules of each kind, agrees with the names.
    for (const char *name : {"llama-3-70b-128xh100", "mixtral-8x22b-64xh100-dropless", "deepseek-v3-2048xh100-p16-v4",
                             "gpt-3-175b-64gpus-tp-sp-selective", "seed-000-7b-a-plain"}) {
        INFO(name);
        Config s = scenario(name);
        if (s.strategy.recompute_granularity == RecomputeGranularity::Full)
            s.strategy.recompute_granularity = RecomputeGranularity::None;
        s.strategy.tensor_policies = {{"attention.*", TensorFate::Recompute},
                                      {"mlp.fc?.input", TensorFate::Offload},
                                      {"moe.experts.fc1.input", TensorFate::Store},
                                      {"*.stats", TensorFate::Store},
                                      {"mla.*", TensorFate::Store},
                                      {"nothing.here", TensorFate::Store}};
        const std::uint64_t bits
            = matchedPolicies(s, false) | (s.model.isMoe() ? matchedPolicies(s, true) : std::uint64_t(0));
        CHECK(bits == matchedByNames(s));
        CHECK((bits & 0b100000) == 0); // "nothing.here"
    }
}

TEST_CASE("formatGB and countOf print what printf's %.*f prints", "[units]")
{
    // Three decimals under 10, two under 100, one above (formatScaled).
    for (double v : {0.0, 1.0, 1.2345, 9.9995, 9.99949, 10.0, 12.345, 99.995, 99.9949, 100.0, 123.45, 999.95, 0.0625,
                     0.125, 2.5e-4, 71.20, 80.0, 1.0 / 3.0}) {
        for (double scale : {1e3, 1e6, 1e9, 1e12}) {
            const double bytes = v * scale;
            if (bytes < 1e3)
                continue;
            const double a = bytes >= 1e12  ? bytes / 1e12
                             : bytes >= 1e9 ? bytes / 1e9
                             : bytes >= 1e6 ? bytes / 1e6
                                            : bytes / 1e3;
            const char *unit = bytes >= 1e12 ? "TB" : bytes >= 1e9 ? "GB" : bytes >= 1e6 ? "MB" : "kB";
            char expected[64];
            std::snprintf(expected, sizeof expected, "%.*f %s", a >= 100 ? 1 : a >= 10 ? 2 : 3, a, unit);
            INFO(bytes);
            CHECK(formatGB(bytes) == expected);
        }
    }
    CHECK(formatGB(-2.5e9) == "-2.500 GB");
    CHECK(countOf(2.5, "micro-batch", "micro-batches") == "2.50 micro-batches");
    CHECK(countOf(1, "layer", "layers") == "1 layer");
    CHECK(countOf(12000, "layer", "layers") == "12,000 layers");
}
