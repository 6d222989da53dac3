// SPDX-License-Identifier: MIT
#include "ui/memorybarschart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCursor>
#include <QEvent>
#include <QLegend>
#include <QLineSeries>
#include <QPainter>
#include <QPen>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include "core/base/units.h"
#include "ui/categorycolors.h"
#include "ui/chartlegend.h"
#include "ui/chartupdate.h"
#include "ui/paint/rasterthreadpool.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

#include <algorithm>

namespace memledger::ui {

namespace {

// "rank 3", "ranks 0 and 1", "ranks 0–2, 5 and 7": runs of three or more as a range.
QString rankList(const std::vector<int> &ranks)
{
    QStringList parts;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (j >= i + 2) {
            parts << QStringLiteral("%1–%2").arg(ranks[i]).arg(ranks[j]);
        } else {
            for (std::size_t k = i; k <= j; ++k)
                parts << QString::number(ranks[k]);
        }
        i = j + 1;
    }
    const bool one = ranks.size() == 1;
    QString text = parts.size() > 1 ? QStringList(parts.mid(0, parts.size() - 1)).join(QStringLiteral(", "))
                                          + MemoryBarsChart::tr(" and ") + parts.last()
                                    : parts.value(0);
    return (one ? MemoryBarsChart::tr("rank %1") : MemoryBarsChart::tr("ranks %1")).arg(text);
}

} // namespace

MemoryBarsChart::MemoryBarsChart(Placement placement, QWidget *parent)
    : QChartView(parent)
    , m_placement(placement)
    , m_series(new QStackedBarSeries)
    , m_capacity(new QLineSeries)
    , m_usable(new QLineSeries)
    , m_axisX(new QBarCategoryAxis)
    , m_rankAxis(new QValueAxis)
    , m_axisY(new QValueAxis)
{
    auto *chart = new QChart;
    m_title = title();
    chart->setTitle(m_title);
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
    m_usable->setPen(QPen(errorColor(false), 2.0, Qt::DashLine));
    chart->addSeries(m_capacity);
    chart->addSeries(m_usable);
    m_usable->setVisible(m_placement == Placement::Device);
    if (m_placement != Placement::Device)
        m_capacity->setName(tr("Host memory per GPU"));

    m_axisY->setTitleText(tr("GB"));
    m_axisY->setLabelFormat(QStringLiteral("%.0f"));
    m_rankAxis->setTitleText(tr("pipeline rank"));
    m_rankAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_rankAxis->setGridLineVisible(false);
    m_rankAxis->setMinorGridLineVisible(false);
    chart->addAxis(m_rankAxis, Qt::AlignBottom);
    chart->addAxis(m_axisX, Qt::AlignBottom);
    m_axisX->setVisible(false);
    chart->addAxis(m_axisY, Qt::AlignLeft);
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_series), static_cast<QAbstractSeries *>(m_capacity),
                               static_cast<QAbstractSeries *>(m_usable)}) {
        s->attachAxis(m_rankAxis);
        s->attachAxis(m_axisY);
    }
    // QChartView made a chart of its own and setChart() does not delete it (Qt docs).
    QChart *initial = this->chart();
    setChart(chart);
    delete initial;
    m_fonts = chartFonts(chart);
    m_rankZero = std::make_unique<RankZeroLabel>(chart, m_rankAxis);
    // No antialiasing: every shape here is axis-aligned (bars, grid, capacity lines), and an antialiased
    // line is rasterized as a path, ~30x the work of a plain one (a fifth of a move's instructions went to
    // grid and tick lines in the bench's profile). The fail marks' triangles turn it on for themselves.
    setRenderHint(QPainter::Antialiasing, false);
    // The category names, in the bars' bottom-up order, then the lines; on
    // the right while the chart is wide enough, else under the plot, never
    // cut. The host chart is the narrow one beside the staircase: its legend
    // goes below with only the capacity line (the categories keep the device
    // legend's hues).
    m_legend = new ChartLegend(chart);
    recolor();
    connect(m_series, &QStackedBarSeries::hovered, this, &MemoryBarsChart::showSegmentTip);
    // A new width (a resize, a splitter drag, talk mode's fonts) may label more or fewer ranks.
    connect(chart, &QChart::plotAreaChanged, this, &MemoryBarsChart::updateRankTicks);
}

void MemoryBarsChart::useAxis(QAbstractAxis *x)
{
    QAbstractAxis *other = x == m_rankAxis ? static_cast<QAbstractAxis *>(m_axisX) : m_rankAxis;
    if (m_series->attachedAxes().contains(x))
        return;
    for (QAbstractSeries *s : {static_cast<QAbstractSeries *>(m_series), static_cast<QAbstractSeries *>(m_capacity),
                               static_cast<QAbstractSeries *>(m_usable)}) {
        s->detachAxis(other);
        s->attachAxis(x);
    }
    other->setVisible(false);
    x->setVisible(true);
}

void MemoryBarsChart::updateRankTicks()
{
    setNiceRange(m_axisY, thinTicks(m_yRange, chart()->plotArea().height(), m_axisY->labelsFont()));
    // A short chart keeps its rank labels; its title says "per pipeline rank".
    setFittedBottomAxisTitle(chart(), m_rankAxis, tr("pipeline rank"));
    if (!m_compared.empty() || m_bars.empty()) {
        m_rankZero->update(m_series, 0, 0, false);
        return;
    }
    int peak = 0;
    for (std::size_t i = 0; i < m_bars.size(); ++i)
        if (m_bars[i]->pipeline_rank == m_ledger.peak_rank)
            peak = static_cast<int>(i);
    const int step = setRankTicks(m_rankAxis, m_rankSlots, peak, chart()->plotArea().width());
    m_rankZero->update(m_series, step, peak);
}

void MemoryBarsChart::setLedger(const Ledger &ledger)
{
    m_ledger = ledger;
    if (!m_compared.empty()) {
        setComparison(m_compared);
        return;
    }
    std::vector<const RankLedger *> bars;
    for (const RankLedger &r : m_ledger.ranks)
        bars.push_back(&r);
    useAxis(m_rankAxis);
    fill(bars, {}, m_ledger);
    updateRankTicks();
    showTitle(title());
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
    useAxis(m_axisX);
    m_rankZero->update(m_series, 0, 0, false); // the plans' letters label every bar
    fill(bars, labels, m_ledger);
    setAxisTitle(m_axisX, legend.join(QStringLiteral("   ")));
    showTitle(tr("Compare: the fullest GPU of each plan"));
}

void MemoryBarsChart::fill(const std::vector<const RankLedger *> &bars, const QStringList &labels,
                           const Ledger &reference)
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
    if (!labels.isEmpty() && m_axisX->categories() != labels)
        m_axisX->setCategories(labels);

    // The compare mode's category axis has one slot per plan; the rank axis may keep more (setAxesHeld).
    m_rankSlots = labels.isEmpty() ? heldSlots(static_cast<int>(bars.size()), m_rankSlots, m_axesHeld)
                                   : static_cast<int>(bars.size());
    const double left = -0.5, right = static_cast<double>(m_rankSlots) - 0.5;
    const double capacity = static_cast<double>(capacityBytes) / kGB;
    const double usable = static_cast<double>(reference.usable_bytes) / kGB;
    setPoints(m_capacity, {{left, capacity}, {right, capacity}});
    setPoints(m_usable, {{left, usable}, {right, usable}});
    m_yRange = heldRange(niceAxis(top / kGB * 1.04), m_yRange, m_axesHeld);
    setNiceRange(m_axisY, thinTicks(m_yRange, chart()->plotArea().height(), m_axisY->labelsFont()));

    std::vector<int> failing;
    for (std::size_t i = 0; i < bars.size(); ++i)
        if (!fits(*bars[i]))
            failing.push_back(static_cast<int>(i));
    if (failing != m_failing) {
        m_failing = std::move(failing);
        viewport()->update(); // the marks are drawn over the chart, not part of its scene
    }
}

bool MemoryBarsChart::fits(const RankLedger &rank) const
{
    if (m_placement != Placement::Device)
        return rank.host_fits;
    // The current plan's reserved verdict; a pinned plan of compare mode has none.
    const bool current = !m_ledger.ranks.empty() && &rank >= &m_ledger.ranks.front() && &rank <= &m_ledger.ranks.back();
    const bool reservedOver
        = current
          && std::find(m_reservedOver.begin(), m_reservedOver.end(), rank.pipeline_rank) != m_reservedOver.end();
    return rank.fits && !reservedOver;
}

void MemoryBarsChart::setReserved(const PlanReserved *reserved)
{
    std::vector<int> over;
    if (reserved)
        for (const RankReserved &r : reserved->ranks)
            if (!r.fits)
                over.push_back(r.pipeline_rank);
    if (over == m_reservedOver)
        return;
    m_reservedOver = std::move(over);
    if (m_compared.empty())
        setLedger(m_ledger);
    else
        setComparison(m_compared);
}

QRectF MemoryBarsChart::failMarkRect(int bar) const
{
    if (std::find(m_failing.begin(), m_failing.end(), bar) == m_failing.end())
        return {};
    const RankLedger &r = *m_bars[static_cast<std::size_t>(bar)];
    const double total
        = static_cast<double>(m_placement == Placement::Device ? r.device_total_bytes : r.host_total_bytes) / kGB;
    const double half = m_series->barWidth() / 2;
    const QPointF bottomLeft = chart()->mapToPosition(QPointF(bar - half, 0), m_series);
    const QPointF topRight = chart()->mapToPosition(QPointF(bar + half, total), m_series);
    const QRectF scene = QRectF(bottomLeft, topRight).normalized().intersected(chart()->plotArea());
    return mapFromScene(scene).boundingRect();
}

void MemoryBarsChart::drawForeground(QPainter *painter, const QRectF &rect)
{
    QChartView::drawForeground(painter, rect);
    if (m_failing.empty())
        return;
    // A red outline round each bar that does not fit and a mark above it, so
    // every such rank is named on its own bar (the title lists them too).
    const bool dark = chart()->theme() == QChart::ChartThemeDark;
    const QColor red = errorColor(dark);
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    const QRectF plot = chart()->plotArea();
    for (int bar : m_failing) {
        const QRectF box = mapToScene(failMarkRect(bar).toRect()).boundingRect();
        if (box.isEmpty())
            continue;
        painter->setPen(QPen(red, 2.0));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(box.adjusted(-1, 0, 1, 0));
        // A downward triangle just above the bar (inside the plot's headroom when there is some).
        const double size = std::clamp(box.width() * 0.6, 6.0, 12.0);
        const double tip = std::max(box.top() - 2, plot.top() + size);
        const double cx = box.center().x();
        const QPointF triangle[3] = {{cx - size / 2, tip - size}, {cx + size / 2, tip - size}, {cx, tip}};
        painter->setPen(Qt::NoPen);
        painter->setBrush(red);
        painter->setRenderHint(QPainter::Antialiasing, true);
        painter->drawPolygon(triangle, 3);
        painter->setRenderHint(QPainter::Antialiasing, false);
    }
    painter->restore();
}

QString MemoryBarsChart::segmentText(int bar, Category category) const
{
    if (bar < 0 || bar >= static_cast<int>(m_bars.size()))
        return {};
    const RankLedger &r = *m_bars[static_cast<std::size_t>(bar)];
    QString text = tr("<b>Rank %1 · %2: %3</b>")
                       .arg(r.pipeline_rank)
                       .arg(toQString(categoryLabel(category)), bytesText(shown(r, category)));
    // The formulas a step quieter than the text: its color two thirds of the
    // way from the tooltip's background (a fixed grey was unreadable on the dark one).
    const QPalette tip = QToolTip::palette();
    const QColor fg = tip.color(QPalette::ToolTipText), bg = tip.color(QPalette::ToolTipBase);
    const QColor quiet((2 * fg.red() + bg.red()) / 3, (2 * fg.green() + bg.green()) / 3,
                       (2 * fg.blue() + bg.blue()) / 3);
    for (const LedgerEntry &e : r.entries) {
        if (e.category != category || (e.placement == Placement::Device) != (m_placement == Placement::Device))
            continue;
        text += QStringLiteral("<br>%1 — %2<br><span style='color:%4'>%3</span>")
                    .arg(toQString(e.label).toHtmlEscaped(), bytesText(e.bytes), toQString(e.formula).toHtmlEscaped(),
                         quiet.name());
    }
    text += tr("<br>Rank total %1")
                .arg(bytesText(m_placement == Placement::Device ? r.device_total_bytes : r.host_total_bytes));
    return text;
}

void MemoryBarsChart::setDark(bool dark)
{
    // A theme resets every series' colors: put the fixed palette back.
    chart()->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    m_fonts = chartFonts(chart()); // a theme sets its own fonts
    scaleChartFonts(chart(), m_fonts, fontScale(this));
    recolor();
    m_legend->relayout(m_placement == Placement::Device);
    updateRankTicks();
}

void MemoryBarsChart::recolor()
{
    solidChartBackground(chart()); // after the theme, which set its gradient
    const bool dark = chart()->theme() == QChart::ChartThemeDark;
    for (Category c : kCategories) {
        QBarSet *set = m_sets[static_cast<std::size_t>(c)];
        set->setColor(categoryColor(c, m_placement));
        set->setBorderColor(categoryColor(c).darker(115));
    }
    m_capacity->setPen(QPen(dark ? QColor(0xe8, 0xe8, 0xe8) : QColor(0x20, 0x20, 0x20), 2.0));
    m_usable->setPen(QPen(errorColor(dark), 2.0, Qt::DashLine));
    std::vector<ChartLegend::Entry> entries;
    if (m_placement == Placement::Device)
        for (Category c : kCategories)
            entries.push_back({toQString(categoryLabel(c)), categoryColor(c, m_placement), QPen(Qt::NoPen)});
    entries.push_back({m_capacity->name(), {}, m_capacity->pen()});
    if (m_placement == Placement::Device)
        entries.push_back({m_usable->name(), {}, m_usable->pen()});
    m_legend->setEntries(std::move(entries));
}

Bytes MemoryBarsChart::shown(const RankLedger &rank, Category category) const
{
    const std::size_t i = static_cast<std::size_t>(category);
    return m_placement == Placement::Device ? rank.device[i] : rank.host[i];
}

QString MemoryBarsChart::title() const
{
    std::vector<int> failing;
    for (int bar : m_failing)
        failing.push_back(m_bars[static_cast<std::size_t>(bar)]->pipeline_rank);
    if (m_placement != Placement::Device) {
        // An empty chart says why it is empty.
        bool any = false;
        for (const RankLedger &r : m_ledger.ranks)
            any |= r.host_total_bytes > 0;
        if (!any)
            return tr("Host memory per pipeline rank — nothing offloaded");
        return failing.empty() ? tr("Host memory per pipeline rank (offloaded)")
                               : tr("Host memory per pipeline rank — %1 over the host's memory").arg(rankList(failing));
    }
    if (failing.empty())
        return tr("Device memory per pipeline rank — every rank fits");
    // A bar under the capacity line that is marked: its simulated peak fits, what the allocator reserves does not.
    const bool byReserved = std::all_of(m_failing.begin(), m_failing.end(),
                                        [&](int bar) { return m_bars[static_cast<std::size_t>(bar)]->fits; });
    return (failing.size() == 1 ? tr("Device memory per pipeline rank — %1 does NOT fit%2")
                                : tr("Device memory per pipeline rank — %1 do NOT fit%2"))
        .arg(rankList(failing), byReserved ? tr(" (reserved by the allocator)") : QString());
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

void MemoryBarsChart::resizeEvent(QResizeEvent *event)
{
    // QChartView's own resize, with one difference: QChartView holds the view
    // at the chart's minimum size, which counts the margins the legend takes,
    // so a legend moved under the plot would hold the window taller than the
    // screen. Here the plot gives way instead. (Setting the minimum once, not
    // QChartView's and then this one, leaves the layout alone on a resize.)
    QGraphicsView::resizeEvent(event); // NOLINT(bugprone-parent-virtual-call)
    chart()->resize(size());
    m_legend->relayout(m_placement == Placement::Device);
    setMinimumSize(chart()->minimumSize().toSize() - m_legend->extraRoom());
    setSceneRect(chart()->geometry());
    setWrappedChartTitle(chart(), m_title, width());
}

void MemoryBarsChart::showTitle(const QString &title)
{
    m_title = title;
    setWrappedChartTitle(chart(), title, width());
}

void MemoryBarsChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        scaleChartFonts(chart(), m_fonts, fontScale(this));
        m_legend->relayout(m_placement == Placement::Device);
        setWrappedChartTitle(chart(), m_title, width());
        updateRankTicks();
    }
}

} // namespace memledger::ui
