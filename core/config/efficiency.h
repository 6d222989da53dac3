// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"

#include <string>
#include <vector>

namespace memledger {

// What fraction of a peak rate (FLOP/s, HBM or link bandwidth) one kernel or
// one collective achieves, by its size: GEMM FLOPs, bytes a memory-bound
// kernel moves, bytes of a collective's message. Small operations cannot fill
// the device (launch, tail of the last wave, protocol latency), so the
// fraction grows with size. Between points it is interpolated linearly in
// log(size); below the first point and above the last it is held.
struct EfficiencyPoint
{
    double size = 0;
    double fraction = 0;
    bool operator==(const EfficiencyPoint &) const = default;
};
using EfficiencyTable = std::vector<EfficiencyPoint>;

double efficiencyAt(const EfficiencyTable &table, double size);

// Appends one problem per defect, naming `field` ("hardware.gemm_efficiency"):
// empty, a size not positive, a fraction outside (0, 1], sizes not strictly
// ascending, or a fraction that falls as the size grows.
void checkEfficiencyTable(const EfficiencyTable &table, const std::string &field, Problems &problems);

} // namespace memledger
