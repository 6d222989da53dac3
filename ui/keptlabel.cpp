// SPDX-License-Identifier: MIT
#include "ui/keptlabel.h"

#include <QPainter>
#include <QStyle>

#include <algorithm>

namespace memledger::ui {

namespace {

constexpr QChar kSep(0x1f);

} // namespace

QString KeptLabel::sizeKey() const
{
    const QMargins m = contentsMargins();
    return text() + kSep + font().key() + kSep + QString::number(int(alignment())) + kSep
           + QString::number(wordWrap() ? 1 : 0) + kSep + QString::number(int(textFormat())) + kSep
           + QString::number(margin()) + kSep + QString::number(indent()) + kSep + QString::number(frameWidth()) + kSep
           + QString::number(m.left()) + QLatin1Char(',') + QString::number(m.top()) + QLatin1Char(',')
           + QString::number(m.right()) + QLatin1Char(',') + QString::number(m.bottom());
}

void KeptLabel::keepSizesFor(const QString &key) const
{
    if (key == m_sizeKey)
        return;
    m_sizeKey = key;
    m_sizeHint = m_minimumSizeHint = QSize();
    m_heights.clear();
}

QSize KeptLabel::sizeHint() const
{
    keepSizesFor(sizeKey());
    if (!m_sizeHint.isValid()) {
        m_sizeHint = QLabel::sizeHint();
        ++m_measured;
    }
    return m_sizeHint;
}

QSize KeptLabel::minimumSizeHint() const
{
    keepSizesFor(sizeKey());
    if (!m_minimumSizeHint.isValid()) {
        m_minimumSizeHint = QLabel::minimumSizeHint();
        ++m_measured;
    }
    return m_minimumSizeHint;
}

int KeptLabel::heightForWidth(int width) const
{
    keepSizesFor(sizeKey());
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
    const double dpr = devicePixelRatioF();
    const QString key = sizeKey() + kSep + QString::number(width()) + QLatin1Char('x') + QString::number(height())
                        + kSep + QString::number(color.rgba()) + kSep + QString::number(dpr) + kSep
                        + QString::number(isEnabled() ? 1 : 0);
    if (key != m_imageKey || m_image.isNull()) {
        // As QLabel::paintEvent draws plain text: within the contents rectangle
        // less the margin, through the style, on a transparent image so that
        // whatever is under the label shows through as before.
        QPixmap image(size() * dpr);
        image.setDevicePixelRatio(dpr);
        image.fill(Qt::transparent);
        QPainter p(&image);
        p.setFont(font());
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
        style()->drawItemText(&p, r, flags, palette(), isEnabled(), text(), foregroundRole());
        p.end();
        m_image = image;
        m_imageKey = key;
        ++m_drawn;
    }
    QPainter painter(this);
    painter.drawPixmap(0, 0, m_image);
}

} // namespace memledger::ui
