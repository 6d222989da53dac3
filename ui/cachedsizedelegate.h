// SPDX-License-Identifier: MIT
#pragma once

#include <QHash>
#include <QSize>
#include <QStyledItemDelegate>

namespace memledger::ui {

// A word-wrapped list (Problems and notes) asks every item's size hint each
// time it is laid out again, and Qt's style lays the item's text out afresh
// for each (text shaping: a fifth of a move's time in the bench's profile when
// an error line comes and goes). The hint depends only on the text, the
// icon, the font and the width offered: it is kept per those and reused.
class CachedSizeDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    // Hints worked out afresh so far (tests).
    int computed() const { return m_computed; }

private:
    mutable QHash<QString, QSize> m_sizes;
    mutable int m_computed = 0;
};

} // namespace memledger::ui
