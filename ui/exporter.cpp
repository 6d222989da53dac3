// SPDX-License-Identifier: MIT
#include "ui/exporter.h"

#include <QImageWriter>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

#include "core/formats/preset.h"

namespace memledger::ui {

bool exportImage(QWidget *widget, const QString &path, QString *error)
{
    const QImage image = widget->grab().toImage();
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

bool exportSvg(QWidget *widget, const QString &path, const QString &title, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered)) {
        if (error)
            *error = file.errorString();
        return false;
    }
    QSvgGenerator generator;
    generator.setOutputDevice(&file);
    generator.setSize(widget->size());
    generator.setViewBox(QRect(QPoint(0, 0), widget->size()));
    generator.setTitle(title);
    generator.setDescription(QStringLiteral("Exported from MemLedger"));
    {
        QPainter painter(&generator);
        widget->render(&painter);
    }
    if (file.error() != QFileDevice::NoError || !file.commit()) {
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
