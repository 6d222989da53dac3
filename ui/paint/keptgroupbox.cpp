// SPDX-License-Identifier: MIT
#include "ui/paint/keptgroupbox.h"

#include <QPainter>
#include <QStyle>
#include <QStyleOptionGroupBox>

namespace memledger::ui {

KeptGroupBox::KeptGroupBox(const QString &title, QWidget *parent)
    : QGroupBox(title, parent)
{
    // It paints every pixel (the image is drawn on the background colour): Qt need not fill it first, and it
    // counts as opaque, so moving it copies its pixels instead of repainting it and what lies under it.
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void KeptGroupBox::paintEvent(QPaintEvent *)
{
    QStyleOptionGroupBox option;
    initStyleOption(&option);
    // What the style's drawing reads: the size, the title, the state (enabled, hovered, focused, checked), the
    // palette, the font and the pixel ratio.
    const PaintKey key{option.text,
                       size(),
                       devicePixelRatioF(),
                       palette().cacheKey(),
                       font(),
                       {qint64(option.state), qint64(option.subControls), qint64(option.activeSubControls)}};
    QPainter painter(this);
    m_image.paint(painter, {}, key, palette().color(backgroundRole()), [&](QPainter &p) {
        p.setFont(font());
        style()->drawComplexControl(QStyle::CC_GroupBox, &option, &p, this);
    });
}

} // namespace memledger::ui
