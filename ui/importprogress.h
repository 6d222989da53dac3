// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QToolButton;

namespace memledger::ui {

class MeasuredRun;

// The status bar's "Importing run.pickle.gz [=====   ] Cancel" while a
// measured trace loads; hidden otherwise.
class ImportProgress : public QWidget
{
    Q_OBJECT
public:
    ImportProgress(MeasuredRun *run, QWidget *parent = nullptr);

    QProgressBar *bar() const { return m_bar; }
    QToolButton *cancelButton() const { return m_cancel; }

private:
    QLabel *m_label;
    QProgressBar *m_bar;
    QToolButton *m_cancel;
};

} // namespace memledger::ui
