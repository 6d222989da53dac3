// SPDX-License-Identifier: MIT
#pragma once

#include <QMainWindow>

#include <array>
#include <string>

class QDockWidget;
class QLabel;
class QListWidget;
class QSortFilterProxyModel;
class QTabWidget;
class QTreeView;

namespace memledger::ui {

class ControlPanel;
class Document;
class LedgerTableModel;
class MemoryBarsChart;
class StaircaseChart;
class TalkMode;

// Composes the views over one Document; holds no state of its own.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(Document *document, QWidget *parent = nullptr);

    ControlPanel *controlPanel() const { return m_controls; }
    MemoryBarsChart *memoryBars() const { return m_bars; }
    StaircaseChart *staircase() const { return m_staircase; }
    QTabWidget *views() const { return m_views; }
    TalkMode *talkMode() const { return m_talk; }

private:
    void createMenus();
    void openFile();
    void importHfConfig();
    void exportChart(QWidget *chart, const QString &title);
    void exportLedgerText(const QString &filter, const QString &suffix, const std::string &text);
    void updateLedger();
    void refreshCurrentView();
    void updateHeader();
    void updateProblems();

    Document *m_document;
    LedgerTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QLabel *m_header;
    QTreeView *m_tree;
    QListWidget *m_problems;
    ControlPanel *m_controls;
    MemoryBarsChart *m_bars;
    StaircaseChart *m_staircase;
    QTabWidget *m_views;
    QDockWidget *m_planDock;
    TalkMode *m_talk;
    std::array<bool, 2> m_stale{true, true}; // per tab: the ledger changed since it was drawn
};

} // namespace memledger::ui
