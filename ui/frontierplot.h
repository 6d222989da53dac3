// SPDX-License-Identifier: MIT
#pragma once

#include <QPointF>
#include <QRectF>
#include <QString>
#include <QWidget>

#include <vector>

namespace memledger::ui {

// One point of a memory-against-cost plot, in the plot's display units
// (memory in MB or GB, cost in ms or %), with what hovering it says.
struct FrontierPlotPoint
{
    double cost = 0;
    double memory = 0;
    QString toolTip;
    QString tag; // drawn beside a setting marker ("selective", "uniform 2"); empty: none
    bool beaten = false; // a setting another beats on both axes: drawn hollow
};

struct FrontierPlotData
{
    std::vector<FrontierPlotPoint> frontier; // lowest memory first (so highest cost first)
    std::vector<FrontierPlotPoint> markers; // the settings a preset can express
    int currentMarker = -1;
    // The current marker is not one of the points compared (Find plans' own
    // plan beside the plans found): far beyond them it would squash them into
    // a corner, so the axes fit the others and it is pinned to the plot's edge.
    bool currentMayLeaveAxes = false;
    QString costTitle; // "recompute, ms per micro-batch"
    QString memoryTitle; // "peak memory, MB per micro-batch"
    // Drawn instead when the whole title does not fit its axis (a narrow
    // window): never cut mid-word; the caption above the plot says the rest.
    QString costShortTitle; // "overhead, %"
    QString memoryShortTitle; // "MB per layer"
    QString costUnit; // "ms", "%"
    QString memoryUnit; // "MB", "GB"
    QString emptyText; // shown when there is nothing to draw
    // Legend entries; empty: the planners' ("exact frontier …", "a preset setting …").
    QString frontierLegend;
    QString markerLegend;
};

// Pure geometry: the plot area, the two axes' ranges and their mapping.
struct FrontierFrame
{
    QRectF plot;
    double cost0 = 0, cost1 = 1, memory0 = 0, memory1 = 1;
    double costStep = 1, memoryStep = 1;
    QPointF toPixel(double cost, double memory) const;
};
// Axes from zero to a 1-2-5 multiple above the largest cost and memory; with
// currentMayLeaveAxes, of the other points where the current marker lies
// beyond three times their axis (it is then drawn pinned to the edge).
FrontierFrame frontierFrame(const FrontierPlotData &data, const QRectF &plot);
// Whether the current marker lies beyond the frame's axes (pinned to the edge).
bool currentOffAxes(const FrontierPlotData &data, const FrontierFrame &frame);
// The step line of the least memory within each cost budget, in pixels: from
// the cheapest point right to the next costlier one's cost, down to it, and so
// on, the last step running to the axis' end.
std::vector<QPointF> frontierSteps(const FrontierPlotData &data, const FrontierFrame &frame);
// The index of the point nearest `pos` within `radius` pixels, or -1.
int nearestWithin(const std::vector<QPointF> &points, const QPointF &pos, double radius);

// A painted plot of a planner's exact frontier (a step line with its points)
// and the settings a preset can express (diamonds, the current one ringed and
// labelled), with axis titles in units, a legend, and tooltips. It draws and
// hit-tests; what a click means is the owner's (markerClicked,
// frontierPointClicked). Colors come from the widget's palette, so the dark
// palette reaches it through QApplication::setPalette.
class FrontierPlot : public QWidget
{
    Q_OBJECT
public:
    explicit FrontierPlot(QWidget *parent = nullptr);

    void setData(FrontierPlotData data);
    const FrontierPlotData &data() const { return m_data; }
    // Ringed as the point a click last chose (-1: none).
    void setSelectedFrontierPoint(int index);
    int selectedFrontierPoint() const { return m_selected; }

    QRectF plotArea() const;
    // The axis titles as drawn: the whole title, the short one, or (only
    // when even that is too long) the short one elided.
    QString shownCostTitle() const;
    QString shownMemoryTitle() const;
    // Below the legend, which wraps onto more lines when the widget is narrow.
    double legendBottom() const;
    QPointF frontierPosition(int index) const;
    // Where a marker is drawn: at its point, or moved right beside an earlier
    // one it would hide (a thin line leads back to its point).
    QPointF markerPosition(int index) const;
    // Hit tests within a few pixels; markers win over the frontier's points.
    int markerAt(const QPointF &pos) const;
    int frontierPointAt(const QPointF &pos) const;
    QString toolTipAt(const QPointF &pos) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void markerClicked(int index);
    void frontierPointClicked(int index);

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;

private:
    FrontierFrame frame() const;
    std::vector<QPointF> markerPixels(const FrontierFrame &f) const;
    double hitRadius() const;
    struct LegendItem
    {
        enum Kind { Frontier, Setting, Beaten, Current } kind;
        QString text;
        double symbolWidth;
        QPointF at; // the symbol's left end, on the text's middle line
    };
    std::vector<LegendItem> legendItems() const;
    QRectF plotArea0() const; // the plot's left, right and bottom edges (its top is below the legend)
    // The plot in layers: the grid, ticks and axis titles; the exact frontier's step line and points (and the
    // chosen one's ring); the settings' diamonds and their tags, the current plan's ring first; the legend.
    void paintAxes(QPainter &p, const FrontierFrame &f) const;
    void paintFrontier(QPainter &p, const FrontierFrame &f) const;
    void paintMarkers(QPainter &p, const FrontierFrame &f) const;
    void paintLegend(QPainter &p) const;

    FrontierPlotData m_data;
    int m_selected = -1;
    int m_hoverMarker = -1;
};

} // namespace memledger::ui
