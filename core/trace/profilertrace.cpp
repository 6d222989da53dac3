// SPDX-License-Identifier: MIT
#include "core/trace/profilertrace.h"

#include <algorithm>
#include <cmath>
#include <istream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>
#include <vector>

namespace memledger {

namespace {

// c10::DeviceType::CPU (c10/core/DeviceType.h): what profiler_kineto.cpp
// writes as "Device Type" for a host allocation.
constexpr std::int64_t kCpuDeviceType = 0;
constexpr int kCpuDevice = -1;
constexpr std::uint64_t kProgressEvery = std::uint64_t{4} << 20;

// Feeds nlohmann's stream adapter from a ByteSource in chunks, reporting
// progress every few megabytes; a cancel ends the stream early.
class SourceBuf final : public std::streambuf
{
public:
    SourceBuf(ByteSource &source, const TraceImportOptions &options)
        : m_source(source)
        , m_options(options)
        , m_buffer(std::size_t{1} << 16)
    { }

    bool cancelled() const { return m_cancelled; }

protected:
    int_type underflow() override
    {
        if (gptr() < egptr())
            return traits_type::to_int_type(*gptr());
        if (m_cancelled)
            return traits_type::eof();
        if (m_options.progress && m_source.bytesConsumed() >= m_lastProgress + kProgressEvery) {
            m_lastProgress = m_source.bytesConsumed();
            if (!m_options.progress(m_options.progress_context, m_source.bytesConsumed(), m_source.bytesTotal())) {
                m_cancelled = true;
                return traits_type::eof();
            }
        }
        const std::size_t n = m_source.read(m_buffer.data(), m_buffer.size());
        if (n == 0)
            return traits_type::eof();
        setg(m_buffer.data(), m_buffer.data(), m_buffer.data() + n);
        return traits_type::to_int_type(*gptr());
    }

private:
    ByteSource &m_source;
    const TraceImportOptions &m_options;
    std::vector<char> m_buffer;
    std::uint64_t m_lastProgress = 0;
    bool m_cancelled = false;
};

// One scalar JSON value of an event, as much of it as the import needs.
struct Value
{
    enum class Kind { Absent, Integer, Unsigned, Float, String, Boolean, Null, Container } kind = Kind::Absent;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;
    std::string s;

    static Value of(Kind k)
    {
        Value v;
        v.kind = k;
        return v;
    }

    std::string describe() const
    {
        switch (kind) {
        case Kind::Absent:
            return "nothing";
        case Kind::Integer:
            return "integer " + std::to_string(i);
        case Kind::Unsigned:
            return "integer " + std::to_string(u);
        case Kind::Float:
            return "number " + nlohmann::json(d).dump();
        case Kind::String:
            return "string " + nlohmann::json(s.size() > 40 ? s.substr(0, 40) + "..." : s).dump();
        case Kind::Boolean:
            return "boolean";
        case Kind::Null:
            return "null";
        case Kind::Container:
            return "an object or array";
        }
        return "?";
    }

    bool isNumber() const { return kind == Kind::Integer || kind == Kind::Unsigned || kind == Kind::Float; }
    double number() const { return kind == Kind::Integer ? double(i) : kind == Kind::Unsigned ? double(u) : d; }
};

// The fields of one traceEvents[] entry that matter here.
struct EventFields
{
    Value ph, cat, name, ts, dur;
    Value deviceType, deviceId, addr, bytes, totalAllocated;

    void clear() { *this = EventFields{}; }
};

class TraceSax
{
public:
    explicit TraceSax(const TraceImportOptions &options)
        : m_options(options)
    { }

    // nlohmann::json_sax interface.
    bool null() { return scalar(Value::of(Value::Kind::Null)); }
    bool boolean(bool) { return scalar(Value::of(Value::Kind::Boolean)); }
    bool number_integer(std::int64_t v)
    {
        Value x = Value::of(Value::Kind::Integer);
        x.i = v;
        return scalar(std::move(x));
    }
    bool number_unsigned(std::uint64_t v)
    {
        Value x = Value::of(Value::Kind::Unsigned);
        x.u = v;
        return scalar(std::move(x));
    }
    bool number_float(double v, const std::string &)
    {
        Value x = Value::of(Value::Kind::Float);
        x.d = v;
        return scalar(std::move(x));
    }
    bool string(std::string &v)
    {
        Value x = Value::of(Value::Kind::String);
        // Only short strings are ever compared or kept (names, categories).
        x.s = v.size() > 4096 ? v.substr(0, 4096) : std::move(v);
        return scalar(std::move(x));
    }
    bool binary(nlohmann::json::binary_t &) { return scalar(Value::of(Value::Kind::Container)); }

    bool start_object(std::size_t) { return open(true); }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(false); }
    bool end_array() { return close(); }

    bool key(std::string &k)
    {
        if (m_skip == 0)
            m_key = std::move(k);
        return true;
    }

    bool parse_error(std::size_t position, const std::string &, const nlohmann::detail::exception &ex)
    {
        if (m_problems.empty()) {
            std::string what = ex.what();
            // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> after the prefix.
            if (const std::size_t p = what.find("] "); p != std::string::npos)
                what = what.substr(p + 2);
            m_problems.push_back({where(), "not valid JSON at byte " + std::to_string(position) + ": " + what});
        }
        return false;
    }

    Problems m_problems;
    bool m_sawEventsArray = false;
    std::int64_t m_memoryEvents = 0;
    std::map<int, std::vector<TraceEvent>> m_byDevice;
    std::vector<int> m_devices;
    std::vector<TraceRange> m_ranges;
    bool m_allTimed = true;

private:
    enum class Where { Root, Top, Events, Event, Args };

    std::string where() const
    {
        switch (m_where) {
        case Where::Root:
        case Where::Top:
            return m_topKey.empty() ? std::string{} : m_topKey;
        case Where::Events:
            return "traceEvents[" + std::to_string(m_index) + "]";
        case Where::Event:
            return "traceEvents[" + std::to_string(m_index) + "]" + (m_key.empty() ? "" : "." + m_key);
        case Where::Args:
            return "traceEvents[" + std::to_string(m_index) + "].args" + (m_key.empty() ? "" : "." + m_key);
        }
        return {};
    }

    bool fail(std::string path, std::string message, std::string suggestion = {})
    {
        m_problems.push_back({std::move(path), std::move(message), std::move(suggestion)});
        return false;
    }

    bool open(bool object)
    {
        if (m_skip > 0) {
            ++m_skip;
            return true;
        }
        switch (m_where) {
        case Where::Root:
            if (object) {
                m_where = Where::Top;
                return true;
            }
            // An older export: the file is the array of events itself.
            m_where = Where::Events;
            m_sawEventsArray = true;
            m_topIsArray = true;
            return true;
        case Where::Top:
            m_topKey = m_key;
            if (m_key == "traceEvents") {
                if (object)
                    return fail("traceEvents", "expected an array of events, got an object");
                m_where = Where::Events;
                m_sawEventsArray = true;
                m_index = -1;
                return true;
            }
            m_skip = 1;
            return true;
        case Where::Events:
            ++m_index;
            if (!object)
                return fail(where(), "expected an event object, got an array");
            m_where = Where::Event;
            m_fields.clear();
            m_key.clear();
            return true;
        case Where::Event:
            if (object && m_key == "args") {
                m_where = Where::Args;
                return true;
            }
            set(Value::of(Value::Kind::Container));
            m_skip = 1;
            return true;
        case Where::Args:
            set(Value::of(Value::Kind::Container));
            m_skip = 1;
            return true;
        }
        return true;
    }

    bool close()
    {
        if (m_skip > 0) {
            --m_skip;
            return true;
        }
        switch (m_where) {
        case Where::Root:
            return true;
        case Where::Top:
            m_where = Where::Root;
            return true;
        case Where::Events:
            m_where = m_topIsArray ? Where::Root : Where::Top;
            return true;
        case Where::Event: {
            const bool ok = finishEvent();
            m_where = Where::Events;
            m_key.clear();
            return ok;
        }
        case Where::Args:
            m_where = Where::Event;
            m_key.clear();
            return true;
        }
        return true;
    }

    bool scalar(Value v)
    {
        if (m_skip > 0)
            return true;
        switch (m_where) {
        case Where::Root:
            return fail("", "expected a Chrome trace (an object with traceEvents), got " + v.describe());
        case Where::Top:
            if (m_key == "traceEvents")
                return fail("traceEvents", "expected an array of events, got " + v.describe());
            return true;
        case Where::Events:
            ++m_index;
            return fail(where(), "expected an event object, got " + v.describe());
        case Where::Event:
        case Where::Args:
            set(std::move(v));
            return true;
        }
        return true;
    }

    void set(Value v)
    {
        if (m_where == Where::Event) {
            if (m_key == "ph")
                m_fields.ph = std::move(v);
            else if (m_key == "cat")
                m_fields.cat = std::move(v);
            else if (m_key == "name")
                m_fields.name = std::move(v);
            else if (m_key == "ts")
                m_fields.ts = std::move(v);
            else if (m_key == "dur")
                m_fields.dur = std::move(v);
        } else if (m_where == Where::Args) {
            // The argument names of profiler_kineto.cpp's AddGenericMetadata
            // for ExtraFields<EventType::Allocation>.
            if (m_key == "Device Type")
                m_fields.deviceType = std::move(v);
            else if (m_key == "Device Id")
                m_fields.deviceId = std::move(v);
            else if (m_key == "Addr")
                m_fields.addr = std::move(v);
            else if (m_key == "Bytes")
                m_fields.bytes = std::move(v);
            else if (m_key == "Total Allocated")
                m_fields.totalAllocated = std::move(v);
        }
    }

    // An integral value of a field, or a problem naming it. Only an address
    // may use all 64 bits (Kineto writes it through intptr_t).
    bool integer(const Value &v, const std::string &field, std::int64_t &out, bool address = false)
    {
        const std::string path = "traceEvents[" + std::to_string(m_index) + "]." + field;
        switch (v.kind) {
        case Value::Kind::Absent:
            return fail(path, "missing", "Kineto writes it with every [memory] event (profile_memory=True)");
        case Value::Kind::Integer:
            out = v.i;
            return true;
        case Value::Kind::Unsigned:
            if (!address && v.u > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                return fail(path, "out of range: " + std::to_string(v.u));
            out = static_cast<std::int64_t>(v.u);
            return true;
        case Value::Kind::Float:
            if (std::isfinite(v.d) && v.d == std::floor(v.d) && std::fabs(v.d) < 9.0e15) {
                out = static_cast<std::int64_t>(v.d);
                return true;
            }
            [[fallthrough]];
        default:
            return fail(path, "expected an integer, got " + v.describe());
        }
    }

    bool time(const Value &v, const std::string &field, double &out, bool &present)
    {
        present = false;
        if (v.kind == Value::Kind::Absent)
            return true;
        if (!v.isNumber() || !std::isfinite(v.number()))
            return fail("traceEvents[" + std::to_string(m_index) + "]." + field,
                        "expected a number of microseconds, got " + v.describe());
        out = v.number();
        present = true;
        return true;
    }

    bool finishEvent()
    {
        const EventFields &f = m_fields;
        if (f.name.kind == Value::Kind::String && f.name.s == "[memory]")
            return memoryEvent();
        // Ranges: record_function / ProfilerStep#N are "user_annotation"
        // complete events (ActivityType USER_ANNOTATION, ActivityType.cpp).
        const bool complete = f.ph.kind == Value::Kind::String && f.ph.s == "X";
        const bool annotation = f.cat.kind == Value::Kind::String && f.cat.s == "user_annotation";
        const bool step = f.name.kind == Value::Kind::String && f.name.s.rfind("ProfilerStep#", 0) == 0;
        if (!complete || !(annotation || step))
            return true;
        double ts = 0, dur = 0;
        bool hasTs = false, hasDur = false;
        if (!time(f.ts, "ts", ts, hasTs) || !time(f.dur, "dur", dur, hasDur))
            return false;
        if (!hasTs)
            return fail("traceEvents[" + std::to_string(m_index) + "].ts", "missing from a range");
        if (f.name.kind != Value::Kind::String)
            return fail("traceEvents[" + std::to_string(m_index) + "].name",
                        "expected a string, got " + f.name.describe());
        if (dur < 0)
            return fail("traceEvents[" + std::to_string(m_index) + "].dur", "negative duration");
        m_ranges.push_back({f.name.s, ts, ts + dur});
        return true;
    }

    bool memoryEvent()
    {
        const EventFields &f = m_fields;
        ++m_memoryEvents;
        std::int64_t type = 0, id = 0, addr = 0, bytes = 0;
        if (!integer(f.deviceType, "args.Device Type", type) || !integer(f.deviceId, "args.Device Id", id)
            || !integer(f.addr, "args.Addr", addr, true) || !integer(f.bytes, "args.Bytes", bytes))
            return false;
        if (bytes == std::numeric_limits<std::int64_t>::min())
            return fail("traceEvents[" + std::to_string(m_index) + "].args.Bytes", "out of range");
        int device = kCpuDevice;
        if (type != kCpuDeviceType) {
            if (id < 0 || id > 1 << 20)
                return fail("traceEvents[" + std::to_string(m_index) + "].args.Device Id",
                            "expected a device index, got " + std::to_string(id));
            device = static_cast<int>(id);
        }
        double ts = 0;
        bool hasTs = false;
        if (!time(f.ts, "ts", ts, hasTs))
            return false;
        m_allTimed = m_allTimed && hasTs;

        if (std::find(m_devices.begin(), m_devices.end(), device) == m_devices.end())
            m_devices.push_back(device);
        // Keep only what can still be chosen: the asked device; else the
        // accelerators (the CPU's events are dropped once one appears).
        if (m_options.device) {
            if (device != *m_options.device)
                return true;
        } else if (device == kCpuDevice) {
            if (m_sawAccelerator)
                return true;
        } else if (!m_sawAccelerator) {
            m_sawAccelerator = true;
            m_byDevice.erase(kCpuDevice);
        }
        TraceEvent e;
        e.action = bytes >= 0 ? TraceAction::Alloc : TraceAction::FreeCompleted;
        e.addr = static_cast<std::uint64_t>(addr);
        e.size = bytes >= 0 ? bytes : -bytes;
        e.time_us = ts;
        // Optional: older traces and other writers may leave it out.
        std::int64_t total = -1;
        if (f.totalAllocated.kind != Value::Kind::Absent && !integer(f.totalAllocated, "args.Total Allocated", total))
            return false;
        e.total_allocated = total;
        m_byDevice[device].push_back(e);
        return true;
    }

    const TraceImportOptions &m_options;
    Where m_where = Where::Root;
    std::int64_t m_skip = 0; // depth inside a value that is skipped
    std::int64_t m_index = -1; // of the current traceEvents[] entry
    std::string m_key;
    std::string m_topKey;
    bool m_topIsArray = false;
    bool m_sawAccelerator = false;
    EventFields m_fields;
};

std::string listDevices(const std::vector<int> &devices)
{
    std::string s;
    for (int d : devices)
        s += (s.empty() ? "" : ", ") + (d == kCpuDevice ? std::string("-1 (CPU)") : std::to_string(d));
    return s;
}

} // namespace

TraceLoadResult loadProfilerTrace(ByteSource &source, const TraceImportOptions &options)
{
    TraceLoadResult result;
    SourceBuf buf(source, options);
    std::istream in(&buf);
    TraceSax sax(options);
    try {
        nlohmann::json::sax_parse(in, &sax);
    } catch (const std::exception &e) {
        // The SAX parser reports syntax errors through parse_error(); this
        // is what is left (out of memory, an adapter failure).
        sax.m_problems.push_back({"", std::string("cannot read the trace: ") + e.what()});
    }
    if (buf.cancelled()) {
        result.problems.push_back({"", "import cancelled"});
        return result;
    }
    // A failed read (truncated or corrupt gzip) explains the syntax error it causes.
    if (!source.error().empty()) {
        result.problems.push_back({"", source.error()});
        return result;
    }
    if (!sax.m_problems.empty()) {
        result.problems = std::move(sax.m_problems);
        return result;
    }
    if (!sax.m_sawEventsArray) {
        result.problems.push_back(
            {"traceEvents", "missing: not a Chrome trace", "export one with torch.profiler's export_chrome_trace()"});
        return result;
    }
    if (sax.m_memoryEvents == 0) {
        result.problems.push_back(
            {"traceEvents", "no [memory] events", "record with torch.profiler.profile(profile_memory=True)"});
        return result;
    }

    std::vector<int> devices = sax.m_devices;
    std::sort(devices.begin(), devices.end());
    int device = kCpuDevice;
    if (options.device) {
        device = *options.device;
        if (!std::binary_search(devices.begin(), devices.end(), device)) {
            result.problems.push_back({"device", "the trace has no [memory] events of device " + std::to_string(device),
                                       "its devices: " + listDevices(devices)});
            return result;
        }
    } else {
        // The lowest accelerator; the CPU only when it is alone.
        const auto it = std::find_if(devices.begin(), devices.end(), [](int d) { return d >= 0; });
        device = it != devices.end() ? *it : kCpuDevice;
    }

    MeasuredTrace trace;
    trace.format = TraceFormat::ProfilerTrace;
    trace.device = device;
    trace.devices = devices;
    trace.events = std::move(sax.m_byDevice[device]);
    trace.has_times = sax.m_allTimed;
    // Kineto writes each thread's activities as a block, so a trace need not
    // be in time order across threads; the allocator's order is the time order.
    if (trace.has_times)
        std::stable_sort(trace.events.begin(), trace.events.end(),
                         [](const TraceEvent &a, const TraceEvent &b) { return a.time_us < b.time_us; });
    // What was allocated before the first event: its total less its own change.
    if (!trace.events.empty() && trace.events.front().total_allocated >= 0) {
        const TraceEvent &first = trace.events.front();
        const Bytes before = first.total_allocated - (first.action == TraceAction::Alloc ? first.size : -first.size);
        if (before >= 0)
            trace.initial_allocated_bytes = before;
    }
    trace.ranges = std::move(sax.m_ranges);
    std::stable_sort(trace.ranges.begin(), trace.ranges.end(),
                     [](const TraceRange &a, const TraceRange &b) { return a.start_us < b.start_us; });
    result.trace = std::move(trace);
    return result;
}

} // namespace memledger
