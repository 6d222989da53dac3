// SPDX-License-Identifier: MIT
#include "core/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>

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
static std::string fixedText(double value, int decimals)
{
    char buf[64];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, decimals);
    return std::string(buf, r.ptr);
}

static std::string formatScaled(double value, const char *unit)
{
    const double a = std::fabs(value);
    const int decimals = a >= 100 ? 1 : (a >= 10 ? 2 : 3);
    std::string out = fixedText(value, decimals);
    out += ' ';
    out += unit;
    return out;
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

std::string countOf(double n, std::string_view singular, std::string_view plural)
{
    std::string out
        = n == std::floor(n) && std::fabs(n) < 9e15 ? formatThousands(static_cast<std::int64_t>(n)) : fixedText(n, 2);
    out += ' ';
    out += n == 1 ? singular : plural;
    return out;
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
    std::string digits = std::to_string(v < 0 ? -v : v);
    std::string out;
    const int n = static_cast<int>(digits.size());
    for (int i = 0; i < n; ++i) {
        out += digits[i];
        if ((n - i - 1) % 3 == 0 && i != n - 1)
            out += ',';
    }
    return v < 0 ? "-" + out : out;
}

} // namespace memledger
