// SPDX-License-Identifier: MIT
#include "ui/lifetimeview.h"

#include <QEvent>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QPalette>
#include <QPen>
#include <QStringList>
#include <QToolTip>
#include <QWheelEvent>

#include "core/base/units.h"
#include "ui/categorycolors.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace memledger::ui {

namespace {

// The padding of the peak label's framed box on each side of its text, in pixels.
constexpr double kPeakBoxPad = 3.0;
// The smallest pixel size a persistent row's label is drawn at; a thinner row goes unlabelled (its tooltip names it).
constexpr int kSmallestLabelPixels = 9;

constexpr double kWheelZoomPerNotch = 1.25;
constexpr int kPhaseKinds = 4;

QRectF toQRect(const GanttRect &r)
{
    return {r.x, r.y, r.w, r.h};
}

// The phases are shaded in a neutral tint over the view's background, so the
// category colors of the bars stay the only strong colors.
QColor phaseColor(PhaseKind kind, const QPalette &palette)
{
    // A deferred W makes the weight gradients: the gradients' tint tells it from F and B.
    QColor c = kind == PhaseKind::Optimizer ? categoryColor(Category::OptimizerStates)
               : kind == PhaseKind::Weight  ? categoryColor(Category::Gradients)
                                            : palette.color(QPalette::Text);
    switch (kind) {
    case PhaseKind::Forward:
        c.setAlpha(18);
        break;
    case PhaseKind::Backward:
        c.setAlpha(40);
        break;
    case PhaseKind::Optimizer:
        c.setAlpha(60);
        break;
    case PhaseKind::Weight:
        c.setAlpha(50);
        break;
    }
    return c;
}

QColor curveColor(const QPalette &palette)
{
    return palette.color(QPalette::Text);
}

// The warning colors, lifted on a dark background so their labels keep their contrast.
QColor onBackground(const QColor &color, const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128 ? color.lighter(160) : color;
}

// The reserved memory's line: a teal apart from the curve's text colour, the
// capacity's red and a measured run's violet.
QColor reservedColor(const QPalette &palette)
{
    return onBackground(QColor(0x00, 0x80, 0x80), palette);
}

// The hatch over the part of an activation bar stored in FP8: the text
// color, so it reads on the bar's fill in light and dark palettes.
QColor fp8HatchColor(const QPalette &palette)
{
    QColor c = palette.color(QPalette::Text);
    c.setAlpha(150);
    return c;
}

// The legend's lines, in font heights apart.
constexpr double kLegendLineSpacing = 1.25;

// The legend's title in lines no wider than `width`: whole if it fits, else
// broken before its parenthesis (the caption's comparison), else between
// words, a unit kept with its number ("15.33 s", "4.9 %"). Never elided: the
// title names the rank and what the timeline is.
QStringList wrapTitle(const QString &title, const QFontMetricsF &fm, double width)
{
    if (fm.horizontalAdvance(title) <= width)
        return {title};
    const qsizetype paren = title.indexOf(QStringLiteral(" ("));
    if (paren > 0 && fm.horizontalAdvance(title.left(paren)) <= width
        && fm.horizontalAdvance(title.mid(paren + 1)) <= width)
        return {title.left(paren), title.mid(paren + 1)};
    static const QStringList units
        = {QStringLiteral("s"),  QStringLiteral("s:"), QStringLiteral("s,"), QStringLiteral("s)"),
           QStringLiteral("ms"), QStringLiteral("%"),  QStringLiteral("GB")};
    QStringList words;
    for (const QString &w : title.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (!words.isEmpty() && units.contains(w))
            words.back() += QLatin1Char(' ') + w;
        else
            words << w;
    }
    QStringList lines;
    for (const QString &w : words) {
        if (!lines.isEmpty() && fm.horizontalAdvance(lines.back() + QLatin1Char(' ') + w) <= width)
            lines.back() += QLatin1Char(' ') + w;
        else
            lines << w;
    }
    return lines;
}

} // namespace

LifetimeView::LifetimeView(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::WheelFocus);
}

QSize LifetimeView::sizeHint() const
{
    return {1000, 560};
}

QSize LifetimeView::minimumSizeHint() const
{
    return {320, 240};
}

const RankTimeline *LifetimeView::currentRank() const
{
    if (m_rank < 0 || std::size_t(m_rank) >= m_timeline.ranks.size())
        return nullptr;
    return &m_timeline.ranks[std::size_t(m_rank)];
}

void LifetimeView::setTimeline(const Timeline &timeline)
{
    const bool sameShape = currentRank() && m_rank < int(timeline.ranks.size());
    const TimeAxis previous = m_axis;
    m_timeline = timeline;
    m_hovered = -1;
    m_rank = std::clamp(m_rank, 0, std::max(0, int(m_timeline.ranks.size()) - 1));
    rebuildRows();
    rebuildOverlayCurves();
    // A live edit keeps the user's zoom where it still lies inside the new iteration.
    if (sameShape && previous.isZoomed() && previous.t1 <= m_axis.end) {
        m_axis.t0 = previous.t0;
        m_axis.t1 = previous.t1;
    }
    invalidate();
}

void LifetimeView::setMeasuredOverlay(const MeasuredOverlay &overlay)
{
    m_overlay = overlay;
    rebuildOverlayCurves();
    invalidate();
}

void LifetimeView::clearMeasuredOverlay()
{
    if (!m_overlay)
        return;
    m_overlay.reset();
    rebuildOverlayCurves();
    invalidate();
}

bool LifetimeView::overlayShown() const
{
    const RankTimeline *rank = currentRank();
    return m_overlay && !m_overlayHidden && rank && rank->pipeline_rank == m_overlay->pipelineRank;
}

void LifetimeView::setOverlayHidden(bool hidden)
{
    if (hidden == m_overlayHidden)
        return;
    m_overlayHidden = hidden;
    rebuildOverlayCurves();
    invalidate();
}

void LifetimeView::setCaption(const QString &caption, const QString &toolTip)
{
    m_captionToolTip = toolTip;
    if (caption == m_caption)
        return;
    m_caption = caption;
    invalidate();
}

void LifetimeView::setTimeSpan(double seconds)
{
    seconds = std::max(0.0, seconds);
    if (seconds == m_timeSpan)
        return;
    m_timeSpan = seconds;
    rebuildRows();
    invalidate();
    Q_EMIT visibleWindowChanged(m_axis.t0, m_axis.t1);
}

void LifetimeView::setReserved(const PlanReserved *reserved)
{
    if (!reserved && !m_reserved)
        return;
    m_reserved = reserved ? std::optional<PlanReserved>(*reserved) : std::nullopt;
    rebuildOverlayCurves();
    invalidate();
}

bool LifetimeView::reservedShown() const
{
    return !m_reservedCurve.empty();
}

QPolygonF LifetimeView::reservedLine() const
{
    ensureLayout();
    return m_reservedLine;
}

void LifetimeView::rebuildOverlayCurves()
{
    m_overlayMeasured.clear();
    m_overlayModelled.clear();
    m_reservedCurve.clear();
    const RankTimeline *rank = currentRank();
    // Reserved memory is a training iteration's: hidden with a served forward, as the measured run is.
    if (m_reserved && !m_overlayHidden && rank && m_timeline.kind == TimelineKind::Iteration
        && std::size_t(rank->pipeline_rank) < m_reserved->ranks.size())
        m_reservedCurve = deviceReservedCurve(m_reserved->ranks[std::size_t(rank->pipeline_rank)]);
    if (!m_overlay || m_overlayHidden || !rank)
        return;
    // Core normalised both curves by the simulated iteration's step time.
    const double seconds = m_timeline.step_time > 0 ? m_timeline.step_time : iterationEnd(m_timeline, *rank);
    m_overlayMeasured = onIterationClock(m_overlay->measured, seconds);
    m_overlayModelled = onIterationClock(m_overlay->modelled, seconds);
}

QPolygonF LifetimeView::measuredLine() const
{
    ensureLayout();
    return m_measuredLine;
}

QPolygonF LifetimeView::modelledLine() const
{
    ensureLayout();
    return m_modelledLine;
}

void LifetimeView::setRank(int rank)
{
    rank = std::clamp(rank, 0, std::max(0, int(m_timeline.ranks.size()) - 1));
    if (rank == m_rank && !m_rows.rowOf.empty())
        return;
    const TimeAxis previous = m_axis;
    m_rank = rank;
    m_hovered = -1;
    rebuildRows();
    rebuildOverlayCurves();
    // Another rank of the same iteration keeps the window the user zoomed to, where it lies inside this rank's.
    if (previous.isZoomed() && previous.t1 <= m_axis.end) {
        m_axis.t0 = previous.t0;
        m_axis.t1 = previous.t1;
    }
    invalidate();
    Q_EMIT visibleWindowChanged(m_axis.t0, m_axis.t1);
}

void LifetimeView::setMode(Mode mode)
{
    if (mode == m_mode)
        return;
    m_mode = mode;
    m_hovered = -1;
    invalidate();
}

void LifetimeView::setFitBytes(bool fit)
{
    if (fit == m_fitBytes)
        return;
    m_fitBytes = fit;
    invalidate();
}

void LifetimeView::setRowMode(RowMode mode)
{
    if (mode == m_rowMode)
        return;
    m_rowMode = mode;
    rebuildRows();
    invalidate();
}

void LifetimeView::rebuildRows()
{
    const RankTimeline *rank = currentRank();
    if (!rank) {
        m_rows = {};
        m_bands.clear();
        m_phases.clear();
        m_axis = TimeAxis::over(0, 1, m_axis.x0, m_axis.x1);
        return;
    }
    m_rows = ganttRows(m_timeline, *rank, m_rowMode);
    m_bands = stackBands(*rank);
    m_phases = phasesOf(*rank);
    m_axis = TimeAxis::over(0, std::max(iterationEnd(m_timeline, *rank), m_timeSpan), m_axis.x0, m_axis.x1);
}

void LifetimeView::zoomAround(double time, double factor)
{
    ensureLayout();
    const double t0 = m_axis.t0, t1 = m_axis.t1;
    m_axis.zoomAround(time, factor);
    if (m_axis.t0 != t0 || m_axis.t1 != t1) {
        invalidate();
        Q_EMIT visibleWindowChanged(m_axis.t0, m_axis.t1);
    }
}

void LifetimeView::resetZoom()
{
    m_axis.reset();
    invalidate();
    Q_EMIT visibleWindowChanged(m_axis.t0, m_axis.t1);
}

void LifetimeView::invalidate()
{
    m_valid = false;
    update();
}

QColor LifetimeView::barColor(const Lifetime &l) const
{
    if (l.offloaded) // the second stay, after the copy back from the host
        return categoryColor(l.category, Placement::Host);
    if (l.kind == LifetimeKind::KvCache) // serving's own row, in its own color
        return kvCacheColor(palette().color(QPalette::Base).lightness() < 128);
    if (isTransient(l.kind))
        return categoryColor(l.category).darker(135);
    return categoryColor(l.category);
}

void LifetimeView::ensureLayout() const
{
    if (m_valid)
        return;
    m_valid = true;
    const QFontMetricsF fm(font());
    QFont bold = font();
    bold.setBold(true);
    const QFontMetricsF boldFm(bold);
    double gutter
        = std::max(fm.horizontalAdvance(QStringLiteral("888 GB")), fm.horizontalAdvance(QStringLiteral("mb 188 c8")));
    for (const RowSection s : {RowSection::Persistent, RowSection::Activations, RowSection::Transients})
        gutter = std::max(gutter, boldFm.horizontalAdvance(toQString(rowSectionLabel(s))));
    gutter += fm.height() * 0.8;
    const bool bands = m_mode == Mode::Bands;
    m_frame = bands ? bandsFrame(width(), height(), fm.height(), gutter)
                    : ganttFrame(width(), height(), fm.height(), gutter);
    m_frame.fitBytes = m_fitBytes && !bands; // bands stack from zero
    // A narrow view wraps the legend: the curve starts under its last line,
    // and the curve and the rows share what is left (the legend's entries
    // depend on the gutter only, which stays).
    if (layoutLegend() > 1) {
        const double below = m_legendBottom + fm.height() * 0.55;
        if (below > m_frame.curveArea.y) {
            m_frame = bands ? bandsFrame(width(), height(), fm.height(), gutter, below)
                            : ganttFrame(width(), height(), fm.height(), gutter, below);
            m_frame.fitBytes = m_fitBytes && !bands;
        }
    }
    auto &axis = const_cast<TimeAxis &>(m_axis);
    axis.setPixels(m_frame.rowsArea.x, m_frame.rowsArea.right());

    m_bars.clear();
    m_fp8Rects.clear();
    m_curve.clear();
    m_curveFill.clear();
    m_bandRects.clear();
    const RankTimeline *rank = currentRank();
    if (!rank) {
        m_geometry = {};
        return;
    }
    m_geometry = layoutGantt(m_timeline, *rank, bands ? GanttRows{} : m_rows, m_phases, m_axis, m_frame);
    m_values = bytesAxis(viewBytesTicks(m_timeline, *rank, m_axis, m_frame), m_frame.curveArea);
    m_measuredLine.clear();
    m_modelledLine.clear();
    m_reservedLine.clear();
    if (overlayShown() || reservedShown()) {
        // The bytes axis grows to hold the measured run and the reserved memory too, before anything is placed on it.
        std::vector<std::vector<CurvePoint>> extra{m_reservedCurve};
        if (overlayShown()) {
            extra.push_back(m_overlayMeasured);
            extra.push_back(m_overlayModelled);
        }
        m_values = rescaleBytes(m_geometry, m_values, bytesTicksWithOverlay(m_timeline, *rank, extra, m_axis, m_frame),
                                m_frame.curveArea);
        m_reservedLine = stepLine(m_reservedCurve, m_axis, m_values);
        if (overlayShown()) {
            m_measuredLine = stepLine(m_overlayMeasured, m_axis, m_values);
            m_modelledLine = stepLine(m_overlayModelled, m_axis, m_values);
        }
    }
    if (bands)
        layoutBandRects(*rank);
    layoutBarRects(*rank);
    layoutPhaseStrips();
    m_curve.reserve(qsizetype(m_geometry.curve.size()));
    for (const GanttPoint &pt : m_geometry.curve)
        m_curve.append({pt.x, pt.y});
    for (const GanttPoint &pt : m_geometry.curveFill)
        m_curveFill.append({pt.x, pt.y});
}

void LifetimeView::layoutBandRects(const RankTimeline &rank) const
{
    // One batch of rects per color: a handful of drawRects for thousands of bands.
    const auto rects = bandRects(rank, m_bands, m_axis, m_values);
    for (std::size_t i = 0; i < rects.size(); ++i) {
        if (rects[i].empty())
            continue;
        const QColor c = barColor(rank.lifetimes[i]);
        auto it
            = std::find_if(m_bandRects.begin(), m_bandRects.end(), [&](const ColoredRects &b) { return b.color == c; });
        if (it == m_bandRects.end()) {
            m_bandRects.push_back({c, {}});
            it = std::prev(m_bandRects.end());
        }
        for (const GanttRect &r : rects[i])
            it->rects.append(toQRect(r));
    }
}

void LifetimeView::layoutBarRects(const RankTimeline &rank) const
{
    // One batch of rects per color: a few drawRects calls for thousands of bars. A served
    // layer's KV cache shares its row with the layer's working sets: drawn first, under them.
    for (const Lifetime &l : rank.lifetimes)
        if (l.kind == LifetimeKind::KvCache) {
            m_bars.push_back({barColor(l), {}});
            break;
        }
    for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
        const GanttRect &r = m_geometry.bars[i];
        if (r.isEmpty())
            continue;
        const QColor c = barColor(rank.lifetimes[i]);
        auto it = std::find_if(m_bars.begin(), m_bars.end(), [&](const ColoredRects &b) { return b.color == c; });
        if (it == m_bars.end()) {
            m_bars.push_back({c, {}});
            it = std::prev(m_bars.end());
        }
        it->rects.append(toQRect(r));
        // The part stored in FP8, hatched at the bottom of the bar.
        if (const double share = fp8Share(rank.lifetimes[i]); share > 0) {
            const QRectF bar = toQRect(r);
            const double h = bar.height() * share;
            m_fp8Rects.append(QRectF(bar.left(), bar.bottom() - h, bar.width(), h));
        }
    }
}

void LifetimeView::layoutPhaseStrips() const
{
    // The phases as two one-pixel-high strips, stretched over the rows (full strength)
    // and over the curve (half strength, so that its fill stays legible): two blits
    // instead of a thousand translucent fills.
    const int stripWidth = std::max(1, int(std::ceil(m_frame.rowsArea.w)));
    for (int half = 0; half < 2; ++half) {
        QImage &strip = half ? m_phaseStripCurve : m_phaseStrip;
        strip = QImage(stripWidth, 1, QImage::Format_ARGB32_Premultiplied);
        strip.fill(Qt::transparent);
        QPainter sp(&strip);
        sp.setPen(Qt::NoPen);
        sp.translate(-m_frame.rowsArea.x, 0);
        for (std::size_t i = 0; i < m_phases.size(); ++i) {
            const GanttRect &r = m_geometry.phases[i];
            if (r.isEmpty())
                continue;
            QColor c = phaseColor(m_phases[i].kind, palette());
            if (half)
                c.setAlpha(c.alpha() / 2);
            sp.fillRect(QRectF(r.x, 0, r.w, 1), c);
        }
    }
}

QRectF LifetimeView::barRect(int index) const
{
    ensureLayout();
    if (index < 0 || std::size_t(index) >= m_geometry.bars.size())
        return {};
    return toQRect(m_geometry.bars[std::size_t(index)]);
}

QRectF LifetimeView::curveArea() const
{
    ensureLayout();
    return toQRect(m_frame.curveArea);
}

QRectF LifetimeView::rowsArea() const
{
    ensureLayout();
    return toQRect(m_frame.rowsArea);
}

QVector<QRectF> LifetimeView::fp8Rects() const
{
    ensureLayout();
    return m_fp8Rects;
}

QString LifetimeView::toolTipAt(const QPointF &pos) const
{
    ensureLayout();
    const RankTimeline *rank = currentRank();
    if (!rank)
        return {};
    const int hit = m_mode == Mode::Bands
                        ? (m_frame.curveArea.contains(pos.x(), pos.y())
                               ? bandAt(*rank, m_bands, m_axis.toTime(pos.x()), m_values.toValue(pos.y()))
                               : -1)
                        : itemAt(m_geometry.bars, pos.x(), pos.y());
    if (hit >= 0) {
        const Lifetime &l = rank->lifetimes[std::size_t(hit)];
        const std::string fp8 = fp8Text(l);
        return toQString(lifetimeLabel(m_timeline, *rank, l)) + QLatin1Char('\n') + bytesText(l.bytes)
               + (fp8.empty() ? QString() : QStringLiteral(" (") + toQString(fp8) + QLatin1Char(')'))
               + QLatin1Char('\n') + toQString(formatMilliseconds(l.start)) + QStringLiteral(" – ")
               + toQString(formatMilliseconds(l.end)) + QStringLiteral(" (")
               + toQString(formatMilliseconds(l.end - l.start)) + QLatin1Char(')');
    }
    if (!m_captionToolTip.isEmpty() && !m_legend.empty() && m_legend.front().rect.contains(pos))
        return m_captionToolTip;
    if (m_mode == Mode::Gantt && pos.y() >= m_frame.curveArea.bottom() && pos.y() < m_frame.rowsArea.y) {
        const int phase = itemAt(m_geometry.phases, pos.x(), pos.y());
        if (phase >= 0) {
            const Phase &ph = m_phases[std::size_t(phase)];
            const QString text = toQString(phaseTitle(m_timeline, ph));
            return text + QLatin1Char('\n') + toQString(formatMilliseconds(ph.start)) + QStringLiteral(" – ")
                   + toQString(formatMilliseconds(ph.end));
        }
    }
    if (m_frame.curveArea.contains(pos.x(), pos.y())) {
        const double t = m_axis.toTime(pos.x());
        QString text = bytesText(curveBytesAt(rank->curve, t)) + QStringLiteral(" in use at ")
                       + toQString(formatMilliseconds(t));
        if (reservedShown())
            text += QLatin1Char('\n')
                    + tr("%1 reserved by PyTorch's allocator with the runtime reserve")
                          .arg(bytesText(curveBytesAt(m_reservedCurve, t)));
        if (overlayShown() && !m_overlayMeasured.empty() && t <= m_overlayMeasured.back().time)
            text += QLatin1Char('\n')
                    + tr("%1: %2; modelled without the runtime reserve: %3")
                          .arg(m_overlay->label, bytesText(curveBytesAt(m_overlayMeasured, t)),
                               bytesText(curveBytesAt(m_overlayModelled, t)));
        return text;
    }
    return {};
}

bool LifetimeView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void LifetimeView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    m_valid = false;
}

void LifetimeView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange)
        invalidate();
}

void LifetimeView::wheelEvent(QWheelEvent *event)
{
    const double notches = event->angleDelta().y() / 120.0;
    if (notches == 0) {
        event->ignore();
        return;
    }
    ensureLayout();
    zoomAround(m_axis.toTime(event->position().x()), std::pow(kWheelZoomPerNotch, notches));
    event->accept();
}

void LifetimeView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = true;
        m_dragX = event->position().x();
        setCursor(Qt::ClosedHandCursor);
    }
    QWidget::mousePressEvent(event);
}

void LifetimeView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragging && (event->buttons() & Qt::LeftButton)) {
        ensureLayout();
        const double x = event->position().x();
        const double t0 = m_axis.t0;
        m_axis.pan(x - m_dragX);
        m_dragX = x;
        if (m_axis.t0 != t0) {
            invalidate();
            Q_EMIT visibleWindowChanged(m_axis.t0, m_axis.t1);
        }
    } else if (m_mode == Mode::Gantt) {
        // The bar under the mouse is outlined, so its tooltip is tied to what it names.
        ensureLayout();
        const int hovered = itemAt(m_geometry.bars, event->position().x(), event->position().y());
        if (hovered != m_hovered) {
            m_hovered = hovered;
            update(); // the bars stay cached; only the outline is new
        }
    }
    QWidget::mouseMoveEvent(event);
}

void LifetimeView::leaveEvent(QEvent *event)
{
    if (m_hovered >= 0) {
        m_hovered = -1;
        update();
    }
    QWidget::leaveEvent(event);
}

void LifetimeView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && m_dragging) {
        m_dragging = false;
        unsetCursor();
    }
    QWidget::mouseReleaseEvent(event);
}

void LifetimeView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton)
        resetZoom();
    QWidget::mouseDoubleClickEvent(event);
}

void LifetimeView::keyPressEvent(QKeyEvent *event)
{
    constexpr double kKeyZoom = 1.5;
    constexpr double kKeyPanShare = 0.2; // of the plot width
    ensureLayout();
    const double middle = m_axis.centre();
    const double t0 = m_axis.t0, t1 = m_axis.t1;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        m_axis.zoomAround(middle, kKeyZoom);
        break;
    case Qt::Key_Minus:
        m_axis.zoomAround(middle, 1 / kKeyZoom);
        break;
    case Qt::Key_Left:
        m_axis.pan(kKeyPanShare * (m_axis.x1 - m_axis.x0));
        break;
    case Qt::Key_Right:
        m_axis.pan(-kKeyPanShare * (m_axis.x1 - m_axis.x0));
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        m_axis.reset();
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
    if (m_axis.t0 != t0 || m_axis.t1 != t1) {
        invalidate();
        Q_EMIT visibleWindowChanged(m_axis.t0, m_axis.t1);
    }
}

// ---- painting ----------------------------------------------------------------

void LifetimeView::paintEvent(QPaintEvent *)
{
    ensureLayout();
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    const RankTimeline *rank = currentRank();
    if (!rank) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No timeline yet"));
        return;
    }
    // Phases behind everything, over both areas.
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::NoPen);
    const GanttRect &ca = m_frame.curveArea;
    const GanttRect &ra = m_frame.rowsArea;
    p.drawImage(QRectF(ra.x, ca.bottom(), m_phaseStrip.width(), ra.bottom() - ca.bottom()), m_phaseStrip);
    p.drawImage(QRectF(ca.x, ca.y, m_phaseStripCurve.width(), ca.h), m_phaseStripCurve);
    paintAxis(p);
    if (m_mode == Mode::Bands) {
        p.setPen(Qt::NoPen);
        for (const ColoredRects &b : m_bandRects) {
            p.setBrush(b.color);
            p.drawRects(b.rects);
        }
    }
    paintCurve(p);
    paintOverlay(p);
    if (m_mode == Mode::Gantt)
        paintRows(p);
    paintLegend(p);
}

void LifetimeView::paintOverlay(QPainter &p) const
{
    if (!m_overlay || m_overlayHidden)
        return;
    const QFontMetricsF fm(font());
    const GanttRect &ca = m_frame.curveArea;
    const QColor measured = measuredColor(palette());
    const QColor text = palette().color(QPalette::Text);
    const QPen modelledPen(text, 1.5, Qt::DashLine);
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setClipRect(QRectF(ca.x, ca.y, ca.w + 1, ca.h + 1));
    if (overlayShown()) {
        p.setBrush(Qt::NoBrush);
        p.setPen(modelledPen);
        p.drawPolyline(m_modelledLine);
        // A halo in the background color keeps the measured line readable over bands and the model's line.
        p.setPen(QPen(palette().color(QPalette::Base), 4.5, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin));
        p.drawPolyline(m_measuredLine);
        p.setPen(QPen(measured, 2.0, Qt::SolidLine, Qt::FlatCap, Qt::MiterJoin));
        p.drawPolyline(m_measuredLine);
    }

    // The overlay's own legend, in the plot's top-left corner: the line above names only the model's colors.
    QStringList labels;
    if (overlayShown())
        labels << m_overlay->label << tr("modelled, no runtime reserve");
    else
        labels << tr("%1 is held against rank %2: pick that rank to see it")
                      .arg(m_overlay->label)
                      .arg(m_overlay->pipelineRank);
    const double swatch = fm.height() * 1.6;
    const double pad = fm.height() * 0.3;
    double width = 0;
    for (const QString &l : labels)
        width = std::max(width, fm.horizontalAdvance(l));
    const bool lines = overlayShown();
    const QSizeF size(std::min((lines ? swatch + pad : 0) + width + 2 * pad, ca.w - 2 * pad),
                      fm.height() * double(labels.size()) + 2 * pad);
    // Clear of the peak's dot and label (drawn bold, so a little wider) and of the curves where it can be.
    QRectF peak;
    if (m_geometry.peakVisible)
        peak = peakLabelRect().adjusted(-2 * pad, -pad, 2 * pad + fm.height(), pad);
    const QRectF box
        = quietestPlace(QRectF(ca.x, ca.y, ca.w, ca.h), size, pad, {&m_curve, &m_measuredLine, &m_modelledLine}, peak);
    QColor background = palette().color(QPalette::Base);
    background.setAlpha(225);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(background);
    p.drawRect(box);
    for (int i = 0; i < labels.size(); ++i) {
        const double y = box.y() + pad + fm.height() * i;
        double x = box.x() + pad;
        if (lines) {
            const double mid = y + fm.height() / 2;
            p.setPen(i == 0 ? QPen(measured, 2.0) : modelledPen);
            p.drawLine(QPointF(x, mid), QPointF(x + swatch, mid));
            x += swatch + pad;
        }
        p.setPen(lines ? text : palette().color(QPalette::PlaceholderText));
        p.drawText(QRectF(x, y, box.right() - pad - x, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(labels[i], Qt::ElideMiddle, box.right() - pad - x));
    }
    p.restore();
}

void LifetimeView::paintAxis(QPainter &p) const
{
    const QFontMetricsF fm(font());
    const QColor text = palette().color(QPalette::Text);
    QColor grid = text;
    grid.setAlpha(40);
    const GanttRect &ca = m_frame.curveArea;
    const GanttRect &ra = m_frame.rowsArea;

    // Time grid through both areas, labels under the rows; a label that would
    // run into the previous one is skipped.
    double lastRight = -1e9;
    for (const PositionedTick &t : m_geometry.timeTicks) {
        p.setPen(grid);
        p.drawLine(QPointF(t.pos, ca.y), QPointF(t.pos, ra.bottom()));
        p.setPen(text);
        p.drawLine(QPointF(t.pos, ra.bottom()), QPointF(t.pos, ra.bottom() + fm.height() * 0.3));
        const QString label = toQString(t.label);
        const double w = fm.horizontalAdvance(label);
        const double left = std::clamp(t.pos - w / 2, ra.x - fm.height(), double(width()) - w - 2);
        if (left < lastRight + fm.height() * 0.5)
            continue;
        p.drawText(QPointF(left, ra.bottom() + fm.height() * 0.3 + fm.ascent()), label);
        lastRight = left + w;
    }
    p.setPen(text);
    p.drawLine(QPointF(ra.x, ra.bottom()), QPointF(ra.right(), ra.bottom()));

    // Bytes grid and labels in the gutter.
    for (const PositionedTick &t : m_geometry.bytesTicks) {
        p.setPen(grid);
        p.drawLine(QPointF(ca.x, t.pos), QPointF(ca.right(), t.pos));
        p.setPen(text);
        const QString label = toQString(t.label);
        p.drawText(QPointF(ca.x - fm.horizontalAdvance(label) - fm.height() * 0.4, t.pos + fm.ascent() / 2 - 1), label);
    }
}

QRectF LifetimeView::peakLabelRect() const
{
    // Beside the dot: right of it if it fits, else left; above the dot, or below when at the top. Measured in
    // the bold font it is drawn in, with its box's frame, and kept inside the curve's clip: a served forward
    // peaks at its very end, and the label placed by the regular font's width ran past the right edge
    // (issue 34, item 21).
    const QFontMetricsF fm(font());
    QFont bold = font();
    bold.setBold(true);
    const GanttRect &ca = m_frame.curveArea;
    const double pad = fm.height() * 0.3;
    QRectF r(0, 0, QFontMetricsF(bold).horizontalAdvance(toQString(peakLabel(*currentRank()))), fm.height());
    if (m_geometry.peakVisible) {
        const double px = m_geometry.peak.x, py = m_geometry.peak.y;
        r.moveLeft(px + pad + r.width() + kPeakBoxPad < ca.right() ? px + pad : px - pad - r.width());
        r.moveLeft(std::max(ca.x + kPeakBoxPad, std::min(r.left(), ca.right() - kPeakBoxPad - r.width())));
        r.moveBottom(py - pad);
        if (r.top() < ca.y - fm.height() * 0.2)
            r.moveTop(py + pad);
    }
    return r;
}

QRectF LifetimeView::peakLabelBox() const
{
    ensureLayout();
    if (!currentRank() || !m_geometry.peakVisible)
        return {};
    // Whole pixels, so that the 1 px frame is drawn crisp on the box's edge: inward, to stay inside the clip.
    const QRectF r = peakLabelRect().adjusted(-kPeakBoxPad, -1, kPeakBoxPad, 0);
    return QRectF(QPointF(std::ceil(r.left()), std::floor(r.top())),
                  QPointF(std::floor(r.right()), std::ceil(r.bottom())));
}

void LifetimeView::paintCurve(QPainter &p) const
{
    const QFontMetricsF fm(font());
    const GanttRect &ca = m_frame.curveArea;
    const RankTimeline &rank = *currentRank();
    p.save();
    p.setClipRect(QRectF(ca.x, ca.y, ca.w + 1, ca.h + 1));

    if (m_mode == Mode::Gantt) {
        QColor fill = curveColor(palette());
        fill.setAlpha(22);
        p.setPen(Qt::NoPen);
        p.setBrush(fill);
        p.drawPolygon(m_curveFill);
    }
    p.setPen(QPen(curveColor(palette()), 2));
    p.setBrush(Qt::NoBrush);
    p.drawPolyline(m_curve);
    if (reservedShown()) {
        // Reserved memory steps up where a segment is reserved: dotted, over the curve it holds.
        p.setPen(QPen(reservedColor(palette()), 2, Qt::DotLine, Qt::FlatCap));
        p.drawPolyline(m_reservedLine);
    }

    // The capacity line, labelled at the right end (left end when the peak label is there). No usable
    // line: the curve holds the runtime reserve as a row, so the capacity is what its peak is held against
    // (peakFits), and a line at capacity less the reserve would take the reserve off twice.
    const QString capacity = tr("capacity %1").arg(bytesText(m_timeline.ledger.capacity_bytes));
    const QString peak = toQString(peakLabel(rank));
    const double pad = fm.height() * 0.3;

    const QRectF peakRect = peakLabelRect();
    const auto labelLine = [&](double y, const QColor &color, const QString &label, bool above) {
        if (y < ca.y || y > ca.bottom()) // off a fitted axis
            return;
        p.setPen(QPen(color, 2, Qt::DashLine));
        p.drawLine(QPointF(ca.x, y), QPointF(ca.right(), y));
        const double w = fm.horizontalAdvance(label);
        QRectF r(ca.right() - w - pad, above ? y - fm.height() : y + 1, w, fm.height());
        if (m_geometry.peakVisible && r.intersects(peakRect))
            r.moveLeft(ca.x + pad);
        p.fillRect(r.adjusted(-2, 0, 2, 0), palette().color(QPalette::Base));
        p.setPen(color);
        p.drawText(r, Qt::AlignCenter, label);
    };
    // Labels may reach a little above and below the area.
    p.setClipRect(QRectF(ca.x, ca.y - fm.height(), ca.w, ca.h + fm.height() * 2));
    labelLine(m_geometry.capacityY, errorTextColor(palette()), capacity, true);

    if (m_geometry.peakVisible) {
        p.setRenderHint(QPainter::Antialiasing, true);
        const bool fits = peakFits(m_timeline, rank); // core's verdict
        const QColor dot = fits ? curveColor(palette()) : errorTextColor(palette());
        p.setPen(QPen(palette().color(QPalette::Base), 1.5));
        p.setBrush(dot);
        const double radius = std::max(3.5, fm.height() * 0.28);
        p.drawEllipse(QPointF(m_geometry.peak.x, m_geometry.peak.y), radius, radius);
        p.setRenderHint(QPainter::Antialiasing, false);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        QRectF r = peakRect;
        r.setWidth(QFontMetricsF(bold).horizontalAdvance(peak));
        // A framed box, not a patch of the view's own background: it must stand out from the curve and bars
        // under it in either palette (issue 34: in the dark one nothing showed where it began).
        p.setPen(QPen(palette().color(QPalette::PlaceholderText), 1)); // grey, 3:1 or more on either Base
        p.setBrush(palette().color(QPalette::Base));
        p.drawRect(peakLabelBox());
        p.setPen(dot);
        p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, peak);
        p.setFont(font());
    }
    p.restore();
    p.setPen(palette().color(QPalette::Text));
    p.drawLine(QPointF(ca.x, ca.bottom()), QPointF(ca.right(), ca.bottom()));
}

void LifetimeView::paintRows(QPainter &p) const
{
    paintPhaseTags(p);
    paintBars(p);
    paintGutter(p);
}

void LifetimeView::paintPhaseTags(QPainter &p) const
{
    const QFontMetricsF fm(font());
    const GanttRect &ra = m_frame.rowsArea;
    const QColor muted = palette().color(QPalette::PlaceholderText);
    // Phase labels ("F3", "B3", "Opt") in the strip between curve and rows, where they fit.
    p.setPen(muted);
    const double stripBottom = ra.y - fm.height() * 0.15;
    for (std::size_t i = 0; i < m_phases.size(); ++i) {
        const GanttRect &r = m_geometry.phases[i];
        if (r.isEmpty())
            continue;
        const Phase &ph = m_phases[i];
        const QString label = toQString(phaseTag(m_timeline, ph));
        if (fm.horizontalAdvance(label) + 4 > r.w)
            continue;
        p.drawText(QRectF(r.x, stripBottom - fm.height(), r.w, fm.height()), Qt::AlignCenter, label);
    }
}

void LifetimeView::paintBars(QPainter &p) const
{
    const QFontMetricsF fm(font());
    const GanttRect &ra = m_frame.rowsArea;
    const RankTimeline &rank = *currentRank();
    const QColor text = palette().color(QPalette::Text);
    p.save();
    p.setClipRect(QRectF(ra.x, ra.y, ra.w + 1, ra.h + 1));
    p.setPen(Qt::NoPen);
    for (const ColoredRects &b : m_bars) {
        p.setBrush(b.color);
        p.drawRects(b.rects);
    }
    if (!m_fp8Rects.isEmpty()) {
        p.setBrush(QBrush(fp8HatchColor(palette()), Qt::BDiagPattern));
        p.drawRects(m_fp8Rects);
    }
    // Persistent rows carry their ledger label inside the bar; the font shrinks to a
    // slightly thinner row, and thinner rows go unlabelled (their tooltip names them).
    QFont barFont = font();
    QFontMetricsF barFm = fm;
    const auto barRowHeight = [&] {
        for (std::size_t i = 0; i < rank.lifetimes.size(); ++i)
            if (isPersistent(rank.lifetimes[i].kind) && !m_geometry.bars[i].isEmpty())
                return m_geometry.bars[i].h;
        return 0.0;
    }();
    // Never smaller than this: 9 px, or 80 % of the view's own font (issue 34, item 21: labels were drawn about
    // 7 px high). The layout gives persistent rows a line of text where it can (GanttFrame::labelRowHeight).
    const int readable = std::max(kSmallestLabelPixels, int(std::ceil(0.8 * QFontInfo(font()).pixelSize())));
    const int shrunk = int(barRowHeight * 0.8);
    const bool labelled = barRowHeight >= fm.height() || shrunk >= readable;
    if (barRowHeight < fm.height() && labelled) {
        barFont.setPixelSize(shrunk);
        barFm = QFontMetricsF(barFont);
    }
    m_barLabelPixels = labelled ? QFontInfo(barFont).pixelSize() : 0;
    if (labelled) {
        p.setFont(barFont);
        // A row of gradients created layer by layer holds many bars that end
        // together: one label, on the longest, with the row's whole bytes.
        std::vector<std::size_t> labelled(m_rows.rows.size(), rank.lifetimes.size());
        for (std::size_t i = 0; i < rank.lifetimes.size(); ++i) {
            const GanttRect &r = m_geometry.bars[i];
            if (r.isEmpty() || !isPersistent(rank.lifetimes[i].kind))
                continue;
            std::size_t &best = labelled[std::size_t(m_rows.rowOf[i])];
            if (best == rank.lifetimes.size() || r.w > m_geometry.bars[best].w)
                best = i;
        }
        for (std::size_t i : labelled) {
            if (i == rank.lifetimes.size())
                continue;
            const GanttRect &r = m_geometry.bars[i];
            if (r.w < fm.height() * 3)
                continue;
            const GanttRow &row = m_rows.rows[std::size_t(m_rows.rowOf[i])];
            const QString label = barFm.elidedText(toQString(row.label) + QStringLiteral(" · ") + bytesText(row.bytes),
                                                   Qt::ElideRight, r.w - fm.height() * 0.6);
            p.setPen(textColorOn(barColor(rank.lifetimes[i]))); // white on the blue, dark on the orange
            p.drawText(QRectF(r.x + fm.height() * 0.3, r.y, r.w, r.h), Qt::AlignLeft | Qt::AlignVCenter, label);
        }
        p.setFont(font());
    }
    if (m_hovered >= 0 && std::size_t(m_hovered) < m_geometry.bars.size()
        && !m_geometry.bars[std::size_t(m_hovered)].isEmpty()) {
        const GanttRect &r = m_geometry.bars[std::size_t(m_hovered)];
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(text, 2.0));
        p.drawRect(QRectF(r.x, r.y, std::max(r.w, 2.0), std::max(r.h, 2.0)).adjusted(-1, -1, 1, 1));
    }
    p.restore();
}

void LifetimeView::paintGutter(QPainter &p) const
{
    const QFontMetricsF fm(font());
    const GanttRect &ra = m_frame.rowsArea;
    const QColor text = palette().color(QPalette::Text);
    const QColor muted = palette().color(QPalette::PlaceholderText);
    // Gutter: section names with a separator, and row labels where rows are tall enough
    // (every k-th row when they are thinner than text), never over a section name.
    double rowH = 0;
    for (std::size_t r = 0; r < m_rows.rows.size() && rowH == 0; ++r)
        if (m_rows.rows[r].section == RowSection::Activations)
            rowH = m_geometry.rowHeight[r];
    const double every = rowH > 0 ? std::ceil(fm.height() * 1.1 / rowH) : 1;
    std::vector<QRectF> sectionLabels;
    QFont bold = font();
    bold.setBold(true);
    for (std::size_t s = 0; s < m_geometry.sectionTop.size(); ++s) {
        const double top = m_geometry.sectionTop[s];
        if (top < 0)
            continue;
        QColor sep = text;
        sep.setAlpha(90);
        p.setPen(sep);
        if (top > ra.y + 0.5)
            p.drawLine(QPointF(0, top), QPointF(ra.right(), top));
        // A section thinner than text keeps its name inside the rows area.
        const QRectF label(fm.height() * 0.3, std::min(top, ra.bottom() - fm.height()), ra.x, fm.height());
        const bool overlaps = std::any_of(sectionLabels.begin(), sectionLabels.end(),
                                          [&](const QRectF &r) { return r.intersects(label); });
        if (overlaps)
            continue;
        p.setFont(bold);
        p.setPen(text);
        p.drawText(label, Qt::AlignLeft | Qt::AlignTop, toQString(rowSectionLabel(RowSection(s))));
        p.setFont(font());
        sectionLabels.push_back(label);
    }
    p.setPen(muted);
    int sinceLabel = int(every);
    for (std::size_t r = 0; r < m_rows.rows.size(); ++r) {
        const GanttRow &row = m_rows.rows[r];
        if (row.section != RowSection::Activations || row.label.empty())
            continue;
        if (++sinceLabel < int(every))
            continue;
        const QString label = toQString(row.label);
        const double w = fm.horizontalAdvance(label);
        const QRectF where(ra.x - w - fm.height() * 0.4, m_geometry.rowTop[r] + rowH / 2 - fm.height() / 2, w,
                           fm.height());
        if (where.bottom() > ra.bottom() + 1
            || std::any_of(sectionLabels.begin(), sectionLabels.end(),
                           [&](const QRectF &s) { return s.intersects(where); }))
            continue;
        sinceLabel = 0;
        p.drawText(where, Qt::AlignRight | Qt::AlignVCenter, label);
    }
}

int LifetimeView::layoutLegend() const
{
    m_legend.clear();
    const RankTimeline *rank = currentRank();
    if (!rank)
        return 1;
    const QFontMetricsF fm(font());
    QFont bold = font();
    bold.setBold(true);
    const double box = std::round(fm.height() * 0.7);
    const double lineStep = fm.height() * kLegendLineSpacing;
    double top = fm.height() * 0.25;
    const double left = fm.height() * 0.3;
    const double right = width() - fm.height() * 0.3;
    int lines = 1;

    QString title = tr("Rank %1").arg(rank->pipeline_rank);
    if (!m_caption.isEmpty())
        title += QStringLiteral(" · ") + m_caption;
    const QFontMetricsF boldMetrics(bold);
    const QStringList titleLines = wrapTitle(title, boldMetrics, right - left);
    double titleWidth = 0;
    for (const QString &line : titleLines)
        titleWidth = std::max(titleWidth, boldMetrics.horizontalAdvance(line));
    const int extraLines = int(titleLines.size()) - 1;
    m_legend.push_back({QColor(), titleLines.join(QLatin1Char('\n')),
                        QRectF(left, top, titleWidth, extraLines * lineStep + fm.height())});
    lines += extraLines;
    top += extraLines * lineStep;
    double lineStart = std::max(left + titleWidth + fm.height(), m_frame.curveArea.x);
    // A long caption keeps its line: the swatches start on the next one, all of its width theirs.
    if (extraLines > 0 || lineStart > right * 0.45) {
        ++lines;
        top += lineStep;
        lineStart = m_frame.curveArea.x;
    }
    double x = lineStart;

    const auto entry
        = [&](const QColor &fill, const QString &label, bool gapBefore, Qt::BrushStyle pattern = Qt::SolidPattern) {
              if (gapBefore && x > lineStart)
                  x += fm.height();
              const double w = box + fm.height() * 0.3 + fm.horizontalAdvance(label);
              if (x + w > right && x > lineStart) { // the next line, under the first entry
                  ++lines;
                  top += lineStep;
                  x = lineStart;
              }
              m_legend.push_back({fill, label, QRectF(x, top, w, fm.height()), pattern});
              x += w + fm.height();
          };
    std::array<bool, kCategoryCount> present{};
    bool transients = false, fp8 = false;
    const Lifetime *kvCache = nullptr;
    for (const Lifetime &l : rank->lifetimes) {
        fp8 = fp8 || l.fp8Bytes > 0;
        if (l.kind == LifetimeKind::KvCache) {
            kvCache = &l;
            continue;
        }
        const bool transient = isTransient(l.kind) && l.category == Category::Activations;
        present[std::size_t(l.category)] = present[std::size_t(l.category)] || !transient;
        transients = transients || transient;
    }
    for (Category c : kCategories)
        if (present[std::size_t(c)])
            entry(categoryColor(c), toQString(categoryLabel(c)), false);
    if (transients)
        entry(categoryColor(Category::Activations).darker(135), tr("Transient activations"), false);
    if (fp8)
        entry(categoryColor(Category::Activations), tr("Stored in FP8"), false, Qt::BDiagPattern);
    if (kvCache)
        entry(barColor(*kvCache), tr("KV cache"), false);
    if (reservedShown()) {
        entry(reservedColor(palette()), tr("Reserved (allocator)"), false);
        m_legend.back().line = true;
    }
    // The phases the timeline has (a served forward has no backward and no optimizer step).
    std::array<bool, kPhaseKinds> phases{};
    for (const Phase &ph : m_phases)
        phases[std::size_t(ph.kind)] = true;
    bool firstPhase = true;
    for (int k = 0; k < kPhaseKinds; ++k) {
        if (!phases[std::size_t(k)])
            continue;
        // Drawn over the background like in the plot (the legend strip is unshaded).
        entry(phaseColor(PhaseKind(k), palette()), toQString(phaseLabel(PhaseKind(k))), firstPhase);
        firstPhase = false;
    }
    m_legendBottom = top + fm.height();
    return lines;
}

std::vector<LifetimeView::LegendEntry> LifetimeView::legend() const
{
    ensureLayout();
    return m_legend;
}

void LifetimeView::paintLegend(QPainter &p) const
{
    if (m_legend.empty())
        return;
    const QFontMetricsF fm(font());
    const double box = std::round(fm.height() * 0.7);
    const auto baseline = [&](const QRectF &r) { return r.top() + fm.ascent(); };

    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(palette().color(QPalette::Text));
    // The title, in the lines layoutLegend broke it into.
    const QStringList titleLines = m_legend.front().label.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < titleLines.size(); ++i)
        p.drawText(QPointF(m_legend.front().rect.left(),
                           baseline(m_legend.front().rect) + double(i) * fm.height() * kLegendLineSpacing),
                   titleLines[i]);
    p.setFont(font());
    double lastRight = 0;
    for (std::size_t i = 1; i < m_legend.size(); ++i) {
        const LegendEntry &e = m_legend[i];
        const double y = baseline(e.rect);
        const QRectF swatch(e.rect.left(), y - fm.ascent() / 2 - box / 2 + 1, box, box);
        if (e.line) {
            p.setPen(QPen(e.fill, 2, Qt::DotLine, Qt::FlatCap));
            p.drawLine(QPointF(swatch.left(), swatch.center().y()), QPointF(swatch.right(), swatch.center().y()));
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QPointF(e.rect.left() + box + fm.height() * 0.3, y), e.label);
            if (i + 1 == m_legend.size())
                lastRight = e.rect.right();
            continue;
        }
        p.setPen(QPen(palette().color(QPalette::Mid), 1));
        p.setBrush(e.fill);
        p.drawRect(swatch);
        if (e.pattern != Qt::SolidPattern) {
            p.setBrush(QBrush(fp8HatchColor(palette()), e.pattern));
            p.drawRect(swatch);
        }
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QPointF(e.rect.left() + box + fm.height() * 0.3, y), e.label);
        if (i + 1 == m_legend.size())
            lastRight = e.rect.right();
    }
    // At the right end of the legend's last line, when there is room for it.
    if (m_axis.isZoomed()) {
        const QString hint = tr("zoomed: double-click to reset");
        const double left = m_frame.curveArea.right() - fm.horizontalAdvance(hint);
        if (left > lastRight + fm.height()) {
            p.setPen(palette().color(QPalette::PlaceholderText));
            p.drawText(QPointF(left, baseline(m_legend.back().rect)), hint);
        }
    }
}

} // namespace memledger::ui
