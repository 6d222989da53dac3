// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/model/muon.h"

namespace memledger {

// One rank's Muon step on the device. `local`: the matrix
// elements the rank holds after TP and ZeRO (what it need not gather).
struct MuonStep
{
    Bytes workingSetBytes = 0; // the largest matrix's Newton–Schulz working set, bf16
    double flops = 0; // every matrix, all iterations, each rank computing its matrices whole
    double gatherBytes = 0; // what the rank receives to make its matrices whole
    double gemmSeconds = 0;
    double gatherSeconds = 0;
    double seconds() const { return gemmSeconds + gatherSeconds; }
};
// `sharers`: how many ranks split the matrices' iterations between them (1:
// every rank computes all its matrices whole).
MuonStep muonStep(const HardwareConfig &hw, const ParamCount &full, double local, bool nvlink, double sharers = 1);

} // namespace memledger
