// SPDX-License-Identifier: MIT
#include "ui/chartupdate.h"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QApplication>
#include <QBarSet>
#include <QBrush>
#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QString>
#include <QStringList>
#include <QTextDocument>
#include <QValueAxis>
#include <QWidget>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace memledger::ui {

void setNiceRange(QValueAxis *axis, const NiceAxis &nice)
{
    if (axis->min() != 0.0 || axis->max() != nice.max)
        axis->setRange(0, nice.max);
    if (axis->tickCount() != nice.ticks())
        axis->setTickCount(nice.ticks());
    const QString format = QStringLiteral("%.%1f").arg(nice.decimals());
    if (axis->labelFormat() != format)
        axis->setLabelFormat(format);
}

NiceAxis thinTicks(NiceAxis nice, double length, const QFont &labelsFont)
{
    // Qt Charts gives each label the axis's length over the ticks, less 4 px of padding at each end.
    const double need = QFontMetricsF(labelsFont).height() + 2 * 4.0 + 2.0;
    while (length > 0 && nice.ticks() > 2 && length / nice.ticks() < need) {
        const long steps = std::lround(nice.max / nice.step);
        const int by = steps % 2 == 0 ? 2 : steps % 3 == 0 ? 3 : steps % 5 == 0 ? 5 : 0;
        nice.step = by ? nice.step * by : nice.max;
    }
    return nice;
}

void setBarValues(QBarSet *set, const QList<qreal> &values)
{
    if (set->count() != values.size()) {
        if (set->count() > 0)
            set->remove(0, set->count());
        set->append(values);
        return;
    }
    for (qsizetype i = 0; i < values.size(); ++i)
        if (set->at(i) != values[i])
            set->replace(i, values[i]);
}

void setPoints(QXYSeries *series, const QList<QPointF> &points)
{
    if (series->points() != points)
        series->replace(points);
}

void setAxisTitle(QAbstractAxis *axis, const QString &title)
{
    if (axis->titleText() != title)
        axis->setTitleText(title);
}

void setChartTitle(QChart *chart, const QString &title)
{
    if (chart->title() != title)
        chart->setTitle(title);
}

namespace {
// How far rank 0's label must be from the first rank labelled, `first`: half of each label and Qt Charts'
// padding around a label (4 px each side).
double rankZeroRoom(const QFontMetricsF &fm, int first)
{
    return (fm.horizontalAdvance(QStringLiteral("0")) + fm.horizontalAdvance(QString::number(first))) / 2 + 2 * 4.0;
}
} // namespace

int setRankTicks(QValueAxis *axis, int count, int keep, double plotWidth)
{
    count = std::max(count, 1);
    keep = std::clamp(keep, 0, count - 1);
    if (axis->min() != -0.5 || axis->max() != count - 0.5)
        axis->setRange(-0.5, count - 0.5);
    // Qt Charts gives each label the plot's width over the number of ticks,
    // less 4 px of padding on each side, and measures the label as rich text
    // (half a pixel of margin around it), plus a pixel for rounding.
    const QFontMetricsF fm(axis->labelsFont());
    const double label = fm.horizontalAdvance(QString::number(count - 1)) + 2 * 4.0 + 1.0 + 1.0;
    // The labels fit, and rank 0 is one of them or has room for its own beside the first (RankZeroLabel).
    const double slot = plotWidth / count;
    int step = 1;
    int labelsFit = 0; // the first step whose labels fit, rank 0's room or not
    for (; step < count; ++step) {
        const int ticks = keep / step + (count - 1 - keep) / step + 1;
        const int first = keep % step;
        const bool fit = plotWidth <= 0 || plotWidth / ticks >= label;
        if (fit && labelsFit == 0)
            labelsFit = step;
        if (fit && (first == 0 || first * slot >= rankZeroRoom(fm, first)))
            break;
    }
    // No step leaves rank 0 room beside the first label (the peak on rank 1
    // in a narrow chart, where every step labels rank 1 first): label what
    // fits without rank 0's own label rather than the peak alone.
    if (step == count && labelsFit > 0)
        step = labelsFit;
    if (axis->tickType() != QValueAxis::TicksDynamic)
        axis->setTickType(QValueAxis::TicksDynamic);
    if (axis->tickAnchor() != keep)
        axis->setTickAnchor(keep);
    if (axis->tickInterval() != step)
        axis->setTickInterval(step);
    if (axis->minorTickCount() != step - 1)
        axis->setMinorTickCount(step - 1);
    return step;
}

RankZeroLabel::RankZeroLabel(QChart *chart, QValueAxis *axis)
    : m_chart(chart)
    , m_axis(axis)
    , m_item(new QGraphicsTextItem(chart))
{
    m_item->hide();
    m_item->setAcceptHoverEvents(false);
    QObject::connect(axis, &QValueAxis::labelsBrushChanged, m_item,
                     [this](const QBrush &brush) { m_item->setDefaultTextColor(brush.color()); });
    QObject::connect(axis, &QValueAxis::labelsFontChanged, m_item, [this](const QFont &font) {
        m_item->setFont(font);
        m_offset = -1; // measured again under the new font
    });
}

bool RankZeroLabel::isShown() const
{
    return m_item->isVisible();
}

void RankZeroLabel::update(QAbstractSeries *series, int step, int keep, bool shown)
{
    const int first = step > 0 ? keep % step : 0; // the lowest rank Qt Charts labels
    const QRectF plot = m_chart->plotArea();
    bool show = shown && step > 1 && first != 0 && plot.width() > 0;
    if (show && m_offset < 0) {
        // The row Qt Charts put its labels in: the top of a number under the plot.
        const QRectF scenePlot = m_chart->mapRectToScene(plot);
        for (QGraphicsItem *item : m_chart->scene()->items()) {
            auto *text = dynamic_cast<QGraphicsTextItem *>(item);
            if (!text || text == m_item || !text->isVisible())
                continue;
            bool number = false;
            text->toPlainText().toInt(&number);
            const QRectF box = text->sceneBoundingRect();
            if (number && box.top() >= scenePlot.bottom() - 1 && box.center().x() > scenePlot.left()
                && box.center().x() < scenePlot.right()) {
                m_offset = box.top() - scenePlot.bottom();
                // Laid out as Qt Charts lays its labels out (its margin around the text is not the default's).
                m_item->document()->setDocumentMargin(text->document()->documentMargin());
                m_item->setPlainText(QString());
                break;
            }
        }
    }
    // Room beside the first label, as setRankTicks chose the step for.
    const double slot = plot.width() / std::max(1.0, m_axis->max() - m_axis->min());
    show = show && m_offset >= 0 && first * slot >= rankZeroRoom(QFontMetricsF(m_axis->labelsFont()), first) - 0.5;
    if (!show) {
        m_item->hide();
        return;
    }
    if (m_item->toPlainText() != QStringLiteral("0")) {
        m_item->setFont(m_axis->labelsFont());
        m_item->setDefaultTextColor(m_axis->labelsBrush().color());
        m_item->setPlainText(QStringLiteral("0"));
    }
    const QPointF bar = m_chart->mapToPosition(QPointF(0, m_axis->min()), series);
    m_item->setPos(bar.x() - m_item->boundingRect().width() / 2, plot.bottom() + m_offset);
    m_item->show();
}

NiceAxis heldRange(const NiceAxis &next, const NiceAxis &shown, bool held)
{
    return held && next.max < shown.max ? shown : next;
}

int heldSlots(int next, int shown, bool held)
{
    return held ? std::max(next, shown) : next;
}

namespace {
// Fitting a title measures it word by word (text shaping), and a chart is
// fitted again on every edit with the same title and room most of the time:
// the last call's inputs and result are kept on the object, and a call with
// the same inputs, whose result is still shown, returns at once.
bool sameAsLastFit(QObject *object, const char *name, const QString &key, const QString &shown)
{
    const QStringList last = object->property(name).toStringList();
    return last.size() == 2 && last[0] == key && last[1] == shown;
}

void rememberFit(QObject *object, const char *name, const QString &key, const QString &shown)
{
    object->setProperty(name, QStringList{key, shown});
}

QString fitKey(std::initializer_list<QString> parts)
{
    QString key;
    for (const QString &part : parts)
        key += part + QChar(0x1f);
    return key;
}
} // namespace

void setWrappedChartTitle(QChart *chart, const QString &title, double width)
{
    // Qt Charts leaves a margin on each side of the title; a few pixels more for rounding.
    const QFontMetricsF fm(chart->titleFont());
    // Inside the chart layout's own margins (the background's inset) and the chart's margins (a legend's room).
    qreal l = 0, t = 0, r = 0, b = 0;
    if (chart->layout())
        chart->layout()->getContentsMargins(&l, &t, &r, &b);
    const double room
        = std::max(1.0, width - l - r - chart->margins().left() - chart->margins().right() - 3 * fm.averageCharWidth());
    const QString key = fitKey({title, QString::number(room), chart->titleFont().key()});
    if (sameAsLastFit(chart, "memledgerWrappedTitle", key, chart->title()))
        return;
    QStringList lines;
    QString line;
    for (const QString &word : title.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
        if (!line.isEmpty() && fm.horizontalAdvance(longer) > room) {
            lines << line.toHtmlEscaped();
            line = word;
        } else {
            line = longer;
        }
    }
    lines << line.toHtmlEscaped();
    setChartTitle(chart, lines.join(QStringLiteral("<br>")));
    rememberFit(chart, "memledgerWrappedTitle", key, chart->title());
}

void setFittedAxisTitle(QAbstractAxis *axis, const QString &title, const QString &shortTitle, double height,
                        bool allowTwoLines)
{
    // As the labels: 4 px of padding at each end, half a pixel of margin, and a pixel for rounding.
    const QFontMetricsF fm(axis->titleFont());
    // And Qt lays a title out as a text document with 4 px margins each side.
    const double room = height - 2 * 4.0 - 2.0 - 2 * 4.0;
    const QString key
        = fitKey({title, shortTitle, QString::number(room), QString::number(allowTwoLines), axis->titleFont().key()});
    if (sameAsLastFit(axis, "memledgerFittedTitle", key, axis->titleText()))
        return;
    // Next best to the whole title on one line: the whole title on two, split
    // at the space nearest its middle (a short plot keeps every word). Qt
    // measures a rich-text title with its document's margins: a line's height
    // of slack keeps it from cutting the two lines ("micro-batche…"). Not on a
    // right-hand axis: Qt 6.4 sizes its title for one line and cuts the second.
    QString twoLines;
    double twoLinesWidth = 0;
    for (qsizetype at = title.indexOf(QLatin1Char(' ')); at > 0; at = title.indexOf(QLatin1Char(' '), at + 1)) {
        const double widest = std::max(fm.horizontalAdvance(title.left(at)), fm.horizontalAdvance(title.mid(at + 1)));
        if (twoLines.isEmpty() || widest < twoLinesWidth) {
            twoLines = title.left(at).toHtmlEscaped() + QStringLiteral("<br>") + title.mid(at + 1).toHtmlEscaped();
            twoLinesWidth = widest;
        }
    }
    const QString fitted = fm.horizontalAdvance(title) <= room                                           ? title
                           : !twoLines.isEmpty() && twoLinesWidth + fm.height() <= room && allowTwoLines ? twoLines
                           : fm.horizontalAdvance(shortTitle) <= room                                    ? shortTitle
                                                                                                         : QString();
    setAxisTitle(axis, fitted);
    rememberFit(axis, "memledgerFittedTitle", key, axis->titleText());
}

bool setFittedBottomAxisTitle(QChart *chart, QAbstractAxis *axis, const QString &title)
{
    // The height Qt Charts lays the axes out in: from the plot's top (the
    // title and a half label above it) down to the bottom margin.
    qreal l = 0, t = 0, r = 0, b = 0;
    if (chart->layout())
        chart->layout()->getContentsMargins(&l, &t, &r, &b);
    const QFontMetricsF labels(axis->labelsFont()), titleFont(axis->titleFont());
    const double bottom = chart->size().height() - b - chart->margins().bottom();
    const double height = bottom - chart->plotArea().top() + labels.height() / 2;
    // A line of labels and one of title, and their paddings (12 px between
    // them, measured on Qt 6.4: the title whole at 14 px fonts in 43 px).
    const double need = labels.height() + titleFont.height() + 12.0;
    const bool fits = chart->size().height() <= 0 || need <= 0.4 * height;
    setAxisTitle(axis, fits ? title : QString());
    return fits;
}

ChartFonts chartFonts(const QChart *chart)
{
    ChartFonts f{chart->titleFont(), chart->legend()->font(), {}};
    for (const QAbstractAxis *axis : chart->axes())
        f.axes.emplace_back(axis->labelsFont(), axis->titleFont());
    return f;
}

namespace {
QFont scaled(QFont font, double factor)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    else if (font.pixelSize() > 0)
        font.setPixelSize(std::max(1, int(font.pixelSize() * factor + 0.5)));
    return font;
}
} // namespace

void scaleChartFonts(QChart *chart, const ChartFonts &base, double factor)
{
    chart->setTitleFont(scaled(base.title, factor));
    chart->legend()->setFont(scaled(base.legend, factor));
    const QList<QAbstractAxis *> axes = chart->axes();
    for (qsizetype i = 0; i < axes.size() && std::size_t(i) < base.axes.size(); ++i) {
        axes[i]->setLabelsFont(scaled(base.axes[std::size_t(i)].first, factor));
        axes[i]->setTitleFont(scaled(base.axes[std::size_t(i)].second, factor));
    }
}

double fontScale(const QWidget *view)
{
    const double app = QApplication::font().pointSizeF();
    const double own = view->font().pointSizeF();
    return app > 0 && own > 0 ? own / app : 1.0;
}

} // namespace memledger::ui
