// SPDX-License-Identifier: MIT
// Issue 16, one frame per move: an edit that leaves the problems and notes as
// they were does not rebuild the list (its layout and paint were a fifth of a
// move's time in the bench's profile); one that changes them does.
#include <QApplication>
#include <QListWidget>
#include <QStyledItemDelegate>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "ui/cachedsizedelegate.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

using namespace memledger;

TEST_CASE("The problems list is rebuilt only when its lines change", "[ui][problems][bench]")
{
    ui::Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    ui::MainWindow window(&document);
    auto *list = window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    REQUIRE(list->count() > 0);
    list->item(0)->setData(Qt::UserRole + 1, 42); // a mark that only this item carries
    const int lines = list->count();

    // Half the sequence (the slider) changes no note (memledger-cli eval --set training.seq_length=4096 lists the
    // same choices): the same items stay.
    Config edited = document.config();
    edited.training.seq_length /= 2;
    document.edit(edited, QStringLiteral("sequence"));
    QApplication::processEvents();
    REQUIRE(document.config().training.seq_length == edited.training.seq_length);
    CHECK(list->count() == lines);
    CHECK(list->item(0)->data(Qt::UserRole + 1).toInt() == 42); // not rebuilt

    // t = 3 does not divide the heads: an error line comes first.
    edited.parallelism.tensor_model_parallel_size = 3;
    document.edit(edited, QStringLiteral("t = 3"));
    QApplication::processEvents();
    REQUIRE(document.isStale());
    CHECK_FALSE(list->item(0)->data(Qt::UserRole + 1).isValid()); // rebuilt
    bool errorShown = false;
    for (int i = 0; i < list->count(); ++i)
        errorShown = errorShown || list->item(i)->text().contains(QStringLiteral("tensor"), Qt::CaseInsensitive);
    CHECK(errorShown);
}

TEST_CASE("The problems list measures a line once, not at every relayout", "[ui][problems][bench]")
{
    // An error line that comes and goes relayouts the word-wrapped list, and Qt's style shaped every line's
    // text again for its size: the sizes are kept per text and width, and agree with the style's own.
    ui::Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    ui::MainWindow window(&document);
    window.resize(1400, 900);
    window.show();
    QApplication::processEvents();
    auto *list = window.findChild<QListWidget *>();
    REQUIRE(list != nullptr);
    auto *delegate = dynamic_cast<ui::CachedSizeDelegate *>(list->itemDelegate());
    REQUIRE(delegate != nullptr);

    Config edited = document.config();
    const Config valid = edited;
    edited.parallelism.tensor_model_parallel_size = 3;
    document.edit(edited, QStringLiteral("t = 3"));
    QApplication::processEvents();
    document.edit(valid, QStringLiteral("t = 8"));
    QApplication::processEvents();
    const int measured = delegate->computed();
    for (int i = 0; i < 3; ++i) { // the same lines again: no line measured afresh
        document.edit(edited, QStringLiteral("t = 3"));
        QApplication::processEvents();
        document.edit(valid, QStringLiteral("t = 8"));
        QApplication::processEvents();
    }
    CHECK(delegate->computed() == measured);

    // The kept sizes are the style's.
    QStyledItemDelegate plain;
    QStyleOptionViewItem option;
    option.initFrom(list->viewport());
    option.rect = QRect(0, 0, list->viewport()->width(), 0);
    option.decorationSize = list->iconSize();
    option.features = QStyleOptionViewItem::WrapText;
    for (int i = 0; i < list->count(); ++i) {
        const QModelIndex index = list->model()->index(i, 0);
        CHECK(delegate->sizeHint(option, index) == plain.sizeHint(option, index));
    }
}
