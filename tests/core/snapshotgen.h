// SPDX-License-Identifier: MIT
// A large, realistic memory snapshot pickle made in memory, byte for byte as
// Python's pickler (protocol 4, Lib/pickle.py) writes the dict of
// torch.cuda.memory._snapshot(): every str, list and dict memoized, repeated
// strings and shared frame lists / frame dicts written once and then
// referred to with BINGET / LONG_BINGET (PyTorch shares identical tracebacks,
// torch/csrc/cuda/memory_snapshot.cpp ivalue_symbolize), items in batches of
// 1000 (APPENDS / SETITEMS). For the bench and the streaming tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace memledger::test {

class SnapshotPickleWriter
{
public:
    std::string out;

    void proto() { out += "\x80\x04"; }
    void stop() { out += '.'; }
    void mark() { out += '('; }
    void memoize() { out += '\x94', ++memoSize_; }

    void get(std::uint32_t index)
    {
        if (index < 256) {
            out += 'h';
            out += static_cast<char>(index);
        } else {
            out += 'j';
            le(index, 4);
        }
    }

    // A str, memoized the first time and referred to afterwards (Python's
    // pickler does that for the same object; snapshot keys and action names
    // are interned, hence the same objects).
    void str(const std::string &s)
    {
        const auto it = strings_.find(s);
        if (it != strings_.end()) {
            get(it->second);
            return;
        }
        if (s.size() < 256) {
            out += '\x8c';
            out += static_cast<char>(s.size());
        } else {
            out += 'X';
            le(s.size(), 4);
        }
        out += s;
        strings_[s] = memoSize_;
        memoize();
    }

    void integer(std::int64_t v)
    {
        if (v >= 0 && v < 256) {
            out += 'K';
            out += static_cast<char>(v);
        } else if (v >= 0 && v < 65536) {
            out += 'M';
            le(static_cast<std::uint64_t>(v), 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            out += 'J';
            le(static_cast<std::uint32_t>(v), 4);
        } else { // LONG1: the fewest two's complement bytes
            std::string bytes;
            std::int64_t x = v;
            for (;;) {
                bytes += static_cast<char>(x & 0xff);
                const std::int64_t rest = x >> 8;
                const bool signBit = (x & 0x80) != 0;
                if ((rest == 0 && !signBit) || (rest == -1 && signBit))
                    break;
                x = rest;
            }
            out += '\x8a';
            out += static_cast<char>(bytes.size());
            out += bytes;
        }
    }

    std::uint32_t emptyDict()
    {
        out += '}';
        const std::uint32_t id = memoSize_;
        memoize();
        return id;
    }
    std::uint32_t emptyList()
    {
        out += ']';
        const std::uint32_t id = memoSize_;
        memoize();
        return id;
    }
    void setitems() { out += 'u'; }
    void appends() { out += 'e'; }
    void append() { out += 'a'; }
    std::uint32_t memoSize() const { return memoSize_; }

private:
    void le(std::uint64_t v, int n)
    {
        for (int i = 0; i < n; ++i)
            out += static_cast<char>((v >> (8 * i)) & 0xff);
    }

    std::uint32_t memoSize_ = 0;
    std::unordered_map<std::string, std::uint32_t> strings_;
};

struct GeneratedSnapshot
{
    std::string bytes;
    std::int64_t events = 0;
    std::int64_t peak_allocated = 0; ///< as replayed (alloc adds, free_completed removes; nothing alive before)
};

// About `targetBytes` of pickle: one device, allocations and frees of
// realistic sizes, each with a stack of 10 to 30 frames from a pool (so that
// most stacks and frames are shared through the memo, as in real snapshots).
inline GeneratedSnapshot generateSnapshot(std::size_t targetBytes, unsigned seed = 1)
{
    std::mt19937_64 rng(seed);
    SnapshotPickleWriter w;
    GeneratedSnapshot g;
    w.proto();
    w.emptyDict();
    w.mark();
    w.str("segments");
    w.emptyList();
    w.str("device_traces");
    w.emptyList(); // device_traces
    w.emptyList(); // device 0
    const char *files[] = {"/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py",
                           "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/linear.py",
                           "/opt/conda/lib/python3.11/site-packages/torch/nn/functional.py",
                           "/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py",
                           "/opt/conda/lib/python3.11/site-packages/megatron/core/transformer/attention.py",
                           "/workspace/train_gpt.py"};
    const char *names[] = {"_call_impl", "forward",
                           "linear",     "scaled_dot_product_attention",
                           "backward",   "_wrapped_call_impl",
                           "train_step", "layer_norm",
                           "gelu",       "apply"};
    // 4000 distinct frames, 3000 distinct stacks.
    struct Frame
    {
        std::string file, name;
        std::int64_t line;
        std::int64_t memo = -1;
    };
    std::vector<Frame> frames(4000);
    for (Frame &f : frames) {
        f.file = files[rng() % 6];
        f.name = std::string(names[rng() % 10]) + "_" + std::to_string(rng() % 500);
        f.line = static_cast<std::int64_t>(rng() % 3000);
    }
    struct Stack
    {
        std::vector<int> frames;
        std::int64_t memo = -1;
    };
    std::vector<Stack> stacks(3000);
    for (Stack &s : stacks) {
        const int n = 10 + static_cast<int>(rng() % 21);
        for (int i = 0; i < n; ++i)
            s.frames.push_back(static_cast<int>(rng() % frames.size()));
    }
    auto writeFrame = [&](Frame &f) {
        if (f.memo >= 0) {
            w.get(static_cast<std::uint32_t>(f.memo));
            return;
        }
        f.memo = w.emptyDict();
        w.mark();
        w.str("filename");
        w.str(f.file);
        w.str("line");
        w.integer(f.line);
        w.str("name");
        w.str(f.name);
        w.setitems();
    };
    auto writeStack = [&](Stack &s) {
        if (s.memo >= 0) {
            w.get(static_cast<std::uint32_t>(s.memo));
            return;
        }
        s.memo = w.emptyList();
        w.mark();
        for (int fi : s.frames)
            writeFrame(frames[static_cast<std::size_t>(fi)]);
        w.appends();
    };
    std::vector<std::pair<std::uint64_t, std::int64_t>> live;
    std::int64_t allocated = 0, time = 1'700'000'000'000'000;
    std::uint64_t nextAddr = 0x7f3a00000000;
    int inBatch = 0;
    w.mark();
    while (w.out.size() < targetBytes) {
        const bool alloc = live.empty() || (live.size() < 2000 && rng() % 100 < 55);
        w.emptyDict();
        w.mark();
        w.str("action");
        std::uint64_t addr;
        std::int64_t size;
        if (alloc) {
            w.str("alloc");
            size = static_cast<std::int64_t>(512 * (1 + rng() % 200000));
            addr = nextAddr;
            nextAddr += static_cast<std::uint64_t>(size + 512);
            live.emplace_back(addr, size);
            allocated += size;
            g.peak_allocated = std::max(g.peak_allocated, allocated);
        } else {
            w.str("free_completed");
            const std::size_t k = static_cast<std::size_t>(rng() % live.size());
            addr = live[k].first;
            size = live[k].second;
            live[k] = live.back();
            live.pop_back();
            allocated -= size;
        }
        w.str("addr");
        w.integer(static_cast<std::int64_t>(addr));
        w.str("size");
        w.integer(size);
        w.str("stream");
        w.integer(0);
        w.str("time_us");
        time += static_cast<std::int64_t>(rng() % 50);
        w.integer(time);
        w.str("frames");
        writeStack(stacks[static_cast<std::size_t>(rng() % stacks.size())]);
        w.setitems();
        ++g.events;
        if (++inBatch == 1000) { // Lib/pickle.py _batch_appends: 1000 items per APPENDS
            w.appends();
            w.mark();
            inBatch = 0;
        }
    }
    w.appends();
    w.append(); // device 0 into device_traces
    w.str("allocator_settings");
    w.emptyDict();
    w.setitems(); // the top-level dict
    w.stop();
    g.bytes = std::move(w.out);
    return g;
}

} // namespace memledger::test
