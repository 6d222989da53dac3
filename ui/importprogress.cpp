// SPDX-License-Identifier: MIT
#include "ui/importprogress.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

#include "ui/measuredrun.h"

namespace memledger::ui {

namespace {

constexpr int kSteps = 1000; // permille: smooth for a file of gigabytes

} // namespace

ImportProgress::ImportProgress(MeasuredRun *run, QWidget *parent)
    : QWidget(parent)
    , m_label(new QLabel(this))
    , m_bar(new QProgressBar(this))
    , m_cancel(new QToolButton(this))
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_label);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    m_bar->setRange(0, kSteps);
    m_bar->setMaximumWidth(180);
    m_bar->setTextVisible(false);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop the import; the current trace, if any, stays"));
    hide();

    connect(m_cancel, &QToolButton::clicked, run, &MeasuredRun::cancelImport);
    connect(run, &MeasuredRun::importStarted, this, [this](const QString &path) {
        m_label->setText(tr("Importing %1").arg(QFileInfo(path).fileName()));
        m_bar->setValue(0);
        show();
    });
    connect(run, &MeasuredRun::importProgress, this,
            [this](qint64 read, qint64 total) { m_bar->setValue(total > 0 ? int(read * kSteps / total) : 0); });
    for (auto done : {&MeasuredRun::importFinished, &MeasuredRun::importCancelled})
        connect(run, done, this, [this, run] { setVisible(run->isImporting()); });
    connect(run, &MeasuredRun::importFailed, this, [this, run] { setVisible(run->isImporting()); });
}

} // namespace memledger::ui
