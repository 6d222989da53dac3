// SPDX-License-Identifier: MIT
#include "ui/ledgertablemodel.h"

#include <QApplication>
#include <QBrush>
#include <QColor>
#include <QFont>
#include <QPalette>

#include "core/base/units.h"
#include "ui/categorycolors.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

namespace memledger::ui {

namespace {

// internalId of a rank row; entry rows carry their rank's index + 1.
constexpr quintptr kRankRowId = 0;

QString percentText(double fraction)
{
    return QStringLiteral("%1 %").arg(fraction * 100.0, 0, 'f', 1);
}

} // namespace

LedgerTableModel::LedgerTableModel(QObject *parent)
    : QAbstractItemModel(parent)
{ }

void LedgerTableModel::setLedger(const Ledger &ledger)
{
    beginResetModel();
    m_ledger = ledger;
    endResetModel();
}

QModelIndex LedgerTableModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount)
        return {};
    if (!parent.isValid()) {
        if (row >= static_cast<int>(m_ledger.ranks.size()))
            return {};
        return createIndex(row, column, kRankRowId);
    }
    if (parent.internalId() != kRankRowId || parent.column() != 0)
        return {};
    const auto &rank = m_ledger.ranks.at(static_cast<std::size_t>(parent.row()));
    if (row >= static_cast<int>(rank.entries.size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>(parent.row()) + 1);
}

QModelIndex LedgerTableModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == kRankRowId)
        return {};
    return createIndex(static_cast<int>(child.internalId() - 1), 0, kRankRowId);
}

int LedgerTableModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_ledger.ranks.size());
    if (parent.internalId() != kRankRowId || parent.column() != 0)
        return 0;
    return static_cast<int>(m_ledger.ranks.at(static_cast<std::size_t>(parent.row())).entries.size());
}

int LedgerTableModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant LedgerTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == kRankRowId) {
        const auto &rank = m_ledger.ranks.at(static_cast<std::size_t>(index.row()));
        return rankData(rank, index.row(), index.column(), role);
    }
    const int rankIndex = static_cast<int>(index.internalId() - 1);
    const auto &rank = m_ledger.ranks.at(static_cast<std::size_t>(rankIndex));
    const auto &entry = rank.entries.at(static_cast<std::size_t>(index.row()));
    return entryData(rank, rankIndex, entry, index.column(), role);
}

QString LedgerTableModel::rankTitle(const RankLedger &rank, Bytes capacity)
{
    return QStringLiteral("Rank %1 · %2 of %3 · %4")
        .arg(rank.pipeline_rank)
        .arg(bytesText(rank.device_total_bytes), bytesText(capacity),
             rank.fits ? QStringLiteral("fits") : QStringLiteral("does not fit"));
}

QVariant LedgerTableModel::rankData(const RankLedger &rank, int rankIndex, int column, int role) const
{
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case CategoryColumn:
            return rankTitle(rank, m_ledger.capacity_bytes);
        case PlacementColumn:
            return rank.host_total_bytes > 0 ? tr("device + host") : tr("device");
        case EntryColumn:
            return (rank.in_flight_microbatches == 1.0 ? tr("%1 layers · %2 micro-batch in flight")
                                                       : tr("%1 layers · %2 micro-batches in flight"))
                .arg(rank.layers)
                .arg(rank.in_flight_microbatches, 0, 'g', 4);
        case BytesColumn:
            return bytesText(rank.device_total_bytes);
        case ShareColumn:
            // The rank row's share is of the device itself: how full the GPU is.
            return m_ledger.capacity_bytes > 0 ? tr("%1 of HBM").arg(percentText(shareOfCapacity(m_ledger, rank)))
                                               : QString();
        case FormulaColumn: {
            QString text = tr("Σ device entries = %1 of %2 HBM (usable %3)")
                               .arg(bytesText(rank.device_total_bytes), bytesText(m_ledger.capacity_bytes),
                                    bytesText(m_ledger.usable_bytes));
            if (rank.host_total_bytes > 0)
                text += tr("; host and NVMe %1").arg(bytesText(rank.host_total_bytes));
            return text;
        }
        }
        break;
    case Qt::ToolTipRole:
        return tr("<b>%1</b><br>Device: %2 of %3 (usable %4)<br>Host and NVMe: %5<br>Parameters on this rank: %6")
            .arg(rankTitle(rank, m_ledger.capacity_bytes).toHtmlEscaped(), bytesText(rank.device_total_bytes),
                 bytesText(m_ledger.capacity_bytes), bytesText(m_ledger.usable_bytes), bytesText(rank.host_total_bytes),
                 toQString(formatThousands(rank.parameters)));
    case Qt::ForegroundRole:
        if (!rank.fits)
            return QBrush(errorTextColor(QApplication::palette()));
        break;
    case Qt::FontRole: {
        QFont font;
        font.setBold(true);
        return font;
    }
    case Qt::TextAlignmentRole:
        if (column == BytesColumn || column == ShareColumn)
            return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case SortRole:
        switch (column) {
        case BytesColumn:
            return QVariant::fromValue<qint64>(rank.device_total_bytes);
        case ShareColumn:
            return shareOfCapacity(m_ledger, rank);
        default:
            return rank.pipeline_rank;
        }
    case CategoryRole:
        return -1;
    case RankIndexRole:
        return rankIndex;
    }
    return {};
}

QVariant LedgerTableModel::entryData(const RankLedger &rank, int rankIndex, const LedgerEntry &entry, int column,
                                     int role) const
{
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case CategoryColumn:
            return toQString(categoryLabel(entry.category));
        case PlacementColumn:
            return toQString(placementName(entry.placement));
        case EntryColumn:
            return QString::fromStdString(entry.label);
        case BytesColumn:
            return bytesText(entry.bytes);
        case ShareColumn:
            // Each row says what it is a share of: the rank rows' is of the device (issue 34, item 21).
            return entry.placement == Placement::Device ? tr("%1 of rank").arg(percentText(shareOfRank(rank, entry)))
                                                        : tr("%1 of host").arg(percentText(shareOfRank(rank, entry)));
        case FormulaColumn:
            return QString::fromStdString(entry.formula);
        }
        break;
    case Qt::ToolTipRole: {
        // Rich text so that long formulas and notes wrap.
        QString tip = QStringLiteral("<b>%1</b> — %2 (%3)<br><br>%4")
                          .arg(QString::fromStdString(entry.label).toHtmlEscaped(), bytesText(entry.bytes),
                               toQString(placementName(entry.placement)),
                               QString::fromStdString(entry.formula).toHtmlEscaped());
        if (!entry.note.empty())
            tip += QStringLiteral("<br><br><i>%1</i>").arg(QString::fromStdString(entry.note).toHtmlEscaped());
        return tip;
    }
    case Qt::DecorationRole:
        if (column == CategoryColumn)
            return categoryColor(entry.category, entry.placement);
        break;
    case Qt::TextAlignmentRole:
        if (column == BytesColumn || column == ShareColumn)
            return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case SortRole:
        switch (column) {
        case CategoryColumn:
            return static_cast<int>(entry.category);
        case PlacementColumn:
            return static_cast<int>(entry.placement);
        case EntryColumn:
            return QString::fromStdString(entry.label);
        case BytesColumn:
            return QVariant::fromValue<qint64>(entry.bytes);
        case ShareColumn:
            return shareOfRank(rank, entry);
        case FormulaColumn:
            return QString::fromStdString(entry.formula);
        }
        break;
    case CategoryRole:
        return static_cast<int>(entry.category);
    case RankIndexRole:
        return rankIndex;
    }
    return {};
}

QVariant LedgerTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case CategoryColumn:
            return tr("Category");
        case PlacementColumn:
            return tr("Placement");
        case EntryColumn:
            return tr("Entry");
        case BytesColumn:
            return tr("Bytes");
        case ShareColumn:
            return tr("Share");
        case FormulaColumn:
            return tr("Formula");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case BytesColumn:
            return tr("Decimal units (1 GB = 10⁹ bytes), as vendors state capacities");
        case ShareColumn:
            return tr("Device rows: share of the rank's device total. Host rows: share of its host and NVMe total. "
                      "Rank rows: device total as a share of HBM capacity.");
        case FormulaColumn:
            return tr("The formula with this configuration's values substituted");
        }
    } else if (role == Qt::TextAlignmentRole && (section == BytesColumn || section == ShareColumn)) {
        return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

} // namespace memledger::ui
