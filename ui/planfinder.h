// SPDX-License-Identifier: MIT
#pragma once

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
// runs core's searchPlans on the document's configuration (synchronously:
// well under 100 ms), a summary line and the ranked plans. Hovering a
// t ... offload cell or header lists the dimension's other values with the
// core's verdict for each; activating a row (double-click or Enter) applies
// that plan to the document as one undo step, keeping the document's name.
class PlanFinder : public QWidget
{
    Q_OBJECT
public:
    explicit PlanFinder(Document *document, QWidget *parent = nullptr);

    // Runs the search now with the current inputs.
    void findPlans();
    // Applies the plan of a row of the model (rank order); false if there is none.
    bool applyPlan(int row);

    void setGpus(int gpus);
    void setMargin(double fraction);
    void setTop(int top);

    const SearchResult &result() const;
    PlanFinderModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    // Peak against step time of the plans found, the fastest-for-their-memory
    // joined as a frontier, the current plan ringed; a click applies a plan.
    FrontierPlot *plot() const { return m_plot; }
    QString summary() const;
    // The notes shown instead of the table (why nothing was searched or found); empty while the table shows.
    QString notes() const;
    // Why the current plan is not drawn among the plans found; empty when it is, or there is nothing to say.
    QString currentPlanNote() const;
    // Writes the plans found as CSV (core's searchToCsv), atomically; false
    // with a reason in `error` (nothing found yet, or the write failed).
    bool exportCsv(const QString &path, QString *error = nullptr);
    QPushButton *exportButton() const { return m_export; }

Q_SIGNALS:
    void planApplied(int row);

protected:
    void keyPressEvent(QKeyEvent *event) override;
    // The first time the panel is shown it searches at once (a few
    // milliseconds), so a new user sees answers rather than an empty table.
    void showEvent(QShowEvent *event) override;

private:
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
};

} // namespace memledger::ui
