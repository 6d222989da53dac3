// SPDX-License-Identifier: MIT
#pragma once

#include <QMainWindow>
#include <QSize>
#include <QTimer>

#include <array>
#include <vector>

class QAction;
class QCloseEvent;
class QDockWidget;
class QMenu;
class QSortFilterProxyModel;
class QTabWidget;
class QTreeView;

namespace memledger::ui {

class ChartExport;
class LaunchFiles;
class ControlPanel;
class Document;
class FrontierView;
class LedgerTableModel;
class LifetimeView;
class LifetimesPage;
class MeasuredPanel;
class MeasuredRun;
class MeasuredView;
class MemoryBarsChart;
class PlanFiles;
class PlanFinder;
class ProblemsList;
class StaircaseChart;
class TalkMode;
class WindowHeader;

// Composes the views over one Document and holds no state of its own (as KDAB
// hotspot's main window composes its pages): the tabs, the header
// (WindowHeader), the problems (ProblemsList) and the control panel in its
// dock; the plan's files (PlanFiles), File > Export (ChartExport), the
// measured run (MeasuredView) and Help (HelpMenu) are objects of their own.
// It refreshes the visible view when the document changes.
// The size a window opens at on a screen whose available area is
// `available`: 1400 × 900, or the whole available area where that is smaller
// (a 1024 × 768 laptop or projector: issue 34, item 16).
QSize startSize(const QSize &available);

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(Document *document, QWidget *parent = nullptr);

    ControlPanel *controlPanel() const { return m_controls; }
    MemoryBarsChart *memoryBars() const { return m_bars; }
    MemoryBarsChart *hostBars() const { return m_hostBars; }
    StaircaseChart *staircase() const { return m_staircase; }
    QTabWidget *views() const { return m_views; }
    TalkMode *talkMode() const { return m_talk; }
    LifetimeView *lifetimes() const;
    FrontierView *chainFrontier() const { return m_chainFrontier; }
    FrontierView *tensorFrontier() const { return m_tensorFrontier; }
    PlanFinder *planFinder() const { return m_planFinder; }
    MeasuredRun *measuredRun() const { return m_measured; }
    MeasuredPanel *measuredPanel() const { return m_measuredPanel; }
    // The pause that ends a run of edits (single shot, kFitAxesDelayMs): a test hook, so that a test makes
    // the pause itself (start(0)) and no run ends on a slow machine (a long interval) instead of waiting.
    QTimer *fitAxesTimer() { return &m_fitAxes; }
    // File > Import measured trace, drops, and what follows a measured run's comparison.
    MeasuredView *measuredView() const { return m_measuredView; }
    // File > Export: the charts, the ledger, the PNG scale.
    ChartExport *chartExport() const { return m_export; }
    LaunchFiles *launchFiles() const { return m_launch; }
    // File > New, Open, Save, Save as, recent files, and the window's title.
    PlanFiles *files() const { return m_files; }
    // The lines above the views: the plan, its peak and its step time.
    WindowHeader *header() const { return m_header; }
    // The dark or light palette for the window and the charts; `remember`: kept for the next start (View >
    // Dark palette), not for a one-off run (memledger --dark).
    void setDark(bool dark, bool remember = true);
    // Brings the visible view up to date if the plan changed since it was drawn (the others catch up when
    // shown): an export draws the current plan.
    void refreshCurrentView();

protected:
    bool event(QEvent *event) override;
    void closeEvent(QCloseEvent *event) override;

private:
    // The tabs: Memory, Lifetimes, Ledger, Planners, Find plans, Measured vs model.
    void createViews();
    QWidget *memoryCharts();
    // The header over the views over the problems.
    void createCentralWidget();
    // The control panel in a dock on the left, and the talk mode that hides it.
    void createPlanDock();
    void connectTalkMode();
    void createMenus();
    void createViewMenu();
    void openDeck();
    void createStatusBar();
    void connectDocument();
    void updateLedger();
    // The bars, the staircase and the host chart, which shows only when something is offloaded.
    void refreshMemoryCharts();
    void updateHeader();
    // The Lifetimes view draws a served forward: the header gives the serving
    // peak (and training's beside it) instead of the training plan's.
    bool headerShowsServing() const;
    // The problems list and the status bar's summary of them.
    void updateProblems();
    // The memory chart's comparison: the pins of the current plan's model only.
    void updateComparison(bool pinsChanged);

    Document *m_document;
    LedgerTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    WindowHeader *m_header;
    QAction *m_undoAction = nullptr;
    QAction *m_redoAction = nullptr;
    QTreeView *m_tree;
    ProblemsList *m_problems;
    ControlPanel *m_controls;
    MemoryBarsChart *m_bars;
    MemoryBarsChart *m_hostBars;
    QAction *m_darkAction = nullptr;
    StaircaseChart *m_staircase;
    QTabWidget *m_views;
    QDockWidget *m_planDock;
    TalkMode *m_talk;
    LifetimesPage *m_lifetimesPage;
    FrontierView *m_chainFrontier;
    FrontierView *m_tensorFrontier;
    PlanFinder *m_planFinder;
    MeasuredRun *m_measured;
    MeasuredPanel *m_measuredPanel;
    int m_viewBeforeTalk = 0; // the tab and the lifetimes' source (LifetimeSource::Source) a talk returns to
    int m_sourceBeforeTalk = 0;
    PlanFiles *m_files;
    MeasuredView *m_measuredView = nullptr;
    ChartExport *m_export = nullptr;
    LaunchFiles *m_launch = nullptr;
    std::vector<std::size_t> m_shownPins; // the pins drawn beside the plan (indices into Document::pins)
    std::array<bool, 3> m_stale{true, true, true}; // per tab: the plan changed since it was drawn
    // Once a run of edits pauses, the memory charts' axes, held while it ran, fit the plan again.
    QTimer m_fitAxes;
    bool m_drawnHeld = false; // the memory charts were last drawn with held axes: the pause fits them
};

} // namespace memledger::ui
