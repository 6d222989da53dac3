// SPDX-License-Identifier: MIT
// The snapshot's shape: torch/csrc/cuda/memory_snapshot.cpp
// (_memory_snapshot_pickled) and torch/cuda/memory.py (_snapshot's
// docstring); how a viewer reads it: torch/utils/viz/MemoryViz.js
// (annotate_snapshot, process_alloc_data, snapshot_change).
#include "core/trace/snapshot.h"

#include "core/trace/bytesource.h"
#include "core/trace/pickle.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace memledger {

namespace {

using pickle::Kind;
using pickle::Unpickler;
using pickle::Value;

// Roles of the containers the reader takes apart as they are built.
enum Role : std::uint8_t { None = 0, Root, Segments, Segment, Blocks, DeviceTraces, DeviceTrace };

struct PendingBlock
{
    Bytes size = 0;
    Bytes requested = 0;
    bool allocated = false; ///< state == "active_allocated"
    std::int32_t stack = -1;
};

struct PendingSegment
{
    int device = 0;
    TraceSegment segment;
    std::vector<PendingBlock> blocks;
};

struct FrameKey
{
    std::string filename, name;
    std::int64_t line;
    bool operator==(const FrameKey &) const = default;
};
struct FrameKeyHash
{
    std::size_t operator()(const FrameKey &k) const
    {
        return std::hash<std::string>()(k.filename) * 31 + std::hash<std::string>()(k.name) * 7
               + std::hash<std::int64_t>()(k.line);
    }
};
struct StackHash
{
    std::size_t operator()(const std::vector<std::int32_t> &v) const
    {
        std::size_t h = v.size();
        for (std::int32_t x : v)
            h = h * 1000003u ^ static_cast<std::size_t>(x);
        return h;
    }
};

std::string indexPath(std::string_view base, std::int64_t i)
{
    return std::string(base) + "[" + std::to_string(i) + "]";
}

class SnapshotReader final : public pickle::Consumer
{
public:
    explicit SnapshotReader(const TraceImportOptions &options)
        : m_options(options)
    { }

    // Aux tags: a DeviceTrace list's device, a Segment's index, a Blocks
    // list's segment index, each plus one so that 0 stays "unset".
    std::uint8_t onCreate(Unpickler &vm, Value created, Value owner, std::int64_t index, Value key) override
    {
        const Kind kind = created.kind;
        const std::uint8_t ownerRole = vm.role(owner);
        if (!m_sawRoot && owner.kind == Kind::None) {
            m_sawRoot = true;
            return kind == Kind::Dict ? Root : None;
        }
        if (ownerRole == Root && kind == Kind::List && key.kind == Kind::Str) {
            if (vm.text(key) == "segments")
                return Segments;
            if (vm.text(key) == "device_traces")
                return DeviceTraces;
        }
        if (ownerRole == Segments && kind == Kind::Dict && index >= 0) {
            vm.setAux(created, index + 1);
            return Segment;
        }
        if (ownerRole == Segment && kind == Kind::List && key.kind == Kind::Str && vm.text(key) == "blocks") {
            vm.setAux(created, vm.aux(owner));
            return Blocks;
        }
        if (ownerRole == DeviceTraces && kind == Kind::List && index >= 0) {
            vm.setAux(created, index + 1);
            return DeviceTrace;
        }
        return None;
    }

    bool onItem(Unpickler &vm, Value container, std::int64_t index, Value key, Value item) override
    {
        switch (vm.role(container)) {
        case Root:
            return rootItem(vm, key, item);
        case Segments:
            if (!segment(vm, item, index))
                return false;
            vm.release(item);
            return true;
        case Blocks:
            if (!block(vm, container, item, index))
                return false;
            vm.release(item);
            return true;
        case DeviceTraces:
            if (!deviceTrace(vm, item, index))
                return false;
            vm.release(item);
            return true;
        case DeviceTrace: {
            const std::int64_t device = vm.aux(container) - 1;
            if (!event(vm, item, device, index))
                return false;
            vm.release(item);
            return true;
        }
        default:
            return false;
        }
    }

    bool onProgress(std::uint64_t bytesRead, std::uint64_t bytesTotal) override
    {
        return !m_options.progress || m_options.progress(m_options.progress_context, bytesRead, bytesTotal);
    }

    TraceLoadResult finish(Unpickler &vm, std::optional<Value> top);

private:
    bool fail(Unpickler &vm, std::string path, std::string message)
    {
        if (m_problem.message.empty())
            m_problem = Problem(std::move(path), std::move(message));
        vm.fail(m_problem.toString());
        return false;
    }

    bool wrongType(Unpickler &vm, const std::string &path, std::string_view expected, Value v)
    {
        return fail(vm, path,
                    "expected " + std::string(expected) + ", found " + std::string(pickle::kindName(vm.kind(v))));
    }

    // An int field: nullopt with `ok` true when absent and optional.
    std::optional<std::int64_t> intField(Unpickler &vm, Value dict, std::string_view key, const std::string &path,
                                         bool required, bool &ok)
    {
        const std::optional<Value> v = vm.find(dict, key);
        if (!v) {
            if (required)
                ok = fail(vm, path + "." + std::string(key), "missing");
            return std::nullopt;
        }
        if (v->kind == Kind::Int)
            return v->i;
        if (v->kind == Kind::Bool)
            return v->i;
        if (v->kind == Kind::None && !required)
            return std::nullopt;
        ok = wrongType(vm, path + "." + std::string(key), "an int", *v);
        return std::nullopt;
    }

    bool rootItem(Unpickler &vm, Value key, Value item)
    {
        const std::string_view k = vm.text(key);
        if (key.kind != Kind::Str || (k != "segments" && k != "device_traces"))
            return false; // allocator_settings, external_annotations, ...: kept
        const bool isSegments = k == "segments";
        bool &seen = isSegments ? m_sawSegments : m_sawDeviceTraces;
        if (seen)
            return fail(vm, std::string(k), "appears twice");
        seen = true;
        if (vm.kind(item) != Kind::List)
            return wrongType(vm, std::string(k), "a list", item);
        const std::uint8_t expected = isSegments ? Segments : DeviceTraces;
        if (vm.role(item) != expected) {
            // Built somewhere the reader did not foresee: take its items now.
            for (std::size_t i = 0; i < vm.size(item); ++i) {
                const Value child = vm.at(item, i);
                const bool ok = isSegments ? segment(vm, child, static_cast<std::int64_t>(i))
                                           : deviceTrace(vm, child, static_cast<std::int64_t>(i));
                if (!ok)
                    return false;
            }
        }
        vm.release(item);
        return true;
    }

    // ---- segments

    bool segment(Unpickler &vm, Value seg, std::int64_t index)
    {
        const std::string path = indexPath("segments", index);
        if (vm.kind(seg) != Kind::Dict)
            return wrongType(vm, path, "a dict", seg);
        bool ok = true;
        const auto device = intField(vm, seg, "device", path, true, ok);
        const auto address = intField(vm, seg, "address", path, true, ok);
        const auto total = intField(vm, seg, "total_size", path, true, ok);
        const auto stream = intField(vm, seg, "stream", path, false, ok);
        if (!ok)
            return false;
        if (*device < 0 || *device > 1'000'000)
            return fail(vm, path + ".device", "not a device index: " + std::to_string(*device));
        if (*total < 0)
            return fail(vm, path + ".total_size", "negative");
        PendingSegment s;
        s.device = static_cast<int>(*device);
        s.segment.addr = static_cast<std::uint64_t>(*address);
        s.segment.total_size = *total;
        s.segment.stream = stream.value_or(0);
        if (const std::optional<Value> blocks = vm.find(seg, "blocks")) {
            if (vm.kind(*blocks) != Kind::List)
                return wrongType(vm, path + ".blocks", "a list", *blocks);
            if (vm.role(*blocks) == Blocks) {
                const auto it = m_pendingBlocks.find(handleKey(*blocks));
                if (it != m_pendingBlocks.end()) {
                    if (vm.aux(*blocks) != index + 1)
                        return fail(vm, path + ".blocks", "built where the reader did not expect it");
                    s.blocks = std::move(it->second);
                    m_pendingBlocks.erase(it);
                }
            }
            for (std::size_t i = 0; i < vm.size(*blocks); ++i) // not taken as built: take them now
                if (!readBlock(vm, vm.at(*blocks, i), path + ".blocks", static_cast<std::int64_t>(i), s.blocks))
                    return false;
        }
        m_devicesSeen.insert(s.device);
        m_segments.push_back(std::move(s));
        return true;
    }

    static std::uint64_t handleKey(Value v) { return (std::uint64_t{v.gen} << 32) | v.id; }

    bool block(Unpickler &vm, Value list, Value item, std::int64_t index)
    {
        const std::int64_t segIndex = vm.aux(list) - 1;
        return readBlock(vm, item, indexPath("segments", segIndex) + ".blocks", index,
                         m_pendingBlocks[handleKey(list)]);
    }

    // MemoryViz.js annotate_snapshot: a block's frames and requested_size,
    // or, in the legacy layout without frames, those of history[0]
    // (real_size), else requested_size || size.
    bool readBlock(Unpickler &vm, Value b, const std::string &base, std::int64_t index, std::vector<PendingBlock> &out)
    {
        const std::string path = indexPath(base, index);
        if (vm.kind(b) != Kind::Dict)
            return wrongType(vm, path, "a dict", b);
        bool ok = true;
        const auto size = intField(vm, b, "size", path, true, ok);
        auto requested = intField(vm, b, "requested_size", path, false, ok);
        if (!ok)
            return false;
        if (*size < 0)
            return fail(vm, path + ".size", "negative");
        const std::optional<Value> state = vm.find(b, "state");
        if (!state)
            return fail(vm, path + ".state", "missing");
        if (state->kind != Kind::Str)
            return wrongType(vm, path + ".state", "a str", *state);
        PendingBlock pb;
        pb.size = *size;
        pb.allocated = vm.text(*state) == "active_allocated";
        std::optional<Value> frames = vm.find(b, "frames");
        if (!frames) {
            const std::optional<Value> history = vm.find(b, "history");
            if (history && vm.kind(*history) == Kind::List && vm.size(*history) > 0
                && vm.kind(vm.at(*history, 0)) == Kind::Dict) {
                const Value h0 = vm.at(*history, 0);
                frames = vm.find(h0, "frames");
                if (!requested || *requested == 0)
                    requested = intField(vm, h0, "real_size", path + ".history[0]", false, ok);
            }
        }
        pb.requested = requested && *requested != 0 ? *requested : (frames ? requested.value_or(*size) : *size);
        if (!ok)
            return false;
        if (pb.requested < 0)
            return fail(vm, path + ".requested_size", "negative");
        if (pb.allocated && frames
            && !stackOf(
                vm, *frames, [&] { return path + ".frames"; }, pb.stack))
            return false;
        out.push_back(pb);
        return true;
    }

    // ---- device traces

    bool deviceTrace(Unpickler &vm, Value list, std::int64_t index)
    {
        const std::string path = indexPath("device_traces", index);
        if (vm.kind(list) != Kind::List)
            return wrongType(vm, path, "a list", list);
        if (vm.role(list) == DeviceTrace) {
            if (vm.aux(list) - 1 != index)
                return fail(vm, path, "built where the reader did not expect it (an unusual pickle layout)");
        } else {
            for (std::size_t i = 0; i < vm.size(list); ++i)
                if (!event(vm, vm.at(list, i), index, static_cast<std::int64_t>(i)))
                    return false;
        }
        m_attached.insert(index);
        return true;
    }

    bool event(Unpickler &vm, Value e, std::int64_t device, std::int64_t index)
    {
        if (device < 0)
            return fail(vm, "device_traces", "a list of events outside device_traces");
        if (device > 1'000'000)
            return fail(vm, indexPath("device_traces", device), "more devices than any machine has");
        m_devicesSeen.insert(static_cast<int>(device));
        bool keep;
        if (m_options.device)
            keep = device == *m_options.device;
        else {
            if (!m_chosen)
                m_chosen = static_cast<int>(device);
            keep = device == *m_chosen;
        }
        if (!convertEvent(vm, e, device, index, keep))
            return false;
        if (keep)
            m_keptDevice = static_cast<int>(device);
        return true;
    }

    bool convertEvent(Unpickler &vm, Value e, std::int64_t device, std::int64_t index, bool keep)
    {
        if (vm.kind(e) != Kind::Dict) {
            const std::string path = indexPath(indexPath("device_traces", device), index);
            return wrongType(vm, path, "a dict", e);
        }
        TraceEvent ev;
        bool haveAction = false, unknownAction = false, haveAddr = false, haveSize = false;
        Value frames;
        const std::span<const Value> pairs = vm.items(e);
        for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
            const Value k = pairs[i];
            if (k.kind != Kind::Str)
                continue;
            const EventKey code = keyOf(vm, k);
            if (code == EventKey::Other)
                continue;
            const std::string_view key = vm.text(k);
            const Value v = pairs[i + 1];
            if (code == EventKey::Action) {
                if (v.kind != Kind::Str)
                    return wrongType(vm, eventPath(device, index, "action"), "a str", v);
                haveAction = true;
                unknownAction = !actionOf(vm, v, ev.action);
            } else if (code == EventKey::Addr || code == EventKey::Size || code == EventKey::Stream) {
                if (v.kind != Kind::Int)
                    return wrongType(vm, eventPath(device, index, key), "an int", v);
                if (code == EventKey::Addr) {
                    haveAddr = true;
                    ev.addr = static_cast<std::uint64_t>(v.i);
                } else if (code == EventKey::Size) {
                    if (v.i < 0)
                        return fail(vm, eventPath(device, index, key), "negative: " + std::to_string(v.i));
                    haveSize = true;
                    ev.size = v.i;
                } else {
                    ev.stream = v.i;
                }
            } else if (code == EventKey::Time) {
                if (v.kind == Kind::Int)
                    ev.time_us = static_cast<double>(v.i);
                else if (v.kind == Kind::Float)
                    ev.time_us = v.f;
                else if (v.kind != Kind::None)
                    return wrongType(vm, eventPath(device, index, key), "a number", v);
                m_hasTimes = m_hasTimes || v.kind != Kind::None;
            } else if (code == EventKey::Frames) {
                frames = v;
            }
        }
        if (!haveAction)
            return fail(vm, eventPath(device, index, "action"), "missing");
        // An oom event carries device_free instead of addr (memory_snapshot.cpp).
        if (!haveAddr && !(ev.action == TraceAction::Oom && !unknownAction))
            return fail(vm, eventPath(device, index, "addr"), "missing");
        if (!haveSize)
            return fail(vm, eventPath(device, index, "size"), "missing");
        if (!keep)
            return true;
        if (unknownAction) { // MemoryViz.js skips actions it does not know
            ++m_skippedActions;
            return true;
        }
        if (frames.kind != Kind::None
            && !stackOf(
                vm, frames, [&] { return eventPath(device, index, "frames"); }, ev.stack))
            return false;
        m_events.push_back(ev);
        return true;
    }

    static std::string eventPath(std::int64_t device, std::int64_t index, std::string_view key)
    {
        return indexPath(indexPath("device_traces", device), index) + "." + std::string(key);
    }

    // Keys and actions are a handful of strings read millions of times:
    // classified once per string of the pickle (by its index).
    enum class EventKey : std::uint8_t { Unknown, Action, Addr, Size, Stream, Time, Frames, Other };

    EventKey keyOf(Unpickler &vm, Value k)
    {
        if (k.kind != Kind::Str)
            return EventKey::Other;
        if (k.id >= m_keyCodes.size())
            m_keyCodes.resize(k.id + 1, EventKey::Unknown);
        EventKey &c = m_keyCodes[k.id];
        if (c == EventKey::Unknown) {
            const std::string_view t = vm.text(k);
            c = t == "action"    ? EventKey::Action
                : t == "addr"    ? EventKey::Addr
                : t == "size"    ? EventKey::Size
                : t == "stream"  ? EventKey::Stream
                : t == "time_us" ? EventKey::Time
                : t == "frames"  ? EventKey::Frames
                                 : EventKey::Other;
        }
        return c;
    }

    bool actionOf(Unpickler &vm, Value v, TraceAction &a)
    {
        if (v.id >= m_actionCodes.size())
            m_actionCodes.resize(v.id + 1, 0);
        std::int8_t &c = m_actionCodes[v.id];
        if (c == 0) {
            TraceAction found;
            c = actionNamed(vm.text(v), found) ? static_cast<std::int8_t>(static_cast<int>(found) + 1) : -1;
        }
        if (c < 0)
            return false;
        a = static_cast<TraceAction>(c - 1);
        return true;
    }

    static bool actionNamed(std::string_view s, TraceAction &a)
    {
        static const std::pair<std::string_view, TraceAction> names[] = {
            {"alloc", TraceAction::Alloc},
            {"free_requested", TraceAction::FreeRequested},
            {"free_completed", TraceAction::FreeCompleted},
            {"segment_alloc", TraceAction::SegmentAlloc},
            {"segment_free", TraceAction::SegmentFree},
            {"segment_map", TraceAction::SegmentMap},
            {"segment_unmap", TraceAction::SegmentUnmap},
            {"snapshot", TraceAction::Snapshot},
            {"oom", TraceAction::Oom},
        };
        for (const auto &[name, action] : names)
            if (s == name) {
                a = action;
                return true;
            }
        return false;
    }

    // ---- frames: deduplicated, as PyTorch shares them (the pickle's memo
    // refers back to a frame list or frame dict already seen).

    // `path` makes the place's name, only when something is wrong with it.
    template<class PathFn>
    bool stackOf(Unpickler &vm, Value frames, const PathFn &path, std::int32_t &stack)
    {
        const Kind kind = vm.kind(frames);
        if (kind == Kind::Converted) {
            stack = static_cast<std::int32_t>(vm.aux(frames));
            return true;
        }
        if (kind != Kind::List && kind != Kind::Tuple)
            return wrongType(vm, path(), "a list", frames);
        m_scratchStack.clear();
        const std::size_t n = vm.size(frames);
        for (std::size_t i = 0; i < n; ++i) {
            const Value f = vm.at(frames, i);
            std::int32_t id = -1;
            if (!frameOf(vm, f, path, i, id))
                return false;
            m_scratchStack.push_back(id);
        }
        if (m_scratchStack.empty()) {
            stack = -1;
        } else {
            const auto [it, inserted]
                = m_stackIds.try_emplace(m_scratchStack, static_cast<std::int32_t>(m_stacks.size()));
            if (inserted) {
                std::vector<TraceFrame> frameList;
                frameList.reserve(m_scratchStack.size());
                for (std::int32_t id : m_scratchStack)
                    frameList.push_back(m_frames[static_cast<std::size_t>(id)]);
                m_stacks.push_back(std::move(frameList));
            }
            stack = it->second;
        }
        vm.convert(frames, stack);
        return true;
    }

    template<class PathFn>
    bool frameOf(Unpickler &vm, Value f, const PathFn &path, std::size_t i, std::int32_t &id)
    {
        const Kind kind = vm.kind(f);
        if (kind == Kind::Converted) {
            id = static_cast<std::int32_t>(vm.aux(f));
            return true;
        }
        if (kind != Kind::Dict)
            return wrongType(vm, indexPath(path(), static_cast<std::int64_t>(i)), "a dict", f);
        FrameKey key;
        key.line = 0;
        const std::optional<Value> filename = vm.find(f, "filename"), name = vm.find(f, "name"),
                                   line = vm.find(f, "line");
        if (filename && filename->kind == Kind::Str)
            key.filename = vm.text(*filename);
        if (name && name->kind == Kind::Str)
            key.name = vm.text(*name);
        if (line && line->kind == Kind::Int)
            key.line = line->i;
        const auto [it, inserted] = m_frameIds.try_emplace(key, static_cast<std::int32_t>(m_frames.size()));
        if (inserted)
            m_frames.push_back(TraceFrame{key.filename, key.line, key.name});
        id = it->second;
        vm.convert(f, id);
        return true;
    }

    // ---- annotations

    void annotations(Unpickler &vm, Value list, int device, std::vector<TraceRange> &ranges, Problems &problems);

    const TraceImportOptions &m_options;
    Problem m_problem;
    bool m_sawRoot = false, m_sawSegments = false, m_sawDeviceTraces = false;
    std::optional<int> m_chosen;
    std::optional<int> m_keptDevice;
    std::set<int> m_devicesSeen;
    std::set<std::int64_t> m_attached;
    std::vector<PendingSegment> m_segments;
    std::unordered_map<std::uint64_t, std::vector<PendingBlock>> m_pendingBlocks;
    std::vector<TraceEvent> m_events;
    bool m_hasTimes = false;
    std::int64_t m_skippedActions = 0;
    std::vector<TraceFrame> m_frames;
    std::unordered_map<FrameKey, std::int32_t, FrameKeyHash> m_frameIds;
    std::vector<std::vector<TraceFrame>> m_stacks;
    std::unordered_map<std::vector<std::int32_t>, std::int32_t, StackHash> m_stackIds;
    std::vector<std::int32_t> m_scratchStack;
    std::vector<EventKey> m_keyCodes;
    std::vector<std::int8_t> m_actionCodes;
};

// external_annotations: {name, stage START / END, device, time_us}; a START
// and the next END of the same name make one range, unless the END comes
// before it in time. Ranges come out sorted by start.
void SnapshotReader::annotations(Unpickler &vm, Value list, int device, std::vector<TraceRange> &ranges,
                                 Problems &problems)
{
    if (vm.kind(list) != Kind::List) {
        problems.emplace_back("external_annotations", "expected a list, ignored", "", Problem::Severity::Warning);
        return;
    }
    std::map<std::string, std::vector<double>, std::less<>> open;
    std::int64_t unmatched = 0;
    for (std::size_t i = 0; i < vm.size(list); ++i) {
        const Value a = vm.at(list, i);
        if (vm.kind(a) != Kind::Dict) {
            ++unmatched;
            continue;
        }
        const std::optional<Value> name = vm.find(a, "name"), stage = vm.find(a, "stage"), dev = vm.find(a, "device"),
                                   time = vm.find(a, "time_us");
        if (!name || name->kind != Kind::Str || !stage || stage->kind != Kind::Str || !time
            || (time->kind != Kind::Int && time->kind != Kind::Float)) {
            ++unmatched;
            continue;
        }
        if (dev && dev->kind == Kind::Int && dev->i != device)
            continue;
        const double t = time->kind == Kind::Int ? static_cast<double>(time->i) : time->f;
        if (!std::isfinite(t)) {
            ++unmatched;
            continue;
        }
        const std::string n(vm.text(*name));
        if (vm.text(*stage) == "START") {
            open[n].push_back(t);
        } else if (vm.text(*stage) == "END") {
            auto it = open.find(n);
            if (it == open.end() || it->second.empty()) {
                ++unmatched;
                continue;
            }
            const double start = it->second.back();
            it->second.pop_back();
            // An end before its start is no range (a clock that went back, a hand-made file): both ignored.
            if (t < start) {
                unmatched += 2;
                continue;
            }
            ranges.push_back(TraceRange{n, start, t});
        } else {
            ++unmatched;
        }
    }
    for (const auto &[n, starts] : open)
        unmatched += static_cast<std::int64_t>(starts.size());
    if (unmatched > 0)
        problems.emplace_back("external_annotations",
                              std::to_string(unmatched) + " annotation(s) without a matching START / END, ignored", "",
                              Problem::Severity::Warning);
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const TraceRange &a, const TraceRange &b) { return a.start_us < b.start_us; });
}

// allocator_settings, as torch/csrc/cuda/memory_snapshot.cpp writes them:
// max_split_size in bytes (SIZE_MAX, read back as -1, when unset), the
// garbage-collection threshold (0 when unset). Other keys are not simulated.
std::optional<AllocatorConfig> allocatorSettings(Unpickler &vm, Value dict)
{
    if (vm.kind(dict) != Kind::Dict)
        return std::nullopt;
    AllocatorConfig c;
    const std::optional<Value> expandable = vm.find(dict, "expandable_segments");
    if (expandable && (expandable->kind == Kind::Bool || expandable->kind == Kind::Int))
        c.expandable_segments = expandable->i != 0;
    constexpr std::int64_t kMiB = std::int64_t(1) << 20;
    const std::optional<Value> split = vm.find(dict, "max_split_size");
    if (split && split->kind == Kind::Int && split->i > 0 && split->i < (std::int64_t(1) << 50))
        c.max_split_size_mb = split->i / kMiB;
    const std::optional<Value> gc = vm.find(dict, "garbage_collection_threshold");
    if (gc && gc->kind == Kind::Float && gc->f > 0 && gc->f < 1)
        c.garbage_collection_threshold = gc->f;
    return c;
}

TraceLoadResult SnapshotReader::finish(Unpickler &vm, std::optional<Value> top)
{
    TraceLoadResult result;
    if (!top) {
        if (vm.cancelled())
            result.problems.emplace_back("", "import cancelled");
        else if (!m_problem.message.empty())
            result.problems.push_back(m_problem);
        else
            result.problems.emplace_back("", vm.error());
        return result;
    }
    if (vm.role(*top) != Root) {
        // MemoryViz.js reads snapshot.segments and snapshot.device_traces only.
        result.problems.emplace_back("",
                                     "the pickle holds a " + std::string(pickle::kindName(vm.kind(*top)))
                                         + ", not the dict of torch.cuda.memory._snapshot()",
                                     "record one with torch.cuda.memory._dump_snapshot()");
        return result;
    }
    if (!m_sawDeviceTraces) {
        result.problems.emplace_back("device_traces", "missing: the snapshot holds no allocator trace",
                                     "record with torch.cuda.memory._record_memory_history() before the snapshot");
        return result;
    }
    if (!m_sawSegments) {
        result.problems.emplace_back("segments", "missing");
        return result;
    }
    if (m_keptDevice && !m_attached.count(*m_keptDevice)) {
        result.problems.emplace_back(indexPath("device_traces", *m_keptDevice),
                                     "events that never reached device_traces (an unusual pickle layout)");
        return result;
    }
    MeasuredTrace trace;
    trace.format = TraceFormat::Snapshot;
    trace.devices.assign(m_devicesSeen.begin(), m_devicesSeen.end());
    if (m_options.device) {
        if (!m_devicesSeen.count(*m_options.device)) {
            std::string list;
            for (int d : m_devicesSeen)
                list += (list.empty() ? "" : ", ") + std::to_string(d);
            result.problems.emplace_back("device", "device " + std::to_string(*m_options.device)
                                                       + " has no events or segments in this snapshot"
                                                       + (list.empty() ? "" : " (devices: " + list + ")"));
            return result;
        }
        trace.device = *m_options.device;
    } else if (m_keptDevice) {
        trace.device = *m_keptDevice;
    } else if (!m_devicesSeen.empty()) {
        trace.device = *m_devicesSeen.begin(); // no events anywhere: the lowest with segments
    }
    for (PendingSegment &s : m_segments) {
        if (s.device != trace.device)
            continue;
        trace.segments.push_back(s.segment);
        // MemoryViz.js annotate_snapshot: a block's address is its segment's
        // plus the sizes of the blocks before it.
        std::uint64_t addr = s.segment.addr;
        for (const PendingBlock &b : s.blocks) {
            if (b.allocated)
                trace.live_blocks.push_back(TraceBlock{addr, b.requested, b.stack});
            addr += static_cast<std::uint64_t>(b.size);
        }
    }
    trace.events = std::move(m_events);
    trace.stacks = std::move(m_stacks);
    trace.has_times = m_hasTimes;
    if (const std::optional<Value> ann = vm.find(*top, "external_annotations"))
        annotations(vm, *ann, trace.device, trace.ranges, result.problems);
    if (const std::optional<Value> settings = vm.find(*top, "allocator_settings"))
        trace.allocator_settings = allocatorSettings(vm, *settings);
    if (m_skippedActions > 0)
        result.problems.emplace_back("device_traces",
                                     std::to_string(m_skippedActions)
                                         + " event(s) with an unknown action, skipped as MemoryViz.js does",
                                     "", Problem::Severity::Warning);
    result.trace = std::move(trace);
    return result;
}

} // namespace

TraceLoadResult loadSnapshot(ByteSource &source, const TraceImportOptions &options)
{
    SnapshotReader reader(options);
    Unpickler vm(source, &reader);
    const std::optional<Value> top = vm.run();
    TraceLoadResult result = reader.finish(vm, top);
    if (result.trace) {
        // Python ignores what follows STOP, but a gzip stream is checked to
        // its end (CRC and length), so that a cut file is never taken as whole.
        char rest[4096];
        while (source.read(rest, sizeof rest) > 0) { }
        if (!source.error().empty()) {
            result.trace.reset();
            result.problems = {Problem("", "cannot read the snapshot to its end: " + source.error())};
        }
    }
    return result;
}

bool looksLikePickle(std::string_view head)
{
    if (head.empty())
        return false;
    const unsigned char c = static_cast<unsigned char>(head[0]);
    if (c == 0x80)
        return head.size() >= 2 && static_cast<unsigned char>(head[1]) >= 2 && static_cast<unsigned char>(head[1]) <= 5;
    return c == '(' || c == '}' || c == ']';
}

} // namespace memledger
