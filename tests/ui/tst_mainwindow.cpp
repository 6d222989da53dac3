// SPDX-License-Identifier: MIT
#include <QImage>
#include <QPixmap>
#include <QTabWidget>
#include <QTreeView>

#include "catchqt.h"
#include "core/builtins.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

TEST_CASE("MainWindow shows the document and renders offscreen", "[ui][mainwindow]")
{
    memledger::ui::Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    memledger::ui::MainWindow window(&document);
    CHECK(window.windowTitle() == QStringLiteral("MemLedger — %1").arg(QString::fromStdString(document.config().name)));

    const auto *tree = window.findChild<QTreeView *>();
    REQUIRE(tree != nullptr);
    // Views off screen catch up when their tab is shown.
    window.views()->setCurrentWidget(const_cast<QTreeView *>(tree));
    CHECK(tree->model()->rowCount() == static_cast<int>(document.ledger().ranks.size()));

    window.resize(1200, 800);
    const QImage image = window.grab().toImage();
    REQUIRE(image.size() == QSize(1200, 800));
    // Something was drawn: the image is not one flat colour.
    const QRgb first = image.pixel(0, 0);
    bool varied = false;
    for (int y = 0; y < image.height() && !varied; y += 7)
        for (int x = 0; x < image.width() && !varied; x += 7)
            varied = image.pixel(x, y) != first;
    CHECK(varied);
}
