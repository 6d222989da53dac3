// SPDX-License-Identifier: MIT
#include "ui/paint/rasterthreadpool.h"

#include <QApplication>
#include <QChart>
#include <QGradient>
#include <QImage>
#include <QPainter>
#include <QRect>
#include <QStyleFactory>
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
