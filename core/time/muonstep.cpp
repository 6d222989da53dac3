// SPDX-License-Identifier: MIT
#include "core/time/muonstep.h"

#include "core/config/efficiency.h"
#include "core/time/kernelcost.h"

#include <algorithm>

namespace memledger {

MuonStep muonStep(const HardwareConfig &hw, const ParamCount &full, double local, bool nvlink, double sharers)
{
    MuonStep ms;
    const int ns = dtypeBytes(kNewtonSchulzDtype);
    ms.workingSetBytes = muonWorkingSetBytes(full);
    ms.flops = kNewtonSchulzSteps * full.nsFlops / std::max(1.0, sharers);
    if (full.matrices <= 0)
        return ms;
    // Three GEMMs per iteration and matrix, at the achieved rate of an average one.
    const double gemms = double(3 * kNewtonSchulzSteps * full.matrices) / std::max(1.0, sharers);
    const double perGemm = ms.flops / gemms;
    ms.gemmSeconds
        = ms.flops / (hw.peak_bf16_flops * efficiencyAt(hw.gemm_efficiency, perGemm)) + gemms * hw.kernel_launch_s;
    const double fullElements = double(full.matrixParams);
    const double missing = std::max(0.0, fullElements - local);
    ms.gatherBytes = missing * ns;
    if (missing > 0 && local > 0) {
        // One all-gather per matrix over the ranks that hold its shards.
        const double shards = std::max(1.0, fullElements / local);
        ms.gatherSeconds = collectiveSeconds(hw, Collective::AllGather, fullElements * ns, shards, nvlink)
                           + double(full.matrices - 1) * hw.collective_latency_s;
    }
    return ms;
}

} // namespace memledger
