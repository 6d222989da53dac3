// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QTimer>

#include "core/ledger/ledger.h"
#include "ui/chartupdate.h"

#include <memory>
#include <vector>

class QBarSet;
class QBarSeries;
class QLineSeries;
class QValueAxis;

namespace memledger::ui {

// The activation staircase: saved activations per pipeline rank as bars and
// the micro-batches in flight at each rank's peak as a line, so GPipe's flat
// wall, 1F1B's descending steps and interleaving's taller first step show.
class StaircaseChart : public QChartView
{
    Q_OBJECT
public:
    explicit StaircaseChart(QWidget *parent = nullptr);
    void setLedger(const Ledger &ledger);
    // While held, the next ledgers only widen the axes (see MemoryBarsChart::setAxesHeld).
    void setAxesHeld(bool held) { m_axesHeld = held; }
    int rankSlots() const { return m_ranks; }
    // Activation balance: the rate its copies need against the link's (from
    // the step time), named in the title; 0, 0 when none.
    void setBalanceBandwidth(double neededBytesPerS, double linkBytesPerS);
    // The dashed outline of the activations before balancing (empty when nothing is parked).
    const QLineSeries *unbalancedOutline() const { return m_unbalanced; }
    // `compact`: without the balancing figures, for a short chart (they are in the tooltip);
    // `perRank`: naming the pipeline ranks, for a chart too short for its rank axis's title.
    QString titleText(bool compact = false, bool perRank = false) const;
    // Qt Charts' dark or light theme, with the category colors kept.
    void setDark(bool dark);
    // What hovering rank `bar`'s bar says: its activation rows (the ledger's
    // labels, bytes and formulas) and the micro-batches in flight, so bars of
    // equal height under a falling line (ZB-H1: what B leaves for a deferred W)
    // say why. Empty for a bar the plan has not.
    QString barToolTip(int bar) const;

protected:
    // The two lines (micro-batches in flight, the outline before balancing), with antialiasing.
    void drawForeground(QPainter *painter, const QRectF &rect) override;
    // Talk mode's larger font reaches the chart's own fonts.
    void changeEvent(QEvent *event) override;

private:
    void recolor();
    void updateRankTicks();
    // Ticks, axis titles and the title for the chart's size and fonts.
    void fitTexts();
    // The width the axes' labels and titles need: more at once, less once the edits pause.
    void setMinimumWidthSoon(int minimum);
    void showBarTip(bool on, int index);
    std::vector<RankLedger> m_ranksShown; // the ranks behind the bars, for their tooltips
    QBarSeries *m_series;
    QBarSet *m_activations;
    QLineSeries *m_inFlight;
    QLineSeries *m_unbalanced; // activation balance: the staircase before, dashed over the bars
    Bytes m_parkedBytes = 0;
    double m_neededBytesPerS = 0, m_linkBytesPerS = 0;
    QValueAxis *m_axisX; // the pipeline ranks, labels thinned to fit (setRankTicks)
    std::unique_ptr<RankZeroLabel> m_rankZero; // rank 0's label where the thinned labels leave it out
    int m_ranks = 0; // rank slots on the axis: the plan's ranks, or more while the axes are held
    bool m_axesHeld = false;
    NiceAxis m_bytesRange, m_countRange; // before thinTicks() for the plot's height
    int m_peakRank = 0;
    QValueAxis *m_axisBytes;
    QValueAxis *m_axisCount;
    ChartFonts m_fonts; // the theme's, scaled by fontScale() on a font change
    QTimer m_shrink; // gives back width the axes no longer need, once the edits pause
    int m_pendingMinimum = 0;
};

} // namespace memledger::ui
