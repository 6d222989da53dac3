// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

namespace memledger {

// Activation offload on two copy streams beside the compute stream, as
// Megatron-LM's --cpu-offloading runs it (Transformer Engine's double-buffered
// CPU offload): after its forward a group's saved activations go to the host
// through one of a bounded number of staging buffers; before its backward
// they come back, prefetched while the previous op computes. The compute
// stream stalls when every staging buffer is still draining, or when a
// copy-in is late.
class ActivationOffload
{
public:
    ActivationOffload(double linkBytesPerS, int stagingBuffers);

    // The earliest a forward wanting to start at `want` may start: a staging
    // buffer must be free, i.e. the copy-out `stagingBuffers` groups back done.
    double forwardStart(double want) const;
    // Schedules the copy-out of a group whose forward ended at `forwardEnd`;
    // returns when it has left the device.
    double copyOut(double forwardEnd, double bytes);
    // Schedules the copy-in of a group, issued at `issue` (the start of the
    // op before its backward); returns when it is back on the device.
    double copyIn(double issue, double bytes);

    double copyOutSeconds() const { return m_outBusy; }
    double copyInSeconds() const { return m_inBusy; }

private:
    double m_rate;
    std::size_t m_buffers;
    std::deque<double> m_pendingOut; // end times of the last copy-outs
    double m_outFree = 0;
    double m_inFree = 0;
    double m_outBusy = 0;
    double m_inBusy = 0;
};

// A chain of layers run forward then backward on one GPU, every layer but
// the last offloaded (its backward follows at once): the textbook case of how
// much of the copy time hides under compute.
struct ChainLayer
{
    double forwardSeconds = 0;
    double backwardSeconds = 0;
    double bytes = 0;
};
struct ChainResult
{
    double computeSeconds = 0; // forward + backward without copies
    double totalSeconds = 0; // with the stalls
    double forwardStallSeconds = 0;
    double backwardStallSeconds = 0;
    double copyOutSeconds = 0;
    double copyInSeconds = 0;
    // Share of the copy time hidden under compute.
    double overlap() const;
};
ChainResult simulateOffloadChain(const std::vector<ChainLayer> &layers, double linkBytesPerS, int stagingBuffers);

} // namespace memledger
