// SPDX-License-Identifier: MIT
#include "ui/document.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFutureWatcher>
#include <QSaveFile>
#include <QStringList>
#include <QThreadPool>
#include <QTimer>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/hfimport.h"
#include "core/formats/preset.h"
#include "core/timeline/peakledger.h"
#include "ui/qtstring.h"

#include <utility>

namespace memledger::ui {

namespace {

QString problemsText(const Problems &problems, bool errorsOnly)
{
    QStringList lines;
    for (const Problem &problem : problems) {
        if (!errorsOnly || problem.isError())
            lines << QString::fromStdString(problem.toString());
    }
    return lines.join(QLatin1Char('\n'));
}

// One edit: the configurations before and after. The moves of one drag
// share a merge id and merge, so a slider drag is one undo step named by
// where it ended (Qt's undo framework example, commands.cpp); -1 never merges.
class EditCommand : public QUndoCommand
{
public:
    EditCommand(Document *document, Config before, Config after, const QString &text, int mergeId)
        : QUndoCommand(text)
        , m_document(document)
        , m_before(std::move(before))
        , m_after(std::move(after))
        , m_mergeId(mergeId)
    { }

    void undo() override { m_document->applyDeferred(m_before); }
    void redo() override { m_document->applyDeferred(m_after); }
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand *other) override
    {
        if (other->id() != id())
            return false;
        m_after = static_cast<const EditCommand *>(other)->m_after;
        setText(other->text());
        return true;
    }

private:
    Document *m_document;
    Config m_before;
    Config m_after;
    int m_mergeId;
};

} // namespace

Document::Document(QObject *parent)
    : QObject(parent)
    , m_reservedWatcher(new QFutureWatcher<PlanReserved>(this))
    , m_reservedPool(new QThreadPool(this))
    , m_undo(new QUndoStack(this))
{
    m_reservedPool->setMaxThreadCount(1);
    connect(m_reservedWatcher, &QFutureWatcher<PlanReserved>::finished, this, &Document::reservedComputed);
}

bool Document::loadFile(const QString &path, QString *error)
{
    return applyLoaded(presetFromFile(path.toStdString()), path, path, error);
}

bool Document::saveFile(const QString &path, QString *error)
{
    const std::string text = presetToText(m_config);
    QSaveFile file(path);
    // Unbuffered, so that a write the disk refuses fails here: Qt 6.4's
    // commit() ignores a failed flush of its write buffer and renames the
    // truncated temporary over the old file (tst_documentsave caught it with
    // EFBIG). A short write or a failed commit discards the temporary; the
    // old file is only ever replaced by rename.
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered)
        || file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())
        || !file.commit()) {
        if (error)
            *error = tr("Cannot save %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

void Document::markSaved(const QString &path)
{
    m_undo->setClean();
    m_source = path;
    m_filePath = path;
    m_loaded = m_config;
    Q_EMIT sourceChanged();
}

bool Document::isEditedSinceLoad() const
{
    if (m_config.name != m_loaded.name || m_config.description != m_loaded.description) {
        Config named = m_config;
        named.name = m_loaded.name;
        named.description = m_loaded.description;
        return !(named == m_loaded);
    }
    return !(m_config == m_loaded);
}

void Document::newPlan()
{
    m_source = tr("new plan");
    m_filePath.clear();
    m_sourceWarnings.clear();
    m_undo->clear();
    m_loaded = Config{};
    setConfig(Config{});
    Q_EMIT sourceChanged();
    Q_EMIT planReplaced();
}

bool Document::loadBuiltinScenario(std::string_view name, QString *error)
{
    const BuiltinPreset *builtin = findBuiltin("scenarios", name);
    if (!builtin) {
        if (error)
            *error = tr("There is no built-in scenario named \"%1\".").arg(toQString(name));
        return false;
    }
    return applyLoaded(presetFromText(builtin->text, name), tr("built-in: %1").arg(toQString(name)), {}, error);
}

bool Document::importHfConfig(const QString &path, QString *error)
{
    ImportResult imported = importHfConfigFile(path.toStdString());
    const Problems warnings = imported.problems; // without errors only warnings remain
    return applyLoaded({std::move(imported.config), std::move(imported.problems)},
                       tr("Hugging Face config %1").arg(path), {}, error, warnings);
}

bool Document::applyLoaded(const LoadResult &loaded, const QString &source, const QString &filePath, QString *error,
                           const Problems &sourceWarnings)
{
    if (!loaded.config || hasErrors(loaded.problems)) {
        if (error)
            *error = problemsText(loaded.problems, true);
        return false;
    }
    // A file that loads but describes an impossible split is refused too:
    // there would be no ledger to show for it.
    const Problems problems = validate(*loaded.config);
    if (hasErrors(problems)) {
        if (error)
            *error = problemsText(problems, true);
        return false;
    }
    m_source = source;
    m_filePath = filePath; // Save must not write a preset over a config.json
    m_sourceWarnings = sourceWarnings;
    m_undo->clear(); // a new document starts a new history
    m_loaded = *loaded.config;
    setConfig(*loaded.config);
    Q_EMIT sourceChanged();
    Q_EMIT planReplaced();
    return true;
}

void Document::edit(const Config &config, const QString &text, int mergeId)
{
    if (config == m_config)
        return;
    m_undo->push(new EditCommand(this, m_config, config, text, mergeId));
}

void Document::applyDeferred(const Config &config)
{
    m_config = config;
    if (m_pending)
        return;
    m_pending = true;
    QTimer::singleShot(0, this, [this] {
        m_pending = false;
        setConfig(m_config);
    });
}

void Document::setConfig(const Config &config)
{
    m_config = config;
    m_problems = validate(config);
    m_problems.insert(m_problems.end(), m_sourceWarnings.begin(), m_sourceWarnings.end());
    Q_EMIT configChanged(m_config);
    if (!hasErrors(m_problems))
        recompute();
    Q_EMIT problemsChanged(m_problems);
}

bool Document::pinCurrent()
{
    if (!m_hasLedger || isStale())
        return false;
    if (static_cast<int>(m_pins.size()) >= kMaxPins)
        m_pins.erase(m_pins.begin());
    m_pins.push_back({QString::fromStdString(m_config.name), m_config, m_ledger});
    Q_EMIT pinsChanged();
    return true;
}

void Document::clearPins()
{
    m_pins.clear();
    Q_EMIT pinsChanged();
}

void Document::recompute()
{
    // One peak: the header, the bars and the lifetimes view read the same
    // simulated iteration (core/timeline/peakledger.h).
    PlanPeak plan = planPeak(m_config);
    m_ledger = std::move(plan.ledger);
    m_timeline = std::make_shared<const Timeline>(std::move(plan.timeline));
    m_ledgerConfig = m_config;
    m_stepTimeStale = true;
    m_inferenceStale = true;
    m_hasLedger = true;
    ++m_plan;
    ++m_recomputes;
    Q_EMIT ledgerChanged(m_ledger);
    Q_EMIT timelineChanged();
}

const StepTime &Document::stepTime() const
{
    if (m_stepTimeStale && m_hasLedger) {
        m_stepTime = estimateStepTime(m_ledgerConfig);
        m_stepTimeStale = false;
        ++m_stepTimes;
    }
    return m_stepTime;
}

const InferenceLedger &Document::inference() const
{
    // ledgerConfig() is a valid plan, as computeInference requires.
    if (m_inferenceStale && m_hasLedger) {
        m_inference = computeInference(m_ledgerConfig, m_ledger.peak_bytes);
        m_inferenceStale = false;
        ++m_inferences;
    }
    return m_inference;
}

const PlanReserved *Document::reserved() const
{
    if (!m_hasLedger)
        return nullptr;
    if (m_reservedPlan == m_plan)
        return &*m_reserved;
    m_reservedWanted = true;
    if (m_reservedRunning < 0)
        startReserved();
    return nullptr;
}

void Document::startReserved() const
{
    m_reservedRunning = m_plan;
    // The worker runs on its own copy of the valid plan and a shared, never modified, timeline.
    m_reservedWatcher->setFuture(QtConcurrent::run(m_reservedPool, [config = m_ledgerConfig, timeline = m_timeline] {
        return simulateReserved(config, *timeline);
    }));
}

void Document::reservedComputed()
{
    const int plan = std::exchange(m_reservedRunning, -1);
    if (plan == m_plan) {
        m_reserved = m_reservedWatcher->result();
        m_reservedPlan = plan;
        m_reservedWanted = false;
        ++m_reservedCount;
        Q_EMIT reservedChanged();
    } else if (m_reservedWanted && m_hasLedger) {
        startReserved(); // a later plan was asked for while this one ran
    }
}

bool Document::waitForReserved(int milliseconds) const
{
    const QDeadlineTimer deadline(milliseconds);
    while (!reserved()) {
        if (deadline.hasExpired() || !m_hasLedger)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 20);
    }
    return true;
}

} // namespace memledger::ui
