// SPDX-License-Identifier: MIT
#include "ui/reactivateaftermodal.h"

#include <QApplication>
#include <QEvent>
#include <QTimer>
#include <QWidget>

namespace memledger::ui {

ReactivateAfterModal::ReactivateAfterModal(QWidget *window)
    : QObject(window)
    , m_window(window)
{ }

bool ReactivateAfterModal::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() != QEvent::Hide || !watched->isWidgetType() || watched == m_window)
        return false;
    auto *dialog = static_cast<QWidget *>(watched);
    if (!dialog->isWindow() || !dialog->isModal() || !ownedByWindow(dialog))
        return false;
    // Once the dialog is gone (a static dialog function destroys it on return).
    QTimer::singleShot(0, m_window, [window = m_window] {
        const QWidget *active = QApplication::activeWindow();
        if (window->isVisible() && !QApplication::activeModalWidget() && (!active || !active->isVisible()))
            window->activateWindow();
    });
    return false;
}

bool ReactivateAfterModal::ownedByWindow(const QWidget *dialog) const
{
    for (const QWidget *w = dialog->parentWidget(); w; w = w->parentWidget())
        if (w == m_window)
            return true;
    return false;
}

} // namespace memledger::ui
