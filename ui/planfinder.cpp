// SPDX-License-Identifier: MIT
#include "ui/planfinder.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QShowEvent>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "core/base/units.h"
#include "core/planner/search.h"
#include "core/reports/searchreport.h"
#include "ui/document.h"
#include "ui/exporter.h"
#include "ui/frontierplot.h"
#include "ui/planfindermodel.h"
#include "ui/qtstring.h"

#include <algorithm>
#include <utility>

namespace memledger::ui {

namespace {

// The GPU counts the spin box takes (the bench's 16,384-GPU spaces search in about a second).
constexpr int kMaxGpus = 1000000;
constexpr int kMaxTop = 1000;

} // namespace

PlanFinder::PlanFinder(Document *document, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_gpus(new QSpinBox(this))
    , m_margin(new QDoubleSpinBox(this))
    , m_top(new QSpinBox(this))
    , m_find(new QPushButton(tr("Find plans"), this))
    , m_export(new QPushButton(tr("Export CSV…"), this))
    , m_summary(new QLabel(this))
    , m_current(new QLabel(this))
    , m_stack(new QStackedWidget(this))
    , m_table(new QTableView(this))
    , m_plot(new FrontierPlot(this))
    , m_notes(new QLabel(this))
    , m_hint(new QLabel(this))
    , m_model(new PlanFinderModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_researchTimer(new QTimer(this))
    , m_pool(new QThreadPool(this))
    , m_watcher(new QFutureWatcher<SearchResult>(this))
{
    m_pool->setMaxThreadCount(1);
    connect(m_watcher, &QFutureWatcher<SearchResult>::finished, this, &PlanFinder::searchDone);
    m_researchTimer->setSingleShot(true);
    m_researchTimer->setInterval(300);
    connect(m_researchTimer, &QTimer::timeout, this, [this] {
        if (isVisible() && !m_searched)
            findPlans();
    });
    m_gpus->setRange(1, kMaxGpus);
    m_gpus->setGroupSeparatorShown(true);
    m_gpus->setToolTip(tr("How many GPUs the plan must use: t × p × d × c"));
    m_margin->setRange(1, 100);
    m_margin->setDecimals(0);
    m_margin->setSuffix(tr(" % of HBM"));
    m_margin->setValue(SearchOptions{}.margin * 100);
    m_margin->setToolTip(
        tr("Keep plans whose reserved memory (PyTorch's caching allocator, simulated) plus the runtime "
           "reserve stays under this share of the device memory; below 100 % is an extra "
           "safety factor"));
    m_top->setRange(1, kMaxTop);
    m_top->setValue(SearchOptions{}.top);
    m_top->setToolTip(tr("How many of the fastest plans to list"));
    m_find->setToolTip(tr("Search every split of the GPUs (Return)"));

    auto *controls = new QHBoxLayout;
    // The spin boxes may shrink to what their values need (a spin box's own policy keeps the width of its
    // widest value, a million GPUs with separators), and the layout's own spacing parts the fields: the row fits
    // beside the plan panel on a 1024 px wide screen at an 11 pt font (issue 34, item 16).
    for (QAbstractSpinBox *spin : {static_cast<QAbstractSpinBox *>(m_gpus), static_cast<QAbstractSpinBox *>(m_margin),
                                   static_cast<QAbstractSpinBox *>(m_top)})
        spin->setSizePolicy(QSizePolicy::Preferred, spin->sizePolicy().verticalPolicy());
    auto addLabelled = [&](const QString &text, QWidget *field) {
        auto *label = new QLabel(text, this);
        label->setBuddy(field);
        controls->addWidget(label);
        controls->addWidget(field);
    };
    addLabelled(tr("&GPUs"), m_gpus);
    addLabelled(tr("&Margin"), m_margin);
    addLabelled(tr("&Top"), m_top);
    controls->addWidget(m_find);
    controls->addStretch(1);
    m_export->setObjectName(QStringLiteral("exportPlans"));
    m_export->setToolTip(tr("Save the plans found as a CSV file, one row per plan (File > Export has it too)"));
    m_export->setEnabled(false);
    controls->addWidget(m_export);

    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_current->setObjectName(QStringLiteral("currentPlanNote"));
    m_current->setWordWrap(true);
    m_current->hide();
    m_notes->setWordWrap(true);
    m_notes->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->setMargin(8);
    m_hint->setWordWrap(true);
    m_hint->setText(
        tr("Hover a t, p, v, d, c, e, micro-batch, ZeRO, recompute, offload, balance, grad offload or FP8 cell (or "
           "its header) to see why the other values are not listed. Double-click a plan, select it and press Enter, "
           "or click its diamond in the plot to apply it (Edit > Undo takes it back)."));

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(PlanFinderModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(PlanFinderModel::RankColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSortIndicatorShown(true);
    m_table->horizontalHeader()->setHighlightSections(false);

    m_stack->addWidget(m_table);
    m_stack->addWidget(m_notes);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_stack);
    split->addWidget(m_plot);
    split->setStretchFactor(0, 3); // ten rows unscrolled in a 1000-pixel window
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_current);
    layout->addWidget(split, 1);
    layout->addWidget(m_hint);

    m_gpus->setValue(static_cast<int>(std::clamp<std::int64_t>(document->config().parallelism.gpus(), 1, kMaxGpus)));
    connect(m_gpus, &QSpinBox::valueChanged, this, [this] { m_gpusEdited = true; });
    connect(m_find, &QPushButton::clicked, this, &PlanFinder::findPlans);
    connect(m_export, &QPushButton::clicked, this, &PlanFinder::chooseExportPath);
    connect(m_table, &QTableView::activated, this, &PlanFinder::activate);
    connect(m_plot, &FrontierPlot::markerClicked, this, [this](int marker) {
        applyPlan(marker); // markers are the plans in rank order; the current plan's own marker comes after them
    });
    connect(document, &Document::configChanged, this, &PlanFinder::documentChanged);
    // The current plan's ring follows the document while the panel is shown (hidden: at the next search or show).
    connect(document, &Document::ledgerChanged, this, [this] {
        if (isVisible())
            updatePlot();
    });
    showSummary();
}

const SearchResult &PlanFinder::result()
{
    waitForSearch();
    return m_model->result();
}

QString PlanFinder::summary()
{
    waitForSearch();
    return m_summary->text();
}

QString PlanFinder::notes()
{
    waitForSearch();
    return m_stack->currentWidget() == m_notes ? m_notes->text() : QString();
}

QString PlanFinder::currentPlanNote()
{
    waitForSearch();
    return m_current->isHidden() ? QString() : m_current->text();
}

bool PlanFinder::waitForSearch(int milliseconds)
{
    const QDeadlineTimer deadline
        = milliseconds < 0 ? QDeadlineTimer(QDeadlineTimer::Forever) : QDeadlineTimer(milliseconds);
    while (m_running) {
        if (deadline.hasExpired())
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 20);
    }
    return true;
}

void PlanFinder::setGpus(int gpus)
{
    m_gpus->setValue(gpus);
}

void PlanFinder::setMargin(double fraction)
{
    m_margin->setValue(fraction * 100.0);
}

void PlanFinder::setTop(int top)
{
    m_top->setValue(top);
}

void PlanFinder::findPlans()
{
    ++m_requests;
    SearchOptions options;
    options.gpus = m_gpus->value();
    options.margin = m_margin->value() / 100.0;
    options.top = m_top->value();
    // The search chooses the split, the micro-batch, ZeRO, recompute, offload and the schedule itself: only an
    // error of what it keeps (the model, the device, the sequence, the precision) stops it.
    const Problems blockers = searchBlockers(m_document->config());
    m_blocked = !blockers.empty();
    if (m_blocked) {
        m_model->setResult({});
        m_searched = false;
        m_export->setEnabled(false);
        QStringList lines{tr("The search keeps this plan's model, device, sequence and precision, and these are "
                             "wrong whatever the split; fix them first (the search runs again once they are):")};
        for (const Problem &p : blockers)
            lines << QStringLiteral("• ") + toQString(p.toString());
        m_notes->setText(lines.join(QLatin1Char('\n')));
        m_stack->setCurrentWidget(m_notes);
        m_summary->clear();
        updatePlot();
        return;
    }
    const Problems bad = checkSearchOptions(options);
    if (!bad.empty()) {
        QStringList lines;
        for (const Problem &p : bad)
            lines << toQString(p.toString());
        m_notes->setText(lines.join(QLatin1Char('\n')));
        m_stack->setCurrentWidget(m_notes);
        return;
    }
    m_searchedBase = m_document->config();
    m_searchedOptions = options;
    if (m_running) {
        m_again = true; // after the one running, with these inputs
        return;
    }
    startSearch();
}

void PlanFinder::startSearch()
{
    m_running = true;
    m_again = false;
    m_searchRequest = m_requests;
    m_summary->setText(tr("Searching plans on %1 GPUs…").arg(toQString(formatThousands(m_searchedOptions.gpus))));
    // The worker searches its own copies; core's search is pure.
    m_watcher->setFuture(QtConcurrent::run(
        m_pool, [base = m_searchedBase, options = m_searchedOptions] { return searchPlans(base, options); }));
}

void PlanFinder::searchDone()
{
    if (m_again) { // inputs that changed while it ran: their search replaces this one
        startSearch();
        return;
    }
    m_running = false;
    if (m_searchRequest == m_requests)
        showResult(m_watcher->result());
    Q_EMIT searchFinished();
}

void PlanFinder::showResult(SearchResult result)
{
    m_model->setResult(std::move(result));
    m_searched = true;
    updatePlot();
    const SearchResult &r = m_model->result();
    if (r.plans.empty()) {
        QStringList notes;
        for (const std::string &n : r.notes)
            notes << toQString(n);
        m_notes->setText(notes.isEmpty() ? tr("No plan fits.") : notes.join(QLatin1Char('\n')));
        m_stack->setCurrentWidget(m_notes);
    } else {
        m_stack->setCurrentWidget(m_table);
        m_table->sortByColumn(PlanFinderModel::RankColumn, Qt::AscendingOrder);
    }
    showSummary();
}

void PlanFinder::showSummary()
{
    m_export->setEnabled(m_searched && !m_model->result().plans.empty());
    if (!m_searched) {
        m_summary->setText(
            tr("Searches every split of the GPUs into t, p, v, d, c and e with every micro-batch, ZeRO stage, "
               "recompute and offload choice for this model, device, sequence and global batch."));
        return;
    }
    const SearchResult &r = m_model->result();
    const std::int64_t withinBound = r.candidates - r.prunedByBound;
    QString text
        = tr("%1 plans on %2 GPUs searched in %3 ms; %4 pass the memory bound (≤ %5, %6 % of HBM); "
             "the %7 fastest, confirmed by the full ledger and by what the allocator reserves:")
              .arg(toQString(formatThousands(r.candidates)), toQString(formatThousands(m_searchedOptions.gpus)))
              .arg(r.seconds * 1000.0, 0, 'f', 1)
              .arg(toQString(formatThousands(withinBound)), bytesText(r.limitBytes))
              .arg(m_searchedOptions.margin * 100.0, 0, 'f', 0)
              .arg(r.plans.size());
    m_summary->setText(text);
}

void PlanFinder::showCurrentPlanNote()
{
    const std::int64_t gpus = m_document->config().parallelism.gpus();
    QString note;
    if (m_searched && !m_model->result().plans.empty() && gpus != m_searchedOptions.gpus)
        note = tr("The current plan runs on %1 GPUs, not the %2 searched: its step time is not comparable with "
                  "theirs, so it is not drawn among them.")
                   .arg(toQString(formatThousands(gpus)), toQString(formatThousands(m_searchedOptions.gpus)));
    if (m_current->text() != note)
        m_current->setText(note);
    m_current->setVisible(!note.isEmpty());
}

void PlanFinder::updatePlot()
{
    showCurrentPlanNote();
    FrontierPlotData data;
    data.costTitle = tr("estimated step time, % over the fastest shown");
    data.memoryTitle = tr("peak per GPU, GB");
    data.costUnit = QStringLiteral("%");
    data.memoryUnit = QStringLiteral("GB");
    data.frontierLegend = tr("fastest for their memory");
    data.markerLegend = tr("a plan found (click to apply)");
    data.emptyText = m_searched ? tr("No plan to draw.") : tr("Find plans to draw them here.");
    const SearchResult &r = m_model->result();
    if (r.plans.empty()) {
        m_plot->setData(std::move(data));
        return;
    }
    // The current plan, when valid and not one of those found, gets its own ring.
    Config current = m_document->config();
    int currentPlan = -1;
    for (std::size_t i = 0; i < r.plans.size() && currentPlan < 0; ++i) {
        current.name = r.plans[i].config.name;
        if (r.plans[i].config == current)
            currentPlan = static_cast<int>(i);
    }
    // Only a plan on the GPUs searched is comparable: on fewer GPUs a step is slower for that reason alone.
    const bool ownRing = currentPlan < 0 && m_document->hasLedger() && !m_document->isStale()
                         && m_document->config().parallelism.gpus() == m_searchedOptions.gpus;
    // Valid and not stale: the plan the document's step time describes.
    const double currentTime = ownRing ? m_document->stepTime().total : 0.0;
    double fastest = r.plans.front().time.total;
    for (const SearchPlan &p : r.plans)
        fastest = std::min(fastest, p.time.total);
    if (ownRing)
        fastest = std::min(fastest, currentTime);
    const auto point = [&](double time, Bytes peak, const QString &tip, const QString &tag) {
        FrontierPlotPoint p;
        p.cost = percentSlower(time, fastest);
        p.memory = static_cast<double>(peak) / kGB;
        p.toolTip = tip;
        p.tag = tag;
        return p;
    };
    for (std::size_t i = 0; i < r.plans.size(); ++i) {
        const SearchPlan &p = r.plans[i];
        data.markers.push_back(point(p.time.total, p.ledger.peak_bytes,
                                     tr("Plan %1: %2\npeak %3, step %4 s (click to apply)")
                                         .arg(i + 1)
                                         .arg(m_model->planSummary(int(i)), bytesText(p.ledger.peak_bytes))
                                         .arg(p.time.total, 0, 'f', 3),
                                     QString::number(i + 1)));
    }
    for (std::size_t i : paretoPlans(r)) {
        FrontierPlotPoint p = data.markers[i];
        p.tag.clear();
        data.frontier.push_back(p);
    }
    // The plot's frontier runs from the least memory to the most.
    std::reverse(data.frontier.begin(), data.frontier.end());
    data.currentMarker = currentPlan;
    if (ownRing) {
        const Bytes peak = m_document->ledger().peak_bytes;
        data.markers.push_back(
            point(currentTime, peak,
                  tr("The current plan: peak %1, step %2 s%3")
                      .arg(bytesText(peak))
                      .arg(currentTime, 0, 'f', 3)
                      .arg(peak > r.limitBytes ? tr(" — over the search's memory limit") : QString()),
                  QString()));
        data.currentMarker = static_cast<int>(data.markers.size()) - 1;
        data.currentMayLeaveAxes = true;
    }
    m_plot->setData(std::move(data));
}

void PlanFinder::documentChanged(const Config &config)
{
    // Applying a plan changes only what the search chooses. Plans found for
    // another model, training or device are not this document's: they go,
    // and the search runs again when the view is (or next becomes) visible.
    const bool sameModel = config.model == m_searchedBase.model && config.hardware == m_searchedBase.hardware;
    const bool stale = m_searched
                       && (!sameModel || config.training.seq_length != m_searchedBase.training.seq_length
                           || config.globalBatch() != m_searchedBase.globalBatch());
    // A GPU count typed for one model is not another's (Mixtral's 64-GPU plan was measured against 128-GPU
    // plans): another model, device or training takes the plan's own count again.
    if (stale)
        m_gpusEdited = false;
    if (!m_gpusEdited) {
        const QSignalBlocker block(m_gpus);
        m_gpus->setValue(static_cast<int>(std::clamp<std::int64_t>(config.parallelism.gpus(), 1, kMaxGpus)));
    }
    // A drag still moving: its next step puts the search off again.
    if (m_researchTimer->isActive() && sameModel) {
        m_researchTimer->start();
        return;
    }
    if (stale) {
        ++m_requests; // a search still running is for the plan before
        m_model->setResult({});
        m_searched = false;
        m_notes->setText(tr("The model, training or hardware changed: the plans found before are gone."));
        m_stack->setCurrentWidget(m_notes);
        showSummary();
        updatePlot();
    } else if (!m_blocked) {
        return;
    }
    // Only the sequence or the global batch changed, and the search can run:
    // it runs when the slider pauses. Another model or device, or an error to
    // name, at once.
    if (stale && sameModel && searchBlockers(config).empty()) {
        m_researchTimer->start();
        return;
    }
    // Once the edit is applied (the document recomputes at the next pass): a search for the new plan, or, where
    // an error stopped the last one, again, so that its message goes with the error.
    QTimer::singleShot(0, this, [this] {
        if (isVisible() && !m_searched)
            findPlans();
    });
}

bool PlanFinder::exportCsv(const QString &path, QString *error)
{
    waitForSearch();
    if (!m_searched || m_model->result().plans.empty()) {
        if (error)
            *error = tr("There are no plans to export: find plans first.");
        return false;
    }
    return exportText(searchToCsv(m_model->result()), path, error);
}

void PlanFinder::chooseExportPath()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Export the plans found"), QString(), tr("CSV (*.csv)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".csv");
    QString error;
    if (!exportCsv(path, &error))
        QMessageBox::warning(this, tr("Export failed"), tr("%1 could not be written: %2").arg(path, error));
}

void PlanFinder::activate(const QModelIndex &index)
{
    if (index.isValid())
        applyPlan(m_proxy->mapToSource(index).row());
}

bool PlanFinder::applyPlan(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return false;
    Config config = m_model->result().plans.at(static_cast<std::size_t>(row)).config;
    config.name = m_document->config().name;
    m_document->edit(config, tr("Apply plan %1").arg(m_model->planSummary(row)));
    Q_EMIT planApplied(row);
    return true;
}

void PlanFinder::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (!m_searched)
        findPlans();
    else
        updatePlot();
}

void PlanFinder::keyPressEvent(QKeyEvent *event)
{
    // Return in a spin box (which passes it on) searches; Return in the table applies the row there.
    if ((event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter) && !m_table->hasFocus()) {
        findPlans();
        event->accept();
        return;
    }
    QWidget::keyPressEvent(event);
}

} // namespace memledger::ui
