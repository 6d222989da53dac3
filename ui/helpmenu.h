// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>

class QDialog;
class QMainWindow;

namespace memledger::ui {

// Help: every shortcut of the window's menus and views (F1), the
// documentation as installed or in the source tree, About (the version)
// and About Qt.
class HelpMenu : public QObject
{
    Q_OBJECT
public:
    // Adds the Help menu to `window`'s menu bar, last.
    explicit HelpMenu(QMainWindow *window);

private:
    void showShortcuts();
    void showAbout();
    void showDocumentation();

    QMainWindow *m_window;
    QDialog *m_shortcuts = nullptr;
};

} // namespace memledger::ui
