// SPDX-License-Identifier: MIT
#include "ui/chartupdate.h"

#include <QAbstractAxis>
#include <QBarSet>
#include <QChart>
#include <QString>
#include <QValueAxis>
#include <QXYSeries>

namespace memledger::ui {

void setNiceRange(QValueAxis *axis, const NiceAxis &nice)
{
    if (axis->min() != 0.0 || axis->max() != nice.max)
        axis->setRange(0, nice.max);
    if (axis->tickCount() != nice.ticks())
        axis->setTickCount(nice.ticks());
    const QString format = QStringLiteral("%.%1f").arg(nice.decimals());
    if (axis->labelFormat() != format)
        axis->setLabelFormat(format);
}

void setBarValues(QBarSet *set, const QList<qreal> &values)
{
    if (set->count() != values.size()) {
        if (set->count() > 0)
            set->remove(0, set->count());
        set->append(values);
        return;
    }
    for (qsizetype i = 0; i < values.size(); ++i)
        if (set->at(i) != values[i])
            set->replace(i, values[i]);
}

void setPoints(QXYSeries *series, const QList<QPointF> &points)
{
    if (series->points() != points)
        series->replace(points);
}

void setAxisTitle(QAbstractAxis *axis, const QString &title)
{
    if (axis->titleText() != title)
        axis->setTitleText(title);
}

void setChartTitle(QChart *chart, const QString &title)
{
    if (chart->title() != title)
        chart->setTitle(title);
}

} // namespace memledger::ui
