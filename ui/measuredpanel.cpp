// SPDX-License-Identifier: MIT
#include "ui/measuredpanel.h"

#include <QComboBox>
#include <QEvent>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStringList>
#include <QTableView>
#include <QVBoxLayout>

#include "core/base/units.h"
#include "core/view/gantt.h"
#include "ui/comparisontablemodel.h"
#include "ui/peakallocationsmodel.h"
#include "ui/qtstring.h"

#include <algorithm>
#include <vector>

namespace memledger::ui {

namespace {

constexpr int kEmptyPage = 0;
constexpr int kComparisonPage = 1;

QTableView *makeTable(QWidget *parent)
{
    auto *table = new QTableView(parent);
    table->verticalHeader()->hide();
    table->setAlternatingRowColors(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setWordWrap(false);
    table->setTextElideMode(Qt::ElideMiddle); // frames keep their function and their line
    table->horizontalHeader()->setHighlightSections(false);
    // One line of text a row, like the ledger's tree.
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 8);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    return table;
}

QLabel *makeCaption(QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

// Profiler traces name the host's own allocations device -1.
QString deviceText(int device)
{
    return device < 0 ? MeasuredPanel::tr("CPU") : MeasuredPanel::tr("device %1").arg(device);
}

QString formatText(TraceFormat format)
{
    return format == TraceFormat::Snapshot ? MeasuredPanel::tr("memory snapshot") : MeasuredPanel::tr("profiler trace");
}

} // namespace

MeasuredPanel::MeasuredPanel(QWidget *parent)
    : QWidget(parent)
    , m_comparison(new ComparisonTableModel(this))
    , m_allocations(new PeakAllocationsModel(this))
    , m_pages(new QStackedWidget(this))
    , m_placeholder(new QLabel(this))
    , m_title(new QLabel(this))
    , m_rank(new QSpinBox(this))
    , m_device(new QComboBox(this))
    , m_clear(new QPushButton(tr("&Clear"), this))
    , m_summary(makeCaption(this))
    , m_warning(new QLabel(this))
    , m_comparisonTable(makeTable(this))
    , m_allocationsTitle(new QLabel(this))
    , m_allocationsTable(makeTable(this))
    , m_notes(makeCaption(this))
{
    // The placeholder: what this view is for and how to fill it.
    auto *empty = new QWidget(this);
    auto *emptyLayout = new QVBoxLayout(empty);
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setForegroundRole(QPalette::PlaceholderText);
    m_placeholder->setText(defaultPlaceholder());
    auto *importButton = new QPushButton(tr("&Import measured trace…"), empty);
    emptyLayout->addStretch(1);
    emptyLayout->addWidget(m_placeholder);
    emptyLayout->addWidget(importButton, 0, Qt::AlignHCenter);
    emptyLayout->addStretch(2);
    connect(importButton, &QPushButton::clicked, this, &MeasuredPanel::importRequested);

    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(4, 4, 4, 4);
    auto *bar = new QHBoxLayout;
    m_title->setTextFormat(Qt::RichText);
    // A long file name must not hold the window wider than the screen: the title takes the width it is given
    // and elides the name in the middle to it (fitTitle), the whole name in its tooltip.
    m_title->setSizePolicy(QSizePolicy::Ignored, m_title->sizePolicy().verticalPolicy());
    m_title->installEventFilter(this);
    bar->addWidget(m_title, 1);
    // A snapshot of several GPUs (torch.cuda.memory._snapshot() records every device, as MemoryViz's device
    // menu shows): the one held against the plan is picked here, as memledger-cli compare's --device.
    auto *deviceLabel = new QLabel(tr("&Device"), page);
    deviceLabel->setBuddy(m_device);
    m_device->setToolTip(tr("The device of the trace whose allocations are held against the plan: a snapshot "
                            "or profiler trace may record several."));
    m_device->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(deviceLabel);
    bar->addWidget(m_device);
    auto *rankLabel = new QLabel(tr("Pipeline &rank"), page);
    rankLabel->setBuddy(m_rank);
    m_rank->setToolTip(tr("The pipeline rank of the plan whose simulated iteration the trace is held against: "
                          "the rank the measured GPU ran."));
    bar->addWidget(rankLabel);
    bar->addWidget(m_rank);
    auto *reimport = new QPushButton(tr("I&mport…"), page);
    reimport->setToolTip(tr("Import another measured trace in place of this one"));
    bar->addWidget(reimport);
    m_clear->setToolTip(tr("Forget the measured trace (File > Clear measured trace)"));
    bar->addWidget(m_clear);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    // Bold in the text's own colour: it reads in either palette without a colour to keep in step.
    m_warning->setWordWrap(true);
    m_warning->setTextFormat(Qt::PlainText);
    QFont bold = m_warning->font();
    bold.setBold(true);
    m_warning->setFont(bold);
    m_warning->hide();
    layout->addWidget(m_warning);

    m_comparisonTable->setModel(m_comparison);
    // The figure's name takes the width; the numbers sit together at the right, sized to their text.
    m_comparisonTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_comparisonTable->horizontalHeader()->setSectionResizeMode(ComparisonTableModel::FigureColumn,
                                                                QHeaderView::Stretch);
    m_comparisonTable->horizontalHeader()->setMinimumSectionSize(96);
    m_comparisonTable->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_comparisonTable->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_comparisonTable->setToolTip(
        tr("Peak: the largest allocated total in the iteration. Steady state: what stays allocated between "
           "iterations.\nModelled figures leave out the runtime reserve, which an allocator never sees."));
    layout->addWidget(m_comparisonTable);

    m_allocationsTitle->setTextFormat(Qt::RichText);
    layout->addWidget(m_allocationsTitle);
    m_allocationsTable->setModel(m_allocations);
    // The ledger row is the answer the table gives: whole, at its text's width (issue 34, item 12: it was cut to
    // 260 px). The frames take what is left, elided in the middle; setComparison() hides them when the trace
    // recorded none.
    QHeaderView *header = m_allocationsTable->horizontalHeader();
    header->setSectionResizeMode(PeakAllocationsModel::BytesColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PeakAllocationsModel::CountColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PeakAllocationsModel::MatchedColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PeakAllocationsModel::FramesColumn, QHeaderView::Stretch);
    header->setStretchLastSection(false);
    layout->addWidget(m_allocationsTable, 1);

    QFont small = m_notes->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_notes->setFont(small);
    m_notes->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_notes);

    m_pages->insertWidget(kEmptyPage, empty);
    m_pages->insertWidget(kComparisonPage, page);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_pages);

    connect(reimport, &QPushButton::clicked, this, &MeasuredPanel::importRequested);
    connect(m_clear, &QPushButton::clicked, this, &MeasuredPanel::clearRequested);
    connect(m_rank, &QSpinBox::valueChanged, this, &MeasuredPanel::rankChanged);
    connect(m_device, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            Q_EMIT deviceChanged(m_device->itemData(index).toInt());
    });
    clear();
}

QString MeasuredPanel::defaultPlaceholder() const
{
    return tr("<p><b>No measured run yet.</b></p>"
              "<p>Import a PyTorch memory snapshot (<tt>torch.cuda.memory._dump_snapshot()</tt>, "
              "<tt>.pickle</tt>) or a profiler trace (<tt>torch.profiler</tt> with <tt>profile_memory=True</tt>, "
              "<tt>.json</tt>), gzipped or not, with File &gt; Import measured trace… or by dropping it on the "
              "window.<br>The measured peak, steady state and phases are then held against this plan's model, "
              "and the measured curve is drawn over the simulated one in the Lifetimes view.</p>");
}

void MeasuredPanel::setComparison(const TraceComparison &comparison, const QString &fileName,
                                  const std::vector<int> &devices)
{
    m_comparison->setComparison(comparison);
    m_allocations->setAllocations(comparison.alive_at_peak);
    m_fileName = fileName;
    m_title->setToolTip(fileName);
    fitTitle();

    QStringList facts;
    facts << formatText(comparison.format);
    facts << (devices.size() > 1 ? tr("%1 of %2 in the file").arg(deviceText(comparison.device)).arg(devices.size())
                                 : deviceText(comparison.device));
    {
        const QSignalBlocker block(m_device);
        m_device->clear();
        for (const int device : devices.empty() ? std::vector<int>{comparison.device} : devices)
            m_device->addItem(deviceText(device), device);
        m_device->setCurrentIndex(std::max(0, m_device->findData(comparison.device)));
        m_device->setEnabled(m_device->count() > 1);
    }
    facts << tr("%1 events").arg(toQString(formatThousands(comparison.events)));
    const QString modelled = toQString(formatSeconds(comparison.modelled_iteration_s));
    if (!comparison.measured_iteration_s)
        facts << (comparison.iteration_found ? tr("iteration %1 modelled (the trace has no times)")
                                             : tr("iteration %1 modelled (no iteration told apart in the trace)"))
                     .arg(modelled);
    else
        facts << (comparison.measured_on_cpu ? tr("iteration %1 measured on the CPU, %2 modelled: not comparable")
                                             : tr("iteration %1 measured, %2 modelled"))
                     .arg(toQString(formatSeconds(*comparison.measured_iteration_s)), modelled);
    facts << tr("peak measured %1, modelled %2")
                 .arg(ComparisonTableModel::phaseWhereText(comparison.measured_peak_phase),
                      ComparisonTableModel::phaseWhereText(comparison.modelled_peak_phase));
    m_summary->setText(facts.join(QStringLiteral(" \u00b7 ")));
    // Core's verdict: peaks this far apart are no error of the model's but another model's trace.
    m_warning->setText(
        comparison.plainly_other_model
            ? tr("This trace is plainly of another model or plan: its peak (%1) and this plan's "
                 "modelled peak (%2) are %3 times apart or more. Import the run of this plan, or "
                 "open the plan it was measured for.")
                  .arg(bytesText(comparison.measured_peak_allocated_bytes), bytesText(comparison.modelled_peak_bytes))
                  .arg(kOtherModelFactor)
            : QString());
    m_warning->setVisible(comparison.plainly_other_model);

    const int shown = m_allocations->rowCount();
    const int unexplained = m_allocations->unexplainedCount();
    // A trace recorded without stacks (torch.cuda.memory._record_memory_history(stacks=None)) has no frame on any
    // row: the column would say "(no frames recorded)" on every one, so the title says it once instead.
    const bool frames = m_allocations->hasFrames();
    m_allocationsTable->setColumnHidden(PeakAllocationsModel::FramesColumn, !frames);
    m_allocationsTable->horizontalHeader()->setSectionResizeMode(
        PeakAllocationsModel::MatchedColumn, frames ? QHeaderView::ResizeToContents : QHeaderView::Stretch);
    m_allocationsTitle->setText(
        tr("<b>Largest allocations alive at the measured peak</b> &nbsp; %1, %2%3")
            .arg(shown == 1 ? tr("1 row") : tr("%1 rows").arg(shown),
                 unexplained == 0 ? tr("each matched to a ledger row") : tr("%1 unexplained").arg(unexplained),
                 frames || shown == 0 ? QString() : tr("; the trace recorded no stacks")));

    // Core's notes: how the iteration was found, what was assumed.
    QStringList notes;
    for (const std::string &note : comparison.notes)
        notes << toQString(note).toHtmlEscaped();
    m_notes->setText(notes.join(QStringLiteral("<br>")));

    fitComparisonTable();
    m_clear->setEnabled(true);
    m_pages->setCurrentIndex(kComparisonPage);
    fitTitle(); // at the width of the page now shown
}

void MeasuredPanel::fitTitle()
{
    if (m_fileName.isEmpty())
        return;
    QFont bold = m_title->font();
    bold.setBold(true);
    const QString heading = tr("Measured vs model");
    const int room = m_title->width() - QFontMetrics(bold).horizontalAdvance(heading)
                     - 3 * m_title->fontMetrics().horizontalAdvance(QLatin1Char(' '));
    // Not laid out yet (a hidden page): whole, until the first resize fits it.
    const QString name = m_title->isVisible()
                             ? m_title->fontMetrics().elidedText(m_fileName, Qt::ElideMiddle, std::max(room, 40))
                             : m_fileName;
    m_title->setText(QStringLiteral("<b>%1</b> &nbsp; %2").arg(heading.toHtmlEscaped(), name.toHtmlEscaped()));
}

bool MeasuredPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_title && (event->type() == QEvent::Resize || event->type() == QEvent::Show))
        fitTitle();
    return QWidget::eventFilter(watched, event);
}

void MeasuredPanel::fitComparisonTable()
{
    // Every row shows; the allocations below take the rest of the height.
    int height = m_comparisonTable->horizontalHeader()->height() + 2 * m_comparisonTable->frameWidth();
    for (int row = 0; row < m_comparison->rowCount(); ++row)
        height += m_comparisonTable->rowHeight(row);
    m_comparisonTable->setFixedHeight(height);
}

void MeasuredPanel::clear()
{
    m_comparison->clear();
    m_allocations->setAllocations({});
    m_title->clear();
    m_fileName.clear();
    m_summary->clear();
    m_warning->clear();
    m_warning->hide();
    m_notes->clear();
    m_allocationsTitle->clear();
    {
        const QSignalBlocker block(m_device);
        m_device->clear();
    }
    m_placeholder->setText(defaultPlaceholder());
    m_pages->setCurrentIndex(kEmptyPage);
}

void MeasuredPanel::setPlaceholderText(const QString &text)
{
    m_placeholder->setText(text.isEmpty() ? defaultPlaceholder() : text.toHtmlEscaped());
}

void MeasuredPanel::setRanks(int ranks, int rank)
{
    const QSignalBlocker block(m_rank);
    m_rank->setRange(0, std::max(0, ranks - 1));
    m_rank->setValue(rank);
    m_rank->setEnabled(ranks > 1);
}

bool MeasuredPanel::hasComparison() const
{
    return !m_comparison->isEmpty();
}

QString MeasuredPanel::titleText() const
{
    return m_title->text();
}

QString MeasuredPanel::summaryText() const
{
    return m_summary->text();
}

QString MeasuredPanel::warningText() const
{
    return m_warning->text();
}

QString MeasuredPanel::notesText() const
{
    return m_notes->text();
}

QString MeasuredPanel::allocationsTitleText() const
{
    return m_allocationsTitle->text();
}

} // namespace memledger::ui
