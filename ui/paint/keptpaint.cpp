// SPDX-License-Identifier: MIT
#include "ui/paint/keptpaint.h"

#include <QPainter>
#include <QWidget>

namespace memledger::ui {

QPixmap drawnImage(const QWidget &widget, const QColor &background, const std::function<void(QPainter &)> &draw)
{
    const double dpr = widget.devicePixelRatioF();
    QPixmap image(widget.size() * dpr);
    image.setDevicePixelRatio(dpr);
    image.fill(background);
    QPainter p(&image);
    p.setFont(widget.font());
    draw(p);
    return image;
}

void KeptPaint::paint(QWidget &widget, const QString &content, const std::function<void(QPainter &)> &draw)
{
    const double dpr = widget.devicePixelRatioF();
    const QString key = content + QChar(0x1f) + QString::number(widget.width()) + QLatin1Char('x')
                        + QString::number(widget.height()) + QChar(0x1f) + QString::number(widget.palette().cacheKey())
                        + QChar(0x1f) + widget.font().key() + QChar(0x1f) + QString::number(dpr);
    QPainter painter(&widget);
    if (const QPixmap *kept = m_images.object(key)) {
        painter.drawPixmap(0, 0, *kept);
        return;
    }
    // Opaque (the widget fills its background): drawn on the widget's colour,
    // as it would be straight onto the widget.
    auto *image = new QPixmap(drawnImage(widget, widget.palette().color(widget.backgroundRole()), draw));
    ++m_drawn;
    painter.drawPixmap(0, 0, *image);
    m_images.insert(key, image);
}

} // namespace memledger::ui
