// SPDX-License-Identifier: MIT
#pragma once

#include "core/trace/measuredtrace.h"

#include <string>

namespace memledger {

// Opens a measured trace whatever its kind: a memory snapshot pickle or a
// profiler Chrome trace, either of them gzip-compressed or not, told apart by
// their first bytes. Never throws: a file that cannot be read or parsed gives
// problems naming the file and the place.
TraceLoadResult loadTraceFile(const std::string &path, const TraceImportOptions &options = {});

std::string_view traceFormatName(TraceFormat format); // "snapshot", "profiler_trace"

} // namespace memledger
