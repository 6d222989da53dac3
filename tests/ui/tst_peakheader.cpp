// SPDX-License-Identifier: MIT
// Issue 16: "the ledger peak and the timeline peak differ (45.09 vs 45.12 GB)
// with no word of why". The header says its peak is the ledger's; its tooltip
// gives the timeline's and core's reason for the difference.
#include <QApplication>
#include <QHelpEvent>
#include <QToolTip>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/peakcompare.h"
#include "core/units.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/planheader.h"

using namespace memledger;

TEST_CASE("The header names the ledger's peak and its tooltip why the timeline's differs", "[ui][header][peaks]")
{
    ui::Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    ui::MainWindow window(&document);
    window.resize(1400, 900);
    auto *header = window.findChild<ui::PlanHeader *>();
    REQUIRE(header != nullptr);
    CHECK(header->plainText().contains(QStringLiteral("Ledger peak: rank")));

    const PeakComparison peaks = comparePeaks(document.timeline());
    REQUIRE(peaks.difference() != 0); // the case the issue saw
    const QString tip = window.peakToolTip();
    INFO(tip.toStdString());
    CHECK(tip.contains(QStringLiteral("ledger's peak")));
    CHECK(tip.contains(QString::fromStdString(formatGB(static_cast<double>(peaks.ledger_bytes)))));
    CHECK(tip.contains(QString::fromStdString(formatGB(static_cast<double>(peaks.timeline_bytes)))));
    CHECK(tip.contains(QString::fromStdString(peakComparisonText(peaks))));
    if (!peaks.transients.empty())
        CHECK(tip.contains(QString::fromStdString(peaks.transients.front().label)));

    // What hovering the header shows.
    window.show();
    QApplication::processEvents();
    QHelpEvent event(QEvent::ToolTip, QPoint(10, 10), header->mapToGlobal(QPoint(10, 10)));
    QApplication::sendEvent(header, &event);
    CHECK(QToolTip::text() == tip);
    QToolTip::hideText();
}
