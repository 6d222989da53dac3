// SPDX-License-Identifier: MIT
#include "ui/windowheader.h"

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QStringList>
#include <QToolTip>

#include "core/base/units.h"
#include "core/reports/report.h"
#include "core/timeline/peakcompare.h"
#include "core/timeline/reserved.h"
#include "ui/document.h"
#include "ui/planheader.h"
#include "ui/qtstring.h"
#include "ui/steptimebar.h"
#include "ui/talkmode.h"
#include "ui/theme.h"

#include <algorithm>

namespace memledger::ui {

namespace {

const RankLedger *findRank(const Ledger &ledger, int pipelineRank)
{
    const auto it = std::find_if(ledger.ranks.begin(), ledger.ranks.end(),
                                 [&](const RankLedger &r) { return r.pipeline_rank == pipelineRank; });
    return it == ledger.ranks.end() ? nullptr : &*it;
}

} // namespace

WindowHeader::WindowHeader(Document *document, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_plan(new PlanHeader(this))
    , m_stepTime(new StepTimeBar(this))
{
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_plan, 1);
    row->addSpacing(12);
    row->addWidget(m_stepTime, 0, Qt::AlignTop);
    m_plan->installEventFilter(this);
}

bool WindowHeader::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != m_plan || event->type() != QEvent::ToolTip)
        return false;
    QToolTip::showText(static_cast<QHelpEvent *>(event)->globalPos(), peakToolTip(), m_plan);
    return true;
}

void WindowHeader::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    // "does not fit" in the light palette's dark red on the dark window reads at about 2:1 (issue 34).
    if (event->type() == QEvent::PaletteChange)
        refresh(m_serving);
}

QString WindowHeader::peakText() const
{
    const Ledger &ledger = m_document->ledger();
    QString peak;
    if (m_serving && m_document->hasLedger()) {
        // The ledger's plan served, as the facts beside it describe it.
        const InferenceLedger &serving = m_document->inference();
        const bool fits = serving.fits();
        // Phrases unbroken: a narrow window wraps between them, never inside "rank 15" or "41.30 GB".
        peak = tr("Serving peak: %1, %2 %3 %4; training this plan: %5 %6")
                   .arg(unbroken(tr("rank %1").arg(serving.peak_rank)), unbroken(bytesText(serving.peak_bytes)),
                        unbroken(tr("of %1").arg(bytesText(serving.capacity_bytes))),
                        unbroken(tr("— %1").arg(fits ? tr("fits") : tr("does not fit"))),
                        unbroken(bytesText(ledger.peak_bytes)),
                        unbroken(tr("— %1").arg(ledger.fits() ? tr("fits") : tr("does not fit"))));
        return fits ? peak.toHtmlEscaped()
                    : QStringLiteral("<span style='color:%1'>%2</span>")
                          .arg(errorTextColor(palette()).name(), peak.toHtmlEscaped());
    }
    const RankLedger *rank = m_document->hasLedger() ? findRank(ledger, ledger.peak_rank) : nullptr;
    if (!rank)
        return peak;
    // What runs out, reserved memory with the runtime reserve, comes from the
    // allocator model off the GUI thread after an edit (Document::reserved):
    // the simulated peak's verdict shows at once, and the reserved one joins
    // it where they differ (its figure is in the tooltip: the header stays
    // short enough for a small screen).
    const PlanReserved *reserved = m_document->reserved();
    const bool reservedOver = ledger.fits() && reserved && !reserved->fits();
    const bool fits = ledger.fits() && !reservedOver; // core's verdicts
    const QString verdict = reservedOver ? tr("— does not fit (reserved %1)").arg(bytesText(reserved->peak_bytes))
                                         : tr("— %1").arg(fits ? tr("fits") : tr("does not fit"));
    peak = tr("Peak: %1, %2 %3 %4 %5")
               .arg(unbroken(tr("rank %1").arg(rank->pipeline_rank)), unbroken(bytesText(ledger.peak_bytes)),
                    unbroken(tr("of %1").arg(bytesText(ledger.capacity_bytes))),
                    unbroken(
                        QStringLiteral("(%1)").arg(toQString(formatGiB(static_cast<double>(ledger.capacity_bytes))))),
                    unbroken(verdict));
    return fits ? peak.toHtmlEscaped()
                : QStringLiteral("<span style='color:%1'>%2</span>")
                      .arg(errorTextColor(palette()).name(), peak.toHtmlEscaped());
}

void WindowHeader::refresh(bool serving)
{
    const Config &config = m_document->config();
    const Ledger &ledger = m_document->ledger();
    const QString name = QString::fromStdString(config.name);
    m_serving = serving;
    const QString peak = peakText();
    // The facts and the peak describe the plan the ledger was computed for:
    // while an edit has errors that is the last valid plan, said so and dimmed.
    const Config &planned = m_document->ledgerConfig();
    // The step time is training's: not shown beside a served forward's peak.
    m_stepTime->setVisible(!m_serving);
    if (m_document->hasLedger()) {
        m_stepTime->setStepTime(m_document->stepTime());
        m_stepTime->setStale(m_document->isStale());
    } else {
        m_stepTime->clear();
    }
    QStringList facts;
    facts << unbroken(ledger.gpus == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(ledger.gpus));
    // "70.55 B" stays whole; "parameters" may start the next line (a window at its narrowest keeps its height).
    facts << tr("%1 parameters").arg(unbroken(parameterCountText(ledger.total_parameters)));
    facts << toQString(parallelSummary(planned)).toHtmlEscaped(); // "t=1 p=16 …": a break between any two
    facts << unbroken(QString::fromStdString(planned.hardware.name).toHtmlEscaped());

    QString plan = facts.join(QStringLiteral(" &nbsp;·&nbsp; ")) + QStringLiteral(" &nbsp;·&nbsp; <b>%1</b>").arg(peak);
    if (m_document->isStale())
        plan = QStringLiteral("<span style='color:%1'>%2 %3</span>")
                   .arg(palette().color(QPalette::Disabled, QPalette::Text).name(),
                        tr("Last valid plan:").toHtmlEscaped(), plan);
    // Once edited, the name and description are those of the plan as loaded
    // ("8K-token sequences" at 64K): said so, until Save as names this plan.
    const bool edited = m_document->isEditedSinceLoad() && !(m_talk && m_talk->isActive());
    const QString editedMark
        = edited ? QStringLiteral(" <span style='color:%1'>%2</span>")
                       .arg(palette().color(QPalette::PlaceholderText).name(), tr("(edited)").toHtmlEscaped())
                 : QString();
    const QString title = QStringLiteral("<span style='font-size:large'><b>%1</b>%2</span>&nbsp;&nbsp; %3")
                              .arg(name.toHtmlEscaped(), editedMark, plan);
    const QString description = QString::fromStdString(config.description);
    // One detail line, so an invalid edit does not push the charts down.
    if (m_document->isStale())
        m_plan->setContent(title, tr("The configuration has errors (below); the ledger shown is the last valid one."),
                           true);
    else if (edited && !description.isEmpty())
        m_plan->setContent(title, tr("As loaded, before the edits: %1").arg(description), false);
    else
        m_plan->setContent(title, description, false);
    // The tooltip (the description whole, the two peaks) is made when it is asked for: see eventFilter.
}

QString WindowHeader::peakToolTip() const
{
    const Config &config = m_document->config();
    QString tip = tr("%1\n%2 parameters in total")
                      .arg(QString::fromStdString(config.description),
                           toQString(formatThousands(m_document->ledger().total_parameters)));
    if (m_document->hasLedger()) {
        tip += QStringLiteral("\n\n")
               + tr(
                   "The header's peak is the simulated iteration's, as Lifetimes draws it, and so is every verdict's. ")
               + toQString(peakComparisonText(comparePeaks(m_document->timeline())));
        const PlanReserved *reserved = m_document->reserved();
        tip += QStringLiteral("\n\n")
               + (reserved ? toQString(reservedVerdict(*reserved))
                           : tr("Reserved memory: the allocator model is still running."));
    }
    return tip;
}

} // namespace memledger::ui
