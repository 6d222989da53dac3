// SPDX-License-Identifier: MIT
#include "ui/chartupdate.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QLegend>
#include <QString>
#include <QValueAxis>
#include <QWidget>
#include <QXYSeries>

#include <algorithm>

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

ChartFonts chartFonts(const QChart *chart)
{
    ChartFonts f{chart->titleFont(), chart->legend()->font(), {}};
    for (const QAbstractAxis *axis : chart->axes())
        f.axes.emplace_back(axis->labelsFont(), axis->titleFont());
    return f;
}

namespace {
QFont scaled(QFont font, double factor)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0)
        font.setPixelSize(std::max(1, int(font.pixelSize() * factor + 0.5)));
    return font;
}
} // namespace

void scaleChartFonts(QChart *chart, const ChartFonts &base, double factor)
{
    chart->setTitleFont(scaled(base.title, factor));
    chart->legend()->setFont(scaled(base.legend, factor));
    const QList<QAbstractAxis *> axes = chart->axes();
    for (qsizetype i = 0; i < axes.size() && std::size_t(i) < base.axes.size(); ++i) {
        axes[i]->setLabelsFont(scaled(base.axes[std::size_t(i)].first, factor));
        axes[i]->setTitleFont(scaled(base.axes[std::size_t(i)].second, factor));
    }
}

double fontScale(const QWidget *view)
{
    const double app = QApplication::font().pointSizeF();
    const double own = view->font().pointSizeF();
    return app > 0 && own > 0 ? own / app : 1.0;
}

} // namespace memledger::ui
