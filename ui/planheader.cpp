// SPDX-License-Identifier: MIT
#include "ui/planheader.h"

#include <QAbstractTextDocumentLayout>
#include <QColor>
#include <QEvent>
#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <QResizeEvent>
#include <QTextBlock>
#include <QTextLayout>
#include <QTimer>
#include <QTransform>

#include "ui/qtstring.h"
#include "ui/theme.h"

#include <cmath>

namespace memledger::ui {

namespace {
constexpr int kMargin = 4;
constexpr int kBottomMargin = 8;
// A slide's description, wrapped whole, in a smaller font than the talk's title, so that a long one leaves
// the charts their room on a 1024 × 768 projector (still larger than the user's own font: 1.6 × 0.8).
constexpr double kWrappedDetailScale = 0.8;

QFont detailFont(const QFont &font, bool wrapped)
{
    QFont f = font;
    if (wrapped && f.pointSizeF() > 0)
        f.setPointSizeF(f.pointSizeF() * kWrappedDetailScale);
    return f;
}
} // namespace

PlanHeader::PlanHeader(QWidget *parent)
    : QWidget(parent)
{
    // Repainted on every edit: opaque, so that the widgets under it (the window's
    // background and every container down to here) are not painted again too.
    setAutoFillBackground(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    m_document.setDocumentMargin(0);
    m_document.setDefaultFont(font());
}

void PlanHeader::setContent(const QString &titleHtml, const QString &detail, bool detailIsError)
{
    if (titleHtml == m_html && detail == m_detail && detailIsError == m_detailIsError)
        return;
    if (titleHtml != m_html) {
        m_html = titleHtml;
        m_document.setHtml(titleHtml);
        const int before = m_textHeight;
        m_textHeight = textHeight(width());
        if (m_textHeight != before)
            updateGeometry(); // the only relayout: the first line wraps differently
    }
    const bool relayout = m_wrapDetail && detail != m_detail;
    m_detail = detail;
    m_detailIsError = detailIsError;
    setAccessibleName(plainText());
    if (relayout)
        updateGeometry();
    update();
}

void PlanHeader::setWrapDetail(bool wrap)
{
    if (wrap == m_wrapDetail)
        return;
    m_wrapDetail = wrap;
    updateGeometry();
    update();
}

int PlanHeader::detailHeight(int width) const
{
    if (!m_wrapDetail || m_detail.isEmpty())
        return fontMetrics().height();
    const QRect room(0, 0, std::max(1, width - 2 * kMargin), 1 << 20);
    return QFontMetrics(detailFont(font(), true)).boundingRect(room, Qt::TextWordWrap, m_detail).height();
}

QString PlanHeader::shownDetail() const
{
    if (m_wrapDetail)
        return m_detail;
    return fontMetrics().elidedText(m_detail, Qt::ElideRight, std::max(0, width() - 2 * kMargin));
}

QString PlanHeader::plainText() const
{
    const QString title = stripWordJoiners(m_document.toPlainText());
    return m_detail.isEmpty() ? title : title + QLatin1Char('\n') + m_detail;
}

QStringList PlanHeader::titleLines() const
{
    textHeight(width()); // laid out at this width
    QStringList lines;
    for (QTextBlock block = m_document.begin(); block.isValid(); block = block.next()) {
        const QTextLayout *layout = block.layout();
        for (int i = 0; layout && i < layout->lineCount(); ++i) {
            const QTextLine line = layout->lineAt(i);
            lines << stripWordJoiners(block.text().mid(line.textStart(), line.textLength()))
                         .replace(QChar(QChar::Nbsp), QLatin1Char(' '))
                         .trimmed();
        }
    }
    return lines;
}

int PlanHeader::textHeight(int width) const
{
    const qreal textWidth = std::max(1, width - 2 * kMargin);
    if (m_document.textWidth() != textWidth)
        m_document.setTextWidth(textWidth);
    return static_cast<int>(std::ceil(m_document.size().height()));
}

bool PlanHeader::hasHeightForWidth() const
{
    return true;
}

int PlanHeader::heightForWidth(int width) const
{
    const int height = textHeight(width) + detailHeight(width) + kMargin + kBottomMargin;
    textHeight(this->width()); // leave the document laid out for painting
    return height;
}

QSize PlanHeader::sizeHint() const
{
    const int ideal = static_cast<int>(std::ceil(m_document.idealWidth())) + 2 * kMargin;
    return {ideal, heightForWidth(width() > 0 ? width() : ideal)};
}

QSize PlanHeader::minimumSizeHint() const
{
    return {0, sizeHint().height()};
}

void PlanHeader::paintEvent(QPaintEvent *)
{
    // What draw() reads besides the widget's size, palette and font: the title, the detail, how it is shown
    // and the title's height as laid out.
    PaintKey key = KeptImages::keyOf(*this, m_html + QChar(0x1f) + m_detail);
    key.state = {m_detailIsError, m_wrapDetail, m_textHeight};
    m_painted.paint(*this, key, [this](QPainter &p) { draw(p); });
}

void PlanHeader::draw(QPainter &painter)
{
    painter.translate(kMargin, kMargin);
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette = palette();
    context.clip = QRectF(0, 0, width() - 2 * kMargin, m_textHeight);
    m_document.documentLayout()->draw(&painter, context);
    if (m_detail.isEmpty())
        return;
    // Red for refusal, the placeholder grey for the description.
    painter.setPen(m_detailIsError ? errorTextColor(palette()) : palette().color(QPalette::PlaceholderText));
    const QRect line(0, m_textHeight, width() - 2 * kMargin, detailHeight(width()));
    if (m_wrapDetail) {
        painter.setFont(detailFont(font(), true));
        painter.drawText(line, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_detail);
        return;
    }
    // The detail line changes far less often than the peak above it, which repaints the header on every
    // edit: it is elided and laid out once per text, width and font (QStaticText), then only drawn.
    const QString key = m_detail + QChar(0x1f) + QString::number(width()) + QChar(0x1f) + font().key();
    if (key != m_detailKey) {
        m_detailKey = key;
        m_detailText.setTextFormat(Qt::PlainText);
        m_detailText.setText(shownDetail());
        m_detailText.prepare(QTransform(), font());
    }
    painter.setFont(font());
    painter.drawStaticText(QPointF(0, m_textHeight), m_detailText);
}

void PlanHeader::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    m_textHeight = textHeight(width()); // the layout asked heightForWidth already
    // The minimum height is the wrapped height at this width, and layouts cache it: a header first laid
    // out narrow (while the window is built) would otherwise hold the window ~230 px taller for good.
    // Queued: a relayout asked for while the layout is placing this header is lost, and a grab of a hidden
    // window must not move what the caller sized by hand.
    if (event->size().width() != event->oldSize().width())
        QTimer::singleShot(0, this, [this] { updateGeometry(); });
}

void PlanHeader::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        m_document.setDefaultFont(font());
        m_textHeight = textHeight(width());
        updateGeometry();
        update();
    }
}

} // namespace memledger::ui
