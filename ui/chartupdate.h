// SPDX-License-Identifier: MIT
#pragma once

#include <QFont>
#include <QList>
#include <QPointF>

#include "core/base/units.h"

#include <utility>
#include <vector>

class QAbstractAxis;
class QAbstractSeries;
class QBarSet;
class QChart;
class QGraphicsTextItem;
class QValueAxis;
class QXYSeries;
class QWidget;
class QString;

namespace memledger::ui {

// Qt Charts 6.4 relayouts the whole chart (every axis label measured again as
// rich text) on each setLabelFormat, setTickCount or title call, and lays out
// every bar again on each QBarSet::replace, even when the value is the same; a
// slider drag would pay that on every step. These setters touch the chart only
// where something changes, so an unchanged chart is not even repainted.
void setNiceRange(QValueAxis *axis, const NiceAxis &nice);
// `nice` with fewer ticks (a multiple of its step that divides the range, at
// worst only 0 and the top) when a vertical axis `length` pixels long cannot
// give each label its height: Qt Charts would cut every label to "...".
NiceAxis thinTicks(NiceAxis nice, double length, const QFont &labelsFont);
// Changed values are replaced one by one (a full bar layout each, fine for
// the few hundred values of a ledger, STYLE.md §6); a new count rebuilds the set in one call.
void setBarValues(QBarSet *set, const QList<qreal> &values);
void setPoints(QXYSeries *series, const QList<QPointF> &points);
void setAxisTitle(QAbstractAxis *axis, const QString &title);
void setChartTitle(QChart *chart, const QString &title);
// The title on as many lines as a chart `width` pixels wide needs (Qt Charts
// would cut a long one short: "Device memory per pipeline rank —...").
void setWrappedChartTitle(QChart *chart, const QString &title, double width);
// A vertical axis's title, or the shorter one, or none, whichever fits the
// plot's height unelided (the chart's legend or title still names the series).
void setFittedAxisTitle(QAbstractAxis *axis, const QString &title, const QString &shortTitle, double height,
                        bool allowTwoLines = true);

// The title of a chart's horizontal axis when the chart is tall enough for it
// under the labels, else none (the chart's title then says what the axis is):
// Qt Charts gives the horizontal axes at most 40 % of the height between the
// title and the bottom margin and cuts both the labels and the title to "…"
// past that (a short chart on a talk slide). Returns whether it is shown.
bool setFittedBottomAxisTitle(QChart *chart, QAbstractAxis *axis, const QString &title);

// The pipeline-rank axis under bars drawn at x = 0 … count - 1: a value axis
// from -0.5 to count - 0.5 (Qt Charts elides a category axis's labels to one
// bar's width each, "…" from 12 ranks on in a narrow chart). A label every
// `step` ranks, the step the smallest whose labels fit `plotWidth` unelided,
// anchored on `keep` (the peak rank is always labelled) and such that rank 0 is
// labelled too or has room for RankZeroLabel's, and a minor tick under
// every bar between them, so each rank stays identifiable at any width.
// Touches the axis only where something changes; returns the step.
int setRankTicks(QValueAxis *axis, int count, int keep, double plotWidth);

// Rank 0's label where setRankTicks' labels, anchored on the peak rank, leave it out (16 ranks with the peak on
// rank 15: ranks 1, 3, … 15 labelled, the first bar not; issue 34, item 21). Qt Charts labels a value axis
// only at evenly spaced ticks from one anchor, so this is a text item of the chart's own, in the axis labels'
// font, colour and row, shown where it leaves the first of them room.
class RankZeroLabel
{
public:
    RankZeroLabel(QChart *chart, QValueAxis *axis);
    // After setRankTicks(axis, …, keep, …) returned `step`; `series` maps ranks onto the plot. `shown` false
    // (compare mode, no bars): hidden.
    void update(QAbstractSeries *series, int step, int keep, bool shown = true);
    bool isShown() const;

private:
    QChart *m_chart;
    QValueAxis *m_axis;
    QGraphicsTextItem *m_item;
    double m_offset = -1; // how far under the plot Qt Charts puts the tops of the axis labels (-1: not seen yet)
};

// While one control is edited step after step (a drag, a spin held, a control toggled back and forth) the
// charts' axes only grow: every range change makes Qt Charts measure each label of the chart again as rich
// text and lay the chart out (ChartAxisElement::handleRangeChanged, about 3 M instructions), and p = 4 <-> 5
// changed both charts' rank axes at every step. A scale that holds still also lets the eye compare the bars
// through the drag. The window fits the axes to the plan again once the edits pause (MainWindow).
// The range to show: `next`, or while `held` the one shown when it is wider.
NiceAxis heldRange(const NiceAxis &next, const NiceAxis &shown, bool held);
// The number of rank slots to show: `next`, or while `held` the ones shown when there are more.
int heldSlots(int next, int shown, bool held);

// Qt Charts keeps fonts of its own (the theme's) that the view's font does not
// reach; talk mode enlarges the window's font, so each chart scales its fonts
// by the view's font over the application's.
struct ChartFonts
{
    QFont title, legend;
    std::vector<std::pair<QFont, QFont>> axes; // labels and title, in chart->axes() order
};
ChartFonts chartFonts(const QChart *chart);
void scaleChartFonts(QChart *chart, const ChartFonts &base, double factor);
// The factor for a view: its font's size over the application's.
double fontScale(const QWidget *view);

} // namespace memledger::ui
