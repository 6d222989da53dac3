// SPDX-License-Identifier: MIT
#include "ui/frontierplot.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QToolTip>

#include "core/ledger/ledger.h"
#include "core/view/gantt.h"
#include "ui/categorycolors.h"

#include <algorithm>
#include <cmath>

namespace memledger::ui {

namespace {

constexpr double kPointRadius = 3.5;
constexpr double kMarkerRadius = 6.5;
constexpr double kCurrentRadius = 12;
constexpr int kMaxTicks = 6;

// The frontier takes the activations' color (it is their memory); the
// settings a neutral sky blue, outlined in the text color.
QColor frontierColor(const QPalette &palette)
{
    const QColor c = categoryColor(Category::Activations);
    return palette.color(QPalette::Base).lightness() < 128 ? c.lighter(130) : c;
}

const QColor kSettingColor(0x56, 0xb4, 0xe9);

// A beaten setting's hollow outline: darker on light backgrounds, as is on dark ones.
QColor beatenColor(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128 ? kSettingColor : kSettingColor.darker(130);
}

double axisTop(double value, double *step)
{
    const double top = value > 0 ? value * 1.06 : 1.0;
    *step = niceStep(top, kMaxTicks);
    return std::ceil(top / *step - 1e-9) * *step;
}

QString tickLabel(double value, double step)
{
    const int decimals = step >= 1 ? 0 : std::min(3, int(std::ceil(-std::log10(step) - 1e-9)));
    return QString::number(value, 'f', decimals);
}

void drawDiamond(QPainter &p, const QPointF &c, double r)
{
    const QPointF pts[4] = {{c.x(), c.y() - r}, {c.x() + r, c.y()}, {c.x(), c.y() + r}, {c.x() - r, c.y()}};
    p.drawPolygon(pts, 4);
}

} // namespace

QPointF FrontierFrame::toPixel(double cost, double memory) const
{
    const double x = plot.left() + (cost - cost0) / (cost1 - cost0) * plot.width();
    const double y = plot.bottom() - (memory - memory0) / (memory1 - memory0) * plot.height();
    return {x, y};
}

FrontierFrame frontierFrame(const FrontierPlotData &data, const QRectF &plot)
{
    FrontierFrame f;
    f.plot = plot;
    const bool aside
        = data.currentMayLeaveAxes && data.currentMarker >= 0 && data.currentMarker < int(data.markers.size());
    double maxCost = 0, maxMemory = 0;
    for (const auto *points : {&data.frontier, &data.markers})
        for (const FrontierPlotPoint &p : *points) {
            if (aside && &p == &data.markers[std::size_t(data.currentMarker)])
                continue;
            maxCost = std::max(maxCost, p.cost);
            maxMemory = std::max(maxMemory, p.memory);
        }
    if (aside) {
        // Within three times the others' axis the current point widens the axes; beyond, it is pinned.
        constexpr double kWithin = 3;
        const FrontierPlotPoint &c = data.markers[std::size_t(data.currentMarker)];
        double step = 1;
        if (c.cost <= kWithin * axisTop(maxCost, &step))
            maxCost = std::max(maxCost, c.cost);
        if (c.memory <= kWithin * axisTop(maxMemory, &step))
            maxMemory = std::max(maxMemory, c.memory);
    }
    f.cost1 = axisTop(maxCost, &f.costStep);
    f.memory1 = axisTop(maxMemory, &f.memoryStep);
    return f;
}

bool currentOffAxes(const FrontierPlotData &data, const FrontierFrame &frame)
{
    if (data.currentMarker < 0 || data.currentMarker >= int(data.markers.size()))
        return false;
    const FrontierPlotPoint &c = data.markers[std::size_t(data.currentMarker)];
    return c.cost > frame.cost1 || c.memory > frame.memory1;
}

std::vector<QPointF> frontierSteps(const FrontierPlotData &data, const FrontierFrame &frame)
{
    std::vector<QPointF> out;
    const auto &fr = data.frontier;
    for (std::size_t k = fr.size(); k-- > 0;) {
        out.push_back(frame.toPixel(fr[k].cost, fr[k].memory));
        if (k > 0)
            out.push_back(frame.toPixel(fr[k - 1].cost, fr[k].memory));
    }
    if (!fr.empty())
        out.push_back(frame.toPixel(frame.cost1, fr.front().memory));
    return out;
}

int nearestWithin(const std::vector<QPointF> &points, const QPointF &pos, double radius)
{
    int best = -1;
    double bestD = radius * radius;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const QPointF d = points[i] - pos;
        const double d2 = d.x() * d.x() + d.y() * d.y();
        if (d2 <= bestD) {
            bestD = d2;
            best = int(i);
        }
    }
    return best;
}

FrontierPlot::FrontierPlot(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QSize FrontierPlot::sizeHint() const
{
    return {900, 480};
}

QSize FrontierPlot::minimumSizeHint() const
{
    // Two plots side by side in the Planners view, beside the plan panel, fit a 1024 px wide screen at an
    // 11 pt font (issue 34, item 16: at 300 px each the window could not be narrower than 1041 to 1119 px).
    return {220, 200};
}

void FrontierPlot::setData(FrontierPlotData data)
{
    m_data = std::move(data);
    m_selected = -1;
    m_hoverMarker = -1;
    update();
}

void FrontierPlot::setSelectedFrontierPoint(int index)
{
    m_selected = index;
    update();
}

QRectF FrontierPlot::plotArea0() const
{
    const QFontMetricsF fm(font());
    const double line = fm.height();
    const double left = line * 1.6 + fm.horizontalAdvance(QStringLiteral("0000.0")) + kCurrentRadius + 6;
    const double bottom = line * 2.6;
    // Room on the right for a tag beside a marker at the axis' end.
    const double right
        = std::min(fm.horizontalAdvance(QStringLiteral("selective + offload")) * 0.6 + 12, width() * 0.1);
    return QRectF(left, 0, std::max(10.0, width() - left - right), std::max(10.0, height() - bottom));
}

QRectF FrontierPlot::plotArea() const
{
    QRectF a = plotArea0();
    a.setTop(legendBottom() + QFontMetricsF(font()).height() * 0.8);
    if (a.height() < 10)
        a.setHeight(10);
    return a;
}

namespace {
QString fittedTitle(const QFontMetricsF &fm, const QString &title, const QString &shortTitle, double room)
{
    if (fm.horizontalAdvance(title) <= room || shortTitle.isEmpty())
        return fm.elidedText(title, Qt::ElideRight, room);
    return fm.elidedText(shortTitle, Qt::ElideRight, room);
}
} // namespace

QString FrontierPlot::shownCostTitle() const
{
    return fittedTitle(QFontMetricsF(font()), m_data.costTitle, m_data.costShortTitle, plotArea().width());
}

QString FrontierPlot::shownMemoryTitle() const
{
    return fittedTitle(QFontMetricsF(font()), m_data.memoryTitle, m_data.memoryShortTitle, plotArea().height());
}

FrontierFrame FrontierPlot::frame() const
{
    return frontierFrame(m_data, plotArea());
}

QPointF FrontierPlot::frontierPosition(int index) const
{
    if (index < 0 || index >= int(m_data.frontier.size()))
        return {};
    const FrontierPlotPoint &p = m_data.frontier[std::size_t(index)];
    return frame().toPixel(p.cost, p.memory);
}

std::vector<QPointF> FrontierPlot::markerPixels(const FrontierFrame &f) const
{
    const std::size_t n = m_data.markers.size();
    std::vector<QPointF> out(n);
    std::vector<std::size_t> order;
    if (m_data.currentMarker >= 0 && std::size_t(m_data.currentMarker) < n)
        order.push_back(std::size_t(m_data.currentMarker)); // the ringed one stays on its point
    for (std::size_t i = 0; i < n; ++i)
        if (int(i) != m_data.currentMarker)
            order.push_back(i);
    std::vector<QPointF> placed;
    const double gap = 2 * kMarkerRadius + 3;
    for (std::size_t i : order) {
        QPointF c = f.toPixel(m_data.markers[i].cost, m_data.markers[i].memory);
        if (int(i) == m_data.currentMarker) // off the axes (currentMayLeaveAxes): at the plot's edge
            c = QPointF(std::min(c.x(), f.plot.right()), std::max(c.y(), f.plot.top()));
        const double clear = int(i) == m_data.currentMarker ? 0 : gap;
        auto hides = [&](const QPointF &q) {
            return std::any_of(placed.begin(), placed.end(), [&](const QPointF &o) {
                const double need
                    = &o == &placed.front() && m_data.currentMarker >= 0 ? kCurrentRadius + kMarkerRadius + 2 : clear;
                return std::abs(o.x() - q.x()) < need && std::abs(o.y() - q.y()) < need;
            });
        };
        for (int step = 0; step < 8 && hides(c); ++step)
            c.rx() += gap;
        placed.push_back(c);
        out[i] = c;
    }
    return out;
}

QPointF FrontierPlot::markerPosition(int index) const
{
    if (index < 0 || index >= int(m_data.markers.size()))
        return {};
    return markerPixels(frame())[std::size_t(index)];
}

double FrontierPlot::hitRadius() const
{
    return kMarkerRadius + 3;
}

int FrontierPlot::markerAt(const QPointF &pos) const
{
    return nearestWithin(markerPixels(frame()), pos, hitRadius());
}

int FrontierPlot::frontierPointAt(const QPointF &pos) const
{
    if (markerAt(pos) >= 0)
        return -1;
    const FrontierFrame f = frame();
    std::vector<QPointF> pts;
    for (const FrontierPlotPoint &p : m_data.frontier)
        pts.push_back(f.toPixel(p.cost, p.memory));
    return nearestWithin(pts, pos, hitRadius());
}

QString FrontierPlot::toolTipAt(const QPointF &pos) const
{
    const int m = markerAt(pos);
    if (m >= 0)
        return m_data.markers[std::size_t(m)].toolTip;
    const int k = frontierPointAt(pos);
    if (k >= 0)
        return m_data.frontier[std::size_t(k)].toolTip;
    return {};
}

bool FrontierPlot::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString tip = toolTipAt(help->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), tip, this);
        return true;
    }
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        update();
    return QWidget::event(event);
}

void FrontierPlot::mouseMoveEvent(QMouseEvent *event)
{
    const int m = markerAt(event->position());
    const bool overPoint = m >= 0 || frontierPointAt(event->position()) >= 0;
    setCursor(overPoint ? Qt::PointingHandCursor : Qt::ArrowCursor);
    if (m != m_hoverMarker) {
        m_hoverMarker = m;
        update();
    }
}

void FrontierPlot::mousePressEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton)
        return;
    const int m = markerAt(event->position());
    if (m >= 0) {
        Q_EMIT markerClicked(m);
        return;
    }
    const int k = frontierPointAt(event->position());
    if (k >= 0)
        Q_EMIT frontierPointClicked(k);
}

void FrontierPlot::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    p.setRenderHint(QPainter::Antialiasing);
    const QColor muted = palette().color(QPalette::PlaceholderText);
    if (m_data.frontier.empty() && m_data.markers.empty()) {
        p.setPen(muted);
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_data.emptyText);
        return;
    }
    const FrontierFrame f = frame();
    paintAxes(p, f);
    paintFrontier(p, f);
    paintMarkers(p, f);
    paintLegend(p);
}

void FrontierPlot::paintAxes(QPainter &p, const FrontierFrame &f) const
{
    const QColor text = palette().color(QPalette::Text);
    const QColor muted = palette().color(QPalette::PlaceholderText);
    const QFontMetricsF fm(font());
    const QRectF &a = f.plot;
    // Grid, ticks and axis titles.
    QColor grid = text;
    grid.setAlpha(38);
    p.setFont(font());
    for (double v = 0; v <= f.cost1 + f.costStep * 1e-6; v += f.costStep) {
        const double x = f.toPixel(v, 0).x();
        p.setPen(QPen(grid, 1));
        p.drawLine(QPointF(x, a.top()), QPointF(x, a.bottom()));
        p.setPen(text);
        p.drawText(QRectF(x - 50, a.bottom() + 3, 100, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                   tickLabel(v, f.costStep));
    }
    for (double v = 0; v <= f.memory1 + f.memoryStep * 1e-6; v += f.memoryStep) {
        const double y = f.toPixel(0, v).y();
        p.setPen(QPen(grid, 1));
        p.drawLine(QPointF(a.left(), y), QPointF(a.right(), y));
        p.setPen(text);
        // Clear of the current plan's ring when it sits on the axis.
        p.drawText(QRectF(0, y - fm.height() / 2, a.left() - kCurrentRadius - 3, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, tickLabel(v, f.memoryStep));
    }
    p.setPen(QPen(muted, 1));
    p.drawLine(a.bottomLeft(), a.bottomRight());
    p.drawLine(a.bottomLeft(), a.topLeft());
    p.setPen(text);
    p.drawText(QRectF(a.left(), a.bottom() + fm.height() * 1.3, a.width(), fm.height() * 1.2),
               Qt::AlignHCenter | Qt::AlignTop, shownCostTitle());
    p.save();
    p.translate(fm.height() * 0.2, a.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-a.height() / 2, 0, a.height(), fm.height() * 1.2), Qt::AlignHCenter | Qt::AlignTop,
               shownMemoryTitle());
    p.restore();
}

void FrontierPlot::paintFrontier(QPainter &p, const FrontierFrame &f) const
{
    // The exact frontier: its step line, then its points.
    const QColor front = frontierColor(palette());
    if (!m_data.frontier.empty()) {
        const std::vector<QPointF> steps = frontierSteps(m_data, f);
        p.setPen(QPen(front, 2));
        p.setBrush(Qt::NoBrush);
        p.drawPolyline(steps.data(), int(steps.size()));
        p.setPen(QPen(palette().color(QPalette::Base), 1));
        p.setBrush(front);
        for (const FrontierPlotPoint &pt : m_data.frontier)
            p.drawEllipse(f.toPixel(pt.cost, pt.memory), kPointRadius, kPointRadius);
    }
    if (m_selected >= 0 && m_selected < int(m_data.frontier.size())) {
        p.setPen(QPen(front, 2));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(frontierPosition(m_selected), kMarkerRadius + 2, kMarkerRadius + 2);
    }
}

void FrontierPlot::paintMarkers(QPainter &p, const FrontierFrame &f) const
{
    const QColor text = palette().color(QPalette::Text);
    const QColor muted = palette().color(QPalette::PlaceholderText);
    const QRectF &a = f.plot;
    // The settings, then their tags where they fit, the current one's first.
    std::vector<QRectF> taken;
    const std::vector<QPointF> pixels = markerPixels(f);
    for (std::size_t i = 0; i < m_data.markers.size(); ++i) {
        const FrontierPlotPoint &m = m_data.markers[i];
        const QPointF truth = f.toPixel(m.cost, m.memory), c = pixels[i];
        if (c != truth && !(int(i) == m_data.currentMarker && currentOffAxes(m_data, f))) {
            p.setPen(QPen(text, 1));
            p.drawLine(truth, c);
            p.setBrush(text);
            p.drawEllipse(truth, 1.5, 1.5);
        }
        p.setPen(QPen(m.beaten ? beatenColor(palette()) : text, int(i) == m_hoverMarker ? 2.5 : (m.beaten ? 1.5 : 1)));
        p.setBrush(m.beaten ? palette().color(QPalette::Base) : kSettingColor);
        drawDiamond(p, c, kMarkerRadius);
        taken.push_back(QRectF(c.x() - kMarkerRadius, c.y() - kMarkerRadius, 2 * kMarkerRadius, 2 * kMarkerRadius));
    }
    auto place = [&](const QPointF &c, const QString &tag, double offset, bool bold) {
        QFont font = p.font();
        font.setBold(bold);
        const QFontMetricsF tfm(font);
        const double w = tfm.horizontalAdvance(tag) + 2, h = tfm.height();
        // Right, above-right, below-right, left, above-left, below-left.
        const QRectF candidates[] = {{c.x() + offset, c.y() - h / 2, w, h},
                                     {c.x() + offset * 0.6, c.y() - offset * 0.6 - h, w, h},
                                     {c.x() + offset * 0.6, c.y() + offset * 0.6, w, h},
                                     {c.x() - offset - w, c.y() - h / 2, w, h},
                                     {c.x() - offset * 0.6 - w, c.y() - offset * 0.6 - h, w, h},
                                     {c.x() - offset * 0.6 - w, c.y() + offset * 0.6, w, h}};
        for (const QRectF &r : candidates) {
            if (r.left() < a.left() + 2 || r.right() > width() - 2 || r.top() < a.top() - h || r.bottom() > a.bottom())
                continue;
            if (std::any_of(taken.begin(), taken.end(), [&](const QRectF &t) { return t.intersects(r); }))
                continue;
            taken.push_back(r);
            QColor halo = palette().color(QPalette::Base);
            halo.setAlpha(210);
            p.fillRect(r, halo);
            p.setFont(font);
            p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, tag);
            p.setFont(this->font());
            return;
        }
    };
    const int cur = m_data.currentMarker;
    if (cur >= 0 && cur < int(m_data.markers.size())) {
        const FrontierPlotPoint &m = m_data.markers[std::size_t(cur)];
        const QPointF c = pixels[std::size_t(cur)];
        p.setPen(QPen(text, 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(c, kCurrentRadius, kCurrentRadius);
        // Its own diamond is inside the ring, which the label's offset clears.
        std::erase_if(taken, [&](const QRectF &r) { return r.contains(c); });
        p.setPen(text);
        QString label = m.tag.isEmpty() ? tr("current") : tr("current: %1").arg(m.tag);
        if (currentOffAxes(m_data, f)) // pinned to the edge: the arrow points to where it lies
            label += m.cost > f.cost1 ? tr(", off the scale →") : tr(", off the scale ↑");
        place(c, label, kCurrentRadius + 3, true);
        taken.push_back(QRectF(c.x() - kCurrentRadius, c.y() - kCurrentRadius, 2 * kCurrentRadius, 2 * kCurrentRadius));
    }
    for (std::size_t i = 0; i < m_data.markers.size(); ++i)
        if (int(i) != cur && !m_data.markers[i].tag.isEmpty()) {
            p.setPen(m_data.markers[i].beaten ? muted : text);
            place(pixels[i], m_data.markers[i].tag, kMarkerRadius + 3, false);
        }
}

std::vector<FrontierPlot::LegendItem> FrontierPlot::legendItems() const
{
    const QFontMetricsF fm(font());
    const double left = plotArea0().left(), right = width() - 8.0;
    std::vector<LegendItem> items;
    if (!m_data.frontier.empty())
        items.push_back(
            {LegendItem::Frontier,
             m_data.frontierLegend.isEmpty() ? tr("exact frontier (hover for the plan)") : m_data.frontierLegend,
             28,
             {}});
    items.push_back({LegendItem::Setting,
                     m_data.markerLegend.isEmpty() ? tr("a preset setting (click to apply)") : m_data.markerLegend,
                     2 * kMarkerRadius + 6,
                     {}});
    if (std::any_of(m_data.markers.begin(), m_data.markers.end(), [](const FrontierPlotPoint &m) { return m.beaten; }))
        items.push_back({LegendItem::Beaten, tr("beaten by another setting"), 2 * kMarkerRadius + 6, {}});
    if (m_data.currentMarker >= 0)
        items.push_back({LegendItem::Current, tr("the current plan"), 22, {}});
    // Flowed left to right from the plot's left edge, wrapping before the widget's right edge.
    double x = left, y = fm.height() * 0.9;
    for (LegendItem &item : items) {
        const double w = item.symbolWidth + fm.horizontalAdvance(item.text);
        if (x > left && x + w > right) {
            x = left;
            y += fm.height() * 1.3;
        }
        item.at = QPointF(x, y);
        x += w + 22;
    }
    return items;
}

double FrontierPlot::legendBottom() const
{
    const std::vector<LegendItem> items = legendItems();
    const QFontMetricsF fm(font());
    return items.empty() ? 0 : items.back().at.y() + fm.height() * 0.6;
}

void FrontierPlot::paintLegend(QPainter &p) const
{
    const QFontMetricsF fm(font());
    const QColor text = palette().color(QPalette::Text);
    p.setFont(font());
    for (const LegendItem &item : legendItems()) {
        const double x = item.at.x(), y = item.at.y();
        switch (item.kind) {
        case LegendItem::Frontier:
            p.setPen(QPen(frontierColor(palette()), 2));
            p.drawLine(QPointF(x, y), QPointF(x + 22, y));
            p.setPen(QPen(palette().color(QPalette::Base), 1));
            p.setBrush(frontierColor(palette()));
            p.drawEllipse(QPointF(x + 11, y), kPointRadius, kPointRadius);
            break;
        case LegendItem::Setting:
            p.setPen(QPen(text, 1));
            p.setBrush(kSettingColor);
            drawDiamond(p, QPointF(x + kMarkerRadius, y), kMarkerRadius);
            break;
        case LegendItem::Beaten:
            p.setPen(QPen(beatenColor(palette()), 1.5));
            p.setBrush(palette().color(QPalette::Base));
            drawDiamond(p, QPointF(x + kMarkerRadius, y), kMarkerRadius);
            break;
        case LegendItem::Current:
            p.setPen(QPen(text, 2.5));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(QPointF(x + 8, y), 8, 8);
            break;
        }
        p.setPen(text);
        p.drawText(QPointF(x + item.symbolWidth, y + fm.ascent() / 2 - 1), item.text);
    }
}

} // namespace memledger::ui
