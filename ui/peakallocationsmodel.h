// SPDX-License-Identifier: MIT
#pragma once

#include <QAbstractTableModel>

#include "core/trace/compare.h"

#include <vector>

namespace memledger::ui {

// The largest allocations alive at the measured peak, largest first, as core
// found them: their bytes (blocks of one size and stack together), where they
// were allocated (innermost frame first) and the ledger row they were matched
// to, or "unexplained".
class PeakAllocationsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { BytesColumn, CountColumn, FramesColumn, MatchedColumn, ColumnCount };
    enum Roles {
        SortRole = Qt::UserRole, // raw bytes (qint64) in the bytes column, the count in the blocks column
        UnexplainedRole, // bool
    };

    explicit PeakAllocationsModel(QObject *parent = nullptr);

    void setAllocations(const std::vector<PeakAllocation> &allocations);
    const std::vector<PeakAllocation> &allocations() const { return m_allocations; }
    // Rows with no ledger row matched.
    int unexplainedCount() const;
    // Whether any row has the frames it was allocated at (a snapshot recorded without stacks has none).
    bool hasFrames() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "forward (model.py:42)": a frame's function and the file's own name.
    static QString frameText(const TraceFrame &frame);

private:
    std::vector<PeakAllocation> m_allocations;
};

} // namespace memledger::ui
