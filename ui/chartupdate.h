// SPDX-License-Identifier: MIT
#pragma once

#include "core/units.h"

#include <QFont>
#include <QList>
#include <QPointF>

#include <utility>
#include <vector>

class QAbstractAxis;
class QBarSet;
class QChart;
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
// Changed values are replaced one by one (a full bar layout each, fine for
// the few hundred values of a ledger, STYLE.md §6); a new count rebuilds the set in one call.
void setBarValues(QBarSet *set, const QList<qreal> &values);
void setPoints(QXYSeries *series, const QList<QPointF> &points);
void setAxisTitle(QAbstractAxis *axis, const QString &title);
void setChartTitle(QChart *chart, const QString &title);

// Qt Charts keeps fonts of its own (the theme's) that the view's font does not
// reach; talk mode enlarges the window's font, so each chart scales its fonts
// by the view's font over the application's.
struct ChartFonts {
    QFont title, legend;
    std::vector<std::pair<QFont, QFont>> axes; // labels and title, in chart->axes() order
};
ChartFonts chartFonts(const QChart *chart);
void scaleChartFonts(QChart *chart, const ChartFonts &base, double factor);
// The factor for a view: its font's size over the application's.
double fontScale(const QWidget *view);

} // namespace memledger::ui
