// SPDX-License-Identifier: MIT
#include <QAction>
#include <QApplication>
#include <QImage>
#include <QKeySequence>
#include <QPixmap>
#include <QTabWidget>
#include <QTreeView>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/frontierview.h"
#include "ui/mainwindow.h"
#include "ui/planfinder.h"
#include "ui/planheader.h"

using namespace memledger::test;

TEST_CASE("MainWindow shows the document and renders offscreen", "[ui][mainwindow]")
{
    TestWindow gui;
    CHECK(gui.window.windowTitle() == QString::fromStdString(gui.document.config().name) + QStringLiteral("[*]"));

    const auto *tree = gui.window.findChild<QTreeView *>();
    REQUIRE(tree != nullptr);
    // Views off screen catch up when their tab is shown.
    gui.window.views()->setCurrentWidget(const_cast<QTreeView *>(tree));
    CHECK(tree->model()->rowCount() == static_cast<int>(gui.document.ledger().ranks.size()));

    gui.window.resize(1200, 800);
    const QImage image = gui.window.grab().toImage();
    REQUIRE(image.size() == QSize(1200, 800));
    // Something was drawn: the image is not one flat color.
    const QRgb first = image.pixel(0, 0);
    bool varied = false;
    for (int y = 0; y < image.height() && !varied; y += 7)
        for (int x = 0; x < image.width() && !varied; x += 7)
            varied = image.pixel(x, y) != first;
    CHECK(varied);
}

TEST_CASE("The planners and the plan search are views of the window, each reached by Ctrl+N",
          "[ui][mainwindow][planner]")
{
    ShownWindow gui(memledger::kDefaultScenario, QSize(1600, 1000));
    // The View menu's Ctrl+N actions (an offscreen window never becomes active for real key presses).
    const auto press = [&gui](int n) {
        for (QAction *action : gui.window.findChildren<QAction *>())
            if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + n)))
                action->trigger();
        QApplication::processEvents();
    };

    // Ctrl+4: the two frontiers, computed once shown.
    press(4);
    CHECK(gui.window.views()->currentIndex() == 3);
    CHECK_FALSE(gui.window.chainFrontier()->chainFrontier().empty());
    CHECK_FALSE(gui.window.tensorFrontier()->tensorFrontier().empty());

    // Ctrl+5: the search runs when the panel is first shown; every answer fits the margin.
    press(5);
    CHECK(gui.window.views()->currentIndex() == 4);
    const memledger::SearchResult &found = gui.window.planFinder()->result();
    REQUIRE_FALSE(found.plans.empty());
    for (const memledger::SearchPlan &plan : found.plans)
        CHECK(plan.ledger.peak_bytes <= found.limitBytes);
}

TEST_CASE("The header names every parallel degree of the plan, and an invalid edit's numbers as the last valid plan's",
          "[ui][mainwindow][header]")
{
    using namespace memledger;
    TestWindow gui("deepseek-v3-2048xh100-p16-v4");
    gui.window.resize(1600, 1000);
    auto *header = gui.window.findChild<ui::PlanHeader *>();
    REQUIRE(header != nullptr);
    const ParallelismConfig &par = gui.document.config().parallelism;
    REQUIRE(par.virtual_pipeline_model_parallel_size > 1);
    REQUIRE(par.expert_model_parallel_size > 1);
    const QString text = header->plainText();
    CHECK(text.contains(QStringLiteral("v=%1").arg(par.virtual_pipeline_model_parallel_size)));
    CHECK(text.contains(QStringLiteral("e=%1").arg(par.expert_model_parallel_size)));
    CHECK(text.contains(QStringLiteral("p=%1").arg(par.pipeline_model_parallel_size)));
    CHECK_FALSE(text.contains(QStringLiteral("Last valid plan")));

    // t = 3 does not divide the heads: the header keeps the valid plan's t and says whose numbers they are.
    const std::int64_t validT = par.tensor_model_parallel_size;
    Config bad = gui.document.config();
    bad.parallelism.tensor_model_parallel_size = 3;
    gui.document.setConfig(bad);
    QApplication::processEvents();
    REQUIRE(gui.document.isStale());
    const QString stale = header->plainText();
    CHECK(stale.contains(QStringLiteral("Last valid plan:")));
    CHECK(stale.contains(QStringLiteral("t=%1 ").arg(validT)));
    CHECK_FALSE(stale.contains(QStringLiteral("t=3 ")));
}
