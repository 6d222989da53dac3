// SPDX-License-Identifier: MIT
#include "ui/chartexport.h"

#include <QAction>
#include <QActionGroup>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "core/reports/report.h"
#include "ui/document.h"
#include "ui/exporter.h"
#include "ui/frontierplot.h"
#include "ui/frontierview.h"
#include "ui/lifetimeview.h"
#include "ui/mainwindow.h"
#include "ui/memorybarschart.h"
#include "ui/planfinder.h"
#include "ui/qtstring.h"
#include "ui/staircasechart.h"

#include <algorithm>

namespace memledger::ui {

ChartExport::ChartExport(MainWindow *window, Document *document)
    : QObject(window)
    , m_window(window)
    , m_document(document)
    , m_imageScale(std::clamp(QSettings().value(QStringLiteral("exportScale"), 2.0).toDouble(), 1.0, 4.0))
{ }

QMenu *ChartExport::addMenu(QMenu *file)
{
    QMenu *exports = file->addMenu(tr("&Export"));
    MainWindow *w = m_window;
    exports->addAction(tr("Memory chart as PNG or SVG…"), this,
                       [=, this] { exportFrom(w->memoryBars(), tr("Device memory per pipeline rank")); });
    exports->addAction(tr("Staircase as PNG or SVG…"), this,
                       [=, this] { exportFrom(w->staircase(), tr("Activation staircase")); });
    exports->addAction(tr("Host memory chart as PNG or SVG…"), this,
                       [=, this] { exportFrom(w->hostBars(), tr("Host memory per pipeline rank")); });
    exports->addAction(tr("Lifetimes as PNG or SVG…"), this,
                       [=, this] { exportFrom(w->lifetimes(), tr("Tensor lifetimes of one rank")); });
    exports->addAction(tr("Checkpointing frontier as PNG or SVG…"), this,
                       [=, this] { exportFrom(w->chainFrontier()->plot(), tr("Checkpointing frontier")); });
    exports->addAction(tr("Per-tensor frontier as PNG or SVG…"), this, [=, this] {
        exportFrom(w->tensorFrontier()->plot(), tr("Store, recompute or offload per tensor"));
    });
    exports->addAction(tr("Ledger as CSV…"), this, [this] {
        exportLedgerText(tr("CSV (*.csv)"), QStringLiteral("csv"), ledgerToCsv(m_document->ledger()));
    });
    exports->addAction(tr("Ledger as Markdown…"), this, [this] {
        exportLedgerText(tr("Markdown (*.md)"), QStringLiteral("md"),
                         ledgerToMarkdown(m_document->config(), m_document->ledger()));
    });
    exports->addAction(tr("Found plans as CSV…"), this, [w] {
        w->views()->setCurrentWidget(w->planFinder());
        if (!w->planFinder()->exportButton()->isEnabled()) {
            w->planFinder()->findPlans();
            w->planFinder()->waitForSearch();
        }
        w->planFinder()->exportButton()->click();
    });
    // PNGs are drawn again at this many device pixels per pixel (a slide, a
    // paper's figure); SVGs are vectors and need none.
    QMenu *scaleMenu = exports->addMenu(tr("PNG &scale"));
    auto *scales = new QActionGroup(scaleMenu);
    for (int scale : {1, 2, 3, 4}) {
        QAction *a = scaleMenu->addAction(tr("%1× the window's pixels").arg(scale));
        a->setCheckable(true);
        a->setData(scale);
        a->setChecked(scale == static_cast<int>(m_imageScale));
        scales->addAction(a);
        connect(a, &QAction::triggered, this, [this, scale] { setImageScale(scale); });
    }
    return exports;
}

void ChartExport::exportFrom(QWidget *chart, const QString &title)
{
    // Hidden views are brought up to date only when shown: the one the chart is drawn in comes up first.
    QTabWidget *views = m_window->views();
    for (QWidget *w = chart; w; w = w->parentWidget()) {
        if (const int tab = views->indexOf(w); tab >= 0) {
            views->setCurrentIndex(tab);
            break;
        }
    }
    QString filter;
    const QString path = QFileDialog::getSaveFileName(m_window, tr("Export %1").arg(title), QString(),
                                                      tr("PNG image (*.png);;SVG drawing (*.svg)"), &filter);
    if (!path.isEmpty())
        exportChartTo(chart, title, path);
}

bool ChartExport::exportChartTo(QWidget *chart, const QString &title, const QString &path)
{
    m_window->refreshCurrentView(); // a chart brought up just now draws the current plan
    QString error;
    const QString caption = this->caption();
    const bool svg = path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive);
    const bool ok = svg ? exportSvg(chart, path, title, &error, caption)
                        : exportImage(chart, path, &error, m_imageScale, caption);
    if (!ok) {
        QMessageBox::warning(m_window, tr("Export failed"), tr("%1 could not be written: %2").arg(path, error));
        return false;
    }
    m_window->statusBar()->showMessage(
        svg ? tr("Exported %1").arg(path)
            : tr("Exported %1 at %2× (File > Export > PNG scale)").arg(path).arg(m_imageScale));
    return true;
}

void ChartExport::setImageScale(double scale)
{
    m_imageScale = std::clamp(scale, 1.0, 4.0);
    QSettings().setValue(QStringLiteral("exportScale"), m_imageScale);
}

QString ChartExport::caption() const
{
    // The plan the charts show (the last valid one while an edit has errors),
    // in the header's words: its name, parameters, core's parallel summary,
    // the sequence and micro-batch, the device and the ledger's peak.
    const Config &planned = m_document->ledgerConfig();
    const Ledger &ledger = m_document->ledger();
    QString caption = tr("%1: %2 parameters · %3 · %4-token sequences, micro-batch %5 · %6")
                          .arg(QString::fromStdString(planned.name), parameterCountText(ledger.total_parameters),
                               toQString(parallelSummary(planned)))
                          .arg(planned.training.seq_length)
                          .arg(planned.training.micro_batch_size)
                          .arg(QString::fromStdString(planned.hardware.name));
    if (m_document->hasLedger())
        caption += tr(" · ledger peak %1 of %2 on rank %3")
                       .arg(bytesText(ledger.peak_bytes), bytesText(ledger.capacity_bytes))
                       .arg(ledger.peak_rank);
    if (m_document->isStale())
        caption += tr(" (the last valid plan: the current one has errors)");
    return caption;
}

void ChartExport::exportLedgerText(const QString &filter, const QString &suffix, const std::string &text)
{
    QString path = QFileDialog::getSaveFileName(m_window, tr("Export the ledger"), QString(), filter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QLatin1Char('.') + suffix;
    QString error;
    if (!exportText(text, path, &error)) {
        QMessageBox::warning(m_window, tr("Export failed"), tr("%1 could not be written: %2").arg(path, error));
        return;
    }
    m_window->statusBar()->showMessage(tr("Exported %1").arg(path));
}

} // namespace memledger::ui
