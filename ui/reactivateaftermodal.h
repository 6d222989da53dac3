// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>

class QWidget;

namespace memledger::ui {

// "Ctrl+O sometimes does nothing after a dialog closes" (issue 16): a window's
// shortcuts fire only while it is the active window, and a platform that does
// not hand activation back when a modal dialog goes (offscreen always; X11
// window managers when the dialog is destroyed rather than hidden, as the
// static QMessageBox and QFileDialog functions do) leaves no window active
// until the user clicks one. When a modal dialog of the window closes and
// nothing else took over, the window takes activation back. An application
// event filter (qApp->installEventFilter), owned by the window.
class ReactivateAfterModal : public QObject
{
    Q_OBJECT
public:
    explicit ReactivateAfterModal(QWidget *window);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    bool ownedByWindow(const QWidget *dialog) const;

    QWidget *m_window;
};

} // namespace memledger::ui
