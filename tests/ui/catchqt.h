// SPDX-License-Identifier: MIT
#pragma once

#include <QByteArrayView>
#include <QEvent>
#include <QFile>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTextDocument>
#include <QtGlobal>

#include <catch2/catch.hpp>
#include <string>

// Helpers of the GUI tests. Failures print QStrings as text, not as "{?}".
namespace Catch {
template<>
struct StringMaker<QString>
{
    static std::string convert(const QString &s) { return '"' + s.toStdString() + '"'; }
};
} // namespace Catch

namespace memledger::test {

// Writes `contents` to `name` in `dir` and returns the path.
inline QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &contents)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    REQUIRE(file.open(QIODevice::WriteOnly));
    REQUIRE(file.write(contents) == contents.size());
    return path;
}

// The plain text of a rich-text cell or tooltip.
inline QString plainText(const QString &html)
{
    QTextDocument doc;
    doc.setHtml(html);
    return doc.toPlainText();
}

// QAbstractItemModelTester reports through qWarning in Warning mode: with
// collectModelTestMessages as the message handler, its reports land here.
inline QStringList modelTestMessages;

inline void collectModelTestMessages(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type != QtDebugMsg && context.category && QByteArrayView(context.category).startsWith("qt.modeltest"))
        modelTestMessages << message;
}

// Counts the paint, resize and layout-request events a widget receives (install it as its event filter).
class PaintCount : public QObject
{
public:
    int paints = 0, resizes = 0, layouts = 0;

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        paints += event->type() == QEvent::Paint;
        resizes += event->type() == QEvent::Resize;
        layouts += event->type() == QEvent::LayoutRequest;
        return false;
    }
};

} // namespace memledger::test
