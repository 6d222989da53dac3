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
#include "ui/lifetimeview.h"
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

TEST_CASE("An SVG export puts each shape's opacity on the shape and none on a group", "[ui][export]")
{
    // Issue 34, item 21: QSvgGenerator wrote a translucent legend swatch as <g fill="#000000"
    // fill-opacity="0.07"><rect …/></g>; a converter that does not carry the group's opacity down to the rect
    // filled it in opaque black. Each shape now carries its paint and opacity itself.
    ShownWindow gui(kDefaultScenario, QSize(1400, 900));
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    settle();
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    for (QWidget *chart :
         {static_cast<QWidget *>(gui.window.lifetimes()), static_cast<QWidget *>(gui.window.memoryBars())}) {
        INFO(chart->metaObject()->className());
        const QString svg = dir.filePath(QStringLiteral("chart.svg"));
        QString error;
        REQUIRE(exportSvg(chart, svg, QStringLiteral("chart"), &error));
        if (qEnvironmentVariableIsSet("MEMLEDGER_SVG_DIR")) // to look at through a converter
            QFile::copy(svg, qEnvironmentVariable("MEMLEDGER_SVG_DIR") + QLatin1Char('/')
                                 + QString::fromLatin1(chart->metaObject()->className()).section(QLatin1Char(':'), -1)
                                 + QStringLiteral(".svg"));
        QFile file(svg);
        REQUIRE(file.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&file);
        int groupOpacities = 0, shapes = 0, translucent = 0, unpainted = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement)
                continue;
            const QXmlStreamAttributes a = xml.attributes();
            if (xml.name() == QStringLiteral("g")) {
                groupOpacities += a.hasAttribute(QStringLiteral("fill-opacity"))
                                  + a.hasAttribute(QStringLiteral("stroke-opacity"))
                                  + a.hasAttribute(QStringLiteral("opacity"));
                continue;
            }
            if (xml.name() != QStringLiteral("rect") && xml.name() != QStringLiteral("path")
                && xml.name() != QStringLiteral("polyline") && xml.name() != QStringLiteral("polygon")
                && xml.name() != QStringLiteral("ellipse") && xml.name() != QStringLiteral("text"))
                continue;
            ++shapes;
            // Its own fill, and its own opacity where the fill is painted.
            const bool filled
                = a.hasAttribute(QStringLiteral("fill")) && a.value(QStringLiteral("fill")) != QStringLiteral("none");
            unpainted += !a.hasAttribute(QStringLiteral("fill"))
                         || (filled && !a.hasAttribute(QStringLiteral("fill-opacity")));
            const double opacity = a.value(QStringLiteral("fill-opacity")).toDouble();
            translucent += filled && opacity > 0 && opacity < 1;
        }
        CHECK_FALSE(xml.hasError());
        CHECK(shapes > 10);
        CHECK(groupOpacities == 0);
        CHECK(unpainted == 0);
        if (chart == gui.window.lifetimes())
            CHECK(translucent > 0); // the phase strip's and the legend's light swatches
    }
}
