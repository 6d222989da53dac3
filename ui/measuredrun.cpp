// SPDX-License-Identifier: MIT
#include "ui/measuredrun.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QStringList>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/document.h"

#include <algorithm>
#include <atomic>
#include <exception>

namespace memledger::ui {

// One import: the worker reads `cancelled` through the progress callback, the
// GUI thread sets it. What the comparison that comes with it was run against
// is recorded so that an edit made during the import is caught up afterwards.
struct MeasuredRun::ImportJob
{
    MeasuredRun *owner = nullptr;
    QString path;
    std::optional<int> device; // none: the lowest device with events
    std::optional<Config> config; // none: the document has no valid plan yet
    int rank = 0;
    std::atomic<bool> cancelled{false};
    std::atomic<int> permille{-1};
};

struct MeasuredRun::CompareJob
{
    std::shared_ptr<const MeasuredTrace> trace;
    Config config;
    int rank = 0;
};

namespace {

QString problemsText(const Problems &problems)
{
    QStringList lines;
    for (const Problem &problem : problems)
        if (problem.isError())
            lines << QString::fromStdString(problem.toString());
    return lines.join(QLatin1Char('\n'));
}

} // namespace

MeasuredRun::MeasuredRun(Document *document, Backend backend, QObject *parent)
    : QObject(parent)
    , m_document(document)
    , m_backend(std::move(backend))
{
    connect(m_document, &Document::ledgerChanged, this, &MeasuredRun::scheduleCompare);
    connect(m_document, &Document::planReplaced, this, [this] {
        if (!m_trace)
            return;
        const QString name = fileName();
        clear();
        Q_EMIT clearedForNewPlan(name);
    });
    connect(&m_importWatcher, &QFutureWatcher<std::shared_ptr<ImportResult>>::finished, this, &MeasuredRun::importDone);
    connect(&m_compareWatcher, &QFutureWatcher<std::shared_ptr<CompareResult>>::finished, this,
            &MeasuredRun::compareDone);
}

MeasuredRun::~MeasuredRun()
{
    m_queuedPath.clear();
    cancelImport();
    m_importWatcher.waitForFinished();
    m_compareWatcher.waitForFinished();
}

QString MeasuredRun::fileName() const
{
    return QFileInfo(m_path).fileName();
}

QString MeasuredRun::importingPath() const
{
    return m_import ? m_import->path : QString();
}

void MeasuredRun::import(const QString &path, std::optional<int> device)
{
    if (m_import) {
        // One import at a time: the running one is cancelled and this one starts when it has stopped.
        m_queuedPath = path;
        m_queuedDevice = device;
        cancelImport();
        return;
    }
    auto job = std::make_shared<ImportJob>();
    job->owner = this;
    job->path = path;
    job->device = device;
    if (m_document->hasLedger())
        job->config = m_document->ledgerConfig();
    job->rank = comparedRank();
    m_import = job;
    Q_EMIT importStarted(path);

    const Backend backend = m_backend;
    m_importWatcher.setFuture(QtConcurrent::run([job, backend]() -> std::shared_ptr<ImportResult> {
        TraceImportOptions options;
        options.device = job->device;
        options.progress_context = job.get();
        options.progress = [](void *context, std::uint64_t read, std::uint64_t total) {
            auto *j = static_cast<ImportJob *>(context);
            if (j->cancelled)
                return false;
            // Reported to the GUI thread only when the permille changes: a few hundred events at most.
            const int permille = total > 0 ? int(std::min<std::uint64_t>(1000, read * 1000 / total)) : 0;
            if (j->permille.exchange(permille) != permille) {
                MeasuredRun *owner = j->owner;
                QMetaObject::invokeMethod(
                    owner,
                    [owner, j, read, total] {
                        if (owner->m_import.get() == j)
                            Q_EMIT owner->importProgress(qint64(read), qint64(total));
                    },
                    Qt::QueuedConnection);
            }
            return true;
        };
        auto result = std::make_shared<ImportResult>();
        try {
            result->loaded = backend.load(job->path.toStdString(), options);
            if (result->loaded.trace && !hasErrors(result->loaded.problems) && job->config && !job->cancelled) {
                CompareOptions compare;
                compare.pipeline_rank = job->rank;
                result->comparison = backend.compare(*job->config, *result->loaded.trace, compare);
            }
        } catch (const std::exception &e) {
            result->error = QString::fromStdString(e.what());
        }
        return result;
    }));
}

void MeasuredRun::cancelImport()
{
    if (m_import)
        m_import->cancelled = true;
}

void MeasuredRun::importDone()
{
    const std::shared_ptr<ImportJob> job = std::move(m_import);
    m_import.reset();
    if (!job)
        return;
    const std::shared_ptr<ImportResult> done = m_importWatcher.result();
    ImportResult &result = *done;
    // A cancel that came after the last progress report still wins: the user asked for nothing to change.
    if (job->cancelled) {
        Q_EMIT importCancelled(job->path);
    } else if (!result.error.isEmpty() || !result.loaded.trace || hasErrors(result.loaded.problems)) {
        QString text = !result.error.isEmpty() ? result.error : problemsText(result.loaded.problems);
        if (text.isEmpty())
            text = tr("The file holds no trace.");
        Q_EMIT importFailed(job->path, text);
    } else {
        m_trace = std::make_shared<const MeasuredTrace>(std::move(*result.loaded.trace));
        m_path = job->path;
        m_comparison = std::move(result.comparison);
        if (m_comparison) {
            m_comparedConfig = job->config;
            m_comparedRank = job->rank;
            ++m_compares;
        } else {
            m_comparedConfig.reset();
        }
        Q_EMIT importFinished(job->path);
        Q_EMIT changed();
        // An edit made while the file loaded is caught up now.
        scheduleCompare();
    }
    if (!m_queuedPath.isEmpty())
        import(std::exchange(m_queuedPath, QString()), std::exchange(m_queuedDevice, std::nullopt));
}

void MeasuredRun::clear()
{
    if (!m_trace && !m_comparison)
        return;
    m_trace.reset();
    m_path.clear();
    m_comparison.reset();
    m_comparedConfig.reset();
    Q_EMIT changed();
}

void MeasuredRun::setDevice(int device)
{
    if (!m_trace || device == m_trace->device || m_path.isEmpty())
        return;
    import(m_path, device);
}

void MeasuredRun::setPipelineRank(int rank)
{
    if (rank == m_rank)
        return;
    m_rank = rank;
    scheduleCompare();
}

int MeasuredRun::comparedRank() const
{
    const int ranks = m_document->hasLedger() ? int(m_document->ledger().ranks.size()) : 1;
    return std::clamp(m_rank, 0, std::max(0, ranks - 1));
}

bool MeasuredRun::upToDate() const
{
    if (!m_trace || !m_document->hasLedger())
        return true; // nothing to compare, or nothing to compare with
    return m_comparedConfig && *m_comparedConfig == m_document->ledgerConfig() && m_comparedRank == comparedRank();
}

void MeasuredRun::scheduleCompare()
{
    // Coalesced: a burst of edits in one event-loop pass compares once.
    if (m_compareQueued || upToDate())
        return;
    m_compareQueued = true;
    QTimer::singleShot(0, this, [this] {
        m_compareQueued = false;
        startCompare();
    });
}

void MeasuredRun::startCompare()
{
    // One comparison at a time; compareDone() starts the next if the plan moved on meanwhile.
    if (m_compare || upToDate())
        return;
    auto job = std::make_shared<CompareJob>();
    job->trace = m_trace;
    job->config = m_document->ledgerConfig();
    job->rank = comparedRank();
    m_compare = job;
    const Backend backend = m_backend;
    m_compareWatcher.setFuture(QtConcurrent::run([job, backend]() -> std::shared_ptr<CompareResult> {
        auto result = std::make_shared<CompareResult>();
        try {
            CompareOptions options;
            options.pipeline_rank = job->rank;
            result->comparison = backend.compare(job->config, *job->trace, options);
        } catch (const std::exception &e) {
            result->error = QString::fromStdString(e.what());
        }
        return result;
    }));
}

void MeasuredRun::compareDone()
{
    const std::shared_ptr<CompareJob> job = std::move(m_compare);
    m_compare.reset();
    if (!job)
        return;
    const std::shared_ptr<CompareResult> done = m_compareWatcher.result();
    CompareResult &result = *done;
    // A comparison of a trace since cleared or replaced is dropped.
    if (job->trace == m_trace) {
        // Recorded even when it failed, so that a failing plan is not retried until it changes.
        m_comparedConfig = job->config;
        m_comparedRank = job->rank;
        if (result.comparison) {
            m_comparison = std::move(result.comparison);
            ++m_compares;
            Q_EMIT changed();
        } else {
            Q_EMIT compareFailed(result.error);
        }
    }
    scheduleCompare();
}

bool MeasuredRun::waitUntilIdle(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    // Events already posted first: an undo or an edit applies its configuration at the next pass.
    QCoreApplication::processEvents();
    while (m_import || m_compare || m_compareQueued || !m_queuedPath.isEmpty()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 20);
    }
    return true;
}

} // namespace memledger::ui
