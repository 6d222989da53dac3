// SPDX-License-Identifier: MIT
#include "ui/paint/cachedsizedelegate.h"

#include <QFont>
#include <QIcon>
#include <QPainter>

#include <algorithm>

namespace memledger::ui {

namespace {
// Lines of Problems and notes number in the tens; a bound keeps a long session's cache small.
constexpr qsizetype kMaxCached = 1024;
} // namespace

QSize CachedSizeDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    // Everything the style's item layout reads: the text, whether there is an icon (and its
    // size), the font, the width offered and the wrapping.
    const QVariant icon = index.data(Qt::DecorationRole);
    const QString key = index.data(Qt::DisplayRole).toString() + QChar(0x1f) + QString::number(option.rect.width())
                        + QChar(0x1f) + QString::number(option.decorationSize.width()) + QLatin1Char('x')
                        + QString::number(option.decorationSize.height()) + QChar(0x1f)
                        + QString::number(icon.isValid() && !icon.isNull()) + QChar(0x1f)
                        + QString::number(int(option.features)) + QChar(0x1f) + option.font.key();
    if (const auto it = m_sizes.constFind(key); it != m_sizes.cend())
        return *it;
    const QSize size = QStyledItemDelegate::sizeHint(option, index);
    if (m_sizes.size() >= kMaxCached)
        m_sizes.clear();
    m_sizes.insert(key, size);
    ++m_computed;
    return size;
}

void CachedSizeDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const double dpr = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
    const QSize size = opt.rect.size();
    if (size.isEmpty()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    // Everything the style's item drawing reads: the text, icon, font, palette,
    // size, state (selected, hovered, focused, enabled), the features (wrapping,
    // alternate row) and the device's pixel ratio.
    const PaintKey key{opt.text,
                       size,
                       dpr,
                       opt.palette.cacheKey(),
                       opt.font,
                       {qint64(opt.state), qint64(opt.features), opt.icon.cacheKey(), opt.decorationSize.width(),
                        opt.decorationSize.height(), qint64(opt.displayAlignment), qint64(opt.textElideMode),
                        qint64(opt.viewItemPosition), opt.backgroundBrush.color().rgba(),
                        qint64(opt.backgroundBrush.style()), qint64(painter->renderHints())}};
    // Drawn at the origin of a transparent image: the view has painted the row's
    // background (the alternate rows' shade) under it already.
    m_images.paint(*painter, opt.rect.topLeft(), key, Qt::transparent, [&](QPainter &p) {
        p.setRenderHints(painter->renderHints());
        p.setFont(painter->font());
        QStyleOptionViewItem atOrigin = option;
        atOrigin.rect = QRect(QPoint(0, 0), size);
        QStyledItemDelegate::paint(&p, atOrigin, index);
    });
}

} // namespace memledger::ui
