// SPDX-License-Identifier: MIT
#include "ui/paint/keptimages.h"

#include <QPainter>
#include <QWidget>

#include <algorithm>

namespace memledger::ui {

PaintKey KeptImages::keyOf(const QWidget &widget, const QString &content)
{
    return {content, widget.size(), widget.devicePixelRatioF(), widget.palette().cacheKey(), widget.font(), {}};
}

void KeptImages::paint(QPainter &painter, const QPoint &at, const PaintKey &key, const QColor &background,
                       const std::function<void(QPainter &)> &draw)
{
    if (const QPixmap *kept = m_images.object(key)) {
        painter.drawPixmap(at, *kept);
        return;
    }
    auto *image = new QPixmap(key.size * key.dpr);
    image->setDevicePixelRatio(key.dpr);
    image->fill(background);
    {
        QPainter onImage(image);
        draw(onImage);
    }
    ++m_drawn;
    // Drawn before it is kept: an image over the whole budget is not kept (QCache deletes it at once).
    painter.drawPixmap(at, *image);
    const int cost = m_budget == Budget::Images
                         ? 1
                         : std::max(1, static_cast<int>(qint64(image->width()) * image->height() * 4 / 1024));
    m_images.insert(key, image, cost);
}

void KeptImages::paint(QWidget &widget, const PaintKey &key, const std::function<void(QPainter &)> &draw)
{
    QPainter painter(&widget);
    // Opaque (the widget fills its background): drawn on the widget's colour,
    // as it would be straight onto the widget.
    paint(painter, {}, key, widget.palette().color(widget.backgroundRole()), [&](QPainter &p) {
        p.setFont(widget.font());
        draw(p);
    });
}

} // namespace memledger::ui
