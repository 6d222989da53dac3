// SPDX-License-Identifier: MIT
#include "ui/memorybarschart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCursor>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QEvent>
#include <QPen>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include "core/units.h"
#include "ui/categorycolors.h"
#include "ui/chartupdate.h"
#include "ui/qtstring.h"

namespace memledger::ui {

namespace {

QString gb(Bytes bytes)
{
    return toQString(formatGB(static_cast<double>(bytes)));
}

} // namespace

MemoryBarsChart::MemoryBarsChart(Placement placement, QWidget *parent)
    : QChartView(parent)
    , m_placement(placement)
    , m_series(new QStackedBarSeries)
    , m_capacity(new QLineSeries)
    , m_usable(new QLineSeries)
    , m_axisX(new QBarCategoryAxis)
    , m_axisY(new QValueAxis)
{
    auto *chart = new QChart;
    chart->setTitle(title(true));
    // On the right the category names fit unelided, in the bars' bottom-up
    // order. The host chart is the narrow one beside the staircase: its legend
    // goes below with only the capacity line (the categories keep the device
    // legend's hues), so 16 ranks keep their labels unelided.
    chart->legend()->setAlignment(placement == Placement::Device ? Qt::AlignRight : Qt::AlignBottom);
    for (Category c : kCategories) {
        auto *set = new QBarSet(toQString(categoryLabel(c)));
        set->setColor(categoryColor(c, m_placement));
        set->setBorderColor(categoryColor(c).darker(115));
        m_sets[static_cast<std::size_t>(c)] = set;
        m_series->append(set);
    }
    m_series->setBarWidth(0.7);
    chart->addSeries(m_series);

    // Lines last, so their legend markers stay after the categories (STYLE.md, Qt Charts pitfalls).
    m_capacity->setName(tr("Capacity"));
    m_capacity->setPen(QPen(QColor(0x20, 0x20, 0x20), 2.0));
    m_usable->setName(tr("Usable"));
    m_usable->setObjectName(QStringLiteral("usable")); // capacity minus the runtime reserve
    m_usable->setPen(QPen(QColor(0xb0, 0x1c, 0x1c), 2.0, Qt::DashLine));
    chart->addSeries(m_capacity);
    chart->addSeries(m_usable);
    m_usable->setVisible(m_placement == Placement::Device);
    if (m_placement != Placement::Device)
        m_capacity->setName(tr("Host memory per GPU"));

    m_axisY->setTitleText(tr("GB"));
    m_axisY->setLabelFormat(QStringLiteral("%.0f"));
    m_axisX->setTitleText(tr("pipeline rank"));
    chart->addAxis(m_axisX, Qt::AlignBottom);
    chart->addAxis(m_axisY, Qt::AlignLeft);
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_series), static_cast<QAbstractSeries *>(m_capacity),
                               static_cast<QAbstractSeries *>(m_usable)}) {
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }
    // QChartView made a chart of its own and setChart() does not delete it (Qt docs).
    QChart *initial = this->chart();
    setChart(chart);
    delete initial;
    m_fonts = chartFonts(chart);
    setRenderHint(QPainter::Antialiasing);
    showLegendMarkers();
    connect(m_series, &QStackedBarSeries::hovered, this, &MemoryBarsChart::showSegmentTip);
}

void MemoryBarsChart::setLedger(const Ledger &ledger)
{
    m_ledger = ledger;
    if (!m_compared.empty()) {
        setComparison(m_compared);
        return;
    }
    std::vector<const RankLedger *> bars;
    QStringList labels;
    for (const RankLedger &r : m_ledger.ranks) {
        bars.push_back(&r);
        labels << QString::number(r.pipeline_rank); // short enough for 16+ ranks unelided; the axis says "pipeline rank"
    }
    fill(bars, labels, m_ledger);
    setAxisTitle(m_axisX, tr("pipeline rank"));
    bool fits = true;
    for (const RankLedger &r : m_ledger.ranks)
        fits &= m_placement == Placement::Device ? r.fits : r.host_total_bytes <= m_ledger.host_capacity_bytes;
    setChartTitle(chart(), title(fits));
}

void MemoryBarsChart::setComparison(const std::vector<Compared> &plans)
{
    m_compared = plans;
    if (m_compared.empty()) {
        setLedger(m_ledger);
        return;
    }
    std::vector<const RankLedger *> bars;
    QStringList labels, legend;
    // Short unique labels (QBarCategoryAxis drops duplicates and elides long
    // ones); the axis title says which plan each letter is.
    int n = 0;
    for (const Compared &c : m_compared) {
        if (c.ledger.ranks.empty())
            continue;
        const QString letter = QString(QChar(u'A' + n++));
        bars.push_back(&c.ledger.ranks[static_cast<std::size_t>(c.ledger.peak_rank)]);
        labels << letter;
        legend << QStringLiteral("%1 = %2").arg(letter, c.name);
    }
    if (!m_ledger.ranks.empty()) {
        bars.push_back(&m_ledger.ranks[static_cast<std::size_t>(m_ledger.peak_rank)]);
        labels << tr("now");
    }
    fill(bars, labels, m_ledger);
    setAxisTitle(m_axisX, legend.join(QStringLiteral("   ")));
    setChartTitle(chart(), tr("Compare: the fullest GPU of each plan"));
}

void MemoryBarsChart::fill(const std::vector<const RankLedger *> &bars, const QStringList &labels, const Ledger &reference)
{
    m_bars = bars;
    const bool device = m_placement == Placement::Device;
    const Bytes capacityBytes = device ? reference.capacity_bytes : reference.host_capacity_bytes;
    double top = static_cast<double>(capacityBytes);
    for (const RankLedger *r : bars)
        top = std::max(top, static_cast<double>(device ? r->device_total_bytes : r->host_total_bytes));
    for (Category c : kCategories) {
        QList<qreal> values;
        values.reserve(static_cast<int>(bars.size()));
        for (const RankLedger *r : bars)
            values << static_cast<double>(shown(*r, c)) / kGB;
        setBarValues(m_sets[static_cast<std::size_t>(c)], values);
    }
    if (m_axisX->categories() != labels)
        m_axisX->setCategories(labels);

    const double left = -0.5, right = static_cast<double>(bars.size()) - 0.5;
    const double capacity = static_cast<double>(capacityBytes) / kGB;
    const double usable = static_cast<double>(reference.usable_bytes) / kGB;
    setPoints(m_capacity, {{left, capacity}, {right, capacity}});
    setPoints(m_usable, {{left, usable}, {right, usable}});
    setNiceRange(m_axisY, niceAxis(top / kGB * 1.04));
}

QString MemoryBarsChart::segmentText(int bar, Category category) const
{
    if (bar < 0 || bar >= static_cast<int>(m_bars.size()))
        return {};
    const RankLedger &r = *m_bars[static_cast<std::size_t>(bar)];
    QString text = tr("<b>Rank %1 · %2: %3</b>")
                       .arg(r.pipeline_rank)
                       .arg(toQString(categoryLabel(category)), gb(shown(r, category)));
    for (const LedgerEntry &e : r.entries) {
        if (e.category != category || (e.placement == Placement::Device) != (m_placement == Placement::Device))
            continue;
        text += QStringLiteral("<br>%1 — %2<br><span style='color:#555555'>%3</span>")
                    .arg(toQString(e.label).toHtmlEscaped(), gb(e.bytes), toQString(e.formula).toHtmlEscaped());
    }
    text += tr("<br>Rank total %1").arg(gb(m_placement == Placement::Device ? r.device_total_bytes : r.host_total_bytes));
    return text;
}

void MemoryBarsChart::setDark(bool dark)
{
    // A theme resets every series' colours: put the fixed palette back.
    chart()->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_fonts = chartFonts(chart()); // a theme sets its own fonts
    scaleChartFonts(chart(), m_fonts, fontScale(this));
    recolor();
    showLegendMarkers();
}

void MemoryBarsChart::showLegendMarkers()
{
    const bool categories = m_placement == Placement::Device;
    for (QLegendMarker *marker : chart()->legend()->markers(m_series))
        marker->setVisible(categories);
}

void MemoryBarsChart::recolor()
{
    const bool dark = chart()->theme() == QChart::ChartThemeDark;
    for (Category c : kCategories) {
        QBarSet *set = m_sets[static_cast<std::size_t>(c)];
        set->setColor(categoryColor(c, m_placement));
        set->setBorderColor(categoryColor(c).darker(115));
    }
    m_capacity->setPen(QPen(dark ? QColor(0xe8, 0xe8, 0xe8) : QColor(0x20, 0x20, 0x20), 2.0));
    m_usable->setPen(QPen(dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xb0, 0x1c, 0x1c), 2.0, Qt::DashLine));
}

Bytes MemoryBarsChart::shown(const RankLedger &rank, Category category) const
{
    const std::size_t i = static_cast<std::size_t>(category);
    return m_placement == Placement::Device ? rank.device[i] : rank.host[i];
}

QString MemoryBarsChart::title(bool fits) const
{
    if (m_placement != Placement::Device) {
        // An empty chart says why it is empty.
        bool any = false;
        for (const RankLedger &r : m_ledger.ranks)
            any |= r.host_total_bytes > 0;
        if (!any)
            return tr("Host memory per pipeline rank — nothing offloaded");
        return fits ? tr("Host memory per pipeline rank (offloaded)") : tr("Host memory per pipeline rank — over the host's memory");
    }
    return fits ? tr("Device memory per pipeline rank — every rank fits")
                : tr("Device memory per pipeline rank — rank %1 does NOT fit").arg(m_ledger.peak_rank);
}

void MemoryBarsChart::showSegmentTip(bool on, int index, QBarSet *set)
{
    if (!on) {
        QToolTip::hideText();
        return;
    }
    for (Category c : kCategories)
        if (m_sets[static_cast<std::size_t>(c)] == set)
            QToolTip::showText(QCursor::pos(), segmentText(index, c), this);
}

void MemoryBarsChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        scaleChartFonts(chart(), m_fonts, fontScale(this));
}

} // namespace memledger::ui
