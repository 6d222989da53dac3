// SPDX-License-Identifier: MIT
// Exports: a non-empty PNG, a valid SVG with real shapes, CSV and Markdown text.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include "core/formats/builtins.h"
#include "core/reports/report.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/exporter.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

TEST_CASE("Charts export to PNG and SVG, the ledger to CSV and Markdown", "[ui][export]")
{
    TestWindow gui;
    gui.window.resize(1400, 900);
    gui.window.memoryBars()->resize(800, 500);
    QTemporaryDir dir;
    REQUIRE(dir.isValid());

    QString error;
    const QString png = dir.filePath(QStringLiteral("bars.png"));
    REQUIRE(exportImage(gui.window.memoryBars(), png, &error));
    const QImage image(png);
    CHECK_FALSE(image.isNull());
    CHECK(image.size() == gui.window.memoryBars()->size());
    CHECK(image.width() > 100);

    const QString svg = dir.filePath(QStringLiteral("bars.svg"));
    REQUIRE(exportSvg(gui.window.memoryBars(), svg, QStringLiteral("Device memory"), &error));
    QFile file(svg);
    REQUIRE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    int shapes = 0, texts = 0;
    bool rootIsSvg = false;
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement)
            continue;
        if (xml.name() == QStringLiteral("svg"))
            rootIsSvg = true;
        shapes += xml.name() == QStringLiteral("path") || xml.name() == QStringLiteral("rect")
                  || xml.name() == QStringLiteral("polyline");
        texts += xml.name() == QStringLiteral("text");
        CHECK(xml.name() != QStringLiteral("image")); // vector, not an embedded raster
    }
    CHECK_FALSE(xml.hasError());
    CHECK(rootIsSvg);
    CHECK(shapes > 10);
    CHECK(texts > 5);

    const QString csv = dir.filePath(QStringLiteral("ledger.csv"));
    REQUIRE(exportText(ledgerToCsv(gui.document.ledger()), csv, &error));
    QFile csvFile(csv);
    REQUIRE(csvFile.open(QIODevice::ReadOnly));
    CHECK(csvFile.readAll().startsWith("pipeline_rank,weights,"));

    // A target that cannot be written is refused with a reason.
    CHECK_FALSE(exportText("x", dir.filePath(QStringLiteral("missing/dir/ledger.md")), &error));
    CHECK_FALSE(error.isEmpty());
    CHECK_FALSE(exportImage(gui.window.memoryBars(), dir.filePath(QStringLiteral("missing/dir/bars.png")), &error));
}
