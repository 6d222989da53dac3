// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>

class QUndoStack;

#include "core/base/problem.h"
#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/serving/inference.h"
#include "core/time/steptime.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

template<class T>
class QFutureWatcher;
class QThreadPool;

namespace memledger {
struct LoadResult;
}

namespace memledger::ui {

// The one state object of the GUI: the current configuration, the last
// ledger computed from a valid configuration and what else core/ derives
// from that plan (its timeline, step time and serving ledger), and the
// problems of the current one. Views only listen to it and read from it:
// each figure is computed once per change, however many views show it.
class Document : public QObject
{
    Q_OBJECT
public:
    explicit Document(QObject *parent = nullptr);

    const Config &config() const { return m_config; }
    const Ledger &ledger() const { return m_ledger; }
    // The configuration ledger() describes: the current one unless it has errors.
    const Config &ledgerConfig() const { return m_ledgerConfig; }
    // The iteration simulated for the same configuration as ledger(): the
    // ledger's totals are its peaks (core/timeline/peakledger.h), so it is
    // simulated with the ledger on every change.
    const Timeline &timeline() const { return *m_timeline; }
    // The step time core's time model estimates for the same configuration
    // (estimateStepTime), and the same plan served (computeInference), each
    // on first use after a change: the header, the lifetimes
    // view, the plan finder and the serving strip read one result per edit,
    // and a view that is not shown asks nothing.
    const StepTime &stepTime() const;
    const InferenceLedger &inference() const;
    // What PyTorch's caching allocator reserves for the same plan
    // (simulateReserved), computed off the GUI thread on first use after a
    // change, so a slider move never waits for it: nullptr until it is ready,
    // then reservedChanged() is emitted. While a drag asks for plan after plan,
    // only the one asked last is computed once the running one is done.
    const PlanReserved *reserved() const;
    // Waits (running the event loop) until reserved() is ready; false after
    // `milliseconds`. For --screenshot, the benchmark's settle and the tests.
    bool waitForReserved(int milliseconds) const;
    // A view asked for reserved() and it is not ready yet.
    bool reservedPending() const { return m_reservedWanted; }
    int reservedCount() const { return m_reservedCount; }
    // Every edit is one undo step; one slider drag merges into one step.
    QUndoStack *undoStack() const { return m_undo; }
    // Compare mode: up to kMaxPins plans pinned beside the current one.
    struct Pin
    {
        QString name;
        Config config;
        Ledger ledger;
    };
    static constexpr int kMaxPins = 4;
    const std::vector<Pin> &pins() const { return m_pins; }
    // A pin of the current plan's model, the only ones drawn beside it: a
    // plan of another model is not an alternative to this one. Pins of other
    // models are kept (they come back with their model) until cleared.
    bool isComparable(const Pin &pin) const { return pin.config.model == m_config.model; }
    // Pins the current plan (the oldest pin makes room when full); false without a valid ledger.
    bool pinCurrent();
    void clearPins();

    // How many times the ledger and timeline were recomputed (for tests and the bench).
    int recomputeCount() const { return m_recomputes; }
    // How many times the step time and the serving ledger were computed (tests: once per change at most).
    int stepTimeCount() const { return m_stepTimes; }
    int inferenceCount() const { return m_inferences; }
    const Problems &problems() const { return m_problems; }
    // False until a valid configuration has been set.
    bool hasLedger() const { return m_hasLedger; }
    // True when the current configuration has errors and the ledger is an older one.
    bool isStale() const { return hasErrors(m_problems); }
    // The file last loaded or saved, or "built-in: <name>".
    QString source() const { return m_source; }
    // The preset file Save writes: the one loaded or saved last; empty for a
    // built-in, a new plan or an imported Hugging Face config.
    QString filePath() const { return m_filePath; }
    // The plan was written to `path` (saveFile succeeded): it is the source and
    // the file from now on, and the undo history is clean here.
    void markSaved(const QString &path);
    // The plan as it was loaded or last saved.
    const Config &loadedConfig() const { return m_loaded; }
    // True when the plan differs from loadedConfig() in more than its name and
    // description: those then describe the plan as loaded, not this one.
    bool isEditedSinceLoad() const;

    // Loads, validates and applies a preset file. On failure the document is
    // untouched, nothing is emitted, and `error` gets one line per problem.
    bool loadFile(const QString &path, QString *error = nullptr);
    // Writes the current configuration as a preset through QSaveFile (a
    // temporary beside `path`, flushed and renamed over it), so a failed save
    // leaves the old file intact. The document itself never changes here.
    bool saveFile(const QString &path, QString *error = nullptr);
    bool loadBuiltinScenario(std::string_view name, QString *error = nullptr);
    // A new plan with every field at its documented default (presets/README.md).
    void newPlan();
    // Imports a Hugging Face model config (core/formats/hfimport.h): its model with
    // default training, parallelism and hardware. Refused like a bad preset
    // file; the import's warnings stay among the problems until the next load.
    bool importHfConfig(const QString &path, QString *error = nullptr);

    // Validates `config`; with errors the last valid ledger stays and only
    // the problems change, otherwise the ledger is recomputed. The problems
    // are the validation's plus the warnings of the source that was loaded.
    void setConfig(const Config &config);

    // A user's edit: pushed on the undo stack (edits with the same `mergeId`
    // in a row, such as one slider drag, merge into one step) and applied at
    // the next event-loop pass, so a burst of changes recomputes once.
    void edit(const Config &config, const QString &text, int mergeId = -1);
    // Applies a configuration at the next event-loop pass (undo/redo use it).
    void applyDeferred(const Config &config);

Q_SIGNALS:
    void configChanged(const memledger::Config &config);
    void ledgerChanged(const memledger::Ledger &ledger);
    // The timeline changed with the ledger.
    void timelineChanged();
    void pinsChanged();
    void problemsChanged(const memledger::Problems &problems);
    // source() or filePath() changed (a load, a save, a new plan).
    void sourceChanged();
    // reserved() is ready for the current plan.
    void reservedChanged();
    // Another plan took the current one's place (a file opened, a built-in
    // scenario, New, an imported config; not a save): what was held against
    // the old plan, such as a measured run, is no longer about this one.
    void planReplaced();

private:
    bool applyLoaded(const LoadResult &loaded, const QString &source, const QString &filePath, QString *error,
                     const Problems &sourceWarnings = {});

    void recompute();

    Config m_config;
    Ledger m_ledger;
    Config m_ledgerConfig; // what m_ledger and m_timeline describe
    // Shared with the reserved-memory worker, which reads it while the next
    // edit replaces this pointer: no copy of every lifetime per edit.
    std::shared_ptr<const Timeline> m_timeline = std::make_shared<const Timeline>();
    mutable StepTime m_stepTime;
    mutable bool m_stepTimeStale = true;
    mutable int m_stepTimes = 0;
    mutable InferenceLedger m_inference;
    mutable bool m_inferenceStale = true;
    mutable int m_inferences = 0;
    // reserved(): the plan's number (m_plan) it was computed for, the one
    // being computed (-1: none), and whether the current plan was asked for.
    void startReserved() const;
    void reservedComputed();
    int m_plan = 0;
    mutable std::optional<PlanReserved> m_reserved;
    mutable int m_reservedPlan = -1;
    mutable int m_reservedRunning = -1;
    mutable bool m_reservedWanted = false;
    mutable int m_reservedCount = 0;
    QFutureWatcher<PlanReserved> *m_reservedWatcher;
    // A thread of its own: Qt's raster engine fills on the global pool, and a
    // paint must not wait behind a simulation.
    QThreadPool *m_reservedPool;
    QUndoStack *m_undo;
    bool m_pending = false;
    int m_recomputes = 0;
    std::vector<Pin> m_pins;
    Problems m_problems;
    Problems m_sourceWarnings; // what loading the current source could not carry over
    bool m_hasLedger = false;
    QString m_source;
    QString m_filePath;
    Config m_loaded; // as loaded or last saved
};

} // namespace memledger::ui
