// SPDX-License-Identifier: MIT
// The built-in scenarios of published plans that ran: each fits its device by
// every view, with one peak (issue 32's rule): every rank's ledger total is
// its simulated peak, and the caching allocator's reserve with the runtime
// reserve (and what lives outside the allocator) stays within the device.
// Their sources are in each scenario's description.
#include "core/ledger/ledger.h"
#include "core/timeline/peakledger.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <string>

using namespace memledger;

TEST_CASE("Every published plan among the scenarios fits by every view, with one peak", "[published][scenario]")
{
    const std::string name
        = GENERATE(as<std::string>{}, "deepseek-v3-2048xh100-dualpipe", "llama-3.1-405b-8192xh100",
                   "llama-3.1-405b-16384xh100", "llama-3.1-405b-16384xh100-cp16-128k", "nemotron-4-340b-6144xh100",
                   "bloom-176b-384xa100", "llama-3.1-8b-8xh100-torchtitan-fsdp");
    CAPTURE(name);
    const Config config = test::scenario(name);
    const PlanPeak plan = planPeak(config);
    CHECK(plan.ledger.fits());
    REQUIRE(plan.ledger.ranks.size() == plan.timeline.ranks.size());
    for (std::size_t r = 0; r < plan.ledger.ranks.size(); ++r) {
        CAPTURE(r);
        CHECK(plan.ledger.ranks[r].device_total_bytes == plan.timeline.ranks[r].peak_bytes);
        CHECK(plan.ledger.ranks[r].device_total_bytes <= config.hardware.hbm_bytes);
    }
    const PlanReserved reserved = simulateReserved(config, plan.timeline);
    CHECK(reserved.fits());
    CHECK(reserved.peak_bytes <= config.hardware.hbm_bytes);
}
