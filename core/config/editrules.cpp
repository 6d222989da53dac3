// SPDX-License-Identifier: MIT
#include "core/config/editrules.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace memledger {

std::int64_t chunksPerRankFor(PipelineSchedule s, std::int64_t v)
{
    switch (s) {
    case PipelineSchedule::Interleaved:
        return std::max<std::int64_t>(2, v);
    case PipelineSchedule::ZbV:
    case PipelineSchedule::DualPipe:
    case PipelineSchedule::DualPipeV:
        return 2;
    default:
        return 1;
    }
}

bool dropStaleLayout(ParallelismConfig &parallelism)
{
    if (parallelism.pipeline_layout.empty()
        || static_cast<std::int64_t>(parallelism.pipeline_layout.size())
               == parallelism.pipeline_model_parallel_size * parallelism.virtual_pipeline_model_parallel_size)
        return false;
    parallelism.pipeline_layout.clear();
    return true;
}

void setPipelineSize(ParallelismConfig &parallelism, std::int64_t p)
{
    parallelism.pipeline_model_parallel_size = p;
    dropStaleLayout(parallelism);
}

void setVirtualStages(ParallelismConfig &parallelism, std::int64_t v)
{
    parallelism.virtual_pipeline_model_parallel_size = v;
    if (chunksPerRankFor(parallelism.schedule(), v) != v)
        parallelism.pipeline_schedule.reset();
    dropStaleLayout(parallelism);
}

void setSchedule(ParallelismConfig &parallelism, PipelineSchedule schedule)
{
    const std::int64_t chunks = chunksPerRankFor(schedule, parallelism.virtual_pipeline_model_parallel_size);
    if (chunks != parallelism.virtual_pipeline_model_parallel_size) {
        parallelism.virtual_pipeline_model_parallel_size = chunks;
        dropStaleLayout(parallelism);
    }
    parallelism.pipeline_schedule = schedule;
}

std::vector<std::int64_t> balancedLayout(std::int64_t layers, std::int64_t stages)
{
    if (stages < 1 || layers < 0)
        return {};
    std::vector<std::int64_t> out(static_cast<std::size_t>(stages), layers / stages);
    std::int64_t extra = layers % stages;
    // Inner stages first (the first holds the embedding, the last the loss), then the first, then the last.
    for (std::int64_t k = 1; k + 1 < stages && extra > 0; ++k, --extra)
        ++out[static_cast<std::size_t>(k)];
    if (extra > 0) {
        ++out.front();
        --extra;
    }
    if (extra > 0)
        ++out.back();
    return out;
}

std::string layoutText(const std::vector<std::int64_t> &layout)
{
    std::string out;
    for (std::size_t i = 0; i < layout.size();) {
        std::size_t run = 1;
        while (i + run < layout.size() && layout[i + run] == layout[i])
            ++run;
        if (!out.empty())
            out += ", ";
        out += std::to_string(layout[i]);
        // Two equal counts read as easily written out as a run.
        if (run > 2)
            out += "×" + std::to_string(run);
        else if (run == 2)
            out += ", " + std::to_string(layout[i]);
        i += run;
    }
    return out;
}

namespace {

constexpr std::size_t kMaxLayoutStages = 100000;

// A whole number at `at` (advanced past it), or nullopt.
std::optional<std::int64_t> numberAt(std::string_view text, std::size_t &at)
{
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (ec != std::errc() || value < 0)
        return std::nullopt;
    at = static_cast<std::size_t>(end - text.data());
    return value;
}

// The run marker after a count: "×" (UTF-8), "*", "x" or "X"; its length, 0 if none.
std::size_t runMarkerAt(std::string_view text, std::size_t at)
{
    if (text.substr(at, 2) == "×")
        return 2;
    if (at < text.size() && (text[at] == '*' || text[at] == 'x' || text[at] == 'X'))
        return 1;
    return 0;
}

} // namespace

std::optional<std::vector<std::int64_t>> layoutFromText(std::string_view text)
{
    std::vector<std::int64_t> out;
    std::size_t at = 0;
    const auto skipSeparators = [&] {
        while (at < text.size()
               && (std::isspace(static_cast<unsigned char>(text[at])) || text[at] == ',' || text[at] == '['
                   || text[at] == ']'))
            ++at;
    };
    for (skipSeparators(); at < text.size(); skipSeparators()) {
        const std::optional<std::int64_t> count = numberAt(text, at);
        if (!count)
            return std::nullopt;
        std::int64_t run = 1;
        std::size_t next = at; // a run marker may stand between spaces: "8 × 14"
        while (next < text.size() && text[next] == ' ')
            ++next;
        if (const std::size_t marker = runMarkerAt(text, next); marker > 0) {
            at = next + marker;
            while (at < text.size() && text[at] == ' ')
                ++at;
            const std::optional<std::int64_t> times = numberAt(text, at);
            if (!times || *times < 1)
                return std::nullopt;
            run = *times;
        }
        if (run > static_cast<std::int64_t>(kMaxLayoutStages - out.size()))
            return std::nullopt;
        out.insert(out.end(), static_cast<std::size_t>(run), *count);
        // A count ends at a separator or the end: "12a" or "3 ×" are not lists.
        if (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at])) && text[at] != ','
            && text[at] != ']')
            return std::nullopt;
    }
    return out;
}

namespace {

// "2 or 4": the divisors of n nearest `want`, below and above.
std::string nearestDivisorsOf(std::int64_t n, std::int64_t want)
{
    std::int64_t below = 0, above = 0;
    for (std::int64_t k = std::min(want, n); k >= 1 && below == 0; --k)
        if (n % k == 0)
            below = k;
    for (std::int64_t k = want; k <= n && above == 0; ++k)
        if (n % k == 0)
            above = k;
    if (below > 0 && above > 0 && below != above)
        return std::to_string(below) + " or " + std::to_string(above);
    return std::to_string(below > 0 ? below : above);
}

} // namespace

std::string keepGpuCount(const ParallelismConfig &before, ParallelismConfig &after, std::int64_t gpus)
{
    if (gpus < 1 || after.data_parallel_size != before.data_parallel_size || after.gpus() == gpus)
        return {};
    const std::int64_t t = after.tensor_model_parallel_size, p = after.pipeline_model_parallel_size,
                       c = after.context_parallel_size;
    const std::int64_t split = t * p * c;
    if (split > 0 && gpus % split == 0) {
        after.data_parallel_size = gpus / split;
        return {};
    }
    std::string reason = std::to_string(gpus) + " GPUs do not divide by t·p·c = " + std::to_string(t) + "·"
                         + std::to_string(p) + "·" + std::to_string(c) + " = " + std::to_string(split) + ", so d stays "
                         + std::to_string(after.data_parallel_size) + " and the plan runs on "
                         + std::to_string(after.gpus()) + " GPUs";
    // The degree the edit changed, and the values of it that would keep the count with the other two as they are.
    const char *name = nullptr;
    std::int64_t value = 0;
    if (t != before.tensor_model_parallel_size)
        name = "t", value = t;
    else if (p != before.pipeline_model_parallel_size)
        name = "p", value = p;
    else if (c != before.context_parallel_size)
        name = "c", value = c;
    const std::int64_t others = value > 0 ? split / value : 0;
    if (name && others > 0 && gpus % others == 0)
        reason += std::string("; ") + name + " = " + nearestDivisorsOf(gpus / others, value) + " keeps "
                  + std::to_string(gpus);
    return reason;
}

} // namespace memledger
