// SPDX-License-Identifier: MIT
#pragma once

#include <QMainWindow>

class QLabel;
class QListWidget;
class QSortFilterProxyModel;
class QTreeView;

namespace memledger::ui {

class Document;
class LedgerTableModel;

// Composes the views over one Document; holds no state of its own.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(Document *document, QWidget *parent = nullptr);

private:
    void createMenus();
    void openFile();
    void importHfConfig();
    void updateLedger();
    void updateHeader();
    void updateProblems();

    Document *m_document;
    LedgerTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QLabel *m_header;
    QTreeView *m_tree;
    QListWidget *m_problems;
};

} // namespace memledger::ui
