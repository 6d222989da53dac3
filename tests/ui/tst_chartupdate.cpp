// SPDX-License-Identifier: MIT
// The cheap chart setters: a value that did not change must not reach Qt
// Charts, whose setters relayout or repaint even for an equal value.
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QImage>
#include <QLineSeries>
#include <QPainter>
#include <QSignalSpy>
#include <QValueAxis>

#include "ui/chartupdate.h"
#include "ui/paint/rasterthreadpool.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::ui;

TEST_CASE("setNiceRange touches the axis only when the nice range changes", "[ui][charts]")
{
    QValueAxis axis;
    QSignalSpy formats(&axis, &QValueAxis::labelFormatChanged);
    QSignalSpy ticks(&axis, &QValueAxis::tickCountChanged);
    QSignalSpy ranges(&axis, &QValueAxis::rangeChanged);
    const NiceAxis nice = niceAxis(73.0); // 0..80 by 10 (units.h)
    setNiceRange(&axis, nice);
    CHECK(axis.max() == nice.max);
    CHECK(axis.tickCount() == nice.ticks());
    CHECK(axis.labelFormat() == QStringLiteral("%.%1f").arg(nice.decimals()));
    const int f = int(formats.count()), t = int(ticks.count()), r = int(ranges.count());
    setNiceRange(&axis, niceAxis(74.0)); // the same nice axis
    CHECK(formats.count() == f);
    CHECK(ticks.count() == t);
    CHECK(ranges.count() == r);
    setNiceRange(&axis, niceAxis(0.73)); // a new one: 0..0.8, one decimal
    CHECK(axis.max() == Approx(niceAxis(0.73).max));
    CHECK(axis.labelFormat() == QStringLiteral("%.1f"));
}

TEST_CASE("setBarValues replaces only changed values and rebuilds on a new count", "[ui][charts]")
{
    QBarSet set(QStringLiteral("s"));
    setBarValues(&set, {1.0, 2.0, 3.0});
    REQUIRE(set.count() == 3);
    QSignalSpy changed(&set, &QBarSet::valueChanged);
    setBarValues(&set, {1.0, 5.0, 3.0});
    CHECK(changed.count() == 1);
    CHECK(changed.front().front().toInt() == 1);
    CHECK(set.at(1) == 5.0);
    setBarValues(&set, {1.0, 5.0, 3.0});
    CHECK(changed.count() == 1);
    setBarValues(&set, {4.0, 4.0});
    CHECK(set.count() == 2);
    CHECK(set.at(0) == 4.0);
    CHECK(set.at(1) == 4.0);
}

TEST_CASE("setPoints and the title setters skip equal values", "[ui][charts]")
{
    QLineSeries series;
    QSignalSpy replaced(&series, &QXYSeries::pointsReplaced);
    setPoints(&series, {{0, 1}, {1, 1}});
    setPoints(&series, {{0, 1}, {1, 1}});
    CHECK(replaced.count() == 1);
    QChart chart;
    setChartTitle(&chart, QStringLiteral("Device memory"));
    CHECK(chart.title() == QStringLiteral("Device memory"));
    QValueAxis axis;
    QSignalSpy titles(&axis, &QAbstractAxis::titleTextChanged);
    setAxisTitle(&axis, QStringLiteral("GB"));
    setAxisTitle(&axis, QStringLiteral("GB"));
    CHECK(titles.count() == 1);
}

TEST_CASE("A theme's one-colour background gradient becomes that solid colour: the same pixels, one plain fill",
          "[ui][charts][bench]")
{
    // Qt's raster engine blends a gradient's spans on its thread pool (dozens of jobs a chart repaint); the
    // light theme's background is a gradient from white to white.
    const auto render = [](QChart *chart) {
        QChartView view(chart);
        view.resize(320, 200);
        QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::magenta); // what the chart does not cover shows
        {
            QPainter painter(&image);
            view.render(&painter);
        }
        view.setChart(new QChart); // the view must not delete the test's chart
        return image;
    };
    QChart light;
    light.setTheme(QChart::ChartThemeLight);
    REQUIRE(light.backgroundBrush().gradient() != nullptr);
    const QImage before = render(&light);
    solidChartBackground(&light);
    CHECK(light.backgroundBrush().style() == Qt::SolidPattern);
    CHECK(light.backgroundBrush().color() == QColor(Qt::white));
    CHECK(render(&light) == before);

    // A real gradient (the dark theme's, dark grey to near black) is left as it is.
    QChart dark;
    dark.setTheme(QChart::ChartThemeDark);
    const QBrush gradient = dark.backgroundBrush();
    solidChartBackground(&dark);
    CHECK(dark.backgroundBrush() == gradient);
}
