// SPDX-License-Identifier: MIT
#include "ui/paint/keptlabel.h"

#include <QPainter>
#include <QStyle>

#include <algorithm>

namespace memledger::ui {

KeptLabel::SizeInputs KeptLabel::sizeInputs() const
{
    return {text(),   font(),   int(alignment()), wordWrap() ? 1 : 0, int(textFormat()),
            margin(), indent(), frameWidth(),     contentsMargins()};
}

void KeptLabel::keepSizesFor(const SizeInputs &inputs) const
{
    if (inputs == m_sizeInputs)
        return;
    m_sizeInputs = inputs;
    m_sizeHint = m_minimumSizeHint = QSize();
    m_heights.clear();
}

QSize KeptLabel::keptSize(QSize &kept, bool minimum) const
{
    keepSizesFor(sizeInputs());
    if (!kept.isValid()) {
        kept = minimum ? QLabel::minimumSizeHint() : QLabel::sizeHint();
        ++m_measured;
    }
    return kept;
}

QSize KeptLabel::sizeHint() const
{
    return keptSize(m_sizeHint, false);
}

QSize KeptLabel::minimumSizeHint() const
{
    return keptSize(m_minimumSizeHint, true);
}

int KeptLabel::heightForWidth(int width) const
{
    keepSizesFor(sizeInputs());
    const auto kept = std::find_if(m_heights.begin(), m_heights.end(), [&](const auto &h) { return h.first == width; });
    if (kept != m_heights.end())
        return kept->second;
    const int height = QLabel::heightForWidth(width);
    ++m_measured;
    // A layout asks a few widths (the panel's, and its trial widths while it
    // settles); older ones give way.
    if (m_heights.size() >= 8)
        m_heights.erase(m_heights.begin());
    m_heights.emplace_back(width, height);
    return height;
}

void KeptLabel::paintEvent(QPaintEvent *event)
{
    // Only plain text without a frame, selection or mnemonic is drawn from an
    // image (plain text has no links to follow); everything else is QLabel's
    // own (rich text, pixmaps, selectable text).
    const bool plain = textFormat() == Qt::PlainText || (textFormat() == Qt::AutoText && !Qt::mightBeRichText(text()));
    if (!plain || frameShape() != QFrame::NoFrame
        || (textInteractionFlags() & (Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard | Qt::TextEditable))
        || !pixmap().isNull() || text().isEmpty() || (buddy() && text().contains(QLatin1Char('&')))) {
        QLabel::paintEvent(event);
        return;
    }
    const QColor color = palette().color(foregroundRole()); // in the widget's current (or disabled) colour group
    if (color.alpha() == 0)
        return; // a note kept blank (see ControlPanel::showProblems)
    // What the drawing below reads: the text and its layout flags (the sizes' inputs), the size, the colour,
    // whether it is enabled, the direction and the pixel ratio.
    const SizeInputs in = sizeInputs();
    const PaintKey key{in.text,
                       size(),
                       devicePixelRatioF(),
                       0,
                       in.font,
                       {color.rgba(), isEnabled(), in.alignment, in.wordWrap, in.textFormat, in.margin, in.indent,
                        in.frameWidth, in.contents.left(), in.contents.top(), in.contents.right(), in.contents.bottom(),
                        layoutDirection()}};
    QPainter painter(this);
    // As QLabel::paintEvent draws plain text: within the contents rectangle less the margin, through the
    // style, on a transparent image so that whatever is under the label shows through as before.
    m_image.paint(painter, {}, key, Qt::transparent, [&](QPainter &p) {
        QRect r = contentsRect().adjusted(margin(), margin(), -margin(), -margin());
        int flags = int(QStyle::visualAlignment(layoutDirection(), alignment()));
        if (wordWrap())
            flags |= Qt::TextWordWrap;
        flags |= layoutDirection() == Qt::LeftToRight ? Qt::TextForceLeftToRight : Qt::TextForceRightToLeft;
        if (indent() > 0) {
            if (flags & Qt::AlignLeft)
                r.setLeft(r.left() + indent());
            if (flags & Qt::AlignRight)
                r.setRight(r.right() - indent());
            if (flags & Qt::AlignTop)
                r.setTop(r.top() + indent());
            if (flags & Qt::AlignBottom)
                r.setBottom(r.bottom() - indent());
        }
        p.setFont(font());
        style()->drawItemText(&p, r, flags, palette(), isEnabled(), text(), foregroundRole());
    });
}

} // namespace memledger::ui
