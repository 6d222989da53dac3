// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

#include "core/trace/compare.h"

#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTableView;

namespace memledger::ui {

class ComparisonTableModel;
class PeakAllocationsModel;

// The "Measured vs model" view: a measured run's peak, steady state and
// phase peaks beside the model's, the largest allocations alive at the
// measured peak with the ledger rows they were matched to, and core's notes on
// how the two were aligned. Shows what it is given; MainWindow feeds it.
class MeasuredPanel : public QWidget
{
    Q_OBJECT
public:
    explicit MeasuredPanel(QWidget *parent = nullptr);

    // `fileName` names the trace in the title; `devices`, every device the file holds (a snapshot of several
    // GPUs: the picker offers each, comparison.device is the one shown).
    void setComparison(const TraceComparison &comparison, const QString &fileName,
                       const std::vector<int> &devices = {});
    // Back to the "import a trace" placeholder.
    void clear();
    // While a trace loads and nothing is shown yet, the placeholder says so; empty: the usual text.
    void setPlaceholderText(const QString &text);
    // The ranks the trace can be held against (0 … ranks - 1) and the one it is.
    void setRanks(int ranks, int rank);

    bool hasComparison() const;
    ComparisonTableModel *comparisonModel() const { return m_comparison; }
    PeakAllocationsModel *allocationsModel() const { return m_allocations; }
    QTableView *comparisonTable() const { return m_comparisonTable; }
    // The trace's devices; picking one asks for it (deviceChanged).
    QComboBox *devicePicker() const { return m_device; }
    QTableView *allocationsTable() const { return m_allocationsTable; }
    QString titleText() const;
    QString summaryText() const;
    QString notesText() const;
    // The title over the allocations table (rich text).
    QString allocationsTitleText() const;
    // The warning over the figures when the trace is plainly of another model (empty: none).
    QString warningText() const;

Q_SIGNALS:
    void importRequested();
    void clearRequested();
    void rankChanged(int rank);
    void deviceChanged(int device);

protected:
    // The title's file name is elided to the title's width as it changes.
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QString defaultPlaceholder() const;
    void fitTitle();
    void fitComparisonTable();

    ComparisonTableModel *m_comparison;
    PeakAllocationsModel *m_allocations;
    QStackedWidget *m_pages;
    QLabel *m_placeholder;
    QLabel *m_title;
    QString m_fileName; // the trace's, whole (the title elides it)
    QSpinBox *m_rank;
    QComboBox *m_device;
    QPushButton *m_clear;
    QLabel *m_summary;
    QLabel *m_warning;
    QTableView *m_comparisonTable;
    QLabel *m_allocationsTitle;
    QTableView *m_allocationsTable;
    QLabel *m_notes;
};

} // namespace memledger::ui
