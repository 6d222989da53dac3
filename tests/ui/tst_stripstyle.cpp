// SPDX-License-Identifier: MIT
// StripStyle: scroll bars drawn in strips of fewer than 96 device rows, so
// that Qt's raster engine does not split their fills over its thread pool
// (issue 16: the control panel's scroll bar cost a control's first move
// 1.5-2 ms of wall time on two cores). The strips must add up to the picture
// the style draws directly.
#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QScrollBar>
#include <QStyleFactory>
#include <QStyleOptionSlider>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/paint/rasterthreadpool.h"

#include <vector>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

// A tall scroll bar as `style` draws it, at `dpr` device pixels per pixel, pressed on its slider or not.
QImage drawnScrollBar(QStyle *style, double dpr, bool sliderDown)
{
    QScrollBar bar(Qt::Vertical);
    bar.setStyle(style);
    bar.setRange(0, 300);
    bar.setPageStep(200);
    bar.setValue(120);
    bar.resize(16, 700);
    bar.setSliderDown(sliderDown);
    QImage image(bar.size() * dpr, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(QColor(0xee, 0xee, 0xee));
    QStyleOptionSlider option;
    option.initFrom(&bar);
    option.orientation = Qt::Vertical;
    option.minimum = bar.minimum();
    option.maximum = bar.maximum();
    option.sliderPosition = option.sliderValue = bar.value();
    option.pageStep = bar.pageStep();
    option.singleStep = bar.singleStep();
    option.subControls = QStyle::SC_All;
    if (sliderDown) {
        option.activeSubControls = QStyle::SC_ScrollBarSlider;
        option.state |= QStyle::State_Sunken;
    }
    QPainter painter(&image);
    style->drawComplexControl(QStyle::CC_ScrollBar, &option, &painter, &bar);
    return image;
}

} // namespace

TEST_CASE("A scroll bar drawn in strips is the picture its style draws at once", "[ui][bench]")
{
    std::unique_ptr<QStyle> fusion(QStyleFactory::create(QStringLiteral("Fusion")));
    REQUIRE(fusion);
    StripStyle strips(QStyleFactory::create(QStringLiteral("Fusion")));
    for (const double dpr : {1.0, 2.0})
        for (const bool down : {false, true}) {
            INFO("device pixel ratio " << dpr << (down ? ", slider pressed" : ""));
            CHECK(drawnScrollBar(&strips, dpr, down) == drawnScrollBar(fusion.get(), dpr, down));
        }
}

TEST_CASE("paintInStrips draws a tall area in strips of fewer than 96 device rows that cover it", "[ui][bench]")
{
    for (const double dpr : {1.0, 1.5, 2.0}) {
        QImage image(QSize(40, 500) * dpr, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(dpr);
        image.fill(Qt::white);
        QPainter painter(&image);
        const QRect area(5, 10, 30, 480);
        std::vector<int> deviceRows;
        int logicalRows = 0;
        paintInStrips(&painter, area, [&](QPainter &strip) {
            deviceRows.push_back(strip.device()->height());
            strip.fillRect(area, Qt::darkBlue); // clipped to the strip by its image's bounds
        });
        painter.end();
        INFO("device pixel ratio " << dpr);
        REQUIRE(deviceRows.size() > 1);
        for (int rows : deviceRows) {
            CHECK(rows < 96);
            logicalRows += qRound(rows / dpr);
        }
        CHECK(logicalRows >= area.height());
        // The whole area is painted, nothing outside it.
        const QImage logical = image.scaled(40, 500);
        CHECK(logical.pixelColor(20, 11) == QColor(Qt::darkBlue));
        CHECK(logical.pixelColor(20, 250) == QColor(Qt::darkBlue));
        CHECK(logical.pixelColor(20, 488) == QColor(Qt::darkBlue));
        CHECK(logical.pixelColor(20, 495) == QColor(Qt::white));
        CHECK(logical.pixelColor(2, 250) == QColor(Qt::white));
    }
    // A short area is drawn directly, on the painter given.
    QImage image(40, 50, QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    QPaintDevice *device = nullptr;
    paintInStrips(&painter, QRect(0, 0, 40, 50), [&](QPainter &strip) { device = strip.device(); });
    CHECK(device == &image);
}

TEST_CASE("The main window draws with a StripStyle, light and dark", "[ui][bench]")
{
    TestWindow gui;
    CHECK(qobject_cast<StripStyle *>(QApplication::style()) != nullptr);
    gui.window.setDark(true, false);
    CHECK(qobject_cast<StripStyle *>(QApplication::style()) != nullptr);
    gui.window.setDark(false, false);
    CHECK(qobject_cast<StripStyle *>(QApplication::style()) != nullptr);
}
