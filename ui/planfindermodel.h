// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>

#include "core/planner/search.h"

#include <optional>

namespace memledger::ui {

// The plans of one search (core/planner/search.h), one row each, best first.
// Every number is read from the SearchResult; this class only formats. The
// tooltip of a dimension cell (t ... FP8) lists the dimension's other
// values with the core's verdict for each; the header's lists them all. The
// schedule and strategy columns (balance, gradient offload, FP8) show the
// preset's names.
class PlanFinderModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        RankColumn,
        // What a plan costs, first: the plan's settings run to 15 more columns, and at the 1400-pixel window's
        // table width the step time, MFU and peak were beyond its right edge.
        StepTimeColumn,
        MfuColumn,
        PeakColumn,
        PeakShareColumn,
        TColumn,
        PColumn,
        VColumn,
        DColumn,
        CColumn,
        EColumn,
        MicroBatchColumn,
        ZeroColumn,
        RecomputeColumn,
        OffloadColumn,
        ScheduleColumn, // the pipeline schedule (1f1b, interleaved, zb-v, ...)
        // The strategies tried on the answer (core/planner/trystrategies.h).
        BalanceColumn,
        GradOffloadColumn,
        Fp8Column,
        SequenceParallelColumn, // not a dimension with verdicts, but two plans can differ only here
        LargestPartColumn,
        ColumnCount
    };
    enum Roles {
        // Per-column sort key (numbers sort as numbers).
        SortRole = Qt::UserRole,
        // Index into SearchResult::plans.
        PlanIndexRole,
    };

    explicit PlanFinderModel(QObject *parent = nullptr);

    void setResult(const SearchResult &result);
    const SearchResult &result() const { return m_result; }

    // The search dimension a column shows, if it shows one.
    static std::optional<SearchDimension> dimensionOf(int column);
    // "t 1 · p 1 · d 8 · micro-batch 2 · ZeRO 2 · recompute none · offload none"
    QString planSummary(int row) const;
    // Rich text: the verdict for every value of `dimension` except `except`.
    QString verdictsToolTip(SearchDimension dimension, std::optional<std::int64_t> except = std::nullopt) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString valueLabel(SearchDimension dimension, std::int64_t value) const;

    SearchResult m_result;
};

} // namespace memledger::ui
