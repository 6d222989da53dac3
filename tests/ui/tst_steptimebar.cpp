// SPDX-License-Identifier: MIT
// The step-time bar beside the memory header: what the time model says, as
// text and as a bar stacked by part, whose segments are the parts' shares.
#include <QApplication>

#include "catchqt.h"
#include "core/time/steptime.h"
#include "ui/steptimebar.h"

#include <numeric>

using memledger::StepTime;
using memledger::ui::StepTimeBar;

TEST_CASE("Step-time bar: text, MFU and segments in proportion to the parts", "[ui][steptime]")
{
    StepTime t;
    t.compute = 6.0;
    t.recompute = 1.0;
    t.bubble = 1.0;
    t.tensorComm = 2.0;
    t.total = 10.0;
    t.mfu = 0.42;
    StepTimeBar bar;
    bar.resize(200, bar.sizeHint().height());
    CHECK(bar.text().isEmpty());
    bar.setStepTime(t);
    CHECK(bar.text().contains(QStringLiteral("10.00 s")));
    CHECK(bar.text().contains(QStringLiteral("MFU 42.0 %")));
    const std::vector<int> widths = bar.segmentWidths();
    REQUIRE(widths.size() == memledger::stepTimeParts(t).size());
    CHECK(std::accumulate(widths.begin(), widths.end(), 0) == 200);
    CHECK(widths[0] == 120); // compute: 60 %
    CHECK(widths[1] == 20);
    CHECK(widths[2] == 20);
    CHECK(widths[3] == 40); // tensor comm
    CHECK(widths[8] == 0); // optimizer: nothing
    // The tooltip lists the parts that take time, with their shares, and no others.
    CHECK(bar.toolTip().contains(QStringLiteral("tensor comm")));
    CHECK(bar.toolTip().contains(QStringLiteral("60.0 %")));
    CHECK_FALSE(bar.toolTip().contains(QStringLiteral("optimizer")));
    // A stale plan says so; clearing empties it.
    bar.setStale(true);
    CHECK(bar.toolTip().contains(QStringLiteral("last valid plan")));
    bar.clear();
    CHECK(bar.text().isEmpty());
    CHECK(bar.segmentWidths().empty());
}

TEST_CASE("Step-time bar: every part has its own color", "[ui][steptime]")
{
    for (std::size_t i = 0; i < memledger::stepTimeParts(StepTime{}).size(); ++i)
        for (std::size_t j = i + 1; j < memledger::stepTimeParts(StepTime{}).size(); ++j)
            CHECK(StepTimeBar::partColor(i) != StepTimeBar::partColor(j));
}

TEST_CASE("Step-time bar: a step of minutes or hours reads so, within the bar's width", "[ui][steptime]")
{
    // Issue 34, item 19: a 4,320 s step read "≈ 4320.00 s / step", wider than the bar, and was clipped.
    StepTimeBar bar;
    const QFontMetrics fm = bar.fontMetrics();
    for (const auto &[seconds, shown] : {std::pair{1050.0, "17.5 min"}, std::pair{4320.0, "1 h 12 min"},
                                         std::pair{359969.0, "99 h 59 min"}, std::pair{59.99, "59.99 s"}}) {
        StepTime t;
        t.compute = seconds;
        t.total = seconds;
        t.mfu = 0.555;
        bar.setStepTime(t);
        CAPTURE(seconds, bar.text());
        CHECK(bar.text().contains(QStringLiteral("≈ %1 / step").arg(QString::fromUtf8(shown))));
        CHECK(fm.horizontalAdvance(bar.text()) <= bar.sizeHint().width());
        CHECK(bar.toolTip().contains(QString::fromUtf8(shown)));
    }
}
