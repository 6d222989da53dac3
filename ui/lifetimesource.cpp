// SPDX-License-Identifier: MIT
#include "ui/lifetimesource.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>

#include "core/serving/inference.h"
#include "core/serving/inferenceactivations.h"
#include "core/serving/inferencetimeline.h"
#include "core/view/gantt.h"
#include "ui/document.h"
#include "ui/lifetimeview.h"
#include "ui/qtstring.h"

namespace memledger::ui {

LifetimeSource::LifetimeSource(QWidget *parent)
    : QWidget(parent)
    , m_combo(new QComboBox(this))
    , m_scale(new QCheckBox(tr("Training's time scale"), this))
{
    m_combo->setObjectName(QStringLiteral("lifetimesSource"));
    m_combo->addItems({tr("Training"), tr("Inference (prefill)"), tr("Inference (decode)")});
    m_combo->setToolTip(tr("The training iteration, or the same model served on the same split: one prefill "
                           "forward or one decode step. A served layer's activations die once the next layer has "
                           "read them; training keeps them for the backward."));
    m_scale->setObjectName(QStringLiteral("lifetimesTrainingScale"));
    m_scale->setToolTip(tr("Draw the served forward on the training iteration's time axis, so its short lifetimes "
                           "are visibly short (zoom in to see its layers)"));
    m_scale->setEnabled(false);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_combo);
    layout->addWidget(m_scale);
    connect(m_combo, &QComboBox::currentIndexChanged, this, [this] {
        m_scale->setEnabled(source() != Source::Training);
        Q_EMIT changed();
    });
    connect(m_scale, &QCheckBox::toggled, this, &LifetimeSource::changed);
}

LifetimeSource::Source LifetimeSource::source() const
{
    return Source(m_combo->currentIndex());
}

void LifetimeSource::setSource(Source source)
{
    m_combo->setCurrentIndex(int(source));
}

bool LifetimeSource::trainingScale() const
{
    return m_scale->isChecked();
}

void LifetimeSource::setTrainingScale(bool on)
{
    m_scale->setChecked(on);
}

QString LifetimeSource::trainingCaption(const Timeline &timeline, const StepTimeGap &gap)
{
    // The header's step time is the analytic model's: say how the simulated figure compares.
    const QString seconds = toQString(formatSeconds(timeline.step_time));
    return gap.caption.empty() ? tr("training iteration, %1").arg(seconds)
                               : tr("training iteration, %1 (%2)").arg(seconds, toQString(gap.caption));
}

QString LifetimeSource::servedCaption(Source source, const Config &config, const Timeline &timeline)
{
    const QString seconds = toQString(formatSeconds(timeline.step_time));
    const InferenceConfig serving = resolvedInference(config);
    if (source == Source::Prefill) {
        const ForwardShape shape = prefillShape(config, serving);
        const std::int64_t context = serving.context_length.value_or(0);
        const QString batch = tr("%1 × %2 tokens").arg(serving.batch_size).arg(toQString(formatThousands(context)));
        if (shape.tokens >= serving.batch_size * context)
            return tr("serving prefill, %1 in %2").arg(batch, seconds);
        // Chunked prefill: one forward is one chunk of the prompts.
        return tr("serving prefill chunk, %1 of %2 in %3")
            .arg(toQString(formatThousands(shape.tokens)), batch, seconds);
    }
    const ForwardShape shape = decodeShape(config, serving);
    return tr("serving decode step, %1 × 1 new token over %2 cached in %3")
        .arg(shape.sequences)
        .arg(toQString(formatThousands(shape.key_length)), seconds);
}

void LifetimeSource::apply(const Document &document, LifetimeView &view) const
{
    if (!document.hasLedger())
        return;
    const Source chosen = source();
    if (chosen == Source::Training) {
        view.setTimeSpan(0);
        view.setTimeline(document.timeline());
        view.setReserved(document.reserved()); // none until the worker has it: reservedChanged then
        view.setOverlayHidden(false);
        const StepTimeGap gap = stepTimeGap(document.ledgerConfig(), document.stepTime(), document.timeline());
        view.setCaption(trainingCaption(document.timeline(), gap), toQString(gap.explanation));
        return;
    }
    // ledgerConfig() is the valid plan, as simulateInferenceForward requires.
    const Config &config = document.ledgerConfig();
    const Timeline served
        = simulateInferenceForward(config, chosen == Source::Prefill ? ServingPass::Prefill : ServingPass::Decode);
    QString text = servedCaption(chosen, config, served);
    if (trainingScale()) {
        const double iteration = document.timeline().step_time;
        view.setTimeSpan(iteration);
        text += tr(", on the training iteration's %1").arg(toQString(formatSeconds(iteration)));
    } else {
        view.setTimeSpan(0);
    }
    view.setOverlayHidden(true);
    view.setTimeline(served);
    view.setCaption(text);
}

} // namespace memledger::ui
