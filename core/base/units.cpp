// SPDX-License-Identifier: MIT
#include "core/base/units.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace memledger {

int dtypeBytes(Dtype d)
{
    switch (d) {
    case Dtype::FP32:
        return 4;
    case Dtype::BF16:
    case Dtype::FP16:
        return 2;
    case Dtype::FP8:
    case Dtype::INT8:
        return 1;
    }
    return 4;
}

std::string_view dtypeName(Dtype d)
{
    switch (d) {
    case Dtype::FP32:
        return "fp32";
    case Dtype::BF16:
        return "bf16";
    case Dtype::FP16:
        return "fp16";
    case Dtype::FP8:
        return "fp8";
    case Dtype::INT8:
        return "int8";
    }
    return "fp32";
}

std::optional<Dtype> parseDtype(std::string_view s)
{
    for (Dtype d : {Dtype::FP32, Dtype::BF16, Dtype::FP16, Dtype::FP8, Dtype::INT8})
        if (dtypeName(d) == s)
            return d;
    return std::nullopt;
}

// "%.*f" without printf: std::to_chars with a precision is specified to
// give printf's digits (correctly rounded, the C locale), several times
// faster, and the ledger formats a few hundred figures per evaluation.
//
// Faster still for the ledger's figures (below a million, 0–3 decimals): the
// value scaled to an integer and rounded, printed digit by digit. The
// product's rounding error is below 1e-7 there, so away from a tie (a
// fraction within 1e-6 of one half) the integer is the one printf rounds to;
// a near tie goes to std::to_chars, which decides it exactly.
// Writes the digits into `buf` (at least 64 chars) and returns their length.
static std::size_t fixedChars(char *buf, double value, int decimals)
{
    static constexpr double kScale[] = {1, 10, 100, 1000};
    if (decimals >= 0 && decimals <= 3) {
        const double x = std::fabs(value) * kScale[decimals];
        if (x < 1e9) { // NaN fails this too
            const double whole = std::floor(x);
            const double frac = x - whole;
            if (std::fabs(frac - 0.5) > 1e-6) {
                auto n = static_cast<std::uint64_t>(whole) + (frac > 0.5 ? 1 : 0);
                char tmp[32];
                char *end = tmp + sizeof tmp, *p = end;
                for (int d = 0; d < decimals; ++d, n /= 10)
                    *--p = static_cast<char>('0' + n % 10);
                if (decimals > 0)
                    *--p = '.';
                do {
                    *--p = static_cast<char>('0' + n % 10);
                    n /= 10;
                } while (n > 0);
                if (std::signbit(value)) // printf keeps the sign of a negative value that rounds to zero
                    *--p = '-';
                const auto len = static_cast<std::size_t>(end - p);
                std::memcpy(buf, p, len);
                return len;
            }
        }
    }
    const std::to_chars_result r = std::to_chars(buf, buf + 64, value, std::chars_format::fixed, decimals);
    return static_cast<std::size_t>(r.ptr - buf);
}

static std::string fixedText(double value, int decimals)
{
    char buf[64];
    return std::string(buf, fixedChars(buf, value, decimals));
}

// `value` in "%.*f" followed by `unit`, `sign` first when asked for ("%+.*f").
// fixedChars' 64 characters hold any value below 1e50 at up to 6 decimals;
// printf writes the rare larger one (a ratio against a near-zero time).
static std::string fixedWithUnit(double value, int decimals, std::string_view unit, bool sign = false)
{
    char buf[96];
    std::size_t len = 0;
    if (sign && !std::signbit(value))
        buf[len++] = '+';
    if (std::fabs(value) < 1e50 && decimals >= 0 && decimals <= 6) {
        len += fixedChars(buf + len, value, decimals);
    } else {
        char big[400];
        const int n = std::snprintf(big, sizeof big, "%.*f", decimals, value);
        std::string out(buf, len);
        out.append(big, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof big) - 1)));
        return out.append(unit);
    }
    std::memcpy(buf + len, unit.data(), unit.size());
    return std::string(buf, len + unit.size());
}

std::string formatPercent(double fraction, int decimals)
{
    return fixedWithUnit(fraction * 100.0, decimals, " %");
}

std::string formatPercentChange(double fraction, int decimals)
{
    return fixedWithUnit(fraction * 100.0, decimals, " %", true);
}

std::string formatPercentCompact(double fraction)
{
    const double pct = fraction * 100.0;
    return fixedWithUnit(pct, std::fabs(pct - std::round(pct)) < 1e-9 ? 0 : 1, " %");
}

std::string formatSeconds(double seconds, int decimals)
{
    return fixedWithUnit(seconds, decimals, " s");
}

std::string formatSeconds(double seconds)
{
    const double a = std::fabs(seconds);
    if (a >= 0.1 || a == 0)
        return fixedWithUnit(seconds, 2, " s");
    if (a >= 1e-3)
        return fixedWithUnit(seconds * 1e3, 1, " ms");
    return fixedWithUnit(seconds * 1e6, 0, " µs");
}

std::string formatDuration(double seconds)
{
    const double a = std::fabs(seconds);
    // Up to where formatSeconds' two decimals would round to "60.00 s" (NaN too).
    if (!(a >= 59.995))
        return formatSeconds(seconds);
    // Rounded to the unit shown first, so that 59.97 min reads "1 h", not "60.0 min".
    if (std::round(a / 6.0) < 600)
        return fixedWithUnit(std::round(seconds / 6.0) / 10.0, 1, " min");
    const std::string sign = seconds < 0 ? "-" : "";
    if (a >= 100 * 3600.0 - 30)
        return sign + fixedWithUnit(a / 3600.0, 0, " h");
    const auto minutes = static_cast<std::int64_t>(std::llround(a / 60.0));
    const std::string hours = sign + std::to_string(minutes / 60) + " h";
    return minutes % 60 == 0 ? hours : hours + " " + std::to_string(minutes % 60) + " min";
}

// The figure and its unit written once into the string (no growth).
static std::string formatScaled(double value, std::string_view unit)
{
    const double a = std::fabs(value);
    const int decimals = a >= 100 ? 1 : (a >= 10 ? 2 : 3);
    char buf[96];
    std::size_t len = fixedChars(buf, value, decimals);
    buf[len++] = ' ';
    std::memcpy(buf + len, unit.data(), unit.size());
    return std::string(buf, len + unit.size());
}

std::string formatGB(double bytes)
{
    const double a = std::fabs(bytes);
    if (a >= 1e12)
        return formatScaled(bytes / 1e12, "TB");
    if (a >= 1e9)
        return formatScaled(bytes / 1e9, "GB");
    if (a >= 1e6)
        return formatScaled(bytes / 1e6, "MB");
    if (a >= 1e3)
        return formatScaled(bytes / 1e3, "kB");
    return formatThousands(static_cast<std::int64_t>(std::llround(bytes))) + " B";
}

std::string formatGiB(double bytes)
{
    return formatScaled(bytes / kGiB, "GiB");
}

double niceCeiling(double value)
{
    if (!(value > 0) || !std::isfinite(value))
        return 1.0;
    const double decade = std::pow(10.0, std::floor(std::log10(value)));
    for (double step : {1.0, 2.0, 5.0, 10.0})
        if (step * decade >= value * (1 - 1e-12))
            return step * decade;
    return 10.0 * decade;
}

int NiceAxis::decimals() const
{
    return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
}

NiceAxis niceAxis(double value)
{
    NiceAxis axis;
    if (!(value > 0) || !std::isfinite(value))
        return axis;
    axis.step = niceCeiling(value / 6.0);
    axis.max = std::ceil(value / axis.step * (1 - 1e-12)) * axis.step;
    return axis;
}

CountText::CountText(double n, std::string_view singular, std::string_view plural)
{
    // At most 27 characters of count ("-9,223,372,036,854,775,808", or
    // 2 decimals below 9e15), a space, and the noun, a literal in the code,
    // cut to what is left of the buffer (no noun comes near it).
    const std::string count
        = n == std::floor(n) && std::fabs(n) < 9e15 ? formatThousands(static_cast<std::int64_t>(n)) : fixedText(n, 2);
    const std::string_view noun = (n == 1 ? singular : plural).substr(0, sizeof m_text - 1 - count.size());
    std::memcpy(m_text, count.data(), count.size());
    m_text[count.size()] = ' ';
    std::memcpy(m_text + count.size() + 1, noun.data(), noun.size());
    m_size = count.size() + 1 + noun.size();
}

std::string countOf(double n, std::string_view singular, std::string_view plural)
{
    return std::string(std::string_view(CountText(n, singular, plural)));
}

std::string formatParameterCount(std::int64_t parameters)
{
    // Model cards' units: B for billions, T for trillions (Llama 3 "70B", Kimi K2 "1T").
    const double p = static_cast<double>(parameters);
    char buf[32];
    if (p >= 1e12)
        std::snprintf(buf, sizeof buf, "%.2f T", p / 1e12);
    else if (p >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f B", p / 1e9);
    else if (p >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1f M", p / 1e6);
    else
        return formatThousands(parameters);
    return buf;
}

std::string formatThousands(std::int64_t v)
{
    // Right to left into a buffer, a comma every three digits.
    std::uint64_t n = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    char buf[32];
    char *end = buf + sizeof buf, *p = end;
    int digits = 0;
    do {
        if (digits > 0 && digits % 3 == 0)
            *--p = ',';
        *--p = static_cast<char>('0' + n % 10);
        n /= 10;
        ++digits;
    } while (n > 0);
    if (v < 0)
        *--p = '-';
    return std::string(p, end);
}

} // namespace memledger
