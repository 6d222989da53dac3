// SPDX-License-Identifier: MIT
#include "ui/cachedsizedelegate.h"

#include <QFont>
#include <QIcon>

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

} // namespace memledger::ui
