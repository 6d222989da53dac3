// SPDX-License-Identifier: MIT
#include "ui/peakallocationsmodel.h"

#include <QApplication>
#include <QBrush>
#include <QFileInfo>
#include <QFont>
#include <QPalette>
#include <QStringList>

#include "core/base/units.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

#include <algorithm>

namespace memledger::ui {

namespace {

// A row's frames, innermost first: the cell shows this many, the tooltip all.
constexpr std::size_t kShownFrames = 2;
const QString kFrameSeparator = QStringLiteral(" \u2190 "); // called from

} // namespace

PeakAllocationsModel::PeakAllocationsModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

QString PeakAllocationsModel::frameText(const TraceFrame &frame)
{
    const QString name = frame.name.empty() ? QStringLiteral("?") : toQString(frame.name);
    // Native frames (aten:: operators) come without a file: PyTorch writes "??".
    if (frame.filename.empty() || frame.filename == "??")
        return name;
    const QString file = QFileInfo(toQString(frame.filename)).fileName();
    return frame.line > 0 ? QStringLiteral("%1 (%2:%3)").arg(name, file).arg(frame.line)
                          : QStringLiteral("%1 (%2)").arg(name, file);
}

void PeakAllocationsModel::setAllocations(const std::vector<PeakAllocation> &allocations)
{
    beginResetModel();
    m_allocations = allocations;
    endResetModel();
}

int PeakAllocationsModel::unexplainedCount() const
{
    return static_cast<int>(std::count_if(m_allocations.begin(), m_allocations.end(),
                                          [](const PeakAllocation &a) { return a.matched.empty(); }));
}

bool PeakAllocationsModel::hasFrames() const
{
    return std::any_of(m_allocations.begin(), m_allocations.end(),
                       [](const PeakAllocation &a) { return !a.frames.empty(); });
}

int PeakAllocationsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_allocations.size());
}

int PeakAllocationsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PeakAllocationsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const PeakAllocation &a = m_allocations[static_cast<std::size_t>(index.row())];
    const bool unexplained = a.matched.empty();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case BytesColumn:
            return bytesText(a.bytes);
        case CountColumn:
            return QStringLiteral("\u00d7 %1").arg(a.count);
        case FramesColumn: {
            if (a.frames.empty())
                return tr("(no frames recorded)");
            QStringList shown;
            for (std::size_t i = 0; i < a.frames.size() && i < kShownFrames; ++i)
                shown << frameText(a.frames[i]);
            return shown.join(kFrameSeparator);
        }
        case MatchedColumn:
            return unexplained ? tr("unexplained") : toQString(a.matched);
        }
        break;
    case SortRole:
        switch (index.column()) {
        case BytesColumn:
            return static_cast<qint64>(a.bytes);
        case CountColumn:
            return static_cast<qint64>(a.count);
        case FramesColumn:
            return data(index, Qt::DisplayRole);
        case MatchedColumn:
            return unexplained ? QString() : toQString(a.matched);
        }
        break;
    case UnexplainedRole:
        return unexplained;
    case Qt::ForegroundRole:
        if (index.column() == MatchedColumn && unexplained)
            return QBrush(warningTextColor(QApplication::palette()));
        if (index.column() == FramesColumn && a.frames.empty())
            return QBrush(QApplication::palette().color(QPalette::PlaceholderText));
        break;
    case Qt::FontRole:
        if (index.column() == MatchedColumn && unexplained) {
            QFont italic;
            italic.setItalic(true);
            return italic;
        }
        break;
    case Qt::TextAlignmentRole:
        return index.column() == BytesColumn || index.column() == CountColumn
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (index.column() == BytesColumn || index.column() == CountColumn)
            return a.count == 1 ? tr("One block of %1").arg(bytesText(a.bytes))
                                : tr("%1 blocks of the same size, allocated at the same place: %2 together")
                                      .arg(a.count)
                                      .arg(bytesText(a.bytes));
        if (index.column() == FramesColumn && !a.frames.empty()) {
            // Every frame, with its whole path: the cell shows the innermost ones.
            QStringList lines{tr("Allocated at (innermost first):")};
            for (const TraceFrame &f : a.frames)
                lines << QStringLiteral("%1  %2:%3").arg(toQString(f.name), toQString(f.filename)).arg(f.line);
            return lines.join(QLatin1Char('\n'));
        }
        if (index.column() == MatchedColumn)
            return unexplained ? tr("No ledger row accounts for this allocation: the model does not know it.")
                               : tr("Matched to the ledger row \u201c%1\u201d.").arg(toQString(a.matched));
        break;
    }
    return {};
}

QVariant PeakAllocationsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case BytesColumn:
            return tr("Bytes");
        case CountColumn:
            return tr("Blocks");
        case FramesColumn:
            return tr("Allocated at");
        case MatchedColumn:
            return tr("Ledger row");
        }
    }
    if (role == Qt::TextAlignmentRole && (section == BytesColumn || section == CountColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

} // namespace memledger::ui
