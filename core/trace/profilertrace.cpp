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
        : source_(source)
        , options_(options)
        , buffer_(std::size_t{1} << 16)
    { }

    bool cancelled() const { return cancelled_; }

protected:
    int_type underflow() override
    {
        if (gptr() < egptr())
            return traits_type::to_int_type(*gptr());
        if (cancelled_)
            return traits_type::eof();
        if (options_.progress && source_.bytesConsumed() >= lastProgress_ + kProgressEvery) {
            lastProgress_ = source_.bytesConsumed();
            if (!options_.progress(options_.progress_context, source_.bytesConsumed(), source_.bytesTotal())) {
                cancelled_ = true;
                return traits_type::eof();
            }
        }
        const std::size_t n = source_.read(buffer_.data(), buffer_.size());
        if (n == 0)
            return traits_type::eof();
        setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
        return traits_type::to_int_type(*gptr());
    }

private:
    ByteSource &source_;
    const TraceImportOptions &options_;
    std::vector<char> buffer_;
    std::uint64_t lastProgress_ = 0;
    bool cancelled_ = false;
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
        : options_(options)
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
        if (skip_ == 0)
            key_ = std::move(k);
        return true;
    }

    bool parse_error(std::size_t position, const std::string &, const nlohmann::detail::exception &ex)
    {
        if (problems_.empty()) {
            std::string what = ex.what();
            // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> after the prefix.
            if (const std::size_t p = what.find("] "); p != std::string::npos)
                what = what.substr(p + 2);
            problems_.push_back({where(), "not valid JSON at byte " + std::to_string(position) + ": " + what});
        }
        return false;
    }

    Problems problems_;
    bool sawEventsArray_ = false;
    std::int64_t memoryEvents_ = 0;
    std::map<int, std::vector<TraceEvent>> byDevice_;
    std::vector<int> devices_;
    std::vector<TraceRange> ranges_;
    bool allTimed_ = true;

private:
    enum class Where { Root, Top, Events, Event, Args };

    std::string where() const
    {
        switch (where_) {
        case Where::Root:
        case Where::Top:
            return topKey_.empty() ? std::string{} : topKey_;
        case Where::Events:
            return "traceEvents[" + std::to_string(index_) + "]";
        case Where::Event:
            return "traceEvents[" + std::to_string(index_) + "]" + (key_.empty() ? "" : "." + key_);
        case Where::Args:
            return "traceEvents[" + std::to_string(index_) + "].args" + (key_.empty() ? "" : "." + key_);
        }
        return {};
    }

    bool fail(std::string path, std::string message, std::string suggestion = {})
    {
        problems_.push_back({std::move(path), std::move(message), std::move(suggestion)});
        return false;
    }

    bool open(bool object)
    {
        if (skip_ > 0) {
            ++skip_;
            return true;
        }
        switch (where_) {
        case Where::Root:
            if (object) {
                where_ = Where::Top;
                return true;
            }
            // An older export: the file is the array of events itself.
            where_ = Where::Events;
            sawEventsArray_ = true;
            topIsArray_ = true;
            return true;
        case Where::Top:
            topKey_ = key_;
            if (key_ == "traceEvents") {
                if (object)
                    return fail("traceEvents", "expected an array of events, got an object");
                where_ = Where::Events;
                sawEventsArray_ = true;
                index_ = -1;
                return true;
            }
            skip_ = 1;
            return true;
        case Where::Events:
            ++index_;
            if (!object)
                return fail(where(), "expected an event object, got an array");
            where_ = Where::Event;
            fields_.clear();
            key_.clear();
            return true;
        case Where::Event:
            if (object && key_ == "args") {
                where_ = Where::Args;
                return true;
            }
            set(Value::of(Value::Kind::Container));
            skip_ = 1;
            return true;
        case Where::Args:
            set(Value::of(Value::Kind::Container));
            skip_ = 1;
            return true;
        }
        return true;
    }

    bool close()
    {
        if (skip_ > 0) {
            --skip_;
            return true;
        }
        switch (where_) {
        case Where::Root:
            return true;
        case Where::Top:
            where_ = Where::Root;
            return true;
        case Where::Events:
            where_ = topIsArray_ ? Where::Root : Where::Top;
            return true;
        case Where::Event: {
            const bool ok = finishEvent();
            where_ = Where::Events;
            key_.clear();
            return ok;
        }
        case Where::Args:
            where_ = Where::Event;
            key_.clear();
            return true;
        }
        return true;
    }

    bool scalar(Value v)
    {
        if (skip_ > 0)
            return true;
        switch (where_) {
        case Where::Root:
            return fail("", "expected a Chrome trace (an object with traceEvents), got " + v.describe());
        case Where::Top:
            if (key_ == "traceEvents")
                return fail("traceEvents", "expected an array of events, got " + v.describe());
            return true;
        case Where::Events:
            ++index_;
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
        if (where_ == Where::Event) {
            if (key_ == "ph")
                fields_.ph = std::move(v);
            else if (key_ == "cat")
                fields_.cat = std::move(v);
            else if (key_ == "name")
                fields_.name = std::move(v);
            else if (key_ == "ts")
                fields_.ts = std::move(v);
            else if (key_ == "dur")
                fields_.dur = std::move(v);
        } else if (where_ == Where::Args) {
            // The argument names of profiler_kineto.cpp's AddGenericMetadata
            // for ExtraFields<EventType::Allocation>.
            if (key_ == "Device Type")
                fields_.deviceType = std::move(v);
            else if (key_ == "Device Id")
                fields_.deviceId = std::move(v);
            else if (key_ == "Addr")
                fields_.addr = std::move(v);
            else if (key_ == "Bytes")
                fields_.bytes = std::move(v);
            else if (key_ == "Total Allocated")
                fields_.totalAllocated = std::move(v);
        }
    }

    // An integral value of a field, or a problem naming it. Only an address
    // may use all 64 bits (Kineto writes it through intptr_t).
    bool integer(const Value &v, const std::string &field, std::int64_t &out, bool address = false)
    {
        const std::string path = "traceEvents[" + std::to_string(index_) + "]." + field;
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
            return fail("traceEvents[" + std::to_string(index_) + "]." + field,
                        "expected a number of microseconds, got " + v.describe());
        out = v.number();
        present = true;
        return true;
    }

    bool finishEvent()
    {
        const EventFields &f = fields_;
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
            return fail("traceEvents[" + std::to_string(index_) + "].ts", "missing from a range");
        if (f.name.kind != Value::Kind::String)
            return fail("traceEvents[" + std::to_string(index_) + "].name",
                        "expected a string, got " + f.name.describe());
        if (dur < 0)
            return fail("traceEvents[" + std::to_string(index_) + "].dur", "negative duration");
        ranges_.push_back({f.name.s, ts, ts + dur});
        return true;
    }

    bool memoryEvent()
    {
        const EventFields &f = fields_;
        ++memoryEvents_;
        std::int64_t type = 0, id = 0, addr = 0, bytes = 0;
        if (!integer(f.deviceType, "args.Device Type", type) || !integer(f.deviceId, "args.Device Id", id)
            || !integer(f.addr, "args.Addr", addr, true) || !integer(f.bytes, "args.Bytes", bytes))
            return false;
        if (bytes == std::numeric_limits<std::int64_t>::min())
            return fail("traceEvents[" + std::to_string(index_) + "].args.Bytes", "out of range");
        int device = kCpuDevice;
        if (type != kCpuDeviceType) {
            if (id < 0 || id > 1 << 20)
                return fail("traceEvents[" + std::to_string(index_) + "].args.Device Id",
                            "expected a device index, got " + std::to_string(id));
            device = static_cast<int>(id);
        }
        double ts = 0;
        bool hasTs = false;
        if (!time(f.ts, "ts", ts, hasTs))
            return false;
        allTimed_ = allTimed_ && hasTs;

        if (std::find(devices_.begin(), devices_.end(), device) == devices_.end())
            devices_.push_back(device);
        // Keep only what can still be chosen: the asked device; else the
        // accelerators (the CPU's events are dropped once one appears).
        if (options_.device) {
            if (device != *options_.device)
                return true;
        } else if (device == kCpuDevice) {
            if (sawAccelerator_)
                return true;
        } else if (!sawAccelerator_) {
            sawAccelerator_ = true;
            byDevice_.erase(kCpuDevice);
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
        byDevice_[device].push_back(e);
        return true;
    }

    const TraceImportOptions &options_;
    Where where_ = Where::Root;
    std::int64_t skip_ = 0; // depth inside a value that is skipped
    std::int64_t index_ = -1; // of the current traceEvents[] entry
    std::string key_;
    std::string topKey_;
    bool topIsArray_ = false;
    bool sawAccelerator_ = false;
    EventFields fields_;
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
        sax.problems_.push_back({"", std::string("cannot read the trace: ") + e.what()});
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
    if (!sax.problems_.empty()) {
        result.problems = std::move(sax.problems_);
        return result;
    }
    if (!sax.sawEventsArray_) {
        result.problems.push_back(
            {"traceEvents", "missing: not a Chrome trace", "export one with torch.profiler's export_chrome_trace()"});
        return result;
    }
    if (sax.memoryEvents_ == 0) {
        result.problems.push_back(
            {"traceEvents", "no [memory] events", "record with torch.profiler.profile(profile_memory=True)"});
        return result;
    }

    std::vector<int> devices = sax.devices_;
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
    trace.events = std::move(sax.byDevice_[device]);
    trace.has_times = sax.allTimed_;
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
    trace.ranges = std::move(sax.ranges_);
    std::stable_sort(trace.ranges.begin(), trace.ranges.end(),
                     [](const TraceRange &a, const TraceRange &b) { return a.start_us < b.start_us; });
    result.trace = std::move(trace);
    return result;
}

} // namespace memledger
