// SPDX-License-Identifier: MIT
#pragma once

#include <QFutureWatcher>
#include <QThreadPool>
#include <QTimer>
#include <QWidget>

#include "core/config/config.h"
#include "core/planner/search.h"

class QDoubleSpinBox;
class QLabel;
class QModelIndex;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QStackedWidget;
class QTableView;

namespace memledger::ui {

class Document;
class FrontierPlot;
class PlanFinderModel;

// "Find plans that fit" (issue 6): the GPU count, margin and K, a button that
// runs core's searchPlans on the document's configuration, a summary line and
// the ranked plans. The search runs on a worker thread: it simulates the
// caching allocator for the plans it lists, up to a second on a large space,
// and the window keeps answering meanwhile; the plans found before stay until
// the new ones arrive. Hovering a
// t ... offload cell or header lists the dimension's other values with the
// core's verdict for each; activating a row (double-click or Enter) applies
// that plan to the document as one undo step, keeping the document's name.
class PlanFinder : public QWidget
{
    Q_OBJECT
public:
    explicit PlanFinder(Document *document, QWidget *parent = nullptr);

    // Starts the search with the current inputs; one asked for while another
    // runs follows it (the last inputs win).
    void findPlans();
    // Whether a search is running or waiting to run.
    bool searchPending() const { return m_running; }
    // Runs the event loop until no search is pending; false past `milliseconds`
    // (negative: as long as the search takes, as a synchronous search would).
    bool waitForSearch(int milliseconds = -1);
    // Applies the plan of a row of the model (rank order); false if there is none.
    bool applyPlan(int row);

    void setGpus(int gpus);
    void setMargin(double fraction);
    void setTop(int top);

    // The outcome of the last search asked for: these wait for one in flight.
    const SearchResult &result();
    PlanFinderModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    // Peak against step time of the plans found, the fastest-for-their-memory
    // joined as a frontier, the current plan ringed; a click applies a plan.
    FrontierPlot *plot() const { return m_plot; }
    QString summary();
    // The notes shown instead of the table (why nothing was searched or found); empty while the table shows.
    QString notes();
    // Why the current plan is not drawn among the plans found; empty when it is, or there is nothing to say.
    QString currentPlanNote();
    // Writes the plans found as CSV (core's searchToCsv), atomically; false
    // with a reason in `error` (nothing found yet, or the write failed).
    bool exportCsv(const QString &path, QString *error = nullptr);
    QPushButton *exportButton() const { return m_export; }

Q_SIGNALS:
    void planApplied(int row);
    // A search finished and its plans (or its notes) are shown.
    void searchFinished();

protected:
    void keyPressEvent(QKeyEvent *event) override;
    // The first time the panel is shown it searches at once (a few
    // milliseconds), so a new user sees answers rather than an empty table.
    void showEvent(QShowEvent *event) override;

private:
    void startSearch();
    void searchDone();
    void showResult(SearchResult result);
    void activate(const QModelIndex &index);
    void documentChanged(const Config &config);
    void showSummary();
    void updatePlot();
    // Says when the current plan is not drawn among the plans found: it runs on another GPU count.
    void showCurrentPlanNote();
    void chooseExportPath();

    Document *m_document;
    QSpinBox *m_gpus;
    QDoubleSpinBox *m_margin;
    QSpinBox *m_top;
    QPushButton *m_find;
    QPushButton *m_export; // "Export CSV…", enabled once plans were found
    QLabel *m_summary;
    QLabel *m_current; // why the current plan is not in the plot, when it is not
    QStackedWidget *m_stack;
    QTableView *m_table;
    FrontierPlot *m_plot;
    QLabel *m_notes;
    QLabel *m_hint;
    PlanFinderModel *m_model;
    QSortFilterProxyModel *m_proxy;
    bool m_gpusEdited = false;
    bool m_searched = false;
    bool m_blocked = false; // the last search was stopped by an error of what it keeps (searchBlockers)
    // A sequence or global batch moved on a slider searches again once the
    // move pauses: the search simulates the caching allocator for the plans
    // it lists (a few hundred milliseconds), too long for every step of a drag.
    QTimer *m_researchTimer;
    Config m_searchedBase;
    SearchOptions m_searchedOptions;
    // The search in flight: one worker, and whether another was asked for meanwhile.
    QThreadPool *m_pool;
    QFutureWatcher<SearchResult> *m_watcher;
    bool m_running = false;
    bool m_again = false;
    // Every request counts; a search's result shows only if no later request
    // (a new search, an error to name, a plan gone stale) came after it.
    int m_requests = 0;
    int m_searchRequest = 0;
};

} // namespace memledger::ui
