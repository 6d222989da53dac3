// SPDX-License-Identifier: MIT
#include "ui/staircasechart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QLineSeries>
#include <QEvent>
#include <QPen>
#include <QValueAxis>

#include "core/units.h"
#include "ui/categorycolors.h"
#include "ui/chartupdate.h"

namespace memledger::ui {

StaircaseChart::StaircaseChart(QWidget *parent)
    : QChartView(parent)
    , m_series(new QBarSeries)
    , m_activations(new QBarSet(tr("Activations (GB)")))
    , m_inFlight(new QLineSeries)
    , m_axisX(new QBarCategoryAxis)
    , m_axisBytes(new QValueAxis)
    , m_axisCount(new QValueAxis)
{
    auto *chart = new QChart;
    chart->setTitle(tr("Activation staircase"));
    chart->legend()->setAlignment(Qt::AlignBottom);
    m_activations->setColor(categoryColor(Category::Activations));
    m_activations->setBorderColor(categoryColor(Category::Activations).darker(115));
    m_series->append(m_activations);
    m_series->setBarWidth(0.7);
    chart->addSeries(m_series);
    m_inFlight->setName(tr("Micro-batches in flight"));
    m_inFlight->setPen(QPen(QColor(0x20, 0x20, 0x20), 2.5));
    m_inFlight->setPointsVisible(true);
    chart->addSeries(m_inFlight);

    m_axisX->setTitleText(tr("pipeline rank"));
    m_axisBytes->setTitleText(tr("activations, GB"));
    m_axisBytes->setLabelFormat(QStringLiteral("%.0f"));
    m_axisCount->setTitleText(tr("micro-batches in flight"));
    m_axisCount->setLabelFormat(QStringLiteral("%.0f"));
    m_axisCount->setGridLineVisible(false); // the bytes axis draws the grid
    chart->addAxis(m_axisX, Qt::AlignBottom);
    chart->addAxis(m_axisBytes, Qt::AlignLeft);
    chart->addAxis(m_axisCount, Qt::AlignRight);
    m_series->attachAxis(m_axisX);
    m_series->attachAxis(m_axisBytes);
    m_inFlight->attachAxis(m_axisX);
    m_inFlight->attachAxis(m_axisCount);
    // QChartView made a chart of its own and setChart() does not delete it (Qt docs).
    QChart *initial = this->chart();
    setChart(chart);
    delete initial;
    m_fonts = chartFonts(chart);
    setRenderHint(QPainter::Antialiasing);
}

void StaircaseChart::setDark(bool dark)
{
    chart()->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_fonts = chartFonts(chart()); // a theme sets its own fonts
    scaleChartFonts(chart(), m_fonts, fontScale(this));
    recolor();
}

void StaircaseChart::recolor()
{
    const bool dark = chart()->theme() == QChart::ChartThemeDark;
    m_activations->setColor(categoryColor(Category::Activations));
    m_activations->setBorderColor(categoryColor(Category::Activations).darker(115));
    m_inFlight->setPen(QPen(dark ? QColor(0xe8, 0xe8, 0xe8) : QColor(0x20, 0x20, 0x20), 2.5));
}

void StaircaseChart::setLedger(const Ledger &ledger)
{
    QStringList categories;
    QList<qreal> bytes;
    QList<QPointF> inFlight;
    double maxBytes = 0, maxCount = 0;
    for (const RankLedger &r : ledger.ranks) {
        categories << QString::number(r.pipeline_rank); // as the memory bars
        const double gb = static_cast<double>(r.device[static_cast<std::size_t>(Category::Activations)]) / kGB;
        bytes << gb;
        inFlight << QPointF(r.pipeline_rank, r.in_flight_microbatches);
        maxBytes = std::max(maxBytes, gb);
        maxCount = std::max(maxCount, r.in_flight_microbatches);
    }
    setBarValues(m_activations, bytes);
    if (m_axisX->categories() != categories)
        m_axisX->setCategories(categories);
    setPoints(m_inFlight, inFlight);
    setNiceRange(m_axisBytes, niceAxis(maxBytes * 1.04));
    setNiceRange(m_axisCount, niceAxis(maxCount * 1.04));
}

void StaircaseChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        scaleChartFonts(chart(), m_fonts, fontScale(this));
}

} // namespace memledger::ui
