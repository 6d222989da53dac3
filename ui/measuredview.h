// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>

class QAction;
class QMainWindow;
class QMenu;
class QTabWidget;

namespace memledger::ui {

class Document;
class LifetimesPage;
class MeasuredPanel;
class MeasuredRun;

// A measured run in the window: File > Import measured trace and Clear
// measured trace, a trace file dropped on the window, and what follows the
// run's comparison with the plan: the Measured vs model view (MeasuredPanel),
// the measured curve over the Lifetimes view's, the import's messages in the
// status bar and a refused file's message box.
class MeasuredView : public QObject
{
    Q_OBJECT
public:
    MeasuredView(QMainWindow *window, Document *document, MeasuredRun *run, MeasuredPanel *panel,
                 LifetimesPage *lifetimes, QTabWidget *views);

    // Import measured trace…, Clear measured trace.
    void addActions(QMenu *file);
    // Imports a measured trace in the background (File > Import measured
    // trace…, a drop); with `show`, the Measured vs model view comes up when it
    // is in. A failure is explained in a message box and changes nothing.
    void importTrace(const QString &path, bool show = true);

protected:
    // Drags and drops on the window: a PyTorch memory snapshot or profiler trace is accepted and imported.
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void chooseTrace();
    void traceImported(const QString &path);
    void traceFailed(const QString &path, const QString &problems);
    // The panel, the overlay and the Clear commands follow the run's comparison.
    void showMeasured();
    void showMessage(const QString &message);

    QMainWindow *m_window;
    Document *m_document;
    MeasuredRun *m_run;
    MeasuredPanel *m_panel;
    LifetimesPage *m_lifetimes;
    QTabWidget *m_views;
    QAction *m_clearTrace = nullptr;
    bool m_showWhenImported = false;
};

} // namespace memledger::ui
