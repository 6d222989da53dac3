// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memledger {

// Byte counts are signed 64-bit so that differences stay well defined; the
// validator refuses any configuration whose largest product could pass 2^62.
using Bytes = std::int64_t;

constexpr double kGB = 1e9;
constexpr double kGiB = 1073741824.0;

enum class Dtype { FP32, BF16, FP16, FP8, INT8 };

int dtypeBytes(Dtype d);
std::string_view dtypeName(Dtype d);
std::optional<Dtype> parseDtype(std::string_view s);

// "12.35 GB" (decimal, as the seeds and vendors write capacities).
std::string formatGB(double bytes);
// "11.50 GiB".
std::string formatGiB(double bytes);
// The smallest 1, 2 or 5 x 10^k at or above `value` (a chart axis's top).
double niceCeiling(double value);

// A value axis from 0 that holds `value`: ticks every 1, 2 or 5 x 10^k, about six of them.
struct NiceAxis
{
    double max = 1;
    double step = 1;
    int ticks() const { return static_cast<int>(std::lround(max / step)) + 1; }
    // Decimals that tell the tick labels apart (0 for steps of 1 or more).
    int decimals() const;
};
NiceAxis niceAxis(double value);

// "1 GPU", "8 GPUs": a count with its noun, plural unless exactly one.
std::string countOf(double n, std::string_view singular, std::string_view plural);
// The same text on the stack, for a part of cat() (core/base/textcat.h): the
// ledger builds a few dozen per evaluation, and each std::string would be
// allocated only to be copied into the row's text and freed.
class CountText
{
public:
    CountText(double n, std::string_view singular, std::string_view plural);
    operator std::string_view() const { return {m_text, m_size}; }

private:
    char m_text[96];
    std::size_t m_size = 0;
};
// A parameter count in short: 70553706496 -> "70.55 B", 6.7e11 -> "670.00 B",
// 1.2e12 -> "1.20 T", 124439808 -> "124.4 M"; below a million the exact count.
std::string formatParameterCount(std::int64_t parameters);
// 1234567 -> "1,234,567".
std::string formatThousands(std::int64_t v);

// The percents and seconds of every report, so that one figure reads the
// same wherever it is printed. A percent has a space before its sign, as
// SI writes it; the digits are printf's ("%.*f": correctly rounded).
// A fraction as a percent, `decimals` after the point: 0.4523 -> "45.2 %",
// (0.85, 0) -> "85 %".
std::string formatPercent(double fraction, int decimals = 1);
// A difference or an error, signed either way: 0.031 -> "+3.1 %", -0.004 -> "-0.4 %".
std::string formatPercentChange(double fraction, int decimals = 1);
// A limit someone chose, in as few decimals as show it (at most one):
// 0.8 -> "80 %", 0.825 -> "82.5 %".
std::string formatPercentCompact(double fraction);
// Seconds at a fixed precision, for figures read side by side: (13.7641, 3) -> "13.764 s".
std::string formatSeconds(double seconds, int decimals);
// Seconds in the unit that suits, two or three significant figures, for a
// figure read alone: 0.8383689 -> "0.84 s", 0.0125 -> "12.5 ms", 8.4e-4 -> "840 µs".
std::string formatSeconds(double seconds);
// A time that may run long, for a figure read alone in little room (a step
// time): below a minute as formatSeconds(seconds); then minutes to one
// decimal, 1050 -> "17.5 min"; from an hour, hours and whole minutes,
// 4320 -> "1 h 12 min", 7200 -> "2 h"; from 100 hours, whole hours.
std::string formatDuration(double seconds);

} // namespace memledger
