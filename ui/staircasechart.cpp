// SPDX-License-Identifier: MIT
#include "ui/staircasechart.h"

#include <QBarSeries>
#include <QBarSet>
#include <QCursor>
#include <QEvent>
#include <QGraphicsLayout>
#include <QLineSeries>
#include <QPen>
#include <QToolTip>
#include <QValueAxis>

#include "core/base/units.h"
#include "core/ledger/balance.h"
#include "ui/categorycolors.h"
#include "ui/chartupdate.h"
#include "ui/paint/rasterthreadpool.h"
#include "ui/qtstring.h"

#include <cmath>

namespace memledger::ui {

namespace {
// Below this height the balancing figures leave the title (about three lines of
// title on a 300 px chart leave no plot).
constexpr int kCompactTitleHeight = 320;
// How long the edits must pause before the chart gives back width it no longer needs (setMinimumWidthSoon).
constexpr int kShrinkDelayMs = 250;
} // namespace

StaircaseChart::StaircaseChart(QWidget *parent)
    : QChartView(parent)
    , m_series(new QBarSeries)
    , m_activations(new QBarSet(tr("Activations (GB)")))
    , m_inFlight(new QLineSeries)
    , m_unbalanced(new QLineSeries)
    , m_axisX(new QValueAxis)
    , m_axisBytes(new QValueAxis)
    , m_axisCount(new QValueAxis)
{
    auto *chart = new QChart;
    chart->setTitle(tr("Activation staircase"));
    // No legend: each axis title is in its series' color (the bars' vermillion
    // on the left, the line's on the right), which leaves the bars the height
    // and keeps two long legend entries from being cut in a narrow column.
    chart->legend()->hide();
    m_activations->setColor(categoryColor(Category::Activations));
    m_activations->setBorderColor(categoryColor(Category::Activations).darker(115));
    m_series->append(m_activations);
    m_series->setBarWidth(0.7);
    chart->addSeries(m_series);
    m_inFlight->setName(tr("Micro-batches in flight"));
    m_inFlight->setPen(QPen(QColor(0x20, 0x20, 0x20), 2.5));
    m_inFlight->setPointsVisible(true);
    chart->addSeries(m_inFlight);
    m_unbalanced->setName(tr("Activations before balancing"));
    chart->addSeries(m_unbalanced);

    m_axisX->setTitleText(tr("pipeline rank"));
    m_axisX->setLabelFormat(QStringLiteral("%.0f"));
    m_axisX->setGridLineVisible(false);
    m_axisX->setMinorGridLineVisible(false);
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
    m_unbalanced->attachAxis(m_axisX);
    m_unbalanced->attachAxis(m_axisBytes);
    // QChartView made a chart of its own and setChart() does not delete it (Qt docs).
    QChart *initial = this->chart();
    setChart(chart);
    delete initial;
    m_fonts = chartFonts(chart);
    m_rankZero = std::make_unique<RankZeroLabel>(chart, m_axisX);
    // No antialiasing for the chart's items: bars, grid and ticks are axis-aligned, and Qt Charts draws each
    // grid and tick line as a QGraphicsLineItem that an antialiased painter rasterizes as a path (about 0.2 M
    // instructions a line, half of a p = 4 <-> 5 move's work in the bench's profile). The two lines that
    // slant are drawn with antialiasing over the chart (drawForeground); their series stay in the chart,
    // hidden, for the axes they are bound to.
    setRenderHint(QPainter::Antialiasing, false);
    m_inFlight->setVisible(false);
    m_unbalanced->setVisible(false);
    // A new width (a resize, a splitter drag, talk mode's fonts) may label more or fewer ranks.
    connect(chart, &QChart::plotAreaChanged, this, &StaircaseChart::fitTexts);
    connect(m_series, &QBarSeries::hovered, this, [this](bool on, int index, QBarSet *) { showBarTip(on, index); });
    m_shrink.setSingleShot(true);
    m_shrink.setInterval(kShrinkDelayMs);
    connect(&m_shrink, &QTimer::timeout, this, [this] { setMinimumWidth(m_pendingMinimum); });
    recolor();
}

void StaircaseChart::updateRankTicks()
{
    if (m_ranks > 0)
        m_rankZero->update(m_series, setRankTicks(m_axisX, m_ranks, m_peakRank, chart()->plotArea().width()),
                           m_peakRank);
}

void StaircaseChart::fitTexts()
{
    updateRankTicks();
    const double height = chart()->plotArea().height();
    setNiceRange(m_axisBytes, thinTicks(m_bytesRange, height, m_axisBytes->labelsFont()));
    setNiceRange(m_axisCount, thinTicks(m_countRange, height, m_axisCount->labelsFont()));
    setFittedAxisTitle(m_axisBytes, tr("activations, GB"), tr("GB"), height);
    setFittedAxisTitle(m_axisCount, tr("micro-batches in flight"), tr("in flight"), height, false);
    // Qt Charts squeezes the two vertical axes when together they would take
    // more than 40 % of the chart's width (CartesianChartLayout's
    // maxAxisPortion) and then cuts their titles to "…": the chart asks for
    // the width that keeps both whole (labels, a title line, Qt's paddings).
    const auto axisWidth = [](const QValueAxis *axis) {
        const QFontMetricsF labels(axis->labelsFont()), title(axis->titleFont());
        const int lines = axis->titleText().count(QStringLiteral("<br>")) + 1;
        return labels.horizontalAdvance(QString::number(axis->max(), 'f', 1)) + lines * title.height() + 16.0;
    };
    const int minimum = static_cast<int>(std::ceil((axisWidth(m_axisBytes) + axisWidth(m_axisCount)) / 0.4)) + 48;
    setMinimumWidthSoon(minimum);
    // A short chart (a talk slide on a small projector) keeps its plot: the
    // balancing figures move from the title to the tooltip.
    const bool compact = QWidget::height() < kCompactTitleHeight;
    // A short chart keeps its rank labels and drops the axis title, which its title then says.
    const bool rankTitle = setFittedBottomAxisTitle(chart(), m_axisX, tr("pipeline rank"));
    setWrappedChartTitle(chart(), titleText(compact, !rankTitle), width());
    setToolTip(compact && m_parkedBytes > 0 ? titleText() : QString());
}

void StaircaseChart::setMinimumWidthSoon(int minimum)
{
    // A new minimum width relayouts the whole window (both splitters, the tab
    // widget, the central widget: a layout request up to the main window), and
    // the axis labels' width changes with every edit that moves the top of an
    // axis (Recompute toggled: 294 and 313 px, on a chart 500 px wide). A wider
    // minimum is taken at once, so the axis titles stay whole; a narrower one
    // only once the edits stop, so a drag or a toggled control relayouts nothing.
    m_pendingMinimum = minimum;
    if (minimum > minimumWidth()) {
        m_shrink.stop();
        setMinimumWidth(minimum);
    } else if (minimum == minimumWidth()) {
        m_shrink.stop();
    } else if (!m_shrink.isActive()) {
        m_shrink.start();
    }
}

QString StaircaseChart::titleText(bool compact, bool perRank) const
{
    if (m_parkedBytes <= 0)
        return perRank ? tr("Activation staircase per pipeline rank") : tr("Activation staircase");
    if (compact)
        return perRank ? tr("Activations per pipeline rank, balanced (dashed: before)")
                       : tr("Activation staircase, balanced (dashed: before)");
    QString title = tr("Activation staircase, balanced: %1 parked (dashed: before)").arg(bytesText(m_parkedBytes));
    if (m_linkBytesPerS > 0)
        title += tr(", copies need %1 of %2 GB/s")
                     .arg(m_neededBytesPerS / 1e9, 0, 'f', 0)
                     .arg(m_linkBytesPerS / 1e9, 0, 'f', 0);
    return title;
}

void StaircaseChart::setBalanceBandwidth(double neededBytesPerS, double linkBytesPerS)
{
    if (neededBytesPerS == m_neededBytesPerS && linkBytesPerS == m_linkBytesPerS)
        return;
    m_neededBytesPerS = neededBytesPerS;
    m_linkBytesPerS = linkBytesPerS;
    fitTexts();
}

void StaircaseChart::setDark(bool dark)
{
    chart()->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_fonts = chartFonts(chart()); // a theme sets its own fonts
    scaleChartFonts(chart(), m_fonts, fontScale(this));
    recolor();
    fitTexts();
}

void StaircaseChart::recolor()
{
    solidChartBackground(chart()); // after the theme, which set its gradient
    const bool dark = chart()->theme() == QChart::ChartThemeDark;
    m_activations->setColor(categoryColor(Category::Activations));
    m_activations->setBorderColor(categoryColor(Category::Activations).darker(115));
    const QColor line = dark ? QColor(0xe8, 0xe8, 0xe8) : QColor(0x20, 0x20, 0x20);
    m_inFlight->setPen(QPen(line, 2.5));
    // The ghost of the staircase before balancing: the bars' hue, faint and dashed.
    QColor ghost = categoryColor(Category::Activations).darker(dark ? 70 : 140);
    ghost.setAlpha(200);
    m_unbalanced->setPen(QPen(ghost, 2.0, Qt::DashLine));
    // The axis titles name the series in their colors (there is no legend);
    // the bars' vermillion lifted on a dark background for contrast.
    const QColor bars = categoryColor(Category::Activations);
    m_axisBytes->setTitleBrush(dark ? bars.lighter(130) : bars.darker(110));
    m_axisCount->setTitleBrush(line);
}

void StaircaseChart::setLedger(const Ledger &ledger)
{
    QList<qreal> bytes;
    QList<QPointF> inFlight;
    QList<QPointF> unbalanced; // a step outline over the bars: each rank's level across its slot
    double maxBytes = 0, maxCount = 0;
    m_parkedBytes = 0;
    for (const ParkedActivations &pa : ledger.parked)
        m_parkedBytes += pa.bytes;
    for (const RankLedger &r : ledger.ranks) {
        if (m_parkedBytes > 0) {
            const double before = static_cast<double>(unbalancedActivationBytes(r)) / kGB;
            unbalanced << QPointF(r.pipeline_rank - 0.5, before) << QPointF(r.pipeline_rank + 0.5, before);
            maxBytes = std::max(maxBytes, before);
        }
        const double gb = static_cast<double>(r.device[static_cast<std::size_t>(Category::Activations)]) / kGB;
        bytes << gb;
        inFlight << QPointF(r.pipeline_rank, r.in_flight_microbatches);
        maxBytes = std::max(maxBytes, gb);
        maxCount = std::max(maxCount, r.in_flight_microbatches);
    }
    m_ranksShown = ledger.ranks;
    setBarValues(m_activations, bytes);
    m_ranks = heldSlots(static_cast<int>(ledger.ranks.size()), m_ranks, m_axesHeld);
    m_peakRank = ledger.peak_rank;
    setPoints(m_inFlight, inFlight);
    setPoints(m_unbalanced, unbalanced);
    m_bytesRange = heldRange(niceAxis(maxBytes * 1.04), m_bytesRange, m_axesHeld);
    m_countRange = heldRange(niceAxis(maxCount * 1.04), m_countRange, m_axesHeld);
    fitTexts();
    if (QGraphicsLayout *layout = chart()->layout())
        layout->activate();
}

QString StaircaseChart::barToolTip(int bar) const
{
    if (bar < 0 || static_cast<std::size_t>(bar) >= m_ranksShown.size())
        return {};
    const RankLedger &r = m_ranksShown[static_cast<std::size_t>(bar)];
    QStringList lines;
    lines << tr("Rank %1: %2 of activations, %3 micro-batches in flight at its peak")
                 .arg(r.pipeline_rank)
                 .arg(bytesText(r.device[static_cast<std::size_t>(Category::Activations)]))
                 .arg(r.in_flight_microbatches, 0, 'g', 3);
    for (const LedgerEntry &e : r.entries)
        if (e.category == Category::Activations && e.placement == Placement::Device && e.bytes != 0)
            lines << tr("  %1: %2 (%3)").arg(toQString(e.label), bytesText(e.bytes), toQString(e.formula));
    return lines.join(QLatin1Char('\n'));
}

void StaircaseChart::showBarTip(bool on, int index)
{
    if (on)
        QToolTip::showText(QCursor::pos(), barToolTip(index), this);
    else
        QToolTip::hideText();
}

void StaircaseChart::drawForeground(QPainter *painter, const QRectF &rect)
{
    QChartView::drawForeground(painter, rect);
    const auto line = [this](QLineSeries *series) {
        QPolygonF points;
        const QList<QPointF> values = series->points();
        points.reserve(values.size());
        for (const QPointF &value : values)
            points << chart()->mapToScene(chart()->mapToPosition(value, series));
        return points;
    };
    painter->save();
    painter->setClipRect(chart()->mapRectToScene(chart()->plotArea()));
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->setBrush(Qt::NoBrush);
    if (m_unbalanced->count() > 0) {
        painter->setPen(m_unbalanced->pen());
        painter->drawPolyline(line(m_unbalanced));
    }
    const QPolygonF steps = line(m_inFlight);
    painter->setPen(m_inFlight->pen());
    painter->drawPolyline(steps);
    // A dot on each rank's count, filled in the line's colour (as QLineSeries::setPointsVisible drew them).
    const QColor dot = m_inFlight->pen().color();
    painter->setPen(QPen(dot, 1.0));
    painter->setBrush(dot);
    const double radius = m_inFlight->pen().widthF() * 1.2;
    for (const QPointF &p : steps)
        painter->drawEllipse(p, radius, radius);
    painter->restore();
}

void StaircaseChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        scaleChartFonts(chart(), m_fonts, fontScale(this));
        fitTexts();
    }
}

} // namespace memledger::ui
