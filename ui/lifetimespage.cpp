// SPDX-License-Identifier: MIT
#include "ui/lifetimespage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/document.h"
#include "ui/lifetimesource.h"
#include "ui/lifetimeview.h"

#include <algorithm>

namespace memledger::ui {

namespace {

// A hint in the placeholder text's grey, on two lines where one does not fit
// (never cut: "Wheel or + − zooms, d…" told a 1024-pixel window nothing).
QLabel *hint(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setForegroundRole(QPalette::PlaceholderText);
    label->setWordWrap(true);
    label->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    return label;
}

} // namespace

LifetimesPage::LifetimesPage(QWidget *parent)
    : QWidget(parent)
    , m_view(new LifetimeView(this))
    , m_rank(new QSpinBox(this))
{
    auto *lifetimesBar = new QHBoxLayout;
    // Seed 001: the same plan's training iteration or a served forward, on the same axes. On a row of its own
    // with the time axis's controls, so that both rows fit a 1024-pixel window beside the plan panel.
    auto *timeBar = new QHBoxLayout;
    m_source = new LifetimeSource(this);
    timeBar->addWidget(m_source);
    m_rank->setObjectName(QStringLiteral("lifetimesRank"));
    lifetimesBar->addWidget(new QLabel(tr("Rank"), this));
    lifetimesBar->addWidget(m_rank);
    auto *mode = new QComboBox(this);
    mode->addItems({tr("Gantt rows"), tr("Stacked bands")});
    lifetimesBar->addWidget(mode);
    m_fitBytes = new QCheckBox(tr("Fit the bytes axis to the view"), this);
    m_fitBytes->setChecked(m_view->fitBytes());
    lifetimesBar->addWidget(m_fitBytes);
    m_resetZoom = new QToolButton(this);
    m_resetZoom->setObjectName(QStringLiteral("resetZoom"));
    m_resetZoom->setText(tr("Whole iteration"));
    m_resetZoom->setToolTip(tr("Reset the zoom: show the whole iteration again (double-click or 0 in the chart)"));
    m_resetZoom->setEnabled(false);
    connect(m_resetZoom, &QToolButton::clicked, m_view, &LifetimeView::resetZoom);
    connect(m_view, &LifetimeView::visibleWindowChanged, m_resetZoom,
            [this] { m_resetZoom->setEnabled(m_view->timeAxis().isZoomed()); });
    timeBar->addWidget(m_resetZoom);
    timeBar->addStretch(1);
    // On the rank's row, which has the room to spare at 1024 pixels.
    QLabel *zoomHint = hint(tr("Wheel or + − zooms, drag pans, double-click resets"), this);
    zoomHint->setObjectName(QStringLiteral("zoomHint"));
    lifetimesBar->addSpacing(8);
    lifetimesBar->addWidget(zoomHint, 1);
    m_clearMeasured = new QToolButton(this);
    m_clearMeasured->setText(tr("Clear measured run"));
    m_clearMeasured->setToolTip(tr("Forget the measured trace drawn over the curve (File > Clear measured trace)"));
    m_clearMeasured->hide();
    connect(m_clearMeasured, &QToolButton::clicked, this, &LifetimesPage::clearMeasuredRequested);
    lifetimesBar->addWidget(m_clearMeasured);
    auto *lifetimesLayout = new QVBoxLayout(this);
    lifetimesLayout->setContentsMargins(4, 4, 4, 4);
    lifetimesLayout->addLayout(timeBar);
    lifetimesLayout->addLayout(lifetimesBar);
    lifetimesLayout->addWidget(m_view, 1);
    connect(m_rank, &QSpinBox::valueChanged, m_view, &LifetimeView::setRank);
    connect(mode, &QComboBox::currentIndexChanged, this,
            [this](int index) { m_view->setMode(index == 0 ? LifetimeView::Mode::Gantt : LifetimeView::Mode::Bands); });
    connect(m_fitBytes, &QCheckBox::toggled, m_view, &LifetimeView::setFitBytes);
    connect(m_source, &LifetimeSource::changed, this, [this] {
        const bool served = m_source->source() != LifetimeSource::Source::Training;
        m_resetZoom->setText(served ? tr("Whole forward") : tr("Whole iteration"));
        m_resetZoom->setToolTip(served ? tr("Reset the zoom: show the whole served forward again (double-click or 0 "
                                            "in the chart)")
                                       : tr("Reset the zoom: show the whole iteration again (double-click or 0 in the "
                                            "chart)"));
        Q_EMIT sourceChanged();
    });
}

void LifetimesPage::refresh(const Document &document, std::optional<int> measuredRank)
{
    m_source->apply(document, *m_view);
    const Timeline &timeline = m_view->timeline();
    const int ranks = static_cast<int>(timeline.ranks.size());
    const bool sameRanks = m_rank->maximum() == ranks - 1;
    const QSignalBlocker block(m_rank);
    m_rank->setRange(0, std::max(0, ranks - 1));
    // A new plan opens on its fullest rank (or the one a measured run is held against); an edit keeps the rank in
    // view.
    const int rank = sameRanks ? m_rank->value() : measuredRank.value_or(timeline.peak_rank);
    m_rank->setValue(rank);
    m_view->setRank(rank);
}

void LifetimesPage::showMeasuredRank(int rank)
{
    m_rank->setValue(rank);
    m_fitBytes->setChecked(true);
}

void LifetimesPage::setClearMeasuredShown(bool shown)
{
    m_clearMeasured->setVisible(shown);
}

} // namespace memledger::ui
