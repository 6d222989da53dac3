// SPDX-License-Identifier: MIT
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include "core/config/config.h"
#include "core/trace/compare.h"
#include "core/trace/measuredtrace.h"

#include <functional>
#include <memory>
#include <optional>

namespace memledger::ui {

class Document;

// A measured run held against the document's plan: the imported trace and
// its comparison with the current configuration. Imports run off the GUI
// thread with progress and Cancel; a failed or cancelled import changes
// nothing. The trace is kept, so that an edit only re-runs the comparison
// (also off the GUI thread, at most one at a time, the latest edit winning).
class MeasuredRun : public QObject
{
    Q_OBJECT
public:
    // What does the work: core's loadTraceFile and compareTrace, or a test's stand-ins.
    struct Backend
    {
        std::function<TraceLoadResult(const std::string &path, const TraceImportOptions &options)> load;
        std::function<TraceComparison(const Config &config, const MeasuredTrace &trace, const CompareOptions &options)>
            compare;
    };
    static Backend coreBackend();

    explicit MeasuredRun(Document *document, QObject *parent = nullptr);
    MeasuredRun(Document *document, Backend backend, QObject *parent = nullptr);
    // Cancels a running import and waits for the workers.
    ~MeasuredRun() override;

    // Starts importing `path`, keeping `device`'s events (none: the lowest device with events); an import
    // already running is cancelled first.
    void import(const QString &path, std::optional<int> device = {});
    void cancelImport();
    bool isImporting() const { return m_import != nullptr; }
    QString importingPath() const;
    // Forgets the trace and its comparison (not undoable: the plan is untouched).
    // Done too when the document opens another plan: a trace is of the plan it
    // was imported for, and held against the next one it would compare a run
    // with a model it never ran (issue 34: a 12 M-parameter CPU run "held
    // against" GPT-3 175B).
    void clear();

    bool hasTrace() const { return m_trace != nullptr; }
    const MeasuredTrace *trace() const { return m_trace.get(); }
    QString path() const { return m_path; }
    QString fileName() const;
    // The comparison with the plan as it was last compared (it follows edits a moment later).
    const std::optional<TraceComparison> &comparison() const { return m_comparison; }
    bool isComparing() const { return m_compare != nullptr; }
    // How many comparisons have finished (tests: edits are coalesced).
    int compareCount() const { return m_compares; }

    // Holds another device of the trace's file against the plan: the file is imported again for it (an
    // import keeps one device's events). Nothing happens without a trace or for the device already kept.
    void setDevice(int device);

    // The pipeline rank the trace is held against (clamped to the plan's ranks when compared).
    int pipelineRank() const { return m_rank; }
    void setPipelineRank(int rank);

    // Runs the event loop until no import or comparison is in flight, or `timeoutMs` passes; false on timeout.
    bool waitUntilIdle(int timeoutMs = 120000);

Q_SIGNALS:
    void importStarted(const QString &path);
    // Bytes of the file read so far (compressed bytes for a gzipped file).
    void importProgress(qint64 bytesRead, qint64 bytesTotal);
    // The trace was replaced; its comparison comes with it.
    void importFinished(const QString &path);
    // One line per problem; nothing changed.
    void importFailed(const QString &path, const QString &problems);
    void importCancelled(const QString &path);
    // A comparison failed (it threw); the last one stays.
    void compareFailed(const QString &message);
    // The trace or its comparison changed, or both were cleared.
    void changed();
    // The trace `fileName` was cleared because another plan was opened.
    void clearedForNewPlan(const QString &fileName);

private:
    struct ImportJob;
    struct CompareJob;
    struct ImportResult
    {
        TraceLoadResult loaded;
        std::optional<TraceComparison> comparison;
        QString error;
    };
    struct CompareResult
    {
        std::optional<TraceComparison> comparison;
        QString error;
    };

    void scheduleCompare();
    void startCompare();
    void importDone();
    void compareDone();
    // The pipeline rank asked for, within the plan's ranks.
    int comparedRank() const;
    // True when the comparison (or its failure) is of the current plan and rank, or there is nothing to compare.
    bool upToDate() const;

    Document *m_document;
    Backend m_backend;
    std::shared_ptr<const MeasuredTrace> m_trace;
    QString m_path;
    std::optional<TraceComparison> m_comparison;
    std::optional<Config> m_comparedConfig; // what the last comparison (or failed attempt) was of
    int m_comparedRank = -1;
    int m_rank = 0;
    int m_compares = 0;
    bool m_compareQueued = false;

    // Results travel by pointer: a trace can hold hundreds of megabytes of events.
    std::shared_ptr<ImportJob> m_import;
    QString m_queuedPath; // imported once the cancelled import in flight has stopped
    std::optional<int> m_queuedDevice;
    QFutureWatcher<std::shared_ptr<ImportResult>> m_importWatcher;
    std::shared_ptr<CompareJob> m_compare;
    QFutureWatcher<std::shared_ptr<CompareResult>> m_compareWatcher;
};

} // namespace memledger::ui
