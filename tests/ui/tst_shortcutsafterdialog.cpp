// SPDX-License-Identifier: MIT
// Issue 16: "Ctrl+O sometimes does nothing after a dialog closes". A modal
// dialog that closes leaves no window active on a platform that does not
// hand activation back itself (offscreen; some X11 window managers when the
// dialog is destroyed), and a window's shortcuts only fire in the active
// window: the main window must take activation back when its dialog closes.
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QKeySequence>
#include <QMessageBox>
#include <QPushButton>
#include <QTest>
#include <QTimer>
#include <QUndoStack>
#include <QWindow>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/planfiles.h"

#include <functional>
#include <memory>

using namespace memledger;
using namespace memledger::test;

namespace {

QAction *actionListingShortcut(ui::MainWindow &window, const QKeySequence &keys)
{
    for (QAction *action : window.findChildren<QAction *>())
        if (action->shortcuts().contains(keys))
            return action;
    return nullptr;
}

// Presses Ctrl+O as a platform delivers it: to the window that has the focus
// (the main window when none has), through Qt's shortcut map.
void pressCtrlO(ui::MainWindow &window)
{
    QWindow *target = QGuiApplication::focusWindow() ? QGuiApplication::focusWindow() : window.windowHandle();
    QTest::keyClick(target, Qt::Key_O, Qt::ControlModifier);
    QApplication::processEvents();
}

// Closes the modal dialog that comes up next with `close` (Cancel, Escape…):
// polls, as the dialog comes up inside the next action's nested event loop.
void closeNextModal(const std::function<void(QWidget *)> &close)
{
    auto *poll = new QTimer(qApp);
    auto tries = std::make_shared<int>(0);
    QObject::connect(poll, &QTimer::timeout, poll, [poll, tries, close] {
        // No REQUIRE here: an exception must not cross Qt's event loop.
        QWidget *modal = QApplication::activeModalWidget();
        if (modal && modal->isVisible())
            close(modal);
        if (modal || ++*tries > 500)
            poll->deleteLater();
        if (modal || *tries > 500)
            poll->stop();
    });
    poll->start(10);
}

} // namespace

TEST_CASE("Ctrl+O opens the file dialog after the unsaved-changes prompt or Save as was shown and closed",
          "[ui][mainwindow][shortcuts]")
{
    TestWindow gui;
    int asked = 0;
    gui.window.files()->setOpenFileChooser([&asked](QWidget *) {
        ++asked;
        return QString(); // the user cancels the file dialog
    });
    gui.show(QSize(1200, 800));
    gui.window.activateWindow();
    REQUIRE(QTest::qWaitForWindowActive(&gui.window));

    // Before any dialog: Ctrl+O reaches File > Open.
    pressCtrlO(gui.window);
    CHECK(asked == 1);

    // An unsaved edit, then File > New: the unsaved-changes prompt, answered Cancel.
    Config edited = gui.document.config();
    edited.training.micro_batch_size = 2;
    gui.document.edit(edited, QStringLiteral("Set micro-batch to 2"));
    QApplication::processEvents();
    QAction *newPlan = actionListingShortcut(gui.window, QKeySequence(QKeySequence::New));
    REQUIRE(newPlan != nullptr);
    bool prompted = false;
    closeNextModal([&prompted](QWidget *modal) {
        if (auto *box = qobject_cast<QMessageBox *>(modal)) {
            prompted = true;
            box->button(QMessageBox::Cancel)->click();
        }
    });
    newPlan->trigger();
    QApplication::processEvents();
    REQUIRE(prompted);
    CHECK(asked == 1); // Cancel: no file dialog
    // Ctrl+O: the prompt again (the edit is still unsaved), Discard this time, then the file dialog.
    closeNextModal([](QWidget *modal) {
        if (auto *box = qobject_cast<QMessageBox *>(modal))
            box->button(QMessageBox::Discard)->click();
    });
    pressCtrlO(gui.window);
    CHECK(asked == 2);
    CHECK(QApplication::activeWindow() == &gui.window);

    // Save as's dialog, closed with Cancel (Escape).
    QAction *saveAs = actionListingShortcut(gui.window, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    REQUIRE(saveAs != nullptr);
    closeNextModal([](QWidget *modal) {
        if (auto *dialog = qobject_cast<QDialog *>(modal))
            dialog->reject();
    });
    saveAs->trigger();
    QApplication::processEvents();
    gui.document.undoStack()->setClean(); // no prompt in the way of the next Ctrl+O
    pressCtrlO(gui.window);
    CHECK(asked == 3);
    CHECK(QApplication::activeWindow() == &gui.window);
}
