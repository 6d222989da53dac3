// SPDX-License-Identifier: MIT
#include "ui/measuredview.h"

#include <QAction>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

#include "ui/comparisontablemodel.h"
#include "ui/document.h"
#include "ui/lifetimespage.h"
#include "ui/lifetimeview.h"
#include "ui/loadfailure.h"
#include "ui/measuredpanel.h"
#include "ui/measuredrun.h"
#include "ui/qtstring.h"
#include "ui/tracefiles.h"

#include <utility>

namespace memledger::ui {

MeasuredView::MeasuredView(QMainWindow *window, Document *document, MeasuredRun *run, MeasuredPanel *panel,
                           LifetimesPage *lifetimes, QTabWidget *views)
    : QObject(window)
    , m_window(window)
    , m_document(document)
    , m_run(run)
    , m_panel(panel)
    , m_lifetimes(lifetimes)
    , m_views(views)
{
    window->setAcceptDrops(true);
    window->installEventFilter(this);
    connect(m_panel, &MeasuredPanel::importRequested, this, &MeasuredView::chooseTrace);
    connect(m_panel, &MeasuredPanel::clearRequested, m_run, &MeasuredRun::clear);
    connect(m_panel, &MeasuredPanel::rankChanged, m_run, &MeasuredRun::setPipelineRank);
    connect(m_panel, &MeasuredPanel::deviceChanged, this, [this](int device) {
        showMessage(tr("Importing %1 again for the device picked…").arg(m_run->fileName()));
        m_run->setDevice(device);
    });
    connect(m_lifetimes, &LifetimesPage::clearMeasuredRequested, m_run, &MeasuredRun::clear);
    connect(m_run, &MeasuredRun::changed, this, &MeasuredView::showMeasured);
    connect(m_run, &MeasuredRun::importStarted, this, [this](const QString &path) {
        if (!m_run->hasTrace())
            m_panel->setPlaceholderText(tr("Importing %1…").arg(QFileInfo(path).fileName()));
    });
    connect(m_run, &MeasuredRun::importFinished, this, &MeasuredView::traceImported);
    connect(m_run, &MeasuredRun::importFailed, this, &MeasuredView::traceFailed);
    connect(m_run, &MeasuredRun::importCancelled, this, [this](const QString &path) {
        m_showWhenImported = false;
        if (!m_run->hasTrace())
            m_panel->setPlaceholderText({});
        showMessage(tr("Import of %1 cancelled; nothing was changed").arg(QFileInfo(path).fileName()));
    });
    connect(m_run, &MeasuredRun::clearedForNewPlan, this, [this](const QString &fileName) {
        const QString text = tr("%1 was cleared: it was held against the plan opened before. Import it again to "
                                "hold it against this one.")
                                 .arg(fileName);
        m_panel->setPlaceholderText(text);
        showMessage(text);
    });
    connect(m_run, &MeasuredRun::compareFailed, this, [this](const QString &message) {
        showMessage(tr("The measured trace could not be held against this plan: %1").arg(message));
    });
}

void MeasuredView::addActions(QMenu *file)
{
    file->addAction(tr("Import &measured trace…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_I), this,
                    &MeasuredView::chooseTrace)
        ->setToolTip(tr("A PyTorch memory snapshot or profiler trace, held against this plan"));
    m_clearTrace = file->addAction(tr("C&lear measured trace"), m_run, &MeasuredRun::clear);
    m_clearTrace->setEnabled(false);
}

void MeasuredView::showMessage(const QString &message)
{
    m_window->statusBar()->showMessage(message);
}

bool MeasuredView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != m_window)
        return false;
    switch (event->type()) {
    case QEvent::DragEnter:
    case QEvent::DragMove: {
        auto *drag = static_cast<QDragMoveEvent *>(event);
        if (traceFileFromMimeData(drag->mimeData()).isEmpty())
            drag->ignore();
        else
            drag->acceptProposedAction();
        return true;
    }
    case QEvent::Drop: {
        auto *drop = static_cast<QDropEvent *>(event);
        const QString path = traceFileFromMimeData(drop->mimeData());
        if (path.isEmpty()) {
            drop->ignore();
            return true;
        }
        drop->acceptProposedAction();
        importTrace(path, true);
        return true;
    }
    default:
        return false;
    }
}

void MeasuredView::chooseTrace()
{
    const QString path
        = QFileDialog::getOpenFileName(m_window, tr("Import measured trace"), QString(), traceFileFilter());
    if (!path.isEmpty())
        importTrace(path, true);
}

void MeasuredView::importTrace(const QString &path, bool show)
{
    m_showWhenImported = show;
    showMessage(tr("Importing %1…").arg(path));
    m_run->import(path);
}

void MeasuredView::traceImported(const QString &path)
{
    const std::optional<TraceComparison> &c = m_run->comparison();
    if (c) {
        showMessage(tr("Imported %1: measured peak %2, modelled %3 (%4, without the runtime reserve)")
                        .arg(QFileInfo(path).fileName(), bytesText(c->measured_peak_allocated_bytes),
                             bytesText(c->modelled_peak_bytes),
                             c->measured_peak_allocated_bytes > 0 ? ComparisonTableModel::differenceText(c->peak_error)
                                                                  : tr("not comparable"))
                    + (c->plainly_other_model ? tr(" — plainly another model's trace") : QString()));
        m_lifetimes->showMeasuredRank(c->pipeline_rank);
    } else {
        showMessage(tr("Imported %1; it is compared once the plan is valid").arg(path));
    }
    if (std::exchange(m_showWhenImported, false))
        m_views->setCurrentWidget(m_panel);
}

void MeasuredView::traceFailed(const QString &path, const QString &problems)
{
    m_showWhenImported = false;
    if (!m_run->hasTrace())
        m_panel->setPlaceholderText({});
    showMessage(tr("Could not import %1").arg(path));
    // Not modal to the event loop: the import finished in the background and nothing waits on the answer.
    QMessageBox *box = loadFailureBox(m_window, tr("Cannot import measured trace"), path, problems);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MeasuredView::showMeasured()
{
    m_clearTrace->setEnabled(m_run->hasTrace());
    m_lifetimes->setClearMeasuredShown(m_run->hasTrace());
    const std::optional<TraceComparison> &c = m_run->comparison();
    LifetimeView *lifetimes = m_lifetimes->view();
    if (!c) {
        m_panel->clear();
        if (m_run->hasTrace())
            m_panel->setPlaceholderText(
                tr("%1 is loaded; it is held against the plan once the plan is valid.").arg(m_run->fileName()));
        lifetimes->clearMeasuredOverlay();
        return;
    }
    const QString name = m_run->fileName();
    m_panel->setComparison(*c, name, m_run->trace() ? m_run->trace()->devices : std::vector<int>{});
    m_panel->setRanks(static_cast<int>(m_document->ledger().ranks.size()), c->pipeline_rank);
    lifetimes->setMeasuredOverlay(
        {tr("measured (%1)").arg(name), c->pipeline_rank, c->measured_curve, c->modelled_curve});
}

} // namespace memledger::ui
