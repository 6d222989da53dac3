// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

namespace memledger::ui {

class Document;
class PlanHeader;
class StepTimeBar;
class TalkMode;

// The lines above the views, all read from the document: the plan's name,
// its facts and its peak over the description, or why the configuration is
// refused (PlanHeader), beside the step time core's time model estimates
// (StepTimeBar). On the Lifetimes view drawing a served forward the peak is
// the serving one, training's beside it, and the step time goes. Its tooltip
// says which peak it shows and how the timeline's differs, made when asked.
class WindowHeader : public QWidget
{
    Q_OBJECT
public:
    WindowHeader(Document *document, QWidget *parent = nullptr);

    PlanHeader *plan() const { return m_plan; }
    StepTimeBar *stepTime() const { return m_stepTime; }
    // In a talk a slide is shown, never edited: no "(edited)" beside its name.
    void setTalkMode(const TalkMode *talk) { m_talk = talk; }

    // Says what the document holds now, of the training plan or (`serving`)
    // of the same plan served.
    void refresh(bool serving);
    // What the last refresh spoke of.
    bool showsServing() const { return m_serving; }
    // The tooltip: which peak the header shows (the ledger's) and, from core's
    // comparePeaks, the timeline's and the tensors that make them differ.
    // Computed when asked (it needs the simulated iteration).
    QString peakToolTip() const;

protected:
    // The plan header's tooltip, made when it is shown: a slider drag should not
    // pay for the simulated iteration on every move.
    bool eventFilter(QObject *watched, QEvent *event) override;
    // The title's colours are written into its rich text: made again from the new palette.
    void changeEvent(QEvent *event) override;

private:
    // The peak in the header's words, coloured when it does not fit.
    QString peakText() const;

    Document *m_document;
    PlanHeader *m_plan;
    StepTimeBar *m_stepTime;
    const TalkMode *m_talk = nullptr;
    bool m_serving = false;
};

} // namespace memledger::ui
