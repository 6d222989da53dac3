// SPDX-License-Identifier: MIT
// Seeds 000/001: the 7B model on one 80 GB GPU, plans A-D (GB = 1e9 bytes).
#include "core/model/activations.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

const nlohmann::json &seed()
{
    return referenceCases()["seed_000_7b"];
}

// The seed rounds the model to 7e9 parameters; move our exact count onto the
// seed's so its totals can be compared: bytes per parameter x the difference.
double atNominal(double bytes, std::int64_t params, double bytesPerParam)
{
    return bytes + bytesPerParam * (double(seed()["nominal_parameters"]) - double(params));
}

} // namespace

TEST_CASE("Seed 000: the model states are 16 bytes per parameter of a 6.74 B model", "[ledger][reference]")
{
    const Ledger l = computeLedger(scenario("seed-000-7b-a-plain"));
    const RankLedger &r = l.ranks[0];
    CHECK(l.total_parameters == Approx(double(seed()["published_parameters"])).epsilon(0.005));
    const Bytes states = r.device[int(Category::Weights)] + r.device[int(Category::Gradients)]
                         + r.device[int(Category::OptimizerStates)];
    CHECK(states == std::int64_t(seed()["bytes_per_parameter"]) * l.total_parameters);
    // 2 bf16 weight + 2 bf16 grad + 12 optimizer (4 master + 4 m + 4 v).
    CHECK(r.device[int(Category::Weights)] == 2 * l.total_parameters);
    CHECK(r.device[int(Category::Gradients)] == 2 * l.total_parameters);
    CHECK(r.device[int(Category::OptimizerStates)] == 12 * l.total_parameters);
    CHECK(r.device[int(Category::Runtime)] / kGB == Approx(double(seed()["runtime_gb"])));
}

TEST_CASE("Seed 000 plan A: activations 30.6 GB by Korthikanti's per-layer count", "[ledger][reference]")
{
    const Config c = scenario("seed-000-7b-a-plain");
    const RankLedger r = computeLedger(c).ranks[0];
    // Llama's SwiGLU MLP saves 3sbh + 6sbf = 19.1 sbh against GPT's 19 sbh, and
    // fp32 RMSNorm statistics add a little: within 1.5 % of the seed's 30.6 GB.
    const Bytes layers = entryBytes(r, Category::Activations, "Transformer layers");
    CHECK(layers / kGB == Approx(double(seed()["activations_gb"])).epsilon(0.015));
    // Exactly 32 layers of the per-tensor account.
    CHECK(layers == 32 * layerActivations(c, false).total);
}

TEST_CASE("Seed 000 plans A-D: GPU and CPU totals", "[ledger][reference]")
{
    for (const nlohmann::json &plan : seed()["plans"]) {
        const std::string name = plan["preset"];
        CAPTURE(name);
        const Config c = scenario(name);
        const Ledger l = computeLedger(c);
        const RankLedger &r = l.ranks[0];
        const bool offload = c.strategy.optimizer_offload != OffloadTarget::None;
        const bool full = c.strategy.recompute_granularity == RecomputeGranularity::Full;

        // The seed's table ignores the recompute workspace and the loss's logits
        // ("these numbers ignore temporary buffers and recompute workspace"); we
        // count them as their own rows, so compare without them.
        const Bytes workspace = entryBytes(r, Category::Activations, "Recompute working set")
                                + entryBytes(r, Category::Activations, "Output layer and loss");
        const double gpu
            = atNominal(double(r.device_total_bytes - workspace), l.total_parameters, offload ? 4.0 : 16.0);
        CHECK(gpu / kGB == Approx(double(plan["gpu_gb"])).epsilon(0.01));
        const double cpu
            = r.host_total_bytes == 0 ? 0.0 : atNominal(double(r.host_total_bytes), l.total_parameters, 12.0);
        CHECK(cpu / kGB == Approx(double(plan["cpu_gb"])).margin(0.01).epsilon(0.01));

        if (full) {
            // 32 checkpoints of 2sbh: the seed's 0.5 GB.
            const Bytes checkpoints = entryBytes(r, Category::Activations, "Transformer layers");
            CHECK(checkpoints == 32 * 2 * 2048 * 4096);
            CHECK(checkpoints / kGB == Approx(double(seed()["activations_full_checkpointing_gb"])).epsilon(0.1));
            // The backward re-materialises one layer at a time.
            CHECK(entryBytes(r, Category::Activations, "Recompute working set") == layerActivations(c, false).total);
        }
        // Only plans C and D fit an 80 GB GPU.
        CHECK(r.fits == offload);
    }
}

TEST_CASE("Seed 000: with b = 4 activations grow to about 122 GB", "[ledger][reference]")
{
    const RankLedger r = computeLedger(scenario("seed-000-7b-c-offload",
                                                {"training.micro_batch_size=4", "training.global_batch_size=4"}))
                             .ranks[0];
    CHECK(entryBytes(r, Category::Activations, "Transformer layers") / kGB
          == Approx(double(seed()["activations_b4_gb"])).epsilon(0.015));
    CHECK_FALSE(r.fits);
}
