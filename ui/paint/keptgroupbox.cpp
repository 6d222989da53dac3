// SPDX-License-Identifier: MIT
#include "ui/paint/keptgroupbox.h"

#include <QPainter>
#include <QStyle>
#include <QStyleOptionGroupBox>

#include "ui/paint/keptpaint.h"

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
    const double dpr = devicePixelRatioF();
    const QChar sep(0x1f);
    // What the style's drawing reads: the size, the title, the state (enabled, hovered, focused, checked), the
    // palette, the font and the pixel ratio.
    const QString key = QString::number(width()) + QLatin1Char('x') + QString::number(height()) + sep + option.text
                        + sep + QString::number(int(option.state)) + sep + QString::number(int(option.subControls))
                        + sep + QString::number(int(option.activeSubControls)) + sep
                        + QString::number(palette().cacheKey()) + sep + font().key() + sep + QString::number(dpr);
    if (key != m_imageKey || m_image.isNull()) {
        m_image = drawnImage(*this, palette().color(backgroundRole()),
                             [&](QPainter &p) { style()->drawComplexControl(QStyle::CC_GroupBox, &option, &p, this); });
        m_imageKey = key;
        ++m_drawn;
    }
    QPainter painter(this);
    painter.drawPixmap(0, 0, m_image);
}

} // namespace memledger::ui
