// SPDX-License-Identifier: MIT
#pragma once

#include <QProxyStyle>

#include <functional>

class QPainter;
class QRect;

namespace memledger::ui {

// Qt's raster engine (Qt 6.4, qdrawhelper.cpp) splits any fill of 96 or more
// pixel rows over the global thread pool, 64 rows a job, and waits for the
// jobs. On two cores a tall, narrow fill is nearly all overhead: the control
// panel's scroll bar, repainted whenever a note changes the panel's height,
// started two dozen jobs and cost a control's first move 1.5–2 ms of wall
// time (issue 16; the bench's moves did no thread-pool work once it was
// drawn in strips). `draw` is called once per horizontal strip of `rect`,
// fewer rows each than that threshold in device pixels, with a painter on an
// image of the strip, which is then drawn where the strip lies.
void paintInStrips(QPainter *painter, const QRect &rect, const std::function<void(QPainter &)> &draw);

// A style (Fusion, or the platform's) whose scroll bars are drawn in strips
// (paintInStrips): Fusion's groove is a gradient the height of the bar. Same pixels.
class StripStyle : public QProxyStyle
{
    Q_OBJECT
public:
    using QProxyStyle::QProxyStyle;

    void drawComplexControl(ComplexControl control, const QStyleOptionComplex *option, QPainter *painter,
                            const QWidget *widget = nullptr) const override;
};

// Makes the application's style a StripStyle over the style it has (the
// platform's, or the Fusion that applyPalette sets), unless it is one already.
void useStripStyle();

} // namespace memledger::ui
