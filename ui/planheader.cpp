// SPDX-License-Identifier: MIT
#include "ui/planheader.h"

#include <QAbstractTextDocumentLayout>
#include <QColor>
#include <QEvent>
#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <QResizeEvent>
#include <QScreen>
#include <QTextBlock>
#include <QTextLayout>
#include <QTextOption>
#include <QTimer>
#include <QTransform>

#include "ui/qtstring.h"
#include "ui/theme.h"

#include <cmath>
#include <utility>
#include <vector>

namespace memledger::ui {

namespace {
constexpr int kMargin = 4;
constexpr int kBottomMargin = 8;
// A slide's description, wrapped whole, in a smaller font than the talk's title, so that a long one leaves
// the charts their room on a 1024 × 768 projector (still larger than the user's own font: 1.6 × 0.8). A longer
// one takes a smaller font still, down to the user's own size (1.6 × 0.625), before its end is elided.
constexpr double kWrappedDetailScale = 0.8;
constexpr double kSmallestWrappedDetailScale = 0.625;
// The header with a wrapped description takes at most this share of the screen's height (1 / 4): the charts keep
// the rest.
constexpr int kWrappedDetailScreenShare = 4;

QFont detailFont(const QFont &font, double scale)
{
    QFont f = font;
    if (f.pointSizeF() > 0)
        f.setPointSizeF(f.pointSizeF() * scale);
    return f;
}

// The lines of `text` wrapped at `width` in `font`: each line's start and length.
std::vector<std::pair<int, int>> wrappedLines(const QString &text, const QFont &font, int width)
{
    QTextLayout layout(text, font);
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(option);
    layout.beginLayout();
    std::vector<std::pair<int, int>> lines;
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        lines.push_back({line.textStart(), line.textLength()});
    }
    layout.endLayout();
    return lines;
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
    const int lines = int(wrappedDetailLines(width).size());
    return lines * QFontMetrics(m_wrappedFont).lineSpacing();
}

const QStringList &PlanHeader::wrappedDetailLines(int width) const
{
    const int textWidth = std::max(1, width - 2 * kMargin);
    const QScreen *shown = screen();
    // The title above it counts in the share: the whole header stays within it.
    const int room = shown ? shown->availableGeometry().height() / kWrappedDetailScreenShare - textHeight(width)
                                 - kMargin - kBottomMargin
                           : 1 << 20;
    const QString key = m_detail + QChar(0x1f) + QString::number(textWidth) + QChar(0x1f) + font().key() + QChar(0x1f)
                        + QString::number(room);
    if (key == m_wrappedKey)
        return m_wrappedLines;
    m_wrappedKey = key;
    m_wrappedLines.clear();
    // The largest font in which the whole description fits the room, else the smallest, its end elided.
    std::vector<std::pair<int, int>> lines;
    int maxLines = 1;
    for (const double scale : {kWrappedDetailScale, 0.7, kSmallestWrappedDetailScale}) {
        m_wrappedFont = detailFont(font(), scale);
        lines = wrappedLines(m_detail, m_wrappedFont, textWidth);
        maxLines = std::max(1, room / QFontMetrics(m_wrappedFont).lineSpacing());
        if (lines.size() <= std::size_t(maxLines))
            break;
    }
    const QFontMetrics fm(m_wrappedFont);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (int(i) + 1 == maxLines && lines.size() > std::size_t(maxLines)) {
            // The last line that fits holds the rest of the text, elided.
            m_wrappedLines << fm.elidedText(m_detail.mid(lines[i].first).simplified(), Qt::ElideRight, textWidth);
            break;
        }
        m_wrappedLines << m_detail.mid(lines[i].first, lines[i].second).trimmed();
    }
    return m_wrappedLines;
}

QString PlanHeader::shownDetail() const
{
    if (m_wrapDetail) {
        const QStringList &lines = wrappedDetailLines(width());
        return !lines.isEmpty() && lines.back().endsWith(QChar(0x2026)) ? lines.join(QLatin1Char(' ')) : m_detail;
    }
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
    if (m_wrapDetail) {
        const QStringList &lines = wrappedDetailLines(width());
        const QFontMetrics fm(m_wrappedFont);
        painter.setFont(m_wrappedFont);
        double y = m_textHeight + fm.ascent();
        for (const QString &text : lines) {
            painter.drawText(QPointF(0, y), text);
            y += fm.lineSpacing();
        }
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
