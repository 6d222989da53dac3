// SPDX-License-Identifier: MIT
// Issue 34, item 21: "'Share of rank' mixes % of HBM and % of rank". The
// column is "Share", and every cell says what it is a share of.
#include <QAbstractItemModel>
#include <QTabWidget>
#include <QTreeView>

#include "catchqt.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/ledgertablemodel.h"
#include "ui/mainwindow.h"

using namespace memledger;
using namespace memledger::test;

TEST_CASE("The ledger's share column says of what each share is", "[ui][ledger]")
{
    TestWindow gui("seed-000-7b-c-offload"); // device rows and host rows (the offloaded optimizer)
    auto *tree = gui.window.findChild<QTreeView *>();
    REQUIRE(tree != nullptr);
    gui.window.views()->setCurrentWidget(tree); // a view off screen catches up when its tab is shown
    settle();
    const QAbstractItemModel *model = tree->model();
    CHECK(model->headerData(ui::LedgerTableModel::ShareColumn, Qt::Horizontal).toString() == QStringLiteral("Share"));
    const QModelIndex rank = model->index(0, ui::LedgerTableModel::ShareColumn);
    CHECK(model->data(rank).toString().endsWith(QStringLiteral(" of HBM")));
    bool device = false, host = false;
    for (int row = 0; row < model->rowCount(model->index(0, 0)); ++row) {
        const QString cell
            = model->data(model->index(row, ui::LedgerTableModel::ShareColumn, model->index(0, 0))).toString();
        const QString where
            = model->data(model->index(row, ui::LedgerTableModel::PlacementColumn, model->index(0, 0))).toString();
        INFO(cell.toStdString() << " / " << where.toStdString());
        if (where == QStringLiteral("device")) {
            CHECK(cell.endsWith(QStringLiteral(" of rank")));
            device = true;
        } else {
            CHECK(cell.endsWith(QStringLiteral(" of host")));
            host = true;
        }
    }
    CHECK(device);
    CHECK(host);
}
