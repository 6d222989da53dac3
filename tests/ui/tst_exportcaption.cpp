// SPDX-License-Identifier: MIT
// Issue 16: high-resolution export with the model and the plan named on the
// image; the plans found exported as CSV.
#include <QFile>
#include <QImage>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/reports/report.h"
#include "core/reports/searchreport.h"
#include "testwindow.h"
#include "ui/chartexport.h"
#include "ui/document.h"
#include "ui/exporter.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/planfinder.h"

using namespace memledger;
using namespace memledger::test;

TEST_CASE("A chart exports at 2x with the model and the plan in a caption strip, PNG and SVG", "[ui][export][caption]")
{
    TestWindow gui;
    gui.window.resize(1400, 900);
    gui.window.memoryBars()->resize(800, 500);
    QTemporaryDir dir;
    REQUIRE(dir.isValid());

    // The caption names the plan as the header does: its name and core's parallel summary.
    const QString caption = gui.window.chartExport()->caption();
    INFO(caption.toStdString());
    CHECK(caption.contains(QString::fromStdString(gui.document.config().name)));
    CHECK(caption.contains(QString::fromStdString(parallelSummary(gui.document.config()))));
    CHECK(caption.contains(QString::fromStdString(gui.document.config().hardware.name)));

    CHECK(gui.window.chartExport()->imageScale() == 2.0); // the default
    const QString png = dir.filePath(QStringLiteral("bars.png"));
    REQUIRE(gui.window.chartExport()->exportChartTo(gui.window.memoryBars(), QStringLiteral("Device memory"), png));
    const QImage image(png);
    REQUIRE_FALSE(image.isNull());
    // Twice the chart's pixels across; taller than twice its height by the caption strip.
    // (Laid out as a grab would, the chart has its layout's size: measured after the export.)
    const int w = gui.window.memoryBars()->width(), h = gui.window.memoryBars()->height();
    CHECK(image.width() == 2 * w);
    CHECK(image.height() > 2 * h);
    CHECK(image.height() < 2 * h + 2 * 120);
    CHECK(image.text(QStringLiteral("Description")) == caption);
    // Something is written in the strip: it is not one flat color.
    const QRgb background = image.pixel(2, 2 * h + 4);
    bool written = false;
    for (int y = 2 * h; y < image.height() && !written; ++y)
        for (int x = 0; x < image.width() && !written; ++x)
            written = image.pixel(x, y) != background;
    CHECK(written);

    // A chosen scale.
    gui.window.chartExport()->setImageScale(3);
    gui.window.memoryBars()->resize(640, 400); // (the window's layout may have resized it meanwhile)
    REQUIRE(gui.window.chartExport()->exportChartTo(gui.window.memoryBars(), QStringLiteral("Device memory"), png));
    CHECK(QImage(png).width() == 3 * gui.window.memoryBars()->width());

    // SVG: the caption is a text of the drawing, under the chart.
    const QString svg = dir.filePath(QStringLiteral("bars.svg"));
    REQUIRE(gui.window.chartExport()->exportChartTo(gui.window.memoryBars(), QStringLiteral("Device memory"), svg));
    QFile file(svg);
    REQUIRE(file.open(QIODevice::ReadOnly));
    // The drawing's text, line by line as wrapped, joined again.
    QXmlStreamReader xml(&file);
    QStringList texts;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QStringLiteral("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements);
    CHECK_FALSE(xml.hasError());
    const QString drawn = texts.join(QLatin1Char(' ')).simplified();
    INFO(drawn.toStdString());
    CHECK(drawn.contains(QString::fromStdString(parallelSummary(gui.document.config())).simplified()));
    CHECK(drawn.contains(QString::fromStdString(gui.document.config().name).simplified()));
    gui.window.chartExport()->setImageScale(2);
}

TEST_CASE("Find plans exports its results as core's CSV, atomically", "[ui][planner][csv]")
{
    ui::Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    ui::PlanFinder finder(&document);
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("plans.csv"));

    // Nothing found yet: nothing to export, and the button says so by being off.
    CHECK_FALSE(finder.exportButton()->isEnabled());
    QString error;
    CHECK_FALSE(finder.exportCsv(path, &error));
    CHECK_FALSE(error.isEmpty());
    CHECK_FALSE(QFile::exists(path));

    finder.setTop(5);
    finder.findPlans();
    REQUIRE_FALSE(finder.result().plans.empty());
    CHECK(finder.exportButton()->isEnabled());
    REQUIRE(finder.exportCsv(path, &error));
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    CHECK(file.readAll().toStdString() == searchToCsv(finder.result()));

    // A folder that is not there: refused with a reason.
    CHECK_FALSE(finder.exportCsv(dir.filePath(QStringLiteral("missing/plans.csv")), &error));
    CHECK_FALSE(error.isEmpty());
}
