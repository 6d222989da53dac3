// SPDX-License-Identifier: MIT
// Issue 34: switching the palette at run time. "does not fit" kept the light
// palette's dark red on the dark window (about 2:1) until a reload, and the
// dark red stayed after switching back; the Lifetimes peak label had no box
// that showed in the dark palette.
#include <QAction>
#include <QImage>
#include <QPalette>
#include <QRegularExpression>
#include <QTabWidget>

#include "catchqt.h"
#include "testwindow.h"
#include "ui/lifetimeview.h"
#include "ui/planheader.h"
#include "ui/theme.h"
#include "ui/windowheader.h"

using namespace memledger;
using namespace memledger::test;
using memledger::ui::contrastRatio;

namespace {

// GPT-3 175B with tensor parallelism alone does not fit its GPUs.
constexpr std::string_view kDoesNotFit = "gpt-3-175b-64gpus-tp-only";

// View > Dark palette, as the user switches it.
QAction *darkAction(ui::MainWindow &window)
{
    for (QAction *action : window.findChildren<QAction *>())
        if (action->text() == QStringLiteral("&Dark palette"))
            return action;
    return nullptr;
}

// The colour the header's title writes its verdict in, from its rich text.
QColor verdictColor(const ui::PlanHeader &header)
{
    const QRegularExpressionMatch match
        = QRegularExpression(QStringLiteral("color:(#[0-9a-fA-F]{6})'>Peak:")).match(header.titleHtml());
    return match.hasMatch() ? QColor(match.captured(1)) : QColor();
}

} // namespace

TEST_CASE("The verdict that a plan does not fit keeps a 4.5:1 contrast after every switch of the palette",
          "[ui][dark][header]")
{
    ShownWindow gui(kDoesNotFit, kOwnSize);
    REQUIRE_FALSE(gui.document.ledger().fits());
    auto *header = gui.window.findChild<ui::PlanHeader *>();
    REQUIRE(header != nullptr);
    QAction *dark = darkAction(gui.window);
    REQUIRE(dark != nullptr);
    REQUIRE_FALSE(dark->isChecked());
    for (bool on : {true, false, true, false}) {
        dark->setChecked(on);
        settle();
        const QColor text = verdictColor(*header);
        const QColor background = header->palette().color(QPalette::Window);
        INFO("dark " << on << ": " << text.name().toStdString() << " on " << background.name().toStdString());
        REQUIRE(text.isValid());
        CHECK(header->plainText().contains(QStringLiteral("does not fit")));
        CHECK(contrastRatio(text, background) >= 4.5);
        CHECK(text == ui::errorTextColor(header->palette()));
    }
}

TEST_CASE("The Lifetimes peak label stands in a framed box in both palettes", "[ui][dark][lifetimes]")
{
    ShownWindow gui(kDefaultScenario, QSize(1200, 800));
    gui.window.views()->setCurrentIndex(kLifetimesTab);
    settle();
    ui::LifetimeView *view = gui.window.lifetimes();
    for (bool on : {true, false}) {
        gui.window.setDark(on, false);
        settle();
        const QRectF box = view->peakLabelBox();
        INFO("dark " << on);
        REQUIRE_FALSE(box.isEmpty());
        const QImage image = view->grab().toImage();
        const QColor base = view->palette().color(QPalette::Base);
        // The box's top and bottom edges: a frame that stands out from the view's background (WCAG's 3:1
        // for the edge of a graphical object), not a patch of that background.
        int framed = 0, total = 0;
        const qreal dpr = image.devicePixelRatio();
        // The box is whole pixels and its 1 px aliased frame lies on the rows at its top and bottom.
        for (int x = int(box.left()) + 2; x < int(box.right()) - 2; ++x)
            for (int y : {int(box.top()), int(box.bottom())}) {
                ++total;
                const QColor pixel = image.pixelColor(QPoint(int(x * dpr), int(y * dpr)));
                framed += contrastRatio(pixel, base) >= 3.0 ? 1 : 0;
            }
        CHECK(framed >= total * 9 / 10);
    }
}
