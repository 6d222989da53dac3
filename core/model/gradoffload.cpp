// SPDX-License-Identifier: MIT
#include "core/model/gradoffload.h"

#include <algorithm>

namespace memledger {

Bytes gradOffloadBufferBytes(std::int64_t bucketElements, std::int64_t rankParams, int gradBytes)
{
    return 2 * std::min(bucketElements, std::max<std::int64_t>(0, rankParams)) * gradBytes;
}

double gradOffloadStall(double backwardSeconds, double bytes, double bucketBytes, double link)
{
    if (link <= 0 || bytes <= 0)
        return 0.0;
    const double ahead = std::min(bytes, 2.0 * bucketBytes);
    return std::max(0.0, (bytes - ahead) / link - backwardSeconds);
}

double gradOffloadTail(double bytes, double bucketBytes, double link)
{
    if (link <= 0 || bytes <= 0)
        return 0.0;
    return std::min(bytes, 2.0 * bucketBytes) / link;
}

void setGradOffload(StrategyConfig &s, OffloadTarget target)
{
    s.grad_offload = target;
    if (target != OffloadTarget::None && s.optimizer_offload == OffloadTarget::None)
        s.optimizer_offload = OffloadTarget::CPU;
}

void setOptimizerOffload(StrategyConfig &s, OffloadTarget target)
{
    s.optimizer_offload = target;
    if (target == OffloadTarget::None)
        s.grad_offload = OffloadTarget::None;
}

} // namespace memledger
