// SPDX-License-Identifier: MIT
#include "ui/exporter.h"

#include <QBuffer>
#include <QImageWriter>
#include <QPainter>
#include <QPixmap>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

#include "core/formats/preset.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace memledger::ui {

namespace {

constexpr int kCaptionPad = 6;

// The caption's rectangle under a chart `width` wide: as many lines as the text
// needs at that width (a caption is never elided: it is what names the plan).
QRect captionRect(const QWidget *widget, const QString &caption)
{
    if (caption.isEmpty())
        return {};
    const int width = widget->width();
    const QRect text = widget->fontMetrics().boundingRect(QRect(0, 0, std::max(1, width - 2 * kCaptionPad), 100000),
                                                          Qt::TextWordWrap, caption);
    return {0, widget->height(), width, text.height() + 2 * kCaptionPad};
}

// The chart, then the caption strip in the chart's colors under it.
void paintCaptioned(QPainter &painter, QWidget *widget, const QString &caption)
{
    widget->render(&painter, QPoint(), QRegion(), QWidget::DrawWindowBackground | QWidget::DrawChildren);
    const QRect strip = captionRect(widget, caption);
    if (strip.isEmpty())
        return;
    painter.fillRect(strip, widget->palette().color(QPalette::Window));
    painter.setPen(widget->palette().color(QPalette::WindowText));
    painter.setFont(widget->font());
    painter.drawText(strip.adjusted(kCaptionPad, kCaptionPad, -kCaptionPad, -kCaptionPad),
                     Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption);
}

// QSvgGenerator writes each state's fill, stroke and their opacities on a <g> around the shapes drawn in it. A
// converter that does not carry a group's fill-opacity down to its shapes (issue 34, item 21: "renders
// black in common converters") fills a translucent swatch, written fill="#000000" fill-opacity="0.07", in
// opaque black. Each shape gets its group's paint attributes itself, and the groups lose their opacities.
QByteArray opacityOnShapes(const QByteArray &svg)
{
    static const QRegularExpression tag(QStringLiteral("<(/?)([A-Za-z]+)([^<>]*)>"));
    static const QRegularExpression attribute(QStringLiteral("([A-Za-z:-]+)=\"([^\"]*)\""));
    static const QStringList shapes{QStringLiteral("rect"),    QStringLiteral("path"),    QStringLiteral("polyline"),
                                    QStringLiteral("polygon"), QStringLiteral("ellipse"), QStringLiteral("circle"),
                                    QStringLiteral("line"),    QStringLiteral("text"),    QStringLiteral("image")};
    static const QStringList painted{QStringLiteral("fill"), QStringLiteral("fill-opacity"), QStringLiteral("stroke"),
                                     QStringLiteral("stroke-opacity"), QStringLiteral("opacity")};
    static const QStringList opacities{QStringLiteral("fill-opacity"), QStringLiteral("stroke-opacity"),
                                       QStringLiteral("opacity")};
    const QString text = QString::fromUtf8(svg);
    QString out;
    out.reserve(text.size() + text.size() / 4);
    std::vector<QList<std::pair<QString, QString>>> groups; // each open <g>'s paint attributes, outermost first
    qsizetype copied = 0;
    for (auto m = tag.globalMatch(text); m.hasNext();) {
        const QRegularExpressionMatch t = m.next();
        const bool closing = !t.captured(1).isEmpty();
        const QString name = t.captured(2);
        out += QStringView(text).mid(copied, t.capturedStart() - copied);
        copied = t.capturedEnd();
        if (name == QStringLiteral("g") && closing) {
            if (!groups.empty())
                groups.pop_back();
            out += t.captured(0);
            continue;
        }
        QString attributes = t.captured(3);
        QList<std::pair<QString, QString>> own;
        for (auto a = attribute.globalMatch(attributes); a.hasNext();) {
            const QRegularExpressionMatch at = a.next();
            own.push_back({at.captured(1), at.captured(2)});
        }
        const auto has = [&own](const QString &key) {
            return std::any_of(own.begin(), own.end(), [&key](const auto &kv) { return kv.first == key; });
        };
        if (name == QStringLiteral("g") && !closing) {
            QList<std::pair<QString, QString>> paint
                = groups.empty() ? QList<std::pair<QString, QString>>{} : groups.back();
            for (const auto &[key, value] : own)
                if (painted.contains(key)) {
                    paint.removeIf([&key](const auto &kv) { return kv.first == key; });
                    paint.push_back({key, value});
                }
            groups.push_back(paint);
            for (const QString &key : opacities)
                attributes.remove(QRegularExpression(QStringLiteral("\\s%1=\"[^\"]*\"").arg(key)));
            out += QStringLiteral("<g") + attributes + QLatin1Char('>');
            continue;
        }
        if (closing || !shapes.contains(name) || groups.empty()) {
            out += t.captured(0);
            continue;
        }
        QString inherited;
        for (const auto &[key, value] : groups.back())
            if (!has(key))
                inherited += QStringLiteral(" %1=\"%2\"").arg(key, value);
        out += QLatin1Char('<') + name + inherited + attributes + QLatin1Char('>');
    }
    out += QStringView(text).mid(copied);
    return out.toUtf8();
}

} // namespace

QImage renderImage(QWidget *widget, double scale, const QString &caption)
{
    scale = std::clamp(scale, 0.25, 8.0);
    // Laid out first as render() and grab() do (a chart in a window never
    // shown is sized by its layout only then), so the image has its final size.
    {
        QPixmap probe(1, 1);
        widget->render(&probe, QPoint(), QRegion(0, 0, 1, 1));
    }
    const QRect strip = captionRect(widget, caption);
    const QSize logical(widget->width(), widget->height() + strip.height());
    // Drawn again at the scale, not a grab scaled up: the charts' shapes and
    // text are vectors, so a 2x image is as sharp as a 2x screen would show it.
    QImage image((QSizeF(logical) * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(widget->palette().color(QPalette::Window));
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        paintCaptioned(painter, widget, caption);
    }
    // The caption also as the PNG's Description text chunk, for a reader that indexes images.
    if (!caption.isEmpty())
        image.setText(QStringLiteral("Description"), caption);
    return image;
}

bool exportImage(QWidget *widget, const QString &path, QString *error, double scale, const QString &caption)
{
    const QImage image = renderImage(widget, scale, caption);
    // Through QSaveFile: a failed write leaves the old image in place.
    // Unbuffered: Qt 6.4's commit() ignores a failed flush of its buffer
    // (see Document::saveFile).
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    QImageWriter writer(&file, QByteArray());
    writer.setFormat(path.section(QLatin1Char('.'), -1).toLatin1().isEmpty()
                         ? QByteArrayLiteral("png")
                         : path.section(QLatin1Char('.'), -1).toLower().toLatin1());
    if (!writer.write(image)) {
        if (error)
            *error = writer.errorString();
        file.cancelWriting();
        return false;
    }
    if (!file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

bool exportSvg(QWidget *widget, const QString &path, const QString &title, QString *error, const QString &caption)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    QBuffer generated;
    generated.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&generated);
    const QSize size(widget->width(), widget->height() + captionRect(widget, caption).height());
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(title);
    generator.setDescription(caption.isEmpty() ? QStringLiteral("Exported from MemLedger")
                                               : QStringLiteral("Exported from MemLedger: %1").arg(caption));
    {
        QPainter painter(&generator);
        paintCaptioned(painter, widget, caption);
    }
    const QByteArray svg = opacityOnShapes(generated.data());
    if (file.write(svg) != svg.size() || file.error() != QFileDevice::NoError || !file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

bool exportText(const std::string &text, const QString &path, QString *error)
{
    const std::string failure = writeFileAtomically(path.toStdString(), text);
    if (!failure.empty() && error)
        *error = QString::fromStdString(failure);
    return failure.empty();
}

} // namespace memledger::ui
