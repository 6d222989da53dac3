// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/bytesource.h"
#include "core/trace/measuredtrace.h"

namespace memledger {

// Reads a PyTorch profiler Chrome trace (torch.profiler with
// profile_memory=True, export_chrome_trace(); Kineto's layout, written by
// libkineto/src/output_json.cpp) as it streams by: nothing but the kept
// device's [memory] events and the user_annotation / ProfilerStep#N ranges
// is held, never the file.
//
// Each `"name": "[memory]"` event (`"ph": "i"`, `"cat": "cpu_instant_event"`)
// becomes an Alloc (args.Bytes > 0) or a FreeCompleted (Bytes < 0, size =
// -Bytes) at args.Addr, time_us = ts. Its device is args."Device Id" for an
// accelerator and -1 for the CPU (args."Device Type" 0, c10::DeviceType::CPU,
// whose Device Id Kineto writes as -1). Without options.device the lowest
// accelerator device is kept, or the CPU when the trace has no other.
// Events are kept in time order (file order among equal times).
//
// Malformed JSON, a wrong type or a missing field gives one problem naming
// the place ("traceEvents[12].args.Bytes") and no trace; never throws.
TraceLoadResult loadProfilerTrace(ByteSource &source, const TraceImportOptions &options = {});

} // namespace memledger
