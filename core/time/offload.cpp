// SPDX-License-Identifier: MIT
#include "core/time/offload.h"

#include <algorithm>

namespace memledger {

ActivationOffload::ActivationOffload(double linkBytesPerS, int stagingBuffers)
    : m_rate(linkBytesPerS)
    , m_buffers(static_cast<std::size_t>(std::max(1, stagingBuffers)))
{ }

double ActivationOffload::forwardStart(double want) const
{
    if (m_pendingOut.size() < m_buffers)
        return want;
    return std::max(want, m_pendingOut[m_pendingOut.size() - m_buffers]);
}

double ActivationOffload::copyOut(double forwardEnd, double bytes)
{
    const double start = std::max(forwardEnd, m_outFree);
    const double seconds = bytes / m_rate;
    m_outFree = start + seconds;
    m_outBusy += seconds;
    m_pendingOut.push_back(m_outFree);
    if (m_pendingOut.size() > m_buffers)
        m_pendingOut.pop_front();
    return m_outFree;
}

double ActivationOffload::copyIn(double issue, double bytes)
{
    const double start = std::max(issue, m_inFree);
    const double seconds = bytes / m_rate;
    m_inFree = start + seconds;
    m_inBusy += seconds;
    return m_inFree;
}

double ChainResult::overlap() const
{
    const double copies = copyOutSeconds + copyInSeconds;
    if (copies <= 0)
        return 1.0;
    const double exposed = forwardStallSeconds + backwardStallSeconds;
    return std::clamp(1.0 - exposed / copies, 0.0, 1.0);
}

ChainResult simulateOffloadChain(const std::vector<ChainLayer> &layers, double linkBytesPerS, int stagingBuffers)
{
    ChainResult r;
    ActivationOffload streams(linkBytesPerS, stagingBuffers);
    const std::size_t n = layers.size();
    std::vector<double> outDone(n, 0.0);
    double now = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double start = streams.forwardStart(now);
        r.forwardStallSeconds += start - now;
        now = start + layers[i].forwardSeconds;
        if (i + 1 < n)
            outDone[i] = streams.copyOut(now, layers[i].bytes);
    }
    // Backward from the last layer; each copy-in is issued when the op before
    // its backward starts (and not before the group has left the device).
    double previousStart = now;
    for (std::size_t k = n; k-- > 0;) {
        double ready = now;
        if (k + 1 < n)
            ready = std::max(now, streams.copyIn(std::max(previousStart, outDone[k]), layers[k].bytes));
        r.backwardStallSeconds += ready - now;
        previousStart = ready;
        now = ready + layers[k].backwardSeconds;
    }
    for (const ChainLayer &l : layers)
        r.computeSeconds += l.forwardSeconds + l.backwardSeconds;
    r.totalSeconds = now;
    r.copyOutSeconds = streams.copyOutSeconds();
    r.copyInSeconds = streams.copyInSeconds();
    return r;
}

} // namespace memledger
