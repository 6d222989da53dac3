// SPDX-License-Identifier: MIT
#include "ui/mainwindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
#include <QKeySequence>
#include <QMenuBar>
#include <QScrollArea>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeView>
#include <QUndoStack>
#include <QVBoxLayout>

#include "core/formats/builtins.h"
#include "core/formats/deck.h"
#include "ui/chartexport.h"
#include "ui/controlpanel.h"
#include "ui/document.h"
#include "ui/frontierview.h"
#include "ui/helpmenu.h"
#include "ui/importprogress.h"
#include "ui/launchfiles.h"
#include "ui/ledgertablemodel.h"
#include "ui/lifetimesource.h"
#include "ui/lifetimespage.h"
#include "ui/lifetimeview.h"
#include "ui/loadfailure.h"
#include "ui/measuredpanel.h"
#include "ui/measuredrun.h"
#include "ui/measuredview.h"
#include "ui/memorybarschart.h"
#include "ui/paint/rasterthreadpool.h"
#include "ui/planfiles.h"
#include "ui/planfinder.h"
#include "ui/planheader.h"
#include "ui/problemslist.h"
#include "ui/reactivateaftermodal.h"
#include "ui/servingtrainingbar.h"
#include "ui/staircasechart.h"
#include "ui/talkmode.h"
#include "ui/theme.h"
#include "ui/windowheader.h"

#include <algorithm>
#include <optional>

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

} // namespace

MainWindow::MainWindow(Document *document, QWidget *parent)
    : QMainWindow(parent)
    , m_document(document)
    , m_model(new LedgerTableModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_header(new WindowHeader(document, this))
    , m_tree(new QTreeView(this))
    , m_problems(new ProblemsList(this))
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
    createViews();
    createCentralWidget();
    createPlanDock();
    m_measuredView = new MeasuredView(this, m_document, m_measured, m_measuredPanel, m_lifetimesPage, m_views);
    m_export = new ChartExport(this, m_document);
    m_launch = new LaunchFiles(this, m_document); // after the measured view: sees drops first
    createMenus();
    createStatusBar();
    qApp->installEventFilter(new ReactivateAfterModal(this));
    connectDocument();

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

void MainWindow::createViews()
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

    m_views->insertTab(kMemoryTab, memoryCharts(), tr("&Memory"));
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

    connect(m_lifetimesPage, &LifetimesPage::sourceChanged, this, [this] {
        m_stale[kLifetimesTab] = true;
        refreshCurrentView();
        m_lifetimesPage->view()->resetZoom(); // another clock: the whole forward or iteration
        updateHeader(); // the header speaks of the workload the view draws
    });
    connect(m_planFinder, &PlanFinder::planApplied, this, [this](int row) {
        statusBar()->showMessage(tr("Applied plan %1 of the search; Edit > Undo goes back").arg(row + 1));
    });
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        refreshCurrentView();
        if (m_header->showsServing() != headerShowsServing())
            updateHeader(); // to or from a served forward on the Lifetimes view
    });
}

QWidget *MainWindow::memoryCharts()
{
    // The bars per rank beside the staircase.
    auto *charts = new QSplitter(Qt::Horizontal, this);
    // Seed 001's contrast over the device bars (the staircase and host bars
    // keep their height): the same model served and trained.
    auto *deviceColumn = new QWidget(this);
    auto *deviceLayout = new QVBoxLayout(deviceColumn);
    deviceLayout->setContentsMargins(0, 4, 0, 0);
    deviceLayout->addWidget(new ServingTrainingBar(m_document, deviceColumn));
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
    return charts;
}

void MainWindow::createCentralWidget()
{
    // The problems stay visible under every view: an invalid edit is explained there.
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_views);
    splitter->addWidget(m_problems);
    splitter->setStretchFactor(0, 4);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->addWidget(m_header);
    layout->addWidget(splitter, 1);
    setCentralWidget(central);
}

void MainWindow::createPlanDock()
{
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_controls);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(m_controls->sizeHint().width() + 24);
    m_planDock->setObjectName(QStringLiteral("plan"));
    m_planDock->setWidget(scroll);
    // Closable, so that View > Plan hides and shows it (Qt disables a dock's toggle action otherwise).
    m_planDock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable
                            | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, m_planDock);
    // Talk mode hides the dock; the header leaves slides unmarked.
    m_talk = new TalkMode(this, m_planDock, m_document, this);
    m_header->setTalkMode(m_talk);
    connectTalkMode();
}

void MainWindow::connectTalkMode()
{
    // Slides are not edits: undo and redo wait until the talk ends.
    connect(m_talk, &TalkMode::started, this, [this] {
        m_undoAction->setEnabled(false);
        m_redoAction->setEnabled(false);
        m_header->plan()->setWrapDetail(true); // a slide's description whole, for the room to read
        m_problems->hide(); // a built-in slide's notes are for its author: the chart gets the room
        // Slides may switch the view and the lifetimes' source: the talk gives them back.
        m_viewBeforeTalk = m_views->currentIndex();
        m_sourceBeforeTalk = int(m_lifetimesPage->source()->source());
    });
    connect(m_talk, &TalkMode::stopped, this, [this] {
        m_problems->show();
        m_header->plan()->setWrapDetail(false);
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
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    m_files->addActions(file);
    m_launch->addImportAction(file);
    m_measuredView->addActions(file);
    m_files->addScenarios(file);
    file->addSeparator();
    m_launch->addExportActions(m_export->addMenu(file));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcuts(QKeySequence::keyBindings(QKeySequence::Quit).isEmpty()
                           ? QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::Key_Q)}
                           : QKeySequence::keyBindings(QKeySequence::Quit));
    quit->setMenuRole(QAction::QuitRole);
    createViewMenu();
    QMenu *editMenu = menuBar()->addMenu(tr("&Edit"));
    m_undoAction = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_redoAction = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    m_redoAction->setShortcut(QKeySequence::Redo);
    editMenu->addAction(m_undoAction);
    editMenu->addAction(m_redoAction);
    new HelpMenu(this);
}

void MainWindow::createViewMenu()
{
    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_planDock->toggleViewAction());
    view->addSeparator();
    // Ctrl+1 … Ctrl+6 go to the views in tab order.
    for (int tab = 0; tab < m_views->count(); ++tab) {
        QAction *go = view->addAction(m_views->tabText(tab), this, [this, tab] { m_views->setCurrentIndex(tab); });
        go->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + tab)));
    }
    view->addSeparator();
    m_darkAction = view->addAction(tr("&Dark palette"));
    m_darkAction->setCheckable(true);
    m_darkAction->setChecked(QSettings().value(QStringLiteral("darkPalette"), false).toBool());
    connect(m_darkAction, &QAction::toggled, this, [this](bool on) { setDark(on); });
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
    talk->addAction(tr("Open a deck file…"), this, &MainWindow::openDeck);
}

void MainWindow::openDeck()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open deck"), QString(), tr("MemLedger decks (*.json)"));
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
}

void MainWindow::createStatusBar()
{
    // Opaque: an edit that makes or clears an error changes the message, and a see-through status bar
    // has the whole window paint its background under it first (issue 16: the window's own paint at
    // every such move).
    statusBar()->setAutoFillBackground(true);
    statusBar()->showMessage(tr("Ready"));
    // A measured trace's import, its progress and Cancel beside the messages.
    statusBar()->addPermanentWidget(new ImportProgress(m_measured, this));
}

void MainWindow::connectDocument()
{
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
    // The allocator model's result arrives from its worker after an edit: onto the lifetimes view if it shows
    // the training iteration now (a later refresh asks the document for it otherwise).
    connect(m_document, &Document::reservedChanged, this, [this] {
        m_header->refresh(headerShowsServing()); // its reserved verdict
        m_bars->setReserved(m_document->reserved());
        if (m_views->currentIndex() == kLifetimesTab && !m_stale[kLifetimesTab]
            && m_lifetimesPage->source()->source() == LifetimeSource::Source::Training)
            m_lifetimesPage->view()->setReserved(m_document->reserved());
    });
}

void MainWindow::refreshCurrentView()
{
    const int tab = m_views->currentIndex();
    if (tab < 0 || tab >= static_cast<int>(m_stale.size()) || !m_stale[static_cast<std::size_t>(tab)])
        return;
    m_stale[static_cast<std::size_t>(tab)] = false;
    if (tab == kMemoryTab) {
        refreshMemoryCharts();
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

void MainWindow::refreshMemoryCharts()
{
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
    m_bars->setReserved(m_document->hasLedger() ? m_document->reserved() : nullptr);
    m_staircase->setLedger(ledger);
    // Balancing's copies against the link, as the step time prices them (its title says so).
    if (m_document->hasLedger())
        m_staircase->setBalanceBandwidth(m_document->stepTime().balanceNeededBytesPerS,
                                         m_document->stepTime().balanceLinkBytesPerS);
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

void MainWindow::updateLedger()
{
    // Only the visible view is refreshed on every edit; a hidden one catches up
    // when its tab is shown (a slider drag must stay inside one frame).
    m_stale = {true, true, true};
    refreshCurrentView();
}

bool MainWindow::headerShowsServing() const
{
    return m_views->currentIndex() == kLifetimesTab
           && m_lifetimesPage->source()->source() != LifetimeSource::Source::Training;
}

void MainWindow::updateHeader()
{
    m_header->refresh(headerShowsServing());
}

void MainWindow::updateProblems()
{
    m_problems->refresh(*m_document);
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

QSize startSize(const QSize &available)
{
    const QSize preferred(1400, 900);
    if (!available.isValid() || available.isEmpty())
        return preferred;
    return preferred.boundedTo(available);
}

} // namespace memledger::ui
