// SPDX-License-Identifier: MIT
#include "ui/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSet>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QTreeView>
#include <QUndoStack>
#include <QUrl>
#include <QVBoxLayout>

#include "core/base/units.h"
#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "core/reports/report.h"
#include "core/timeline/peakcompare.h"
#include "ui/chartexport.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/exporter.h"
#include "ui/frontierplot.h"
#include "ui/frontierview.h"
#include "ui/helpmenu.h"
#include "ui/importprogress.h"
#include "ui/ledgertablemodel.h"
#include "ui/lifetimesource.h"
#include "ui/lifetimespage.h"
#include "ui/lifetimeview.h"
#include "ui/loadfailure.h"
#include "ui/measuredpanel.h"
#include "ui/measuredrun.h"
#include "ui/measuredview.h"
#include "ui/memorybarschart.h"
#include "ui/paint/cachedsizedelegate.h"
#include "ui/paint/rasterthreadpool.h"
#include "ui/planfiles.h"
#include "ui/planfinder.h"
#include "ui/planheader.h"
#include "ui/qtstring.h"
#include "ui/reactivateaftermodal.h"
#include "ui/servingtrainingbar.h"
#include "ui/staircasechart.h"
#include "ui/steptimebar.h"
#include "ui/talkmode.h"
#include "ui/theme.h"
#include "ui/tracefiles.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace memledger::ui {

namespace {

constexpr int kMemoryTab = 0;
constexpr int kLifetimesTab = 1;
constexpr int kLedgerTab = 2;
constexpr int kPlannersTab = 3; // the frontier views refresh themselves while shown
constexpr int kFindTab = 4;
constexpr int kMeasuredTab = 5; // updates itself from the measured run, never stale
// How long the edits must pause before the memory charts' axes, held through a run of edits, fit the
// plan again (as the staircase waits to give back width, a quarter second: past a drag's steps, before a reader's
// eye settles).
constexpr int kFitAxesDelayMs = 250;
constexpr int kColumnPadding = 16; // resizeColumnToContents leaves neighbouring columns touching
constexpr int kMaxColumnWidth = 420; // long labels elide; the formula column gets the rest

// The header's tooltip, made when it is shown: it needs the simulated
// iteration, which a slider drag should not pay for on every move.
class HeaderToolTip : public QObject
{
public:
    HeaderToolTip(std::function<QString()> text, QObject *parent)
        : QObject(parent)
        , m_text(std::move(text))
    { }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() != QEvent::ToolTip)
            return false;
        auto *widget = static_cast<QWidget *>(watched);
        QToolTip::showText(static_cast<QHelpEvent *>(event)->globalPos(), m_text(), widget);
        return true;
    }

private:
    std::function<QString()> m_text;
};

const RankLedger *findRank(const Ledger &ledger, int pipelineRank)
{
    const auto it = std::find_if(ledger.ranks.begin(), ledger.ranks.end(),
                                 [&](const RankLedger &r) { return r.pipeline_rank == pipelineRank; });
    return it == ledger.ranks.end() ? nullptr : &*it;
}

} // namespace

MainWindow::MainWindow(Document *document, QWidget *parent)
    : QMainWindow(parent)
    , m_document(document)
    , m_model(new LedgerTableModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_header(new PlanHeader(this))
    , m_stepTime(new StepTimeBar(this))
    , m_tree(new QTreeView(this))
    , m_problems(new QListWidget(this))
    , m_controls(new ControlPanel(document, this))
    , m_bars(new MemoryBarsChart(Placement::Device, this))
    , m_hostBars(new MemoryBarsChart(Placement::Host, this))
    , m_staircase(new StaircaseChart(this))
    , m_views(new QTabWidget(this))
    , m_planDock(new QDockWidget(tr("Plan"), this))
    , m_talk(nullptr)
    , m_lifetimesPage(new LifetimesPage(this))
    , m_chainFrontier(new FrontierView(document, FrontierView::Planner::Chain, this))
    , m_tensorFrontier(new FrontierView(document, FrontierView::Planner::Tensor, this))
    , m_planFinder(new PlanFinder(document, this))
    , m_measured(new MeasuredRun(document, this))
    , m_measuredPanel(new MeasuredPanel(this))
    , m_files(new PlanFiles(this, document))
{
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(LedgerTableModel::SortRole);
    m_tree->setModel(m_proxy);
    m_tree->setAlternatingRowColors(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setIconSize(QSize(14, 14));
    m_tree->header()->setSortIndicator(-1, Qt::AscendingOrder); // keep the ledger's own order until asked
    m_tree->setSortingEnabled(true);
    m_tree->header()->setStretchLastSection(true);
    m_tree->header()->setMinimumSectionSize(60);

    auto *problemsBox = new QWidget(this);
    auto *problemsLayout = new QVBoxLayout(problemsBox);
    problemsLayout->setContentsMargins(0, 4, 0, 0);
    auto *problemsTitle = new QLabel(tr("<b>Problems and notes</b>"), problemsBox);
    problemsLayout->addWidget(problemsTitle);
    problemsLayout->addWidget(m_problems);
    m_problems->setWordWrap(true);
    m_problems->setIconSize(QSize(16, 16));
    m_problems->setAlternatingRowColors(true);
    m_problems->setItemDelegate(new CachedSizeDelegate(m_problems));

    // Memory: the bars per rank beside the staircase.
    auto *charts = new QSplitter(Qt::Horizontal, this);
    // Seed 001's contrast over the device bars (the staircase and host bars
    // keep their height): the same model served and trained.
    auto *deviceColumn = new QWidget(this);
    auto *deviceLayout = new QVBoxLayout(deviceColumn);
    deviceLayout->setContentsMargins(0, 4, 0, 0);
    deviceLayout->addWidget(new ServingTrainingBar(document, deviceColumn));
    deviceLayout->addWidget(m_bars, 1);
    charts->addWidget(deviceColumn);
    auto *side = new QSplitter(Qt::Vertical, this);
    side->addWidget(m_staircase);
    side->addWidget(m_hostBars);
    side->setChildrenCollapsible(false);
    charts->addWidget(side);
    charts->setStretchFactor(0, 3);
    charts->setStretchFactor(1, 2);
    charts->setChildrenCollapsible(false);
    connect(m_lifetimesPage, &LifetimesPage::sourceChanged, this, [this] {
        m_stale[kLifetimesTab] = true;
        refreshCurrentView();
        m_lifetimesPage->view()->resetZoom(); // another clock: the whole forward or iteration
        updateHeader(); // the header speaks of the workload the view draws
    });

    m_views->insertTab(kMemoryTab, charts, tr("&Memory"));
    m_views->insertTab(kLifetimesTab, m_lifetimesPage, tr("L&ifetimes"));
    m_views->insertTab(kLedgerTab, m_tree, tr("&Ledger"));
    // Planners: where to put checkpoints on a rank's chain, and what to store,
    // recompute or offload per tensor of a layer (seed 002), side by side.
    auto *frontiers = new QSplitter(Qt::Horizontal, this);
    frontiers->addWidget(m_chainFrontier);
    frontiers->addWidget(m_tensorFrontier);
    frontiers->setChildrenCollapsible(false);
    m_views->insertTab(kPlannersTab, frontiers, tr("&Planners"));
    m_views->insertTab(kFindTab, m_planFinder, tr("&Find plans"));
    m_views->insertTab(kMeasuredTab, m_measuredPanel, tr("Measured &vs model"));
    connect(m_planFinder, &PlanFinder::planApplied, this, [this](int row) {
        statusBar()->showMessage(tr("Applied plan %1 of the search; Edit > Undo goes back").arg(row + 1));
    });
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        refreshCurrentView();
        if (m_headerServing != headerShowsServing())
            updateHeader(); // to or from a served forward on the Lifetimes view
    });

    // The problems stay visible under every view: an invalid edit is explained there.
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_views);
    splitter->addWidget(problemsBox);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    auto *headerRow = new QHBoxLayout;
    headerRow->addWidget(m_header, 1);
    headerRow->addSpacing(12);
    headerRow->addWidget(m_stepTime, 0, Qt::AlignTop);
    layout->addLayout(headerRow);
    layout->addWidget(splitter, 1);
    setCentralWidget(central);

    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_controls);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(m_controls->sizeHint().width() + 24);
    m_planDock->setObjectName(QStringLiteral("plan"));
    m_planDock->setWidget(scroll);
    m_planDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, m_planDock);
    m_talk = new TalkMode(this, m_planDock, m_document, this);
    // Slides are not edits: undo and redo wait until the talk ends.
    connect(m_talk, &TalkMode::started, this, [this, problemsBox] {
        m_undoAction->setEnabled(false);
        m_redoAction->setEnabled(false);
        m_header->setWrapDetail(true); // a slide's description whole, for the room to read
        problemsBox->hide(); // a built-in slide's notes are for its author: the chart gets the room
        // Slides may switch the view and the lifetimes' source: the talk gives them back.
        m_viewBeforeTalk = m_views->currentIndex();
        m_sourceBeforeTalk = int(m_lifetimesPage->source()->source());
    });
    connect(m_talk, &TalkMode::stopped, this, [this, problemsBox] {
        problemsBox->show();
        m_header->setWrapDetail(false);
        m_lifetimesPage->source()->setSource(LifetimeSource::Source(m_sourceBeforeTalk));
        m_views->setCurrentIndex(m_viewBeforeTalk);
        m_undoAction->setEnabled(m_document->undoStack()->canUndo());
        m_redoAction->setEnabled(m_document->undoStack()->canRedo());
        statusBar()->showMessage(tr("Back to %1").arg(QString::fromStdString(m_document->config().name)), 4000);
    });
    connect(m_talk, &TalkMode::slideChanged, this, [this](int slide, int count) {
        statusBar()->showMessage(tr("Talk mode: slide %1 of %2 — arrows step, Esc leaves").arg(slide + 1).arg(count));
        // The deck may open a slide on a view, and the lifetimes on a served forward (seed 001).
        const SlideShow show = m_talk->show();
        const auto lifetimes = std::find(std::begin(kSlideLifetimes), std::end(kSlideLifetimes), show.lifetimes);
        if (lifetimes != std::end(kSlideLifetimes))
            m_lifetimesPage->source()->setSource(LifetimeSource::Source(lifetimes - std::begin(kSlideLifetimes)));
        if (show.view == "memory" || show.view == "lifetimes" || show.view == "ledger")
            m_views->setCurrentIndex(show.view == "memory"      ? kMemoryTab
                                     : show.view == "lifetimes" ? kLifetimesTab
                                                                : kLedgerTab);
    });

    m_measuredView = new MeasuredView(this, m_document, m_measured, m_measuredPanel, m_lifetimesPage, m_views);
    m_export = new ChartExport(this, m_document);
    createMenus();
    // Opaque: an edit that makes or clears an error changes the message, and a see-through status bar
    // has the whole window paint its background under it first (issue 16: the window's own paint at
    // every such move).
    statusBar()->setAutoFillBackground(true);
    statusBar()->showMessage(tr("Ready"));

    // Measured runs: the import's progress beside the messages.
    statusBar()->addPermanentWidget(new ImportProgress(m_measured, this));

    m_header->installEventFilter(new HeaderToolTip([this] { return peakToolTip(); }, m_header));
    qApp->installEventFilter(new ReactivateAfterModal(this));
    connect(m_document, &Document::ledgerChanged, this, &MainWindow::updateLedger);
    m_fitAxes.setSingleShot(true);
    m_fitAxes.setInterval(kFitAxesDelayMs);
    connect(&m_fitAxes, &QTimer::timeout, this, [this] {
        if (!m_drawnHeld)
            return; // drawn fitted already (one edit, no run)
        m_stale[kMemoryTab] = true; // drawn with held axes: drawn again, fitted (no run continues now)
        refreshCurrentView();
    });
    connect(m_document, &Document::problemsChanged, this, &MainWindow::updateProblems);
    // Last of an edit's signals (after the config and the ledger): the header reads all three, once.
    connect(m_document, &Document::problemsChanged, this, &MainWindow::updateHeader);
    connect(m_document, &Document::pinsChanged, this, [this] {
        updateComparison(true);
        if (!m_shownPins.empty())
            m_views->setCurrentIndex(kMemoryTab);
    });
    // Another model (a file, a scenario, a slide): its own pins only.
    connect(m_document, &Document::configChanged, this, [this] { updateComparison(false); });

    useStripStyle(); // scroll bars drawn without Qt's thread pool (ui/paint/rasterthreadpool.h)
    if (QSettings().value(QStringLiteral("darkPalette"), false).toBool())
        setDark(true, false);
    updateLedger();
    updateProblems();
    updateHeader();
}

LifetimeView *MainWindow::lifetimes() const
{
    return m_lifetimesPage->view();
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_files->addActions(file);
    m_measuredView->addActions(file);
    m_files->addScenarios(file);
    file->addSeparator();
    m_export->addMenu(file);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcuts(QKeySequence::keyBindings(QKeySequence::Quit).isEmpty()
                           ? QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::Key_Q)}
                           : QKeySequence::keyBindings(QKeySequence::Quit));
    quit->setMenuRole(QAction::QuitRole);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_planDock->toggleViewAction());
    view->addSeparator();
    // Ctrl+1 … Ctrl+5 go to the views in tab order.
    for (int tab = 0; tab < m_views->count(); ++tab) {
        QAction *go = view->addAction(m_views->tabText(tab), this, [this, tab] { m_views->setCurrentIndex(tab); });
        go->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + tab)));
    }
    view->addSeparator();
    QAction *dark = view->addAction(tr("&Dark palette"));
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QStringLiteral("darkPalette"), false).toBool());
    connect(dark, &QAction::toggled, this, [this](bool on) { setDark(on); });
    m_darkAction = dark;
    QAction *pin = view->addAction(tr("&Pin the current plan for comparison"), m_document, &Document::pinCurrent);
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    view->addAction(tr("&Clear pinned plans"), m_document, &Document::clearPins);
    view->addSeparator();
    QMenu *talk = view->addMenu(tr("&Talk mode"));
    for (const std::string &name : builtinNames("decks")) {
        talk->addAction(tr("Deck: %1").arg(QString::fromStdString(name)), this, [this, name] {
            const DeckLoadResult loaded = deckFromText(findBuiltin("decks", name)->text, name);
            if (loaded.deck)
                m_talk->start(*loaded.deck);
        });
    }
    talk->addAction(tr("Open a deck file…"), this, [this] {
        const QString path
            = QFileDialog::getOpenFileName(this, tr("Open deck"), QString(), tr("MemLedger decks (*.json)"));
        if (path.isEmpty())
            return;
        const DeckLoadResult loaded = deckFromFile(path.toStdString());
        if (!loaded.deck) {
            QStringList lines;
            for (const Problem &p : loaded.problems)
                lines << QString::fromStdString(p.toString());
            showLoadFailure(this, tr("Cannot open deck"), path, lines.join(QLatin1Char('\n')));
            return;
        }
        m_talk->start(*loaded.deck);
    });
    QMenu *editMenu = menuBar()->addMenu(tr("&Edit"));
    QAction *undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    m_undoAction = undo;
    m_redoAction = redo;
    redo->setShortcut(QKeySequence::Redo);
    editMenu->addAction(undo);
    editMenu->addAction(redo);
    new HelpMenu(this);
}

void MainWindow::setDark(bool dark, bool remember)
{
    applyPalette(dark);
    for (MemoryBarsChart *bars : {m_bars, m_hostBars})
        bars->setDark(dark);
    m_staircase->setDark(dark);
    if (m_darkAction && m_darkAction->isChecked() != dark) {
        const QSignalBlocker block(m_darkAction);
        m_darkAction->setChecked(dark);
    }
    if (remember)
        QSettings().setValue(QStringLiteral("darkPalette"), dark);
    updateHeader(); // its colors come from the palette
}

bool MainWindow::event(QEvent *event)
{
    if (event->type() == QEvent::UpdateRequest) {
        // A frame paints the layouts as they settle, not a step of the way: a note that appears in the
        // control panel resizes its group, then the panel, then the scroll area's range, each on a layout
        // request the one before posts, and a frame painted between them drew the whole panel squeezed into
        // its old height and then again at its new one (issue 16). A few passes settle that chain.
        for (int pass = 0; pass < 4; ++pass)
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    }
    return QMainWindow::event(event);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_files->maybeSave())
        event->accept();
    else
        event->ignore();
}

void MainWindow::updateLedger()
{
    // Only the visible view is refreshed on every edit; a hidden one catches up
    // when its tab is shown (a slider drag must stay inside one frame).
    m_stale = {true, true, true};
    refreshCurrentView();
}

void MainWindow::refreshCurrentView()
{
    const int tab = m_views->currentIndex();
    if (tab < 0 || tab >= static_cast<int>(m_stale.size()) || !m_stale[static_cast<std::size_t>(tab)])
        return;
    m_stale[static_cast<std::size_t>(tab)] = false;
    if (tab == kMemoryTab) {
        const Ledger &ledger = m_document->ledger();
        // Through a run of edits the axes only grow (heldRange in chartupdate.h): edits made with the controls
        // less than kFitAxesDelayMs apart (m_fitAxes still counting), whichever controls. A pause of the edits
        // fits them (the timer), and so do an undo and a load, at once. Runs of one control only (as the
        // notes keep their room) cost every control's first move in the bench a fit: a layout of both charts,
        // each label measured and set again as rich text; a user going from one control to the next pauses.
        const bool edit = m_controls->appliesControlEdit();
        const bool held = edit && m_fitAxes.isActive();
        m_drawnHeld = held;
        m_bars->setAxesHeld(held);
        m_staircase->setAxesHeld(held);
        m_hostBars->setAxesHeld(held);
        if (edit)
            m_fitAxes.start();
        else
            m_fitAxes.stop();
        m_bars->setLedger(ledger);
        m_staircase->setLedger(ledger);
        // The host chart only when something is offloaded: otherwise its space goes to the staircase.
        const bool offloaded = std::any_of(ledger.ranks.begin(), ledger.ranks.end(),
                                           [](const RankLedger &r) { return r.host_total_bytes > 0; });
        // Through a run of edits (offload toggled on, off, on) the chart keeps its room, titled "nothing
        // offloaded", rather than relayouting both charts at every step; a pause of the edits (m_fitAxes), an
        // undo or a load gives the room back.
        const bool shown = m_hostBars->isVisibleTo(m_hostBars->parentWidget());
        // A hidden host chart is not kept up to date (its axes' range changes still laid it out, a third of
        // a first move's chart work): it gets the ledger when it shows.
        if (shown || offloaded)
            m_hostBars->setLedger(ledger);
        if (shown && !offloaded && held)
            return;
        if (shown != offloaded) {
            m_hostBars->setVisible(offloaded);
            // Shown again: half the column each, not what was left from before it hid.
            if (auto *side = qobject_cast<QSplitter *>(m_hostBars->parentWidget()); side && offloaded)
                side->setSizes({side->height() / 2, side->height() - side->height() / 2});
        }
        return;
    }
    if (tab == kLifetimesTab) {
        const std::optional<TraceComparison> &measured = m_measured->comparison();
        m_lifetimesPage->refresh(*m_document, measured ? std::optional<int>(measured->pipeline_rank) : std::nullopt);
        return;
    }
    m_model->setLedger(m_document->ledger());
    m_tree->expandAll();
    for (int column : {LedgerTableModel::CategoryColumn, LedgerTableModel::PlacementColumn,
                       LedgerTableModel::EntryColumn, LedgerTableModel::BytesColumn, LedgerTableModel::ShareColumn}) {
        m_tree->resizeColumnToContents(column);
        m_tree->setColumnWidth(column, std::min(m_tree->columnWidth(column) + kColumnPadding, kMaxColumnWidth));
    }
}

bool MainWindow::headerShowsServing() const
{
    return m_views->currentIndex() == kLifetimesTab
           && m_lifetimesPage->source()->source() != LifetimeSource::Source::Training;
}

void MainWindow::updateHeader()
{
    const Config &config = m_document->config();
    const Ledger &ledger = m_document->ledger();
    const QString name = QString::fromStdString(config.name);

    QString peak;
    m_headerServing = headerShowsServing();
    if (m_headerServing && m_document->hasLedger()) {
        // The ledger's plan served, as the facts below describe it.
        const InferenceLedger &serving = m_document->inference();
        const bool fits = serving.fits();
        // Phrases unbroken: a narrow window wraps between them, never inside "rank 15" or "41.30 GB".
        peak = tr("Serving peak: %1, %2 %3 %4; training this plan: %5 %6")
                   .arg(unbroken(tr("rank %1").arg(serving.peak_rank)), unbroken(bytesText(serving.peak_bytes)),
                        unbroken(tr("of %1").arg(bytesText(serving.capacity_bytes))),
                        unbroken(tr("— %1").arg(fits ? tr("fits") : tr("does not fit"))),
                        unbroken(bytesText(ledger.peak_bytes)),
                        unbroken(tr("— %1").arg(ledger.fits() ? tr("fits") : tr("does not fit"))));
        peak = fits ? peak.toHtmlEscaped()
                    : QStringLiteral("<span style='color:%1'>%2</span>")
                          .arg(errorTextColor(palette()).name(), peak.toHtmlEscaped());
    } else if (const RankLedger *rank = m_document->hasLedger() ? findRank(ledger, ledger.peak_rank) : nullptr) {
        const bool fits = ledger.fits(); // core's verdict: every rank within the device
        peak = tr("Ledger peak: %1, %2 %3 %4 %5")
                   .arg(unbroken(tr("rank %1").arg(rank->pipeline_rank)), unbroken(bytesText(ledger.peak_bytes)),
                        unbroken(tr("of %1").arg(bytesText(ledger.capacity_bytes))),
                        unbroken(QStringLiteral("(%1)").arg(
                            toQString(formatGiB(static_cast<double>(ledger.capacity_bytes))))),
                        unbroken(tr("— %1").arg(fits ? tr("fits") : tr("does not fit"))));
        peak = fits ? peak.toHtmlEscaped()
                    : QStringLiteral("<span style='color:%1'>%2</span>")
                          .arg(errorTextColor(palette()).name(), peak.toHtmlEscaped());
    }
    // The facts and the peak describe the plan the ledger was computed for:
    // while an edit has errors that is the last valid plan, said so and dimmed.
    const Config &planned = m_document->ledgerConfig();
    // The step time is training's: not shown beside a served forward's peak.
    m_stepTime->setVisible(!m_headerServing);
    if (m_document->hasLedger()) {
        const StepTime &time = m_document->stepTime();
        m_stepTime->setStepTime(time);
        m_staircase->setBalanceBandwidth(time.balanceNeededBytesPerS, time.balanceLinkBytesPerS);
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
        m_header->setContent(title, tr("The configuration has errors (below); the ledger shown is the last valid one."),
                             true);
    else if (edited && !description.isEmpty())
        m_header->setContent(title, tr("As loaded, before the edits: %1").arg(description), false);
    else
        m_header->setContent(title, description, false);
    // The tooltip (the description whole, the two peaks) is made when it is asked for: see HeaderToolTip.
}

QString MainWindow::peakToolTip() const
{
    const Config &config = m_document->config();
    QString tip = tr("%1\n%2 parameters in total")
                      .arg(QString::fromStdString(config.description),
                           toQString(formatThousands(m_document->ledger().total_parameters)));
    if (m_document->hasLedger())
        tip += QStringLiteral("\n\n") + tr("The header shows the ledger's peak (Lifetimes shows the timeline's). ")
               + toQString(peakComparisonText(comparePeaks(m_document->timeline())));
    return tip;
}

void MainWindow::updateComparison(bool pinsChanged)
{
    // Which pins are of this plan's model; on a plain edit nothing is redrawn
    // unless that set changed (a slider drag must not rebuild the chart).
    std::vector<std::size_t> comparable;
    const std::vector<Document::Pin> &pins = m_document->pins();
    for (std::size_t i = 0; i < pins.size(); ++i)
        if (m_document->isComparable(pins[i]))
            comparable.push_back(i);
    if (!pinsChanged && comparable == m_shownPins)
        return;
    const bool wasComparing = !m_shownPins.empty();
    m_shownPins = comparable;
    std::vector<MemoryBarsChart::Compared> plans;
    for (std::size_t i : comparable)
        plans.push_back({pins[i].name, pins[i].ledger});
    if (!plans.empty() || wasComparing || pinsChanged)
        m_bars->setComparison(plans);
    const std::size_t hidden = pins.size() - comparable.size();
    if (comparable.empty() && hidden > 0)
        statusBar()->showMessage(tr("%n pinned plan(s) of another model not shown: pins compare plans of one model "
                                    "(View > Clear pinned plans)",
                                    nullptr, static_cast<int>(hidden)),
                                 6000);
}

void MainWindow::updateProblems()
{
    enum Kind { Error, Warning, Note };
    // Ledger warnings repeat the validation warnings; show each line once.
    std::vector<std::pair<Kind, QString>> lines;
    QSet<QString> seen;
    const auto add = [&](const Problem &problem) {
        QString text = QString::fromStdString(problem.toString());
        if (seen.contains(text))
            return;
        seen.insert(text);
        lines.emplace_back(problem.isError() ? Error : Warning, std::move(text));
    };
    for (const Problem &problem : m_document->problems())
        add(problem);
    if (m_document->hasLedger()) {
        for (const Problem &problem : m_document->ledger().warnings)
            add(problem);
        for (const std::string &choice : m_document->ledger().choices)
            lines.emplace_back(Note, QString::fromStdString(choice));
    }
    // Most moves of a control leave the list as it was: then it is left alone,
    // not cleared and laid out and painted again (the bench's profile had the
    // list's layout and paint at a fifth of a move's time).
    bool same = m_problems->count() == static_cast<int>(lines.size());
    for (int i = 0; same && i < m_problems->count(); ++i) {
        const QListWidgetItem *item = m_problems->item(i);
        same = item->data(Qt::UserRole).toInt() == lines[static_cast<std::size_t>(i)].first
               && item->text() == lines[static_cast<std::size_t>(i)].second;
    }
    if (!same) {
        m_problems->clear();
        if (m_problemIcons[Error].isNull())
            m_problemIcons = {style()->standardIcon(QStyle::SP_MessageBoxCritical),
                              style()->standardIcon(QStyle::SP_MessageBoxWarning),
                              style()->standardIcon(QStyle::SP_MessageBoxInformation)};
        for (const auto &[kind, text] : lines) {
            auto *item = new QListWidgetItem(m_problemIcons[kind], text);
            item->setData(Qt::UserRole, static_cast<int>(kind));
            m_problems->addItem(item);
        }
    }

    const auto errors = std::count_if(m_document->problems().begin(), m_document->problems().end(),
                                      [](const Problem &p) { return p.isError(); });
    QString message;
    if (errors > 0)
        message = errors == 1 ? tr("1 error in the configuration") : tr("%1 errors in the configuration").arg(errors);
    else if (!m_document->source().isEmpty())
        message = tr("Showing %1").arg(m_document->source());
    if (!message.isEmpty() && statusBar()->currentMessage() != message)
        statusBar()->showMessage(message);
}

} // namespace memledger::ui
