// SPDX-License-Identifier: MIT
// waterFill's level by its definition, searched byte by byte in the test: the
// smallest level L at which the donors' bytes above L (each capped at what it
// may move) no longer exceed the room below L. waterFill solves it between
// the kinks of the two sums; a plain binary search over the bytes must agree.
#include "core/ledger/balance.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

using namespace memledger;

namespace {

Bytes levelBySearch(const std::vector<Bytes> &totals, const std::vector<Bytes> &movable)
{
    const auto give = [&](Bytes l) {
        Bytes s = 0;
        for (std::size_t r = 0; r < totals.size(); ++r)
            s += std::min(movable[r], std::max<Bytes>(0, totals[r] - l));
        return s;
    };
    const auto take = [&](Bytes l) {
        Bytes s = 0;
        for (Bytes t : totals)
            s += std::max<Bytes>(0, l - t);
        return s;
    };
    Bytes lo = *std::min_element(totals.begin(), totals.end());
    Bytes hi = *std::max_element(totals.begin(), totals.end());
    while (lo < hi) {
        const Bytes mid = lo + (hi - lo) / 2;
        if (give(mid) <= take(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

} // namespace

TEST_CASE("waterFill's level is the smallest level where the donors give no more than the receivers take", "[balance]")
{
    std::mt19937_64 rng(12);
    for (int it = 0; it < 2000; ++it) {
        const std::size_t n = 1 + rng() % 12;
        const Bytes scale = it % 2 ? 1000 : 200'000'000'000;
        std::vector<Bytes> totals(n), movable(n);
        for (std::size_t r = 0; r < n; ++r) {
            totals[r] = static_cast<Bytes>(rng() % static_cast<std::uint64_t>(scale));
            movable[r] = rng() % 3 == 0 ? 0 : static_cast<Bytes>(rng() % static_cast<std::uint64_t>(totals[r] + 1));
        }
        const WaterFill f = waterFill(totals, movable);
        REQUIRE(f.level == levelBySearch(totals, movable));
        Bytes out = 0, in = 0;
        for (std::size_t r = 0; r < n; ++r) {
            out += f.out[r];
            in += f.in[r];
        }
        REQUIRE(in == out); // every byte that leaves a donor lands on a receiver
    }
}
