// SPDX-License-Identifier: MIT
// "Find plans that fit" throughput: candidate plans per second on one core
// (issue 6 target: ≥ 1,000,000). Printed, never asserted.
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/planner/search.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

using namespace memledger;

namespace {

Config searchBase(const char *model, std::int64_t globalBatch, std::int64_t seq)
{
    nlohmann::json doc = {{"format", "memledger-preset"}, {"version", 1}, {"name", model}};
    doc["model"] = model;
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", seq}, {"global_batch_size", globalBatch}};
    return *presetFromJson(doc).config;
}

void report(const char *what, const Config &base, std::int64_t gpus)
{
    SearchOptions opt;
    opt.gpus = gpus;
    opt.top = 10;
    opt.maxMicroBatch = 64;
    const SearchResult r = searchPlans(base, opt);
    std::printf("search %-34s %7lld GPUs: %9lld candidates in %.3f s = %.2f M candidates/s "
                "(%lld pruned by the bound, %lld ledgers run)\n",
                what, static_cast<long long>(gpus), static_cast<long long>(r.candidates), r.seconds,
                static_cast<double>(r.candidates) / r.seconds / 1e6, static_cast<long long>(r.prunedByBound),
                static_cast<long long>(r.ledgersRun));
}

} // namespace

TEST_CASE("Plan search throughput", "[bench]")
{
    report("Llama-3-70B, 8 K tokens, GB 1024", searchBase("llama-3-70b", 1024, 8192), 1024);
    report("Llama-3.1-405B, 8 K tokens, GB 2048", searchBase("llama-3.1-405b", 2048, 8192), 16384);
    report("Llama-3-70B, 4 K tokens, GB 65536", searchBase("llama-3-70b", 65536, 4096), 16384);
    report("Mixtral-8x22B, 4 K tokens, GB 1536", searchBase("mixtral-8x22b", 1536, 4096), 3072);
    const Config base = searchBase("llama-3-70b", 1024, 8192);
    SearchOptions opt;
    opt.gpus = 1024;
    BENCHMARK("search Llama-3-70B over 1024 GPUs")
    {
        return searchPlans(base, opt).candidates;
    };
}
