// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>

#include "core/ledger.h"

#include <array>

class QBarCategoryAxis;
class QBarSet;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace memledger::ui {

// One stacked bar per pipeline rank (device bytes by category, in the fixed
// order bottom-up), the device capacity and the usable line across. Hovering
// a segment names its category, bytes and the entries behind it.
class MemoryBarsChart : public QChartView
{
    Q_OBJECT
public:
    explicit MemoryBarsChart(QWidget *parent = nullptr);

    void setLedger(const Ledger &ledger);
    // The text a hover over `category` of `rank` shows (tests use it).
    QString segmentText(int rank, Category category) const;

private:
    void showSegmentTip(bool on, int index, QBarSet *set);

    Ledger m_ledger;
    QStackedBarSeries *m_series;
    std::array<QBarSet *, kCategoryCount> m_sets{};
    QLineSeries *m_capacity;
    QLineSeries *m_usable;
    QBarCategoryAxis *m_axisX;
    QValueAxis *m_axisY;
};

} // namespace memledger::ui
