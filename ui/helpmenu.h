// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QDialog;
class QMainWindow;

namespace memledger::ui {

// Help: every shortcut of the window's menus and views (F1), the
// documentation as installed beside the program (or the build tree's copy),
// About (the version) and About Qt.
class HelpMenu : public QObject
{
    Q_OBJECT
public:
    // Adds the Help menu to `window`'s menu bar, last.
    explicit HelpMenu(QMainWindow *window);

    // The folder of the guides: installed beside the program (share/doc/memledger), else the build tree's
    // copy of them; empty when neither is there.
    static QString documentationFolder();
    // The guides in it, absolute paths: README.md, docs/*.md, presets/README.md.
    static QStringList guides();

private:
    void showShortcuts();
    void showAbout();
    void showDocumentation();

    QMainWindow *m_window;
    QDialog *m_shortcuts = nullptr;
};

} // namespace memledger::ui
