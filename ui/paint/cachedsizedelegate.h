// SPDX-License-Identifier: MIT
#pragma once

#include <QHash>
#include <QSize>
#include <QStyledItemDelegate>

#include "ui/paint/keptimages.h"

namespace memledger::ui {

// A word-wrapped list (Problems and notes) asks every item's size hint each
// time it is laid out again, and Qt's style lays the item's text out afresh
// for each (text shaping: a fifth of a move's time in the bench's profile when
// an error line comes and goes). The hint depends only on the text, the
// icon, the font and the width offered: it is kept per those and reused.
//
// Painting an item lays its text out again too (Qt's style shapes and wraps it
// twice per paint: 0.8 M instructions for a long note, a fifth of a Model
// change in the bench's callgrind profile), and the list repaints items whose
// text did not change (a neighbour's line coming or going, a second paint in
// the same frame, a plan toggled back and forth). Each item is drawn once per
// text, size, state and palette into a kept image (KeptImages), and later
// paints draw the image.
class CachedSizeDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    // Hints worked out afresh so far (tests).
    int computed() const { return m_computed; }
    // Items drawn afresh (not from a kept pixmap) so far (tests).
    int drawn() const { return m_images.drawn(); }

private:
    mutable QHash<QString, QSize> m_sizes;
    mutable int m_computed = 0;
    mutable KeptImages m_images{16 * 1024, KeptImages::Budget::Kilobytes};
};

} // namespace memledger::ui
