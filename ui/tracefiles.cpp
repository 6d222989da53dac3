// SPDX-License-Identifier: MIT
#include "ui/tracefiles.h"

#include <QCoreApplication>
#include <QMimeData>
#include <QStringList>
#include <QUrl>

namespace memledger::ui {

namespace {

const QStringList kSuffixes = {QStringLiteral(".pickle"), QStringLiteral(".pickle.gz"), QStringLiteral(".pkl"),
                               QStringLiteral(".pkl.gz"), QStringLiteral(".json"),      QStringLiteral(".json.gz")};

} // namespace

bool isTraceFileName(const QString &path)
{
    return std::any_of(kSuffixes.begin(), kSuffixes.end(),
                       [&](const QString &suffix) { return path.endsWith(suffix, Qt::CaseInsensitive); });
}

QString traceFileFromMimeData(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl &url : mime->urls()) {
        if (url.isLocalFile() && isTraceFileName(url.toLocalFile()))
            return url.toLocalFile();
    }
    return {};
}

QString traceFileFilter()
{
    return QCoreApplication::translate("memledger::ui::MainWindow",
                                       "Measured traces (*.pickle *.pickle.gz *.pkl *.pkl.gz *.json *.json.gz);;"
                                       "Memory snapshots (*.pickle *.pickle.gz *.pkl *.pkl.gz);;"
                                       "Profiler traces (*.json *.json.gz);;All files (*)");
}

} // namespace memledger::ui
