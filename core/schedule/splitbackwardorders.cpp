// SPDX-License-Identifier: MIT
#include "core/schedule/splitbackwardorders.h"

#include <algorithm>
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

// ZB-V's greedy fill with unit times (the authors' handcrafted V schedule
// assumes T_F = T_B = T_W): every rank, at every step, runs a ready B (the
// chunk further down the V first), else a forward if its memory allows, the
// deeper chunk first, else a pending W. Memory as the authors count it: a
// forward adds one chunk group, B frees all but the W share `omega` of it,
// W the rest; at most 2p groups, 1F1B's first-rank peak.
std::vector<std::vector<PipelineOp>> zbV(std::int64_t p, std::int64_t m, double omega)
{
    const std::int64_t positions = 2 * p;
    const auto placeOf = [&](std::int64_t r, std::int64_t k) { return k == 0 ? r : positions - 1 - r; };
    const auto at = [&](std::int64_t pos, std::int64_t j) { return static_cast<std::size_t>(pos * m + j); };
    std::vector<std::int64_t> fEnd(static_cast<std::size_t>(positions * m), -1), bEnd(fEnd.size(), -1);
    std::vector<std::vector<PipelineOp>> ops(static_cast<std::size_t>(p));
    std::vector<OpWriter> writers;
    writers.reserve(static_cast<std::size_t>(p));
    for (auto &o : ops) {
        o.reserve(static_cast<std::size_t>(6 * m));
        writers.emplace_back(o, 2);
    }
    std::vector<double> memory(static_cast<std::size_t>(p), 0.0);
    omega = std::clamp(omega, 0.0, 1.0);
    const double cap = 2.0 * double(p) + 1e-9;
    const std::int64_t total = 6 * m * p;
    std::int64_t done = 0;
    // Every op takes one unit: decisions at t see only what ended by t. (One
    // pair of buffers for all steps: a step allocates nothing.)
    std::vector<std::pair<std::size_t, std::int64_t>> endsF, endsB;
    endsF.reserve(static_cast<std::size_t>(p));
    endsB.reserve(static_cast<std::size_t>(p));
    for (std::int64_t t = 0; done < total; ++t) {
        if (t > 8 * total + 8 * positions)
            throw std::logic_error("zb-v schedule did not finish");
        endsF.clear();
        endsB.clear();
        for (std::int64_t r = 0; r < p; ++r) {
            OpWriter &w = writers[static_cast<std::size_t>(r)];
            double &mem = memory[static_cast<std::size_t>(r)];
            bool ran = false;
            for (std::int64_t k : {1, 0}) {
                const std::int64_t j = w.backwards(k), pos = placeOf(r, k);
                if (j >= m || j >= w.forwards(k))
                    continue;
                const std::int64_t dep = pos == positions - 1 ? fEnd[at(pos, j)] : bEnd[at(pos + 1, j)];
                if (dep < 0 || dep > t)
                    continue;
                w.backward(k, true);
                endsB.push_back({at(pos, j), t + 1});
                mem -= 1.0 - omega;
                ran = true;
                break;
            }
            if (!ran && mem + 1.0 <= cap)
                for (std::int64_t k : {1, 0}) {
                    const std::int64_t j = w.forwards(k), pos = placeOf(r, k);
                    if (j >= m)
                        continue;
                    const std::int64_t dep = pos == 0 ? 0 : fEnd[at(pos - 1, j)];
                    if (dep < 0 || dep > t)
                        continue;
                    w.forward(k);
                    endsF.push_back({at(pos, j), t + 1});
                    mem += 1.0;
                    ran = true;
                    break;
                }
            if (!ran && w.weight()) {
                mem -= omega;
                ran = true;
            }
            done += ran;
        }
        for (const auto &[i, e] : endsF)
            fEnd[i] = e;
        for (const auto &[i, e] : endsB)
            bEnd[i] = e;
    }
    return ops;
}

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

std::vector<std::vector<PipelineOp>> zbVOps(std::int64_t p, std::int64_t m, double weightShare)
{
    return zbV(p, m, weightShare);
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
