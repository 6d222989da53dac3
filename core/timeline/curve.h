// SPDX-License-Identifier: MIT
#pragma once

#include "core/timeline/timeline.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace memledger {

// A rank's memory curve from its lifetimes: the total alive after each
// instant (all of an instant's starts and ends applied), its peak and the
// first instant it holds. The training timeline and the serving forward's
// (core/serving/inferencetimeline.h) both build theirs here.
class CurveBuilder
{
public:
    CurveBuilder();
    ~CurveBuilder();
    CurveBuilder(const CurveBuilder &) = delete;
    CurveBuilder &operator=(const CurveBuilder &) = delete;

    // Sets rank.curve (downsampled to `points`, downsampleKeepingMax),
    // rank.peak_bytes and rank.peak_time from rank.lifetimes. The buffers are
    // kept from one rank to the next: fresh memory is paid for page by page
    // on its first touch, and every rank needs about as much.
    void build(RankTimeline &rank, std::size_t points);

    struct Event; // one instant's change of the total (curve.cpp)

private:
    std::unique_ptr<Event[]> m_events; // left uninitialised: every slot used is written first
    std::size_t m_capacity = 0;
    std::vector<CurvePoint> m_curve;
};

// Keeps at most `points` points and, within each time bucket, the highest one,
// so that a peak is never lost (heaptrack's rule for its charts).
std::vector<CurvePoint> downsampleKeepingMax(const std::vector<CurvePoint> &curve, std::size_t points);

} // namespace memledger
