// SPDX-License-Identifier: MIT
#pragma once

#include <QProxyStyle>

#include <functional>

class QChart;
class QPainter;
class QRect;

namespace memledger::ui {

// Painting kept off Qt's thread pool: every workaround in one place.
//
// For Qt 6.4 (measured with 6.4.2, Debian 12's, the oldest Qt the build
// accepts: find_package(Qt6 6.4)). Its raster engine (qdrawhelper.cpp,
// QT_THREAD_PARALLEL_FILLS) splits any fill, blend or gradient span run of
// 96 or more pixel rows into jobs of 64 rows on its thread pool and waits for
// them; its smooth scaling of an image splits the same way. On two cores
// handing the jobs over is nearly all of the cost: a bench run started
// 26,700 jobs before these, about 270 since (the window's first paint, the
// tab frame when the host chart appears), and a move's wall time became its
// GUI thread's CPU time (issue 16). Each one draws the same pixels:
//
// - scroll bars are drawn in strips of fewer rows (paintInStrips, StripStyle):
//   Fusion's groove is a gradient the height of the bar, repainted whenever a
//   note changes the control panel's height (1.5-2 ms of a control's first move);
// - the light chart theme's white-to-white background gradient is drawn as solid
//   white (solidChartBackground): three quarters of a bench run's jobs;
// - the control panel's group boxes keep the image of their frame (KeptGroupBox,
//   ui/paint/keptgroupbox.h): Fusion stretches a nine-patch pixmap over the whole
//   box, which the engine scales on its pool at every repaint.
//
// A later Qt may split differently or not at all: measure (the bench's detail
// mode, perf over `memledger --bench-ui`) before dropping or extending these.

// The most device rows one fill may have and stay on the painting thread: the
// engine splits a fill of `count` rows into (count + 32) / 64 jobs.
inline constexpr int kMaxRowsOnOneThread = 95;

// `draw` is called once per horizontal strip of `rect`, fewer rows each than
// kMaxRowsOnOneThread in device pixels, with a painter on an image of the
// strip, which is then drawn where the strip lies.
void paintInStrips(QPainter *painter, const QRect &rect, const std::function<void(QPainter &)> &draw);

// A style (Fusion, or the platform's) whose scroll bars are drawn in strips
// (paintInStrips). Same pixels. It is also the application's style, so it
// carries the one fix the dark palette needs in Fusion's drawing: check boxes
// with an outline that shows (drawPrimitive).
class StripStyle : public QProxyStyle
{
    Q_OBJECT
public:
    using QProxyStyle::QProxyStyle;

    void drawComplexControl(ComplexControl control, const QStyleOptionComplex *option, QPainter *painter,
                            const QWidget *widget = nullptr) const override;
    void drawPrimitive(PrimitiveElement element, const QStyleOption *option, QPainter *painter,
                       const QWidget *widget = nullptr) const override;
};

// Makes the application's style a StripStyle over the style it has (the
// platform's, or the Fusion that applyPalette sets), unless it is one already.
void useStripStyle();

// Qt Charts' themes paint the chart's background with a linear gradient, the
// light theme's from white to white: one whose stops are all one colour
// becomes that solid colour (one plain fill); a real gradient (the dark
// theme's) is left as it is. Call it after setting a theme, which sets its gradient.
void solidChartBackground(QChart *chart);

} // namespace memledger::ui
