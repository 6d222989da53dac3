// SPDX-License-Identifier: MIT
#include "core/trace/comparereport.h"

#include "core/base/units.h"
#include "core/trace/traceimport.h"

#include <cmath>
#include <sstream>

namespace memledger {

namespace {

nlohmann::json framesJson(const std::vector<TraceFrame> &frames)
{
    nlohmann::json out = nlohmann::json::array();
    for (const TraceFrame &f : frames)
        out.push_back({{"filename", f.filename}, {"line", f.line}, {"name", f.name}});
    return out;
}

nlohmann::json allocationJson(const PeakAllocation &a)
{
    nlohmann::json j = {{"bytes", a.bytes}, {"count", a.count}, {"frames", framesJson(a.frames)}};
    j["matched"] = a.matched.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.matched);
    return j;
}

std::string percent(double error)
{
    return formatPercentChange(error);
}

// Nothing measured is no figure to be off from: "0 B vs 5.646 MB: +0.0 %" read as agreement (issue 34, item 11).
constexpr const char *kNotComparable = "not comparable";

std::string difference(Bytes measured, double error)
{
    return measured > 0 ? percent(error) : kNotComparable;
}

std::string gb(Bytes b)
{
    return formatGB(double(b));
}

std::string frameText(const std::vector<TraceFrame> &frames)
{
    if (frames.empty())
        return "(no frames)";
    std::string s;
    for (const TraceFrame &f : frames) {
        if (!s.empty())
            s += " ← ";
        s += f.name;
        if (!f.filename.empty())
            s += " (" + f.filename + (f.line > 0 ? ":" + std::to_string(f.line) : "") + ")";
    }
    return s;
}

std::string pad(std::string s, std::size_t width)
{
    // Width in code points: the arrows and dashes are multi-byte in UTF-8.
    std::size_t cps = 0;
    for (unsigned char ch : s)
        cps += (ch & 0xC0) != 0x80;
    if (cps < width)
        s.append(width - cps, ' ');
    return s;
}

struct Row
{
    std::string what, measured, modelled, difference;
};

std::vector<Row> rows(const TraceComparison &c)
{
    std::vector<Row> out;
    out.push_back({"Peak allocated", gb(c.measured_peak_allocated_bytes), gb(c.modelled_peak_bytes),
                   difference(c.measured_peak_allocated_bytes, c.peak_error)});
    out.push_back({"Steady (between iterations)", gb(c.measured_steady_allocated_bytes), gb(c.modelled_steady_bytes),
                   difference(c.measured_steady_allocated_bytes, c.steady_error)});
    out.push_back({c.measured_reserved_from_segments ? "Peak reserved" : "Peak reserved (replayed)",
                   c.measured_peak_reserved_bytes ? gb(*c.measured_peak_reserved_bytes) : "—",
                   gb(c.modelled_peak_reserved_bytes),
                   c.reserved_error                 ? percent(*c.reserved_error)
                   : c.measured_peak_reserved_bytes ? kNotComparable
                                                    : "—"});
    for (const PhaseComparison &p : c.phases) {
        const bool known = p.measured_peak_bytes > 0;
        out.push_back({"Peak in " + std::string(phaseName(p.phase)), known ? gb(p.measured_peak_bytes) : "—",
                       gb(p.modelled_peak_bytes), known ? percent(p.error) : "—"});
    }
    return out;
}

} // namespace

nlohmann::json comparisonToJson(const TraceComparison &c)
{
    nlohmann::json j;
    j["trace"] = {{"format", traceFormatName(c.format)}, {"device", c.device}, {"events", c.events}};
    j["measured"] = {{"peak_allocated_bytes", c.measured_peak_allocated_bytes},
                     {"steady_allocated_bytes", c.measured_steady_allocated_bytes},
                     {"peak_phase", phaseName(c.measured_peak_phase)}};
    j["measured"]["iteration_s"]
        = c.measured_iteration_s ? nlohmann::json(*c.measured_iteration_s) : nlohmann::json(nullptr);
    j["measured"]["peak_reserved_bytes"]
        = c.measured_peak_reserved_bytes ? nlohmann::json(*c.measured_peak_reserved_bytes) : nlohmann::json(nullptr);
    j["measured"]["reserved_source"] = c.measured_reserved_from_segments ? "segments"
                                       : c.measured_peak_reserved_bytes  ? "requests"
                                                                         : "unknown";
    j["measured"]["requests_reserved_bytes"] = c.measured_requests_reserved_bytes;
    j["modelled"]
        = {{"pipeline_rank", c.pipeline_rank},        {"peak_bytes", c.modelled_peak_bytes},
           {"steady_bytes", c.modelled_steady_bytes}, {"peak_phase", phaseName(c.modelled_peak_phase)},
           {"iteration_s", c.modelled_iteration_s},   {"peak_reserved_bytes", c.modelled_peak_reserved_bytes}};
    j["reserved_error"] = c.reserved_error ? nlohmann::json(*c.reserved_error) : nlohmann::json(nullptr);
    j["iteration_error"] = c.iteration_error ? nlohmann::json(*c.iteration_error) : nlohmann::json(nullptr);
    j["peak_error"] = c.measured_peak_allocated_bytes > 0 ? nlohmann::json(c.peak_error) : nlohmann::json(nullptr);
    j["steady_error"]
        = c.measured_steady_allocated_bytes > 0 ? nlohmann::json(c.steady_error) : nlohmann::json(nullptr);
    nlohmann::json phases = nlohmann::json::array();
    for (const PhaseComparison &p : c.phases) {
        nlohmann::json pj = {{"phase", phaseName(p.phase)}, {"modelled_peak_bytes", p.modelled_peak_bytes}};
        pj["measured_peak_bytes"]
            = p.measured_peak_bytes > 0 ? nlohmann::json(p.measured_peak_bytes) : nlohmann::json(nullptr);
        pj["error"] = p.measured_peak_bytes > 0 ? nlohmann::json(p.error) : nlohmann::json(nullptr);
        phases.push_back(pj);
    }
    j["phases"] = phases;
    j["alive_at_peak"] = nlohmann::json::array();
    for (const PeakAllocation &a : c.alive_at_peak)
        j["alive_at_peak"].push_back(allocationJson(a));
    j["unexplained"] = nlohmann::json::array();
    for (const PeakAllocation &a : c.unexplained)
        j["unexplained"].push_back(allocationJson(a));
    j["notes"] = c.notes;
    return j;
}

std::string comparisonToTable(const TraceComparison &c, const std::string &traceName)
{
    std::ostringstream out;
    out << traceName << ": " << traceFormatName(c.format) << ", device " << c.device << ", " << c.events << " events\n"
        << "model: pipeline rank " << c.pipeline_rank << ", without the runtime reserve\n\n";
    out << pad("", 30) << pad("measured", 14) << pad("modelled", 14) << "difference\n";
    for (const Row &r : rows(c))
        out << pad(r.what, 30) << pad(r.measured, 14) << pad(r.modelled, 14) << r.difference << "\n";
    out << "\nmeasured peak in: " << phaseName(c.measured_peak_phase)
        << "; modelled peak in: " << phaseName(c.modelled_peak_phase) << "\n";
    if (c.measured_iteration_s) {
        out << "iteration: measured " << formatSeconds(*c.measured_iteration_s, 3) << ", modelled "
            << formatSeconds(c.modelled_iteration_s, 3);
        out << " ("
            << (c.iteration_error ? formatPercentChange(*c.iteration_error)
                                  : std::string(kNotComparable) + ": a CPU run's wall time")
            << ")";
        out << "\n";
    }
    out << "\nalive at the measured peak (largest first):\n";
    for (const PeakAllocation &a : c.alive_at_peak)
        out << "  " << pad(gb(a.bytes), 12) << pad(a.count > 1 ? std::to_string(a.count) + " blocks" : "1 block", 11)
            << (a.matched.empty() ? "unexplained" : a.matched) << "\n      " << frameText(a.frames) << "\n";
    for (const std::string &n : c.notes)
        out << "note: " << n << "\n";
    return out.str();
}

std::string comparisonToMarkdown(const TraceComparison &c, const std::string &traceName)
{
    std::ostringstream out;
    out << "# Measured vs modelled: " << traceName << "\n\n"
        << "Trace: " << traceFormatName(c.format) << ", device " << c.device << ", " << c.events
        << " events. Model: pipeline rank " << c.pipeline_rank << ", without the runtime reserve.\n\n"
        << "| | measured | modelled | difference |\n| --- | ---: | ---: | ---: |\n";
    for (const Row &r : rows(c))
        out << "| " << r.what << " | " << r.measured << " | " << r.modelled << " | " << r.difference << " |\n";
    out << "\nThe measured peak falls in the **" << phaseName(c.measured_peak_phase) << "**, the modelled one in the **"
        << phaseName(c.modelled_peak_phase) << "**.\n\n## Alive at the measured peak\n\n"
        << "| bytes | blocks | model's tensor (by size) | frames |\n| ---: | ---: | --- | --- |\n";
    for (const PeakAllocation &a : c.alive_at_peak)
        out << "| " << gb(a.bytes) << " | " << a.count << " | " << (a.matched.empty() ? "*unexplained*" : a.matched)
            << " | " << frameText(a.frames) << " |\n";
    out << "\n";
    for (const std::string &n : c.notes)
        out << "- " << n << "\n";
    return out.str();
}

} // namespace memledger
