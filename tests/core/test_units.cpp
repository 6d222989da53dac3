// SPDX-License-Identifier: MIT
// The formatters of core/base/units.h, which the GUI and every report share:
// parameter counts (model cards' B and T, decimal), bytes, counts, percents
// and seconds, each with printf's digits.
#include "core/base/units.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

using namespace memledger;

TEST_CASE("Parameter counts in short: B for billions, T for trillions, decimal", "[units]")
{
    // Llama 3 70B counted in full is 70,553,706,496 (its config's shapes): 70.55 B.
    CHECK(formatParameterCount(70553706496LL) == "70.55 B");
    // Llama-2-7B: 6,738,415,616.
    CHECK(formatParameterCount(6738415616LL) == "6.74 B");
    // DeepSeek-V3's 671 B and a trillion-parameter model.
    CHECK(formatParameterCount(671000000000LL) == "671.00 B");
    CHECK(formatParameterCount(1040000000000LL) == "1.04 T");
    // GPT-2 small's 124,439,808: millions with one decimal.
    CHECK(formatParameterCount(124439808) == "124.4 M");
    CHECK(formatParameterCount(1000000) == "1.0 M");
    // Below a million, the exact count.
    CHECK(formatParameterCount(999999) == "999,999");
    CHECK(formatParameterCount(0) == "0");
}

TEST_CASE("Byte figures print printf's digits, ties and signs included", "[units]")
{
    // formatGB's digits must be exactly printf's "%.*f" (1 decimal from 100,
    // 2 from 10, 3 below): the reports' text is compared byte for byte.
    const auto reference = [](double bytes) {
        const double a = std::fabs(bytes);
        const char *unit = a >= 1e12 ? "TB" : a >= 1e9 ? "GB" : a >= 1e6 ? "MB" : "kB";
        const double v = bytes / (a >= 1e12 ? 1e12 : a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : 1e3);
        const double av = std::fabs(v);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f %s", av >= 100 ? 1 : (av >= 10 ? 2 : 3), v, unit);
        return std::string(buf);
    };
    // Ties printf rounds to even on the exact binary value: 1.0625 GB → "1.062",
    // 1.0635 GB (just below a tie in binary) → "1.063"; 2.5e9 at 3 decimals is exact.
    CHECK(formatGB(1.0625e9) == "1.062 GB");
    CHECK(formatGB(1.0635e9) == reference(1.0635e9));
    CHECK(formatGB(2.5e9) == "2.500 GB");
    CHECK(formatGB(-1.5e3) == "-1.500 kB");
    CHECK(formatGB(999.95e9) == reference(999.95e9));
    CHECK(formatGB(5.0e15) == "5000.0 TB");
    // A sweep of values, many of them on or near a rounding boundary.
    std::uint64_t state = 12345;
    for (int i = 0; i < 200000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double digits = double(state >> 40) / 16.0; // multiples of 1/16: exact ties
        const double scale = std::pow(10.0, double((state >> 20) % 13));
        const double bytes = (i % 2 ? digits * scale : double(state >> 11)) * (i % 7 == 0 ? -1 : 1);
        if (std::fabs(bytes) < 1e3)
            continue;
        INFO(bytes);
        REQUIRE(formatGB(bytes) == reference(bytes));
    }
}

TEST_CASE("Counts print with a comma every three digits", "[units]")
{
    CHECK(formatThousands(0) == "0");
    CHECK(formatThousands(999) == "999");
    CHECK(formatThousands(1000) == "1,000");
    CHECK(formatThousands(-1234567) == "-1,234,567");
    CHECK(formatThousands(174591086592LL) == "174,591,086,592"); // GPT-3's 175 B layers, counted
    CHECK(countOf(1, "layer", "layers") == "1 layer");
    CHECK(countOf(12, "layer", "layers") == "12 layers");
    CHECK(countOf(2.5, "stage-micro-batch", "stage-micro-batches") == "2.50 stage-micro-batches");
}

TEST_CASE("Percents and seconds print printf's digits in every report's one style", "[units]")
{
    CHECK(formatPercent(0.4523) == "45.2 %");
    CHECK(formatPercent(0.85, 0) == "85 %");
    CHECK(formatPercent(0.0) == "0.0 %");
    CHECK(formatPercentChange(0.031) == "+3.1 %");
    CHECK(formatPercentChange(-0.004) == "-0.4 %");
    CHECK(formatPercentChange(0.0) == "+0.0 %");
    CHECK(formatPercentChange(-0.0001) == "-0.0 %"); // printf keeps the sign of what rounds to zero
    CHECK(formatPercentCompact(0.8) == "80 %");
    CHECK(formatPercentCompact(0.825) == "82.5 %");
    CHECK(formatSeconds(13.7641, 3) == "13.764 s");
    CHECK(formatSeconds(0.8383689, 2) == "0.84 s");
    CHECK(formatSeconds(0.8383689) == "0.84 s");
    CHECK(formatSeconds(0.0125) == "12.5 ms");
    CHECK(formatSeconds(8.4e-4) == "840 µs");
    CHECK(formatSeconds(0.0) == "0.00 s");
    // What the reports' snprintf calls printed, over a sweep of values on and
    // near rounding boundaries, and beyond the fast path (1e9 and more).
    const auto printf1 = [](const char *format, double v) {
        char buf[512];
        std::snprintf(buf, sizeof buf, format, v);
        return std::string(buf);
    };
    std::uint64_t state = 777;
    for (int i = 0; i < 200000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double digits = double(state >> 40) / 16.0; // multiples of 1/16: exact ties
        const double scale = std::pow(10.0, double(int((state >> 20) % 24) - 12));
        const double v = digits * scale * (i % 5 == 0 ? -1 : 1);
        INFO(v);
        REQUIRE(formatPercent(v) == printf1("%.1f %%", v * 100.0));
        REQUIRE(formatPercent(v, 0) == printf1("%.0f %%", v * 100.0));
        REQUIRE(formatPercentChange(v) == printf1("%+.1f %%", v * 100.0));
        REQUIRE(formatSeconds(v, 3) == printf1("%.3f s", v));
        REQUIRE(formatSeconds(v, 2) == printf1("%.2f s", v));
    }
    CHECK(formatSeconds(1e300, 3) == printf1("%.3f s", 1e300));
}

TEST_CASE("Long times read in minutes and hours, short ones as seconds", "[units]")
{
    // Issue 34, item 19: a 4,320 s step was "4320.00 s", wider than the header's label.
    CHECK(formatDuration(0.0125) == formatSeconds(0.0125));
    CHECK(formatDuration(59.5) == "59.50 s");
    CHECK(formatDuration(59.996) == "1.0 min"); // not "60.00 s"
    CHECK(formatDuration(1050) == "17.5 min");
    CHECK(formatDuration(3596) == "59.9 min");
    CHECK(formatDuration(3598.2) == "1 h"); // 59.97 min: not "60.0 min"
    CHECK(formatDuration(4320) == "1 h 12 min");
    CHECK(formatDuration(7200) == "2 h");
    CHECK(formatDuration(359969) == "99 h 59 min");
    CHECK(formatDuration(359970) == "100 h"); // not "99 h 60 min"
    CHECK(formatDuration(1e7) == "2778 h");
    CHECK(formatDuration(-1050) == "-17.5 min");
}
