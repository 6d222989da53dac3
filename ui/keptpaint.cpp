// SPDX-License-Identifier: MIT
#include "ui/keptpaint.h"

#include <QPainter>
#include <QWidget>

namespace memledger::ui {

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
    auto *image = new QPixmap(widget.size() * dpr);
    image->setDevicePixelRatio(dpr);
    image->fill(widget.palette().color(widget.backgroundRole()));
    {
        QPainter p(image);
        p.setFont(widget.font());
        draw(p);
    }
    ++m_drawn;
    painter.drawPixmap(0, 0, *image);
    m_images.insert(key, image);
}

} // namespace memledger::ui
