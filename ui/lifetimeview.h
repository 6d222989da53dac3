// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>
#include <QImage>
#include <QPolygonF>
#include <QRectF>
#include <QVector>
#include <QWidget>

#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "core/view/gantt.h"
#include "ui/measuredoverlay.h"

#include <optional>
#include <vector>

namespace memledger::ui {

// The lifetimes of one pipeline rank on one time axis: the rank's memory
// curve on top (the capacity line, the peak marked), the lifetimes as
// gantt rows below, forward / backward / optimizer phases shaded across both.
// Wheel zooms around the cursor, dragging pans, a double-click resets (keys:
// + and - zoom, arrows pan, 0 resets); hovering a bar or band names it. All
// geometry comes from core/view/gantt.h and is cached until the data, the mode, the
// size, the font or the visible window change.
class LifetimeView : public QWidget
{
    Q_OBJECT
public:
    // Gantt: the curve above one row per tensor group. Bands: every lifetime
    // stacked as a band whose height is its bytes, so the top edge is the memory.
    enum class Mode { Gantt, Bands };

    explicit LifetimeView(QWidget *parent = nullptr);

    void setTimeline(const Timeline &timeline);
    const Timeline &timeline() const { return m_timeline; }
    // Clamped to the timeline's ranks; a zoomed window stays where it lies
    // inside the new rank's iteration.
    void setRank(int rank);
    int rank() const { return m_rank; }
    void setMode(Mode mode);
    Mode mode() const { return m_mode; }
    // The curve's bytes axis fitted to the visible curve (gantt mode), so that
    // spikes of a few hundred MB on a 100 GB rank show; off: zero to capacity.
    void setFitBytes(bool fit);
    bool fitBytes() const { return m_fitBytes; }
    void setRowMode(RowMode mode);
    RowMode rowMode() const { return m_rowMode; }
    // Says what the timeline is ("training iteration", "serving prefill, ..."),
    // after the rank in the legend's title; empty: the rank alone.
    // `toolTip`: shown over the legend's title (e.g. why the simulated
    // iteration and the step-time model differ).
    void setCaption(const QString &caption, const QString &toolTip = QString());
    QString caption() const { return m_caption; }
    QString captionToolTip() const { return m_captionToolTip; }
    // The time axis spans at least `seconds` (0: the timeline's own length),
    // so a serving forward can be drawn on a training iteration's scale.
    void setTimeSpan(double seconds);
    double timeSpan() const { return m_timeSpan; }
    // A measured run is of a training iteration: hidden while a serving
    // forward is drawn, and back when the iteration is.
    void setOverlayHidden(bool hidden);

    // A measured run over the memory curve of the rank it was held against
    // (the bytes axis grows to hold it), with its own legend in the plot.
    void setMeasuredOverlay(const MeasuredOverlay &overlay);
    void clearMeasuredOverlay();
    const std::optional<MeasuredOverlay> &measuredOverlay() const { return m_overlay; }
    // True when the overlay is drawn: there is one and it is of the rank shown.
    bool overlayShown() const;
    // The measured and the modelled (no reserve) curves as drawn, in pixels.
    QPolygonF measuredLine() const;
    QPolygonF modelledLine() const;

    // What PyTorch's caching allocator reserves for the iteration (core's
    // simulateReserved, none: not known yet), drawn with the runtime reserve
    // as a step line over the memory curve of a training iteration.
    void setReserved(const PlanReserved *reserved);
    bool reservedShown() const;
    QPolygonF reservedLine() const;

    const TimeAxis &timeAxis() const { return m_axis; }
    // factor > 1 zooms in, keeping `time` at its pixel.
    void zoomAround(double time, double factor);
    void resetZoom();

    // What hovering at `pos` shows: a lifetime (label, bytes, start, end), the
    // memory in use at that time over the curve, or the op over the phase strip;
    // empty elsewhere.
    QString toolTipAt(const QPointF &pos) const;
    // Where lifetime `index` of the rank is drawn (empty when out of view).
    QRectF barRect(int index) const;
    // The hatched parts of the activation bars: each bar's share stored in
    // FP8 (core's fp8Share), at the bottom of its bar.
    QVector<QRectF> fp8Rects() const;
    // The lifetime under the mouse in the gantt, outlined (-1: none).
    int hoveredLifetime() const { return m_hovered; }
    QRectF curveArea() const;
    // The framed box behind the peak's label, as drawn (empty: no peak in view).
    QRectF peakLabelBox() const;
    // The pixel size the persistent rows' labels were last painted at; 0: the rows were too thin to label.
    int barLabelPixels() const { return m_barLabelPixels; }
    QRectF rowsArea() const;
    // The legend's entries as drawn: the rank's title, then each swatch with
    // its label (wrapped onto a second line when the view is narrow).
    struct LegendEntry
    {
        QColor fill; // invalid for the title
        QString label;
        QRectF rect; // swatch and label together
        Qt::BrushStyle pattern = Qt::SolidPattern; // FP8: hatched over the fill
        bool line = false; // a line's swatch (the reserved memory), not a box
    };
    std::vector<LegendEntry> legend() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void visibleWindowChanged(double t0, double t1);

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    struct ColoredRects
    {
        QColor color;
        QVector<QRectF> rects;
    };

    const RankTimeline *currentRank() const;
    void rebuildRows();
    void invalidate();
    void ensureLayout() const;
    // What ensureLayout() batches for painting: the bands' rects, the bars' (and their FP8 parts') by colour,
    // and the phases' strips.
    void layoutBandRects(const RankTimeline &rank) const;
    void layoutBarRects(const RankTimeline &rank) const;
    void layoutPhaseStrips() const;
    QColor barColor(const Lifetime &lifetime) const;
    void paintLegend(QPainter &p) const;
    // Places the legend's entries from the left, wrapping at the view's width; returns the lines used.
    int layoutLegend() const;
    void paintCurve(QPainter &p) const;
    // The rows area: the phase tags above it, the bars with their labels and the hovered one's frame, then
    // the gutter's section names and row labels.
    void paintRows(QPainter &p) const;
    void paintPhaseTags(QPainter &p) const;
    void paintBars(QPainter &p) const;
    void paintGutter(QPainter &p) const;
    void paintAxis(QPainter &p) const;
    void paintOverlay(QPainter &p) const;
    QRectF peakLabelRect() const;
    void rebuildOverlayCurves();

    Timeline m_timeline;
    int m_rank = 0;
    Mode m_mode = Mode::Gantt;
    bool m_fitBytes = false;
    RowMode m_rowMode = RowMode::Groups;
    QString m_caption;
    QString m_captionToolTip;
    double m_timeSpan = 0;
    bool m_overlayHidden = false;
    std::vector<std::vector<BandStep>> m_bands;
    GanttRows m_rows;
    std::vector<Phase> m_phases;
    TimeAxis m_axis;
    std::optional<MeasuredOverlay> m_overlay;
    std::optional<PlanReserved> m_reserved;
    std::vector<CurvePoint> m_reservedCurve; // the rank's, with the runtime reserve; empty when not drawn
    std::vector<CurvePoint> m_overlayMeasured; // on the view's clock, seconds
    std::vector<CurvePoint> m_overlayModelled;
    bool m_dragging = false;
    double m_dragX = 0;

    // The paint cache, rebuilt by ensureLayout() after invalidate().
    mutable bool m_valid = false;
    mutable GanttFrame m_frame;
    mutable GanttGeometry m_geometry;
    int m_hovered = -1;
    mutable int m_barLabelPixels = 0; // paintBars: the persistent rows' label size (barLabelPixels)
    mutable std::vector<ColoredRects> m_bars;
    mutable QVector<QRectF> m_fp8Rects;
    mutable QImage m_phaseStrip;
    mutable QImage m_phaseStripCurve;
    mutable QPolygonF m_curve;
    mutable QPolygonF m_curveFill;
    mutable ValueAxis m_values;
    mutable std::vector<ColoredRects> m_bandRects;
    mutable QPolygonF m_measuredLine;
    mutable QPolygonF m_modelledLine;
    mutable QPolygonF m_reservedLine;
    mutable std::vector<LegendEntry> m_legend;
    mutable double m_legendBottom = 0; // the baseline of the legend's last line
};

} // namespace memledger::ui
