// SPDX-License-Identifier: MIT
// Pipeline staircase (reference README section 4): in-flight micro-batches per rank.
// GPipe, 1F1B and interleaving here; the zero-bubble schedules' counts (Qi et
// al.) are in test_zerobubble.cpp, DualPipe's and DualPipeV's (PP + 1) there
// and in test_dualpipecounts.cpp. That the timeline simulates the ledger's
// counts, for all eight schedules, is the first test of test_timeline.cpp.
#include "core/schedule/schedule.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

Ledger pipeline(const std::string &schedule, std::int64_t v, std::int64_t microBatches)
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 32}, {"hidden_size", 1024}, {"num_attention_heads", 16}};
    doc["training"] = {{"seq_length", 1024}, {"micro_batch_size", 1}, {"global_batch_size", microBatches}};
    doc["parallelism"] = {{"pipeline_model_parallel_size", 8},
                          {"virtual_pipeline_model_parallel_size", v},
                          {"pipeline_schedule", schedule}};
    return computeLedger(configFrom(doc));
}

} // namespace

TEST_CASE("1F1B with p = 8: rank r holds p - r micro-batches", "[schedule][reference]")
{
    const nlohmann::json &ref = referenceCases()["staircase"];
    const Ledger l = pipeline("1f1b", 1, 32);
    std::vector<double> got;
    for (const RankLedger &r : l.ranks)
        got.push_back(r.in_flight_microbatches);
    CHECK(got == ref["one_f_one_b"].get<std::vector<double>>());
    // Activations follow the same steps: rank r holds (p - r) / p of rank 0's.
    for (const RankLedger &r : l.ranks)
        CHECK(entryBytes(r, Category::Activations, "Transformer layers") * 8
              == entryBytes(l.ranks[0], Category::Activations, "Transformer layers") * (8 - r.pipeline_rank));
}

TEST_CASE("GPipe holds every micro-batch on every rank", "[schedule][reference]")
{
    for (std::int64_t m : {8, 16, 24}) {
        const Ledger l = pipeline("gpipe", 1, m);
        for (const RankLedger &r : l.ranks)
            CHECK(r.in_flight_microbatches == m);
    }
}

TEST_CASE("Interleaved 1F1B with v = 2: rank 0 holds p(1 + (p-1)/(pv)) = 11.5 stage-micro-batches",
          "[schedule][reference]")
{
    const nlohmann::json &ref = referenceCases()["staircase"];
    const Ledger l = pipeline("interleaved", ref["interleaved_v"], 32);
    CHECK(l.ranks[0].in_flight_microbatches == Approx(double(ref["interleaved_rank0"])));
    // The general form p + (p - 2r - 1)/v, from Megatron's warm-up count.
    for (const RankLedger &r : l.ranks)
        CHECK(r.in_flight_microbatches == Approx(8.0 + (8.0 - 2.0 * r.pipeline_rank - 1.0) / 2.0));
}

TEST_CASE("Fewer micro-batches than stages cap the staircase", "[schedule]")
{
    ParallelismConfig par;
    par.pipeline_model_parallel_size = 8;
    CHECK(inFlightChunks(par, 3, 0) == 3);
    CHECK(inFlightChunks(par, 3, 6) == 2);
    // Interleaved: the chunks of the warm-up forwards, p at a time per chunk.
    par.virtual_pipeline_model_parallel_size = 2;
    CHECK(inFlightChunks(par, 32, 0) == 23);
    CHECK(inFlightOfChunk(par, 32, 0, 0) + inFlightOfChunk(par, 32, 0, 1) == 23);
    CHECK(inFlightOfChunk(par, 32, 0, 0) == 15);
    CHECK(inFlightOfChunk(par, 32, 7, 1) == 1); // the last rank's last chunk runs its backward at once
}
