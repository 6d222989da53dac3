// SPDX-License-Identifier: MIT
#pragma once

#include <QString>
#include <QWidget>

#include "core/timeline/steptimegap.h"
#include "core/timeline/timeline.h"

class QCheckBox;
class QComboBox;

namespace memledger::ui {

class Document;
class LifetimeView;

// Which forward the lifetimes view draws (seed 001's contrast): the training
// iteration, or the same plan served, one prefill or one decode step
// (core/serving/inferencetimeline.h). A served layer's activations live only while
// the layer runs, where training keeps them for the backward; the option
// "On the training iteration's scale" draws the served forward on the
// iteration's time axis, so its lifetimes are visibly as short as they are.
class LifetimeSource : public QWidget
{
    Q_OBJECT
public:
    enum class Source { Training, Prefill, Decode };

    explicit LifetimeSource(QWidget *parent = nullptr);

    Source source() const;
    void setSource(Source source);
    bool trainingScale() const;
    void setTrainingScale(bool on);

    // Puts the chosen source of the document's valid plan into `view`: its
    // timeline (the document's, or simulateInferenceForward's), the caption
    // and the time span. Nothing without a ledger.
    void apply(const Document &document, LifetimeView &view) const;

    // A served forward's: "serving prefill, 8 × 2,048 tokens in …", "serving decode step, …" (`source` is
    // Prefill or Decode; the training iteration's is trainingCaption, from the document's step time).
    static QString servedCaption(Source source, const Config &config, const Timeline &timeline);
    // The training iteration's, with how it compares to the step-time model.
    static QString trainingCaption(const Timeline &timeline, const StepTimeGap &gap);

Q_SIGNALS:
    // The source or the scale changed: the view needs apply() again.
    void changed();

private:
    QComboBox *m_combo;
    QCheckBox *m_scale;
};

} // namespace memledger::ui
