// SPDX-License-Identifier: MIT
#include <QMimeData>
#include <QUrl>

#include "catchqt.h"
#include "ui/tracefiles.h"

using memledger::ui::isTraceFileName;
using memledger::ui::traceFileFromMimeData;

TEST_CASE("Snapshots and profiler traces, gzipped or not, are trace files — nothing else is", "[ui][measured][drop]")
{
    for (const char *name : {"/r/snapshot.pickle", "/r/snapshot.pickle.gz", "/r/S.PICKLE", "/r/a.pkl", "/r/a.pkl.gz",
                             "/r/trace.json", "/r/host.pt.trace.json.gz"})
        CHECK(isTraceFileName(QString::fromUtf8(name)));
    for (const char *name : {"/r/model.pt", "/r/notes.txt", "/r/archive.gz", "/r/pickle", "/r/image.png", "/r/json"})
        CHECK_FALSE(isTraceFileName(QString::fromUtf8(name)));
}

TEST_CASE("A drag offers the first local trace file it carries", "[ui][measured][drop]")
{
    QMimeData mime;
    CHECK(traceFileFromMimeData(&mime).isEmpty());
    CHECK(traceFileFromMimeData(nullptr).isEmpty());
    mime.setText(QStringLiteral("/r/snapshot.pickle")); // text is not a file
    CHECK(traceFileFromMimeData(&mime).isEmpty());
    mime.setUrls({QUrl(QStringLiteral("https://example.org/snapshot.pickle")),
                  QUrl::fromLocalFile(QStringLiteral("/r/readme.md")),
                  QUrl::fromLocalFile(QStringLiteral("/r/snapshot.pickle.gz")),
                  QUrl::fromLocalFile(QStringLiteral("/r/trace.json"))});
    CHECK(traceFileFromMimeData(&mime) == QStringLiteral("/r/snapshot.pickle.gz"));
    mime.setUrls({QUrl::fromLocalFile(QStringLiteral("/r/readme.md"))});
    CHECK(traceFileFromMimeData(&mime).isEmpty());
}
