// SPDX-License-Identifier: MIT
// Issue 16: "the ledger peak and the timeline peak differ (45.09 vs 45.12 GB)
// with no word of why". The header says its peak is the ledger's; its tooltip
// gives the timeline's and core's reason for the difference.
#include <QApplication>
#include <QHelpEvent>
#include <QImage>
#include <QRegularExpression>
#include <QToolTip>

#include "catchqt.h"
#include "core/base/units.h"
#include "core/formats/builtins.h"
#include "core/timeline/peakcompare.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/planheader.h"
#include "ui/windowheader.h"

#include <algorithm>
#include <vector>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("The header names the simulated peak and its tooltip why the ledger's rows differ", "[ui][header][peaks]")
{
    TestWindow gui;
    gui.window.resize(1400, 900);
    auto *header = gui.window.findChild<ui::PlanHeader *>();
    REQUIRE(header != nullptr);
    CHECK(header->plainText().contains(QStringLiteral("Peak: rank")));

    const PeakComparison peaks = comparePeaks(gui.document.timeline());
    REQUIRE(peaks.difference() != 0); // the case the issue saw
    // One peak: the header's figure and verdict are the simulated iteration's (issue 32).
    CHECK(gui.document.ledger().peak_bytes == peaks.timeline_bytes);
    CHECK(header->plainText().contains(QString::fromStdString(formatGB(double(peaks.timeline_bytes)))));
    const QString tip = gui.window.header()->peakToolTip();
    INFO(tip.toStdString());
    CHECK(tip.contains(QStringLiteral("ledger's rows")));
    CHECK(tip.contains(QString::fromStdString(formatGB(static_cast<double>(peaks.ledger_bytes)))));
    CHECK(tip.contains(QString::fromStdString(formatGB(static_cast<double>(peaks.timeline_bytes)))));
    CHECK(tip.contains(QString::fromStdString(peakComparisonText(peaks))));
    if (!peaks.transients.empty())
        CHECK(tip.contains(QString::fromStdString(peaks.transients.front().label)));

    // What hovering the header shows.
    gui.show();
    QHelpEvent event(QEvent::ToolTip, QPoint(10, 10), header->mapToGlobal(QPoint(10, 10)));
    QApplication::sendEvent(header, &event);
    CHECK(QToolTip::text() == tip);
    QToolTip::hideText();
}

TEST_CASE("The header wraps between phrases, never inside one", "[ui][header][wrap]")
{
    // A narrow window wrapped the header mid-phrase: "rank / 0", "45.09 / GB of
    // 85.90 GB", "671.03 / B parameters". Each phrase below must sit whole on
    // one line at every width, in the default plan and in the DeepSeek-V3
    // scenarios (the longest headers).
    const QList<QRegularExpression> phrases = {
        QRegularExpression(QStringLiteral("rank \\d+")),
        QRegularExpression(QStringLiteral("\\d+(\\.\\d+)? (GB|GiB)")),
        QRegularExpression(QStringLiteral("of \\d+(\\.\\d+)? GB")),
        QRegularExpression(QStringLiteral("\\(\\d+(\\.\\d+)? GiB\\)")),
        QRegularExpression(QStringLiteral("\\d+ GPUs?")),
        QRegularExpression(QStringLiteral("\\d+(\\.\\d+)? [KMBT]\\b")), // "70.55 B" (parameters)
        QRegularExpression(QStringLiteral("— (fits|does not fit)")),
        QRegularExpression(QStringLiteral("H100-SXM-80GB")),
    };
    for (const char *scenario :
         {"llama-3-70b-128xh100", "deepseek-v3-2048xh100-p16-v4", "deepseek-v3-2048xh100-dualpipe"}) {
        ShownWindow gui(scenario, QSize(1024, 700));
        auto *header = gui.window.findChild<ui::PlanHeader *>();
        REQUIRE(header != nullptr);
        const QString title = header->plainText().section(QLatin1Char('\n'), 0, 0);
        CHECK(title.contains(QStringLiteral("Peak: rank")));
        // The window's own width first, then the header alone at every width down to a phone's.
        std::vector<int> widths{header->width()};
        for (int w = 1400; w >= 300; w -= 7)
            widths.push_back(w);
        int wrapped = 0;
        for (const int w : widths) {
            header->resize(w, header->heightForWidth(w));
            const QStringList lines = header->titleLines();
            wrapped += lines.size() > 1;
            for (const QRegularExpression &phrase : phrases) {
                for (auto it = phrase.globalMatch(title); it.hasNext();) {
                    const QString whole = it.next().captured();
                    const bool inOneLine
                        = std::any_of(lines.begin(), lines.end(), [&](const QString &l) { return l.contains(whole); });
                    INFO(scenario << " at " << w << " px: \"" << whole.toStdString() << "\" in "
                                  << lines.join(QStringLiteral(" | ")).toStdString());
                    CHECK(inOneLine);
                }
            }
        }
        CHECK(wrapped > 0); // the widths did make it wrap
    }
}

TEST_CASE("The header draws a content once and repaints it from what it kept", "[ui][header][bench]")
{
    // Issue 16, one frame per move: the header's rich text was drawn afresh at every repaint (a tenth of the
    // bench's instructions), though a control moved back, an undo or a toggled plan shows a header painted
    // before. A content shown again is not drawn again, and looks as it did. (grab() paints the widget.)
    ui::PlanHeader header;
    header.resize(900, 80);
    const QString a = QStringLiteral("<b>Plan</b> &nbsp;·&nbsp; <b>Peak: 45.09 GB</b>");
    const QString b = QStringLiteral("<b>Plan</b> &nbsp;·&nbsp; <b>Peak: 51.70 GB</b>");
    header.setContent(a, QStringLiteral("As loaded"), false);
    const QImage first = header.grab().toImage();
    CHECK(header.drawn() == 1);
    CHECK(header.grab().toImage() == first);
    CHECK(header.drawn() == 1);

    header.setContent(b, QStringLiteral("As loaded, before the edits"), false);
    CHECK(header.grab().toImage() != first);
    CHECK(header.drawn() == 2); // a new content is drawn

    header.setContent(a, QStringLiteral("As loaded"), false);
    CHECK(header.grab().toImage() == first);
    CHECK(header.drawn() == 2); // the first one again: from what was kept

    // What is kept follows the size: a new width draws afresh.
    header.resize(700, 80);
    header.grab();
    CHECK(header.drawn() == 3);
}
