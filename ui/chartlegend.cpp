// SPDX-License-Identifier: MIT
#include "ui/chartlegend.h"

#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QLegend>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace memledger::ui {

namespace {

constexpr double kMargin = 20; // Qt Charts' default margin round the plot
constexpr double kMaxRightShare = 0.4; // as Qt Charts: a right-hand legend leaves the plot 60 % of the width

struct Metrics
{
    double swatch, gap, row, lineSwatch;
};

Metrics metricsOf(const QFont &font)
{
    const QFontMetricsF fm(font);
    return {std::round(fm.height() * 0.65), std::round(fm.height() * 0.4), std::ceil(fm.height() * 1.3),
            std::round(fm.height() * 1.1)};
}

} // namespace

ChartLegend::ChartLegend(QChart *chart)
    : QGraphicsItem(chart)
    , m_chart(chart)
{
    setZValue(100); // over the chart's background
    chart->legend()->hide();
}

void ChartLegend::setEntries(std::vector<Entry> entries)
{
    m_entries = std::move(entries);
    update();
}

double ChartLegend::labelWidth(std::size_t entry) const
{
    return QFontMetricsF(m_chart->legend()->font()).horizontalAdvance(m_entries[entry].label);
}

void ChartLegend::relayout(bool preferRight)
{
    const Metrics m = metricsOf(m_chart->legend()->font());
    std::vector<double> widths;
    double widest = 0;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const double swatch = m_entries[i].line.style() != Qt::NoPen ? m.lineSwatch : m.swatch;
        widths.push_back(std::ceil(swatch + m.gap + labelWidth(i)) + 2);
        widest = std::max(widest, widths.back());
    }
    // The chart's background rectangle (inside the chart layout's own margins) and the content within kMargin.
    qreal l = 0, t = 0, r = 0, b = 0;
    if (m_chart->layout())
        m_chart->layout()->getContentsMargins(&l, &t, &r, &b);
    const QRectF background = QRectF(QPointF(0, 0), m_chart->size()).adjusted(l, t, -r, -b);
    const QRectF content = background.adjusted(kMargin, kMargin, -kMargin, -kMargin);
    const double columnGap = m.row;
    const int count = static_cast<int>(m_entries.size());
    // Below the plot: the most columns that fit, each as wide as its own
    // widest entry (filled row by row), so that a short label beside a long
    // one does not cost a column: in a narrow chart two columns keep the plot
    // half a legend taller than one.
    int columnsBelow = 1;
    std::vector<double> columnWidths{widest};
    for (int columns = count; columns > 1; --columns) {
        std::vector<double> cw(std::size_t(columns), 0.0);
        for (int i = 0; i < count; ++i)
            cw[std::size_t(i % columns)] = std::max(cw[std::size_t(i % columns)], widths[std::size_t(i)]);
        double total = (columns - 1) * columnGap;
        for (double w : cw)
            total += w;
        if (total <= content.width()) {
            columnsBelow = columns;
            columnWidths = std::move(cw);
            break;
        }
    }
    const int rowsBelow = (count + columnsBelow - 1) / columnsBelow;
    // On the right while it leaves the plot 60 % of the width (as Qt Charts'
    // own legend); up to half the width when that leaves a squarer plot than
    // the rows below would (a short, wide chart: a talk slide).
    const double rightWidth = widest + columnGap;
    const double plotRight = std::min(content.width() - rightWidth, content.height());
    const double plotBelow = std::min(content.width(), content.height() - rowsBelow * m.row);
    m_placement = preferRight
                          && (rightWidth <= kMaxRightShare * content.width()
                              || (rightWidth <= 0.5 * content.width() && plotRight > plotBelow))
                      ? Placement::Right
                      : Placement::Below;
    QMargins margins(kMargin, kMargin, kMargin, kMargin);
    std::vector<QRectF> rects;
    const int n = static_cast<int>(m_entries.size());
    if (n > 0 && m_placement == Placement::Right) {
        const double height = n * m.row;
        const double left = background.right() - kMargin - widest;
        const double top = content.center().y() - height / 2;
        for (int i = 0; i < n; ++i)
            rects.emplace_back(left, top + i * m.row, widths[std::size_t(i)], m.row);
        margins.setRight(static_cast<int>(std::ceil(kMargin + widest + columnGap)));
    } else if (n > 0) {
        // As many columns as the width holds, filled row by row in the entries' order.
        const int columns = columnsBelow, rows = rowsBelow;
        std::vector<double> columnLeft(std::size_t(columns), 0.0);
        double width = 0;
        for (int c = 0; c < columns; ++c) {
            columnLeft[std::size_t(c)] = width;
            width += columnWidths[std::size_t(c)] + (c + 1 < columns ? columnGap : 0.0);
        }
        const double left = content.center().x() - width / 2;
        const double top = background.bottom() - kMargin / 2 - rows * m.row;
        for (int i = 0; i < n; ++i)
            rects.emplace_back(left + columnLeft[std::size_t(i % columns)], top + (i / columns) * m.row,
                               widths[std::size_t(i)], m.row);
        margins.setBottom(static_cast<int>(std::ceil(kMargin + rows * m.row)));
    }
    QRectF bounds;
    for (const QRectF &rect : rects)
        bounds = bounds.united(rect);
    if (rects != m_rects || bounds != m_bounds) {
        prepareGeometryChange();
        m_rects = std::move(rects);
        m_bounds = bounds;
    }
    if (m_chart->margins() != margins)
        m_chart->setMargins(margins);
}

QSize ChartLegend::extraRoom() const
{
    const QMargins m = m_chart->margins();
    const int base = static_cast<int>(kMargin);
    return {std::max(0, m.left() + m.right() - 2 * base), std::max(0, m.top() + m.bottom() - 2 * base)};
}

std::vector<QRectF> ChartLegend::entryRects() const
{
    std::vector<QRectF> scene;
    for (const QRectF &r : m_rects)
        scene.push_back(mapRectToScene(r));
    return scene;
}

QRectF ChartLegend::boundingRect() const
{
    return m_bounds;
}

void ChartLegend::paint(QPainter *painter, const QStyleOptionGraphicsItem *, QWidget *)
{
    const QFont font = m_chart->legend()->font();
    const Metrics m = metricsOf(font);
    const QFontMetricsF fm(font);
    painter->save();
    painter->setFont(font);
    for (std::size_t i = 0; i < m_entries.size() && i < m_rects.size(); ++i) {
        const Entry &e = m_entries[i];
        const QRectF &r = m_rects[i];
        const double cy = r.center().y();
        double x = r.left();
        if (e.line.style() != Qt::NoPen) {
            painter->setPen(e.line);
            painter->drawLine(QPointF(x, cy), QPointF(x + m.lineSwatch, cy));
            x += m.lineSwatch;
        } else {
            painter->setPen(QPen(e.fill.darker(115), 1));
            painter->setBrush(e.fill);
            painter->drawRect(QRectF(x, cy - m.swatch / 2, m.swatch, m.swatch));
            x += m.swatch;
        }
        painter->setPen(m_chart->legend()->labelColor());
        painter->drawText(QPointF(x + m.gap, cy + (fm.ascent() - fm.descent()) / 2), e.label);
    }
    painter->restore();
}

} // namespace memledger::ui
