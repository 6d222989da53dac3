// SPDX-License-Identifier: MIT
// MeasuredRun bound to core's importers and comparison. Apart from
// measuredrun.cpp so that tests can use MeasuredRun with stand-ins alone.
#include "core/trace/compare.h"
#include "core/trace/traceimport.h"
#include "ui/measuredrun.h"

namespace memledger::ui {

MeasuredRun::Backend MeasuredRun::coreBackend()
{
    return {[](const std::string &path, const TraceImportOptions &options) { return loadTraceFile(path, options); },
            [](const Config &config, const MeasuredTrace &trace, const CompareOptions &options) {
                return compareTrace(config, trace, options);
            }};
}

MeasuredRun::MeasuredRun(Document *document, QObject *parent)
    : MeasuredRun(document, coreBackend(), parent)
{ }

} // namespace memledger::ui
