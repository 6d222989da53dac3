// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

class QMimeData;

namespace memledger::ui {

// Which files the window takes as measured traces: a PyTorch memory snapshot
// (.pickle) or a profiler Chrome trace (.json), either gzipped (.gz) or not.
// The importer tells them apart by content; the names only decide what a
// drop or the open dialog offers.
bool isTraceFileName(const QString &path);
// The first local trace file a drag carries, or empty when it carries none.
QString traceFileFromMimeData(const QMimeData *mime);
// For QFileDialog.
QString traceFileFilter();

} // namespace memledger::ui
