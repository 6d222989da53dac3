// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>

#include "core/trace/compare.h"

namespace memledger::ui {

// A measured run against the model as a table: peak, steady state, then the
// peak of each phase, each measured, modelled and their difference (core's
// modelled / measured - 1). Every number is read from the TraceComparison;
// this class only formats and colors.
class ComparisonTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { FigureColumn, MeasuredColumn, ModelledColumn, DifferenceColumn, ColumnCount };
    enum Roles {
        // Raw bytes (qint64) in the measured and modelled columns, the error (double) in the difference column.
        SortRole = Qt::UserRole,
        // int(Agreement) of the row.
        AgreementRole,
    };
    // How close the model came: within 2 % good, beyond 10 % poor. Unknown
    // when nothing was measured (the difference would mean nothing).
    enum class Agreement { Good, Fair, Poor, Unknown };
    static Agreement agreementOf(double error);

    explicit ComparisonTableModel(QObject *parent = nullptr);

    void setComparison(const TraceComparison &comparison);
    void clear();
    bool isEmpty() const { return !m_has; }
    const TraceComparison &comparison() const { return m_comparison; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "Forward", "Backward", "Optimizer step", "Outside the iteration".
    static QString phaseText(IterationPhase phase);
    // "in the forward pass", "in the backward pass", "in the optimizer step", "outside the iteration".
    static QString phaseWhereText(IterationPhase phase);
    // "+1.3 %", "−12.0 %" (a true minus sign).
    static QString differenceText(double error);

private:
    struct Row
    {
        QString figure;
        QString toolTip;
        Bytes measured = 0;
        Bytes modelled = 0;
        double error = 0;
    };
    std::vector<Row> m_rows;
    TraceComparison m_comparison;
    bool m_has = false;
};

} // namespace memledger::ui
