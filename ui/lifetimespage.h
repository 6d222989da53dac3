// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

#include <optional>

class QCheckBox;
class QSpinBox;
class QToolButton;

namespace memledger::ui {

class Document;
class LifetimeSource;
class LifetimeView;

// The Lifetimes view: one rank's memory curve over its gantt (LifetimeView)
// under two rows of controls: what it draws (the training iteration or the
// same plan served, LifetimeSource) with the zoom's reset, then the rank, the
// drawing mode, the bytes axis's fit, a hint of the mouse's gestures and,
// while a measured run is drawn over the curve, a button that clears it.
class LifetimesPage : public QWidget
{
    Q_OBJECT
public:
    explicit LifetimesPage(QWidget *parent = nullptr);

    LifetimeView *view() const { return m_view; }
    LifetimeSource *source() const { return m_source; }

    // Draws the document's plan as the source says. A plan of another rank
    // count opens on its fullest rank, or on `measuredRank` when a measured run
    // is held against one; an edit keeps the rank in view.
    void refresh(const Document &document, std::optional<int> measuredRank);
    // A measured run came in, held against `rank`: that rank, the bytes axis
    // fitted to the curves (a run measured on a small model would otherwise lie
    // flat under a large device's capacity).
    void showMeasuredRank(int rank);
    void setClearMeasuredShown(bool shown);

Q_SIGNALS:
    // The source or its time scale changed: the view needs refresh() again (the
    // reset button already names the new clock).
    void sourceChanged();
    void clearMeasuredRequested();

private:
    LifetimeView *m_view;
    QSpinBox *m_rank;
    LifetimeSource *m_source;
    QCheckBox *m_fitBytes;
    QToolButton *m_resetZoom;
    QToolButton *m_clearMeasured;
};

} // namespace memledger::ui
