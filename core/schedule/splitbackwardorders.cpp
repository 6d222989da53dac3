// SPDX-License-Identifier: MIT
#include "core/schedule/splitbackwardorders.h"

#include <queue>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

namespace memledger {

namespace {

// Appends ops, numbering each chunk's forwards and backwards in order and
// running deferred weight passes first in, first out (WeightGradStore).
class OpWriter
{
public:
    OpWriter(std::vector<PipelineOp> &ops, std::int64_t chunks)
        : m_ops(ops)
        , m_forwards(static_cast<std::size_t>(chunks), 0)
        , m_backwards(static_cast<std::size_t>(chunks), 0)
    { }
    void forward(std::int64_t chunk) { m_ops.push_back(make(OpKind::Forward, m_forwards, chunk, false)); }
    void backward(std::int64_t chunk, bool deferWeight)
    {
        m_ops.push_back(make(OpKind::Backward, m_backwards, chunk, deferWeight));
        if (deferWeight)
            m_pending.push_back(m_ops.back());
    }
    bool weight()
    {
        if (m_head == m_pending.size())
            return false;
        PipelineOp w = m_pending[m_head++];
        w.kind = OpKind::Weight;
        w.deferredWeight = false;
        m_ops.push_back(w);
        return true;
    }
    std::size_t pending() const { return m_pending.size() - m_head; }
    std::int64_t lastChunk() const { return m_ops.back().chunk; }
    std::int64_t forwards(std::int64_t chunk) const { return m_forwards[static_cast<std::size_t>(chunk)]; }
    std::int64_t backwards(std::int64_t chunk) const { return m_backwards[static_cast<std::size_t>(chunk)]; }

private:
    static PipelineOp make(OpKind kind, std::vector<std::int64_t> &counter, std::int64_t chunk, bool defer)
    {
        const std::int64_t mb = counter[static_cast<std::size_t>(chunk)]++;
        return {kind, static_cast<std::int32_t>(mb), static_cast<std::int32_t>(chunk), defer};
    }
    std::vector<PipelineOp> &m_ops;
    std::vector<std::int64_t> m_forwards, m_backwards;
    std::vector<PipelineOp> m_pending;
    std::size_t m_head = 0;
};

// ZB-H1: 1F1B with every backward split, rank r keeping r weight passes back
// (its W of micro-batch j runs after its B of micro-batch j + r), so that the
// later ranks, which finish their backwards first, end on the held-back Ws
// while rank 0 finishes its cool-down: the bubble shrinks by (p−1)·T_W and
// rank r holds p−r groups and r pending Ws, never more than rank 0's p.
void zbH1(OpWriter &w, std::int64_t p, std::int64_t m, std::int64_t r)
{
    const std::int64_t warmup = std::min(p - r - 1, m);
    const auto backward = [&] {
        w.backward(0, true);
        while (static_cast<std::int64_t>(w.pending()) > r)
            w.weight();
    };
    for (std::int64_t j = 0; j < warmup; ++j)
        w.forward(0);
    for (std::int64_t j = warmup; j < m; ++j) {
        w.forward(0);
        backward();
    }
    for (std::int64_t j = 0; j < warmup; ++j)
        backward();
    while (w.weight()) { }
}

// ZB-H2: with unit times rank r starts its first forward at time r and the
// last rank's first B reaches it at 2p−1−r, so 2(p−r)−1 forwards fill the
// wait; then B, W, F in turn: no warm-up bubble, 2p−1 groups on the first rank.
void zbH2(OpWriter &w, std::int64_t p, std::int64_t m, std::int64_t r)
{
    const std::int64_t warmup = std::min(2 * (p - r) - 1, m);
    for (std::int64_t j = 0; j < warmup; ++j)
        w.forward(0);
    for (std::int64_t j = 0; j < m; ++j) {
        w.backward(0, true);
        w.weight();
        if (warmup + j < m)
            w.forward(0);
    }
}

// ZB-V's greedy fill (Qi et al. 2024's V placement, filled as the authors'
// scheduler fills it): every rank, whenever it is free, runs a ready B (the
// chunk further down the V first), else a forward if its memory allows, the
// deeper chunk first, else a pending W. Memory as the authors count it: a
// forward adds one chunk group, B frees all but the W share `omega` of it, W
// the rest; at most 2p groups, 1F1B's first-rank peak.
//
// The choices are made in time, with the passes' own seconds and sends
// (`times`): an input is ready once its producer has ended and its send has
// arrived, as the timeline then runs the order. Made with unit times under
// unequal ones, the order assumes T_F = T_B = T_W: with W about half of B
// (Llama-3-70B on p = 4: F 52, B 58, W 33 ms a chunk) its steady state kept
// every rank waiting on the V's dependency cycle, the iteration 15 % slower
// than 1F1B's. With unit times the fill is the handcrafted schedule's.
class ZbVFill
{
public:
    ZbVFill(std::int64_t p, std::int64_t m, double omega, const PassTimes &times)
        : m_p(p)
        , m_m(m)
        , m_omega(std::clamp(omega, 0.0, 1.0))
        , m_times(times)
        , m_fEnd(static_cast<std::size_t>(2 * p * m), -1.0)
        , m_bEnd(m_fEnd.size(), -1.0)
        , m_ops(static_cast<std::size_t>(p))
        , m_memory(static_cast<std::size_t>(p), 0.0)
        , m_free(static_cast<std::size_t>(p), 0.0)
    {
        m_writers.reserve(static_cast<std::size_t>(p));
        for (auto &o : m_ops) {
            o.reserve(static_cast<std::size_t>(6 * m));
            m_writers.emplace_back(o, 2);
        }
    }

    std::vector<std::vector<PipelineOp>> run()
    {
        const std::int64_t total = 6 * m_m * m_p;
        std::int64_t done = 0;
        for (double t = 0; done < total;) {
            // Every rank free at t decides; an op started at t ends after t,
            // so the ranks' order does not matter (a second sweep only
            // matters for passes of zero seconds).
            for (bool started = true; started;) {
                started = false;
                for (std::int64_t r = 0; r < m_p; ++r)
                    if (m_free[static_cast<std::size_t>(r)] <= t && (backward(r, t) || forward(r, t) || weight(r, t))) {
                        started = true;
                        ++done;
                    }
            }
            // The next moment anything changes: an op ends or its output arrives.
            while (!m_events.empty() && m_events.top() <= t)
                m_events.pop();
            if (m_events.empty())
                break;
            t = m_events.top();
        }
        if (done < total)
            throw std::logic_error("zb-v schedule did not finish");
        return std::move(m_ops);
    }

private:
    std::int64_t placeOf(std::int64_t r, std::int64_t k) const { return k == 0 ? r : 2 * m_p - 1 - r; }
    std::size_t at(std::int64_t pos, std::int64_t j) const { return static_cast<std::size_t>(pos * m_m + j); }
    PassSeconds passOf(std::int64_t r, std::int64_t k) const
    {
        return m_times.passes.empty() ? PassSeconds{}
                                      : m_times.passes[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
    }
    // When a producer's output is usable by its neighbour; none before it ran.
    bool arrived(double end, double t) const { return end >= 0 && end + m_times.sendSeconds <= t; }
    void start(std::int64_t r, double t, double seconds, double *endOf)
    {
        const double end = t + seconds;
        m_free[static_cast<std::size_t>(r)] = end;
        if (endOf)
            *endOf = end;
        m_events.push(end);
        m_events.push(end + m_times.sendSeconds);
    }

    bool backward(std::int64_t r, double t)
    {
        OpWriter &w = m_writers[static_cast<std::size_t>(r)];
        for (std::int64_t k : {1, 0}) {
            const std::int64_t j = w.backwards(k), pos = placeOf(r, k);
            if (j >= m_m || j >= w.forwards(k))
                continue;
            // The last position's B follows its own forward; the others wait for the gradient sent back.
            const double own = m_fEnd[at(pos, j)];
            if (pos == 2 * m_p - 1 ? (own < 0 || own > t) : !arrived(m_bEnd[at(pos + 1, j)], t))
                continue;
            w.backward(k, true);
            start(r, t, passOf(r, k).inputGradient, &m_bEnd[at(pos, j)]);
            m_memory[static_cast<std::size_t>(r)] -= 1.0 - m_omega;
            return true;
        }
        return false;
    }

    bool forward(std::int64_t r, double t)
    {
        OpWriter &w = m_writers[static_cast<std::size_t>(r)];
        double &mem = m_memory[static_cast<std::size_t>(r)];
        const double cap = 2.0 * double(m_p) + 1e-9;
        for (std::int64_t k : {1, 0}) {
            const std::int64_t j = w.forwards(k), pos = placeOf(r, k);
            if (j >= m_m || (pos > 0 && !arrived(m_fEnd[at(pos - 1, j)], t)))
                continue;
            // A rank with no group of its deeper chunk alive keeps room for
            // one: without it, a forward arriving late (a send, a longer
            // pass) finds the memory full of shallow groups whose backwards
            // wait for it, and nothing moves again.
            const bool keepRoom = k == 0 && w.forwards(1) == w.backwards(1) && w.forwards(1) < m_m;
            if (mem + 1.0 + (keepRoom ? 1.0 : 0.0) > cap)
                continue;
            w.forward(k);
            start(r, t, passOf(r, k).forward, &m_fEnd[at(pos, j)]);
            mem += 1.0;
            return true;
        }
        return false;
    }

    bool weight(std::int64_t r, double t)
    {
        OpWriter &w = m_writers[static_cast<std::size_t>(r)];
        if (!w.weight())
            return false;
        start(r, t, passOf(r, w.lastChunk()).weight, nullptr);
        m_memory[static_cast<std::size_t>(r)] -= m_omega;
        return true;
    }

    std::int64_t m_p, m_m;
    double m_omega;
    const PassTimes &m_times;
    std::vector<double> m_fEnd, m_bEnd; // per (position, micro-batch): when its F, its B ended; < 0 not yet run
    std::vector<std::vector<PipelineOp>> m_ops;
    std::vector<OpWriter> m_writers;
    std::vector<double> m_memory; // per rank, in chunk groups
    std::vector<double> m_free; // per rank: when its running op ends
    std::priority_queue<double, std::vector<double>, std::greater<>> m_events;
};

// DualPipe's step() for one half of the ranks (DualPipeV: all of them): `ranks`
// ranks, this one `r` along the V, `m` micro-batches in each of its two
// phases; `chunkOf(phase)` names the chunk a phase runs on this rank. Step
// counts as deepseek-ai/DualPipe's dualpipe.py and dualpipev.py give them.
template<class ChunkOf>
void dualPipeSteps(OpWriter &w, std::int64_t ranks, std::int64_t r, std::int64_t m, ChunkOf chunkOf)
{
    const auto F = [&](int phase) { w.forward(chunkOf(phase)); };
    const auto B = [&](int phase, bool zb) { w.backward(chunkOf(phase), zb); };
    for (std::int64_t i = 0; i < (ranks - r - 1) * 2; ++i) // 1: nF0
        F(0);
    for (std::int64_t i = 0; i < r + 1; ++i) { // 2: nF0F1
        F(0);
        F(1);
    }
    for (std::int64_t i = 0; i < ranks - r - 1; ++i) { // 3: nB1W1F1
        B(1, true);
        w.weight();
        F(1);
    }
    for (std::int64_t i = 0; i < m - 2 * ranks + r + 1; ++i) { // 4: nF0B1F1B0 (overlapped pairs)
        F(0);
        B(1, false);
        F(1);
        B(0, false);
    }
    for (std::int64_t i = 0; i < ranks - r - 1; ++i) { // 5: nB1F1B0
        B(1, false);
        F(1);
        B(0, false);
    }
    const std::int64_t step6 = r + 1; // 6: nB1B0, the second half with deferred W
    bool zb = false;
    for (std::int64_t i = 0; i < step6; ++i) {
        if (i == step6 / 2 && r % 2 == 1)
            zb = true;
        B(1, zb);
        if (i == step6 / 2 && r % 2 == 0)
            zb = true;
        B(0, zb);
    }
    for (std::int64_t i = 0; i < ranks - r - 1; ++i) { // 7: nWB0
        w.weight();
        B(0, true);
    }
    while (w.weight()) { // 8: nW
    }
}

} // namespace

std::vector<PipelineOp> zbH1Ops(std::int64_t p, std::int64_t m, std::int64_t rank)
{
    std::vector<PipelineOp> ops;
    OpWriter w(ops, 1);
    zbH1(w, p, m, rank);
    return ops;
}

std::vector<PipelineOp> zbH2Ops(std::int64_t p, std::int64_t m, std::int64_t rank)
{
    std::vector<PipelineOp> ops;
    OpWriter w(ops, 1);
    zbH2(w, p, m, rank);
    return ops;
}

std::vector<std::vector<PipelineOp>> zbVOps(std::int64_t p, std::int64_t m, double weightShare, const PassTimes &times)
{
    return ZbVFill(p, m, weightShare, times).run();
}

std::vector<PipelineOp> dualPipeOps(std::int64_t p, std::int64_t mPerDirection, std::int64_t rank)
{
    // The second half of the ranks runs the mirror image: its phase 0 is the reverse direction.
    std::vector<PipelineOp> ops;
    OpWriter w(ops, 2);
    const bool second = rank >= p / 2;
    dualPipeSteps(w, p / 2, std::min(rank, p - 1 - rank), mPerDirection,
                  [second](int phase) { return std::int64_t(phase ^ int(second)); });
    return ops;
}

std::vector<PipelineOp> dualPipeVOps(std::int64_t p, std::int64_t m, std::int64_t rank)
{
    std::vector<PipelineOp> ops;
    OpWriter w(ops, 2);
    dualPipeSteps(w, p, rank, m, [](int phase) { return std::int64_t(phase); });
    return ops;
}

} // namespace memledger
