// SPDX-License-Identifier: MIT
#include "ui/steptimebar.h"

#include <QEvent>
#include <QPainter>

#include "core/view/gantt.h"
#include "ui/qtstring.h"

#include <array>
#include <tuple>

namespace memledger::ui {

namespace {

// In minutes or hours once a minute long: a 4,320 s step in seconds outgrew the label's width.
QString secondsText(double s)
{
    return toQString(formatDuration(s));
}

// Compute in blue (the work itself), recompute a lighter blue, the bubble
// grey (idle), communication in oranges and purple, the optimizer green,
// offload stalls vermillion: Okabe & Ito's hues, so the bar reads without
// relying on red-green contrast.
constexpr std::array<QRgb, 12> kPartColors = {
    0xff0072b2, // compute
    0xff56b4e9, // recompute
    0xffa0a0a0, // bubble
    0xffe69f00, // tensor_comm
    0xfff0c040, // context_comm
    0xffcc79a7, // expert_comm
    0xff8a5a9e, // data_comm_exposed
    0xffb08060, // pipeline_comm
    0xff009e73, // optimizer
    0xffd55e00, // activation_offload
    0xff9c3d00, // activation_balance: a darker vermillion, the same kind of stall over another link
    0xfff4a582, // grad_offload: the stall family, a light vermillion beside the balance's dark one
};

static_assert(kPartColors.size() == std::tuple_size_v<decltype(stepTimeParts(StepTime{}))>,
              "one color per step-time part");

constexpr int kBarHeight = 8;
constexpr int kGap = 3;

QString partLabel(std::string_view name)
{
    return toQString(name).replace(QLatin1Char('_'), QLatin1Char(' '));
}

} // namespace

StepTimeBar::StepTimeBar(QWidget *parent)
    : QWidget(parent)
{
    // Repainted on every edit: opaque, so that the widgets under it (the window's
    // background and every container down to here) are not painted again too.
    setAutoFillBackground(true);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    setAccessibleName(tr("Estimated step time"));
}

QColor StepTimeBar::partColor(std::size_t part)
{
    return part < kPartColors.size() ? QColor::fromRgb(kPartColors[part]) : QColor(Qt::gray);
}

void StepTimeBar::setStepTime(const StepTime &time)
{
    m_time = time;
    m_stale = false;
    refresh();
}

void StepTimeBar::setStale(bool stale)
{
    if (m_stale == stale)
        return;
    m_stale = stale;
    refresh();
}

void StepTimeBar::clear()
{
    m_time.reset();
    refresh();
}

QString StepTimeBar::text() const
{
    if (!m_time)
        return {};
    return tr("≈ %1 / step · MFU %2 %").arg(secondsText(m_time->total)).arg(m_time->mfu * 100.0, 0, 'f', 1);
}

QRect StepTimeBar::barRect() const
{
    const int textHeight = fontMetrics().height();
    return {0, textHeight + kGap, width(), kBarHeight};
}

std::vector<int> StepTimeBar::segmentWidths() const
{
    std::vector<int> widths;
    if (!m_time || m_time->total <= 0)
        return widths;
    const auto parts = stepTimeParts(*m_time);
    const int full = barRect().width();
    // Rounded cumulatively so the segments always add up to the bar.
    double sum = 0;
    int previous = 0;
    for (const StepTimePart &p : parts) {
        sum += p.seconds;
        const int edge = static_cast<int>(full * sum / m_time->total + 0.5);
        widths.push_back(edge - previous);
        previous = edge;
    }
    return widths;
}

QSize StepTimeBar::sizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    return {std::max(fm.horizontalAdvance(tr("≈ 00 h 00 min / step · MFU 00.0 %")), 160),
            fm.height() + kGap + kBarHeight};
}

QSize StepTimeBar::minimumSizeHint() const
{
    return sizeHint();
}

void StepTimeBar::refresh()
{
    if (!m_time) {
        setToolTip({});
        update();
        return;
    }
    QString rows;
    const auto parts = stepTimeParts(*m_time);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].seconds <= 0)
            continue;
        rows += QStringLiteral("<tr><td><span style='color:%1'>■</span> %2</td><td align='right'>%3</td>"
                               "<td align='right'>%4 %</td></tr>")
                    .arg(partColor(i).name(), partLabel(parts[i].name).toHtmlEscaped(), secondsText(parts[i].seconds))
                    .arg(100.0 * parts[i].seconds / m_time->total, 0, 'f', 1);
    }
    setToolTip(tr("<b>Estimated step time %1</b>%2<br>MFU %3 %: the model's FLOPs per step over the step time and "
                  "the device's peak.<table cellspacing='3'>%4</table>Kernels at the device's achieved rates, "
                  "calibrated on published Megatron runs (Help > Documentation, time-model.md).")
                   .arg(secondsText(m_time->total), m_stale ? tr(" — <i>of the last valid plan</i>") : QString())
                   .arg(m_time->mfu * 100.0, 0, 'f', 1)
                   .arg(rows));
    update();
}

void StepTimeBar::paintEvent(QPaintEvent *)
{
    if (!m_time)
        return;
    QPainter painter(this);
    if (m_stale)
        painter.setOpacity(0.45);
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(0, 0, width(), fontMetrics().height()), Qt::AlignLeft | Qt::AlignVCenter, text());
    const QRect bar = barRect();
    const std::vector<int> widths = segmentWidths();
    int x = bar.left();
    for (std::size_t i = 0; i < widths.size(); ++i) {
        if (widths[i] > 0)
            painter.fillRect(QRect(x, bar.top(), widths[i], bar.height()), partColor(i));
        x += widths[i];
    }
}

void StepTimeBar::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::PaletteChange)
        updateGeometry();
    QWidget::changeEvent(event);
}

} // namespace memledger::ui
