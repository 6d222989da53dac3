// SPDX-License-Identifier: MIT
#include "ui/comparisontablemodel.h"

#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QPalette>

#include "core/base/units.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

#include <cmath>

namespace memledger::ui {

namespace {

// The targets of issue 11 and the point where a gap is worth a look.
constexpr double kGoodError = 0.02;
constexpr double kPoorError = 0.10;

QString reserveNote()
{
    return ComparisonTableModel::tr("Modelled figures leave out the runtime reserve (the CUDA context and the "
                                    "allocator's slack): an allocator never sees them, so a trace never counts them.");
}

} // namespace

ComparisonTableModel::Agreement ComparisonTableModel::agreementOf(double error)
{
    const double e = std::abs(error);
    if (!std::isfinite(e))
        return Agreement::Unknown;
    if (e <= kGoodError)
        return Agreement::Good;
    return e > kPoorError ? Agreement::Poor : Agreement::Fair;
}

ComparisonTableModel::ComparisonTableModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

QString ComparisonTableModel::phaseText(IterationPhase phase)
{
    switch (phase) {
    case IterationPhase::Forward:
        return tr("Forward");
    case IterationPhase::Backward:
        return tr("Backward");
    case IterationPhase::Optimizer:
        return tr("Optimizer step");
    case IterationPhase::Outside:
        break;
    }
    return tr("Outside the iteration");
}

QString ComparisonTableModel::phaseWhereText(IterationPhase phase)
{
    switch (phase) {
    case IterationPhase::Forward:
        return tr("in the forward pass");
    case IterationPhase::Backward:
        return tr("in the backward pass");
    case IterationPhase::Optimizer:
        return tr("in the optimizer step");
    case IterationPhase::Outside:
        break;
    }
    return tr("outside the iteration");
}

QString ComparisonTableModel::differenceText(double error)
{
    // Beyond ten times off the digits say nothing more (a steady state of a few bytes measured, say).
    constexpr double kShownLimit = 10.0;
    if (std::abs(error) > kShownLimit)
        return (error < 0 ? QStringLiteral("< \u2212") : QStringLiteral("> +")) + QStringLiteral("1000 %");
    const QString number = QString::number(std::abs(error) * 100.0, 'f', 1);
    // A rounded zero carries no sign.
    if (number == QStringLiteral("0.0"))
        return QStringLiteral("0.0 %");
    return (error < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + number + QStringLiteral(" %");
}

void ComparisonTableModel::setComparison(const TraceComparison &comparison)
{
    beginResetModel();
    m_comparison = comparison;
    m_has = true;
    m_rows.clear();
    const QString rank = tr("pipeline rank %1").arg(comparison.pipeline_rank);
    m_rows.push_back({tr("Peak"),
                      tr("The largest allocated total. Measured: anywhere in the trace, replayed as PyTorch's "
                         "memory viewer does (%1). Modelled: over the simulated iteration of %2 (%3).\n%4")
                          .arg(phaseWhereText(comparison.measured_peak_phase), rank,
                               phaseWhereText(comparison.modelled_peak_phase), reserveNote()),
                      comparison.measured_peak_allocated_bytes, comparison.modelled_peak_bytes, comparison.peak_error});
    m_rows.push_back({tr("Steady state"),
                      tr("What stays allocated between iterations (weights, gradients, optimizer states). "
                         "Measured: between iterations of the trace. Modelled: the ledger's persistent rows of %1.\n%2")
                          .arg(rank, reserveNote()),
                      comparison.measured_steady_allocated_bytes, comparison.modelled_steady_bytes,
                      comparison.steady_error});
    for (const PhaseComparison &phase : comparison.phases) {
        const QString name = phaseText(phase.phase);
        m_rows.push_back({tr("%1 peak").arg(name),
                          tr("The largest allocated total inside the %1 phase of the iteration, measured and "
                             "modelled.\n%2")
                              .arg(name.toLower(), reserveNote()),
                          phase.measured_peak_bytes, phase.modelled_peak_bytes, phase.error});
    }
    endResetModel();
}

void ComparisonTableModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_comparison = {};
    m_has = false;
    endResetModel();
}

int ComparisonTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ComparisonTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ComparisonTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows[static_cast<std::size_t>(index.row())];
    // Nothing measured in a phase: no difference to speak of.
    const Agreement agreement = row.measured > 0 ? agreementOf(row.error) : Agreement::Unknown;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case FigureColumn:
            return row.figure;
        case MeasuredColumn:
            return row.measured > 0 ? bytesText(row.measured) : tr("none");
        case ModelledColumn:
            return bytesText(row.modelled);
        case DifferenceColumn:
            return agreement == Agreement::Unknown ? QStringLiteral("\u2014") : differenceText(row.error);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case FigureColumn:
            return index.row();
        case MeasuredColumn:
            return static_cast<qint64>(row.measured);
        case ModelledColumn:
            return static_cast<qint64>(row.modelled);
        case DifferenceColumn:
            return row.error;
        }
        break;
    case AgreementRole:
        return static_cast<int>(agreement);
    case Qt::ForegroundRole:
        if (index.column() != DifferenceColumn)
            break;
        if (agreement == Agreement::Good)
            return QBrush(goodTextColor(QApplication::palette()));
        if (agreement == Agreement::Poor)
            return QBrush(warningTextColor(QApplication::palette()));
        break;
    case Qt::FontRole:
        if (index.column() == DifferenceColumn && agreement == Agreement::Poor) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        break;
    case Qt::TextAlignmentRole:
        return index.column() == FigureColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                              : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (index.column() == DifferenceColumn && agreement != Agreement::Unknown)
            return tr("modelled / measured \u2212 1 = %1\nWithin 2 %: green; beyond 10 %: amber.")
                .arg(differenceText(row.error));
        return row.toolTip;
    }
    return {};
}

QVariant ComparisonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case FigureColumn:
            return tr("Figure");
        case MeasuredColumn:
            return tr("Measured");
        case ModelledColumn:
            return tr("Modelled");
        case DifferenceColumn:
            return tr("Difference");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case MeasuredColumn:
            return tr("Allocated bytes replayed from the trace (PyTorch's allocated memory, not reserved).");
        case ModelledColumn:
            return tr("The model's bytes for the same figure, without the runtime reserve.");
        case DifferenceColumn:
            return tr("modelled / measured \u2212 1: negative when the model is short of the measurement.");
        }
    }
    if (role == Qt::TextAlignmentRole && section != FigureColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

} // namespace memledger::ui
