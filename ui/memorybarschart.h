// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>

#include "core/ledger/ledger.h"
#include "core/timeline/reserved.h"
#include "ui/chartupdate.h"

#include <array>
#include <memory>
#include <vector>

class QAbstractAxis;
class QBarCategoryAxis;
class QBarSet;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace memledger::ui {

class ChartLegend;

// One stacked bar per pipeline rank (device bytes by category, in the fixed
// order bottom-up), the device capacity and the usable line across. Hovering
// a segment names its category, bytes and the entries behind it.
class MemoryBarsChart : public QChartView
{
    Q_OBJECT
public:
    // Device bytes against the HBM capacity and usable lines, or host bytes
    // (offloaded rows, in the lighter hues) against the host memory per GPU.
    explicit MemoryBarsChart(Placement placement = Placement::Device, QWidget *parent = nullptr);

    // What PyTorch's caching allocator reserves for the same plan
    // (Document::reserved, nullptr while it is computed): a rank whose
    // reserved memory with the runtime reserve is over the device does not
    // fit, as the header and `check` say, even when its simulated peak does.
    void setReserved(const PlanReserved *reserved);
    void setLedger(const Ledger &ledger);
    // While held, the next ledgers only widen the axes: more rank slots, a higher top (heldRange in
    // chartupdate.h); the next ledger set while not held fits them again.
    void setAxesHeld(bool held) { m_axesHeld = held; }
    // The rank slots on the axis: the bars, or more while the axes are held.
    int rankSlots() const { return m_rankSlots; }
    // Qt Charts' dark or light theme, with the category colors kept.
    void setDark(bool dark);
    // Compare mode: one bar per plan (its peak rank), the current plan last,
    // as in seed 000's table of plans A-D. An empty list returns to the ranks.
    struct Compared
    {
        QString name;
        Ledger ledger;
    };
    void setComparison(const std::vector<Compared> &plans);
    bool isComparing() const { return !m_compared.empty(); }
    // The legend as drawn (its names are never cut).
    const ChartLegend *legend() const { return m_legend; }
    // The text a hover over `category` of bar `bar` shows (tests use it).
    QString segmentText(int bar, Category category) const;
    // The bars whose rank does not fit (the device, or the host's memory per
    // GPU), each outlined in red with a mark above it.
    const std::vector<int> &failingBars() const { return m_failing; }
    // Where bar `bar`'s outline is drawn, in the view's coordinates (empty when it fits).
    QRectF failMarkRect(int bar) const;

protected:
    void drawForeground(QPainter *painter, const QRectF &rect) override;
    // Talk mode's larger font reaches the chart's own fonts.
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void recolor();
    // The ranks on the value axis, the plans of compare mode on the category axis.
    void useAxis(QAbstractAxis *x);
    void updateRankTicks();
    // The title, wrapped onto more lines when the chart is too narrow for it.
    void showTitle(const QString &title);
    void showSegmentTip(bool on, int index, QBarSet *set);

    void fill(const std::vector<const RankLedger *> &bars, const QStringList &labels, const Ledger &reference);

    Bytes shown(const RankLedger &rank, Category category) const;
    QString title() const;
    // Core's verdict for this chart's memory: RankLedger::fits or host_fits,
    // and on the device what the allocator model reserves (setReserved).
    bool fits(const RankLedger &rank) const;

    Placement m_placement;
    Ledger m_ledger;
    std::vector<int> m_reservedOver; // pipeline ranks whose reserved memory does not fit (setReserved)
    std::vector<Compared> m_compared;
    std::vector<const RankLedger *> m_bars; // what each bar shows (into m_ledger or m_compared)
    std::vector<int> m_failing; // indices into m_bars
    QStackedBarSeries *m_series;
    std::array<QBarSet *, kCategoryCount> m_sets{};
    QLineSeries *m_capacity;
    QLineSeries *m_usable;
    QBarCategoryAxis *m_axisX; // compare mode: one letter per plan
    QValueAxis *m_rankAxis; // the pipeline ranks, labels thinned to fit (setRankTicks)
    QValueAxis *m_axisY;
    std::unique_ptr<RankZeroLabel> m_rankZero; // rank 0's label where the thinned labels leave it out
    ChartLegend *m_legend = nullptr; // in the chart's scene, so exports carry it
    ChartFonts m_fonts; // the theme's, scaled by fontScale() on a font change
    QString m_title; // unwrapped
    NiceAxis m_yRange; // before thinTicks() for the plot's height
    bool m_axesHeld = false;
    int m_rankSlots = 0; // on the rank axis: the bars, or more while the axes are held
};

} // namespace memledger::ui
