// SPDX-License-Identifier: MIT
#include "ui/paint/rasterthreadpool.h"

#include <QApplication>
#include <QChart>
#include <QGradient>
#include <QImage>
#include <QPainter>
#include <QRect>
#include <QStyleFactory>
#include <QStyleOption>
#include <QStyleOptionComplex>

#include <algorithm>
#include <cmath>

namespace memledger::ui {

void paintInStrips(QPainter *painter, const QRect &rect, const std::function<void(QPainter &)> &draw)
{
    // Rows are device pixels. A painter that scales or rotates (a printout, an export) draws as it is.
    const double dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
    const int rows = std::max(1, static_cast<int>(std::floor(kMaxRowsOnOneThread / dpr)) - 1);
    if (rect.height() <= rows || !rect.isValid() || painter->worldTransform().type() > QTransform::TxTranslate) {
        draw(*painter);
        return;
    }
    // Each strip is drawn on an image of its own size, whose bounds clip every fill before the raster engine
    // counts its rows (a clip set on the widget's painter would not hold: a style may set its own), and then
    // drawn over the widget, where what the style drew blends as it would have directly.
    QImage strip(QSize(rect.width(), rows) * dpr, QImage::Format_ARGB32_Premultiplied);
    strip.setDevicePixelRatio(dpr);
    for (int top = rect.top(); top <= rect.bottom(); top += rows) {
        const int height = std::min(rows, rect.bottom() - top + 1);
        strip.fill(Qt::transparent);
        {
            QPainter onStrip(&strip);
            onStrip.setRenderHints(painter->renderHints());
            onStrip.setFont(painter->font());
            onStrip.setLayoutDirection(painter->layoutDirection());
            onStrip.translate(-rect.left(), -top);
            draw(onStrip);
        }
        painter->drawImage(QRectF(rect.left(), top, rect.width(), height), strip,
                           QRectF(0, 0, rect.width() * dpr, height * dpr));
    }
}

void StripStyle::drawComplexControl(ComplexControl control, const QStyleOptionComplex *option, QPainter *painter,
                                    const QWidget *widget) const
{
    if (control != CC_ScrollBar || !option || !painter) {
        QProxyStyle::drawComplexControl(control, option, painter, widget);
        return;
    }
    paintInStrips(painter, option->rect,
                  [&](QPainter &strip) { QProxyStyle::drawComplexControl(control, option, &strip, widget); });
}

void StripStyle::drawPrimitive(PrimitiveElement element, const QStyleOption *option, QPainter *painter,
                               const QWidget *widget) const
{
    QProxyStyle::drawPrimitive(element, option, painter, widget);
    // An item view's check box comes through here too (Fusion draws it as PE_IndicatorCheckBox).
    if (element != PE_IndicatorCheckBox || !option || !painter
        || option->palette.color(QPalette::Window).lightness() >= 128)
        return;
    // Fusion outlines a check box in the window colour darkened by 40 % (its
    // outline(), Qt 6.4 qfusionstyle.cpp) over a Base fill: on the dark
    // palette's #2b2b2b window that is about 1.1:1, and an unchecked box does
    // not show. Drawn again in the disabled text grey, #808080, 3.6:1 against
    // the window (WCAG 2's 3:1 for a control's boundary); a disabled box in
    // the bevel's Light shade, as inactive controls are exempt.
    const bool enabled = option->state & State_Enabled;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, true);
    painter->translate(0.5, 0.5); // as Fusion draws the box: on pixel centres
    painter->setBrush(Qt::NoBrush);
    painter->setPen(enabled ? option->palette.color(QPalette::Disabled, QPalette::WindowText)
                            : option->palette.color(QPalette::Active, QPalette::Light));
    painter->drawRect(QRectF(option->rect.adjusted(0, 0, -1, -1)));
    painter->restore();
}

void useStripStyle()
{
    if (qobject_cast<StripStyle *>(QApplication::style()))
        return;
    // A new instance of the same style: QApplication deletes the style it replaces.
    if (QStyle *base = QStyleFactory::create(QApplication::style()->name()))
        QApplication::setStyle(new StripStyle(base));
}

void solidChartBackground(QChart *chart)
{
    const QGradient *gradient = chart->backgroundBrush().gradient();
    if (!gradient || gradient->stops().isEmpty())
        return;
    const QColor first = gradient->stops().constFirst().second;
    for (const QGradientStop &stop : gradient->stops())
        if (stop.second != first)
            return;
    chart->setBackgroundBrush(first);
}

} // namespace memledger::ui
