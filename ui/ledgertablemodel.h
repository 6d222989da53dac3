// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractItemModel>

#include "core/ledger/ledger.h"

namespace memledger::ui {

// The ledger as a two-level tree: one row per pipeline rank (with its totals),
// and under it that rank's entries. Every number shown is read from the
// Ledger; this class only formats.
class LedgerTableModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column { CategoryColumn, PlacementColumn, EntryColumn, BytesColumn, ShareColumn, FormulaColumn, ColumnCount };
    enum Roles {
        // Per-column sort key; raw bytes (qint64) in the Bytes column.
        SortRole = Qt::UserRole,
        // int(Category) for entries, -1 for rank rows.
        CategoryRole,
        // Index into Ledger::ranks of the row (or of its parent rank).
        RankIndexRole,
    };

    explicit LedgerTableModel(QObject *parent = nullptr);

    void setLedger(const Ledger &ledger);
    const Ledger &ledger() const { return m_ledger; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "Rank 0 · 61.20 GB of 85.90 GB · fits"
    static QString rankTitle(const RankLedger &rank, Bytes capacity);

private:
    QVariant rankData(const RankLedger &rank, int rankIndex, int column, int role) const;
    QVariant entryData(const RankLedger &rank, int rankIndex, const LedgerEntry &entry, int column, int role) const;

    Ledger m_ledger;
};

} // namespace memledger::ui
