// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/measuredtrace.h"

#include <string_view>

namespace memledger {

class ByteSource;

// Reads the pickle torch.cuda.memory._dump_snapshot() writes (the dict of
// torch.cuda.memory._snapshot(): segments, device_traces, allocator_settings,
// external_annotations) with the safe unpickler of core/trace/pickle.h,
// streaming: each event of device_traces and each block of segments becomes
// a compact TraceEvent / TraceBlock as it is read, so memory follows the
// events kept, not the file. Keeps one device (options.device, or the lowest
// with events, else the lowest with segments) and lists every device with
// events or segments, as MemoryViz.js's device menu does. Never throws: a
// refused opcode, a truncated file or a wrong shape is one problem naming
// the place ("device_traces[0][17].addr: missing").
TraceLoadResult loadSnapshot(ByteSource &source, const TraceImportOptions &options = {});

// Whether a stream's first bytes look like a pickle (PROTO 2 to 5, or a
// protocol 0/1 container opcode): for telling a snapshot from a JSON trace.
bool looksLikePickle(std::string_view head);

} // namespace memledger
