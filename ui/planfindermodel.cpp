// SPDX-License-Identifier: MIT
#include "ui/planfindermodel.h"

#include <QStringList>

#include "core/base/units.h"
#include "ui/qtstring.h"

namespace memledger::ui {

namespace {

// "data_comm_exposed" -> "data comm exposed".
QString partName(std::string_view name)
{
    return toQString(name).replace(QLatin1Char('_'), QLatin1Char(' '));
}

QString secondsText(double seconds)
{
    return QStringLiteral("%1 s").arg(seconds, 0, 'f', 3);
}

// Small integers centred (so "ZeRO 2" does not run into "recompute none"), measures right, words left.
Qt::Alignment alignmentOf(int column)
{
    if ((column >= PlanFinderModel::RecomputeColumn && column <= PlanFinderModel::Fp8Column)
        || column == PlanFinderModel::LargestPartColumn)
        return Qt::AlignLeft | Qt::AlignVCenter;
    if ((column >= PlanFinderModel::TColumn && column <= PlanFinderModel::ZeroColumn)
        || column == PlanFinderModel::SequenceParallelColumn)
        return Qt::AlignCenter;
    return Qt::AlignRight | Qt::AlignVCenter;
}

} // namespace

PlanFinderModel::PlanFinderModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void PlanFinderModel::setResult(const SearchResult &result)
{
    beginResetModel();
    m_result = result;
    endResetModel();
}

std::optional<SearchDimension> PlanFinderModel::dimensionOf(int column)
{
    if (column < TColumn || column > Fp8Column)
        return std::nullopt;
    return kSearchDimensions[static_cast<std::size_t>(column - TColumn)];
}

int PlanFinderModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_result.plans.size());
}

int PlanFinderModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString PlanFinderModel::valueLabel(SearchDimension dimension, std::int64_t value) const
{
    if (static_cast<std::size_t>(dimension) < m_result.dimensions.size())
        for (const ValueVerdict &v : m_result.verdicts(dimension).values)
            if (v.value == value)
                return QString::fromStdString(v.label);
    return QString::number(value);
}

QString PlanFinderModel::planSummary(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    const Config &config = m_result.plans.at(static_cast<std::size_t>(row)).config;
    QStringList parts;
    for (const SearchDimension d : kSearchDimensions) {
        const std::int64_t value = dimensionValue(config, d);
        switch (d) {
        case SearchDimension::MicroBatch:
            parts << tr("micro-batch %1").arg(value);
            break;
        case SearchDimension::ZeroStage:
            parts << tr("ZeRO %1").arg(value);
            break;
        case SearchDimension::Recompute:
            parts << tr("recompute %1").arg(valueLabel(d, value));
            break;
        case SearchDimension::Offload:
            parts << tr("offload %1").arg(valueLabel(d, value));
            break;
        case SearchDimension::Schedule:
            parts << tr("schedule %1").arg(valueLabel(d, value));
            break;
        case SearchDimension::ActivationBalance:
            if (value != 0)
                parts << tr("activations balanced");
            break;
        case SearchDimension::GradOffload:
            if (value != 0)
                parts << tr("gradients offloaded");
            break;
        case SearchDimension::Fp8Recipe:
            if (value != 0)
                parts << tr("fp8 %1").arg(valueLabel(d, value));
            break;
        default:
            parts << QStringLiteral("%1 %2").arg(toQString(dimensionName(d))).arg(value);
        }
    }
    parts << (config.parallelism.sequence_parallel ? tr("sequence parallel") : tr("no sequence parallelism"));
    return parts.join(QStringLiteral(" · "));
}

QString PlanFinderModel::verdictsToolTip(SearchDimension dimension, std::optional<std::int64_t> except) const
{
    if (static_cast<std::size_t>(dimension) >= m_result.dimensions.size())
        return {};
    QString rows;
    for (const ValueVerdict &v : m_result.verdicts(dimension).values) {
        if (except && v.value == *except)
            continue;
        QString kind;
        switch (v.kind) {
        case VerdictKind::InTop:
            kind = tr("listed");
            break;
        case VerdictKind::Structural:
            // Core's word: a value it never tried (GPipe) is no value that could never run.
            kind = v.tried ? tr("never valid") : tr("not tried");
            break;
        case VerdictKind::Memory:
            kind = tr("too much memory");
            break;
        case VerdictKind::Slower:
            kind = tr("%1 % slower").arg(v.slowerPercent, 0, 'f', 1);
            break;
        case VerdictKind::Ledger:
            kind = tr("fails the ledger");
            break;
        }
        rows
            += QStringLiteral("<tr><td style='white-space:pre'><b>%1</b></td><td style='white-space:pre'><i>%2</i></td>"
                              "<td>%3</td></tr>")
                   .arg(QString::fromStdString(v.label).toHtmlEscaped(), kind.toHtmlEscaped(),
                        QString::fromStdString(v.reason).toHtmlEscaped());
    }
    const QString title = QStringLiteral("<b>%1</b> — %2")
                              .arg(toQString(dimensionName(dimension)).toHtmlEscaped(),
                                   toQString(dimensionTitle(dimension)).toHtmlEscaped());
    if (rows.isEmpty())
        return title + QStringLiteral("<br>") + tr("The search tried no other value.");
    const QString lead
        = except ? tr("This plan: %1. The other values:").arg(valueLabel(dimension, *except).toHtmlEscaped())
                 : tr("Every value the search tried or skipped:");
    return QStringLiteral("%1<br>%2<table cellspacing='4'>%3</table>").arg(title, lead, rows);
}

QVariant PlanFinderModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const std::size_t row = static_cast<std::size_t>(index.row());
    const SearchPlan &plan = m_result.plans.at(row);
    const int column = index.column();
    const std::optional<SearchDimension> dimension = dimensionOf(column);
    const Ledger &ledger = plan.ledger;
    const RankLedger *peakRank = nullptr;
    for (const RankLedger &r : ledger.ranks)
        if (r.pipeline_rank == ledger.peak_rank)
            peakRank = &r;
    const double share = peakRank ? shareOfCapacity(ledger, *peakRank) : 0.0;
    const StepTimePart largest = largestStepTimePart(plan.time);

    switch (role) {
    case Qt::DisplayRole:
        if (dimension) {
            const std::int64_t value = dimensionValue(plan.config, *dimension);
            return (*dimension == SearchDimension::Recompute || *dimension == SearchDimension::Offload
                    || column >= ScheduleColumn)
                       ? valueLabel(*dimension, value)
                       : QString::number(value);
        }
        switch (column) {
        case RankColumn:
            return index.row() + 1;
        case SequenceParallelColumn:
            return plan.config.parallelism.sequence_parallel ? tr("on") : tr("off");
        case PeakColumn:
            return bytesText(ledger.peak_bytes);
        case PeakShareColumn:
            return QStringLiteral("%1 %").arg(share * 100.0, 0, 'f', 1);
        case StepTimeColumn:
            return QString::number(plan.time.total, 'f', 3);
        case MfuColumn:
            return QStringLiteral("%1 %").arg(plan.time.mfu * 100.0, 0, 'f', 1);
        case LargestPartColumn:
            return tr("%1 (%2)").arg(partName(largest.name), secondsText(largest.seconds));
        }
        break;
    case Qt::ToolTipRole:
        if (dimension)
            return verdictsToolTip(*dimension, dimensionValue(plan.config, *dimension));
        switch (column) {
        case PeakColumn:
        case PeakShareColumn:
            return tr("Peak on pipeline rank %1: %2 of %3 HBM; the search's limit is %4")
                .arg(ledger.peak_rank)
                .arg(bytesText(ledger.peak_bytes), bytesText(ledger.capacity_bytes), bytesText(m_result.limitBytes));
        case StepTimeColumn:
        case MfuColumn:
        case LargestPartColumn: {
            QString parts;
            for (const StepTimePart &part : stepTimeParts(plan.time))
                if (part.seconds > 0)
                    parts += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td></tr>")
                                 .arg(partName(part.name).toHtmlEscaped(), secondsText(part.seconds));
            return tr("<b>Estimated step time %1</b>, MFU %2 %<table cellspacing='2'>%3</table>")
                .arg(secondsText(plan.time.total))
                .arg(plan.time.mfu * 100.0, 0, 'f', 1)
                .arg(parts);
        }
        default:
            return tr("%1<br>Double-click or press Enter to apply this plan.")
                .arg(planSummary(index.row()).toHtmlEscaped());
        }
    case Qt::TextAlignmentRole:
        return QVariant::fromValue<int>(alignmentOf(column));
    case SortRole:
        if (dimension)
            return QVariant::fromValue<qint64>(dimensionValue(plan.config, *dimension));
        switch (column) {
        case RankColumn:
            return index.row();
        case SequenceParallelColumn:
            return plan.config.parallelism.sequence_parallel ? 1 : 0;
        case PeakColumn:
            return QVariant::fromValue<qint64>(ledger.peak_bytes);
        case PeakShareColumn:
            return share;
        case StepTimeColumn:
            return plan.time.total;
        case MfuColumn:
            return plan.time.mfu;
        case LargestPartColumn:
            return partName(largest.name);
        }
        break;
    case PlanIndexRole:
        return index.row();
    }
    return {};
}

QVariant PlanFinderModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    const std::optional<SearchDimension> dimension = dimensionOf(section);
    if (role == Qt::DisplayRole) {
        if (dimension) {
            switch (*dimension) {
            case SearchDimension::MicroBatch:
                return tr("micro-batch");
            case SearchDimension::ZeroStage:
                return tr("ZeRO");
            case SearchDimension::Recompute:
                return tr("recompute");
            case SearchDimension::Offload:
                return tr("offload");
            case SearchDimension::Schedule:
                return tr("schedule");
            case SearchDimension::ActivationBalance:
                return tr("balance");
            case SearchDimension::GradOffload:
                return tr("grad offload");
            case SearchDimension::Fp8Recipe:
                return tr("FP8");
            default:
                return toQString(dimensionName(*dimension));
            }
        }
        switch (section) {
        case RankColumn:
            return tr("#");
        case SequenceParallelColumn:
            return tr("SP");
        case PeakColumn:
            return tr("peak / GPU");
        case PeakShareColumn:
            return tr("of HBM");
        case StepTimeColumn:
            return tr("step (s)");
        case MfuColumn:
            return tr("MFU");
        case LargestPartColumn:
            return tr("largest part");
        }
    } else if (role == Qt::ToolTipRole) {
        if (dimension)
            return verdictsToolTip(*dimension);
        switch (section) {
        case RankColumn:
            return tr("Rank by estimated step time, fastest first");
        case SequenceParallelColumn:
            return tr("Sequence parallelism: with t > 1, the activations outside the attention and MLP are "
                      "split over t as well (the search tries both)");
        case PeakColumn:
            return tr("The full ledger's peak on the busiest GPU (decimal units, 1 GB = 10⁹ bytes)");
        case PeakShareColumn:
            return tr("The peak as a share of the device's HBM");
        case StepTimeColumn:
            return tr(
                "Estimated seconds per training step: kernels at the device's achieved rates, exposed "
                "communication, bubble, recompute, optimizer and offload stalls (Help > Documentation, time-model.md; "
                "within 6 % of published Megatron runs on A100)");
        case MfuColumn:
            return tr("Model FLOPs utilisation: the model's FLOPs per step (no recompute) over the step time and "
                      "the device's peak");
        case LargestPartColumn:
            return tr("The step-time part that takes longest");
        }
    } else if (role == Qt::TextAlignmentRole) {
        return QVariant::fromValue<int>(alignmentOf(section));
    }
    return {};
}

} // namespace memledger::ui
