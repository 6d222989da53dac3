// SPDX-License-Identifier: MIT
#include "core/trace/traceimport.h"

#include "core/trace/bytesource.h"
#include "core/trace/profilertrace.h"
#include "core/trace/snapshot.h"

namespace memledger {

std::string_view traceFormatName(TraceFormat format)
{
    return format == TraceFormat::Snapshot ? "snapshot" : "profiler_trace";
}

TraceLoadResult loadTraceFile(const std::string &path, const TraceImportOptions &options)
{
    TraceLoadResult result;
    std::string error;
    std::unique_ptr<ByteSource> source = ByteSource::openFile(path, error);
    if (!source) {
        result.problems.push_back({path, error});
        return result;
    }
    // A pickle of protocol 2 or later opens with PROTO (0x80); a Chrome trace
    // is JSON, an object or (older exports) an array, maybe after whitespace.
    const std::string_view head = source->peek(64);
    if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80)
        result = loadSnapshot(*source, options);
    else if (const std::size_t i = head.find_first_not_of(" \t\r\n");
             i != std::string_view::npos && (head[i] == '{' || head[i] == '['))
        result = loadProfilerTrace(*source, options);
    else if (!source->error().empty()) {
        result.problems.push_back({path, source->error()});
        return result;
    } else {
        result.problems.push_back(
            {path,
             head.empty() ? "the file is empty"
                          : "neither a PyTorch memory snapshot (pickle) nor a profiler trace (JSON)",
             "record one with torch.cuda.memory._dump_snapshot() or torch.profiler (profile_memory=True)"});
        return result;
    }
    // Name the file in every problem, as the preset loader does.
    for (Problem &p : result.problems)
        p.path = p.path.empty() ? path : path + ": " + p.path;
    return result;
}

} // namespace memledger
