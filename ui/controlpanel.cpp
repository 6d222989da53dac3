// SPDX-License-Identifier: MIT
#include "ui/controlpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/config/editrules.h"
#include "core/config/framework.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/model/gradoffload.h"
#include "core/schedule/schedule.h"
#include "ui/document.h"
#include "ui/paint/keptgroupbox.h"
#include "ui/paint/keptlabel.h"
#include "ui/qtstring.h"
#include "ui/theme.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

namespace memledger::ui {

namespace {

// Sequence lengths on a log scale: 2^9 = 512 ... 2^20 = 1M tokens.
constexpr int kMinLog2Sequence = 9;
constexpr int kMaxLog2Sequence = 20;

QString tokensText(std::int64_t tokens)
{
    if (tokens >= 1 << 20 && tokens % (1 << 20) == 0)
        return QStringLiteral("%1M").arg(tokens >> 20);
    if (tokens >= 1024 && tokens % 1024 == 0)
        return QStringLiteral("%1K").arg(tokens / 1024);
    return QString::number(tokens);
}

} // namespace

ControlPanel::ControlPanel(Document *document, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_gpus(new KeptLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    // A note that appears or goes grows or shrinks the panel and moves the groups below it. Static contents:
    // the panel's resize repaints only the strip it gains, not the whole panel; and the groups are opaque
    // (KeptGroupBox), so the backing store moves their pixels instead of painting them again.
    setAttribute(Qt::WA_StaticContents);
    // And the panel grows before its groups are laid out: a note's layout request climbs from its group to
    // the panel and then to the scroll area, and in between the groups were squeezed into the panel's old
    // height (resized, and repainted) and then stretched back. The layout applies a minimum size (each group's
    // minimum is its preferred height, see addGroup) before it places the groups, which grows the panel at once.
    layout->setSizeConstraint(QLayout::SetMinimumSize);

    for (const Group &group : {modelAndHardware(), parallelism(), batchAndPrecision(), recomputeAndOffload()}) {
        QFormLayout *form = addGroup(group.title);
        for (const Spec &spec : group.controls)
            add(form, spec);
    }
    layout->addStretch(1);

    connect(m_document, &Document::configChanged, this, &ControlPanel::syncFromConfig);
    connect(m_document, &Document::problemsChanged, this, &ControlPanel::showProblems);
    syncFromConfig();
}

template<auto Section, auto Field>
ControlPanel::Access ControlPanel::plain()
{
    return {[](const Config &config) { return static_cast<std::int64_t>((config.*Section).*Field); },
            [](Config &config, std::int64_t v) {
                auto &field = (config.*Section).*Field;
                field = static_cast<std::remove_reference_t<decltype(field)>>(v);
            }};
}

// The table of controls, group by group and in the panel's order. Each row names the preset field its control
// edits (its errors are shown under it) and how it reads and writes the configuration: `plain` for a field
// written as is, a pair of functions where an edit brings others along.
ControlPanel::Group ControlPanel::modelAndHardware()
{
    return {tr("Model and hardware"),
            {
                {.kind = Kind::Preset, .label = tr("Model"), .field = "model", .presets = "models"},
                {.kind = Kind::Preset, .label = tr("GPU"), .field = "hardware", .presets = "hardware"},
            }};
}

ControlPanel::Group ControlPanel::parallelism()
{
    return {
        tr("Parallelism"),
        {
            {.kind = Kind::Spin,
             .label = tr("Tensor (t)"),
             .field = "parallelism.tensor_model_parallel_size",
             .range = {1, 1024},
             .access = plain<&Config::parallelism, &ParallelismConfig::tensor_model_parallel_size>(),
             .tip = tr("splits heads, query groups and the MLP width")},
            {.kind = Kind::Spin,
             .label = tr("Pipeline (p)"),
             .field = "parallelism.pipeline_model_parallel_size",
             .range = {1, 1024},
             .access = {[](const Config &config) { return config.parallelism.pipeline_model_parallel_size; },
                        [](Config &config, std::int64_t v) { setPipelineSize(config.parallelism, v); }},
             .tip = tr("splits the layers into stages")},
            {.kind = Kind::Spin,
             .label = tr("Virtual stages (v)"),
             .field = "parallelism.virtual_pipeline_model_parallel_size",
             .range = {1, 64},
             .access = {[](const Config &config) { return config.parallelism.virtual_pipeline_model_parallel_size; },
                        [](Config &config, std::int64_t v) { setVirtualStages(config.parallelism, v); }},
             .tip = tr("layer chunks per pipeline rank (interleaved 1F1B)")},
            {.kind = Kind::Spin,
             .label = tr("Data (d)"),
             .field = "parallelism.data_parallel_size",
             .range = {1, 1 << 17},
             .access = plain<&Config::parallelism, &ParallelismConfig::data_parallel_size>()},
            {.kind = Kind::Spin,
             .label = tr("Context (c)"),
             .field = "parallelism.context_parallel_size",
             .range = {1, 1024},
             .access = plain<&Config::parallelism, &ParallelismConfig::context_parallel_size>(),
             .tip = tr("splits the sequence")},
            {.kind = Kind::Spin,
             .label = tr("Expert (e)"),
             .field = "parallelism.expert_model_parallel_size",
             .range = {1, 1024},
             .access = plain<&Config::parallelism, &ParallelismConfig::expert_model_parallel_size>(),
             .tip = tr("splits the experts")},
            // In MoeDispatcher's order.
            {.kind = Kind::Combo,
             .label = tr("MoE dispatch"),
             .field = "strategy.moe_token_dispatcher",
             .items = {tr("all-to-all"), QStringLiteral("DeepEP")},
             .access = plain<&Config::strategy, &StrategyConfig::moe_token_dispatcher>(),
             .tip = tr("How tokens reach their experts' ranks: all-to-alls with a receive buffer for the worst "
                       "case, or DeepEP (each token sent once to each rank, DeepEP's own NVLink and RDMA buffers)")},
            {.kind = Kind::Check,
             .label = tr("Sequence parallel"),
             .field = "parallelism.sequence_parallel",
             .access = plain<&Config::parallelism, &ParallelismConfig::sequence_parallel>()},
            {.kind = Kind::Combo,
             .label = tr("ZeRO stage"),
             .field = "parallelism.zero_stage",
             .items = {tr("0 — replicated"), tr("1 — optimizer states"), tr("2 — + gradients"), tr("3 — + weights")},
             .access = plain<&Config::parallelism, &ParallelismConfig::zero_stage>()},
            {.kind = Kind::Spin,
             .label = tr("HSDP shard group"),
             .field = "parallelism.data_parallel_shard_size",
             .range = {0, 1 << 20},
             .access = plain<&Config::parallelism, &ParallelismConfig::data_parallel_shard_size>(),
             .tip = tr("0: ZeRO shards over all d ranks. Otherwise HSDP: shard over groups of this many "
                       "data-parallel ranks and replicate across the groups (torchtitan's "
                       "data_parallel_shard_degree)")},
            {.kind = Kind::Combo,
             .label = tr("FSDP reshard"),
             .field = "strategy.fsdp_reshard_after_forward",
             .items = {tr("framework default"), tr("after forward"), tr("kept for backward")},
             .access = {[](const Config &config) {
                            const std::optional<bool> r = config.strategy.fsdp_reshard_after_forward;
                            return std::int64_t(r ? (*r ? 1 : 2) : 0);
                        },
                        [](Config &config, std::int64_t v) {
                            config.strategy.fsdp_reshard_after_forward
                                = v == 0 ? std::nullopt : std::optional<bool>(v == 1);
                        }},
             .tip = tr("FSDP's reshard_after_forward (ZeRO-3 under torchtitan or Hugging Face): free each block's "
                       "gathered parameters after its forward and gather them again for its backward, or keep "
                       "them. torchtitan's default: kept under pipeline parallelism, resharded otherwise")},
            {.kind = Kind::Check,
             .label = tr("FSDP root unit"),
             .field = "strategy.fsdp_root_unit",
             .access = plain<&Config::strategy, &StrategyConfig::fsdp_root_unit>(),
             .tip = tr("torchtitan before July 2025 (its December 2024 benchmarks): the embedding, final norm and "
                       "output layer form FSDP2's root unit, never resharded after forward, so they stay gathered "
                       "through the iteration. Off: torchtitan since, each its own unit")},
            // In PipelineSchedule's order; a schedule brings its chunks per rank along.
            {.kind = Kind::Combo,
             .label = tr("Schedule"),
             .field = "parallelism.pipeline_schedule",
             .items = {QStringLiteral("GPipe"), QStringLiteral("1F1B"), tr("interleaved 1F1B"),
                       tr("ZB-H1 (zero bubble)"), tr("ZB-H2 (zero bubble)"), tr("ZB-V (zero bubble, V)"),
                       QStringLiteral("DualPipe"), QStringLiteral("DualPipeV")},
             .access = {[](const Config &config) { return std::int64_t(config.parallelism.schedule()); },
                        [](Config &config, std::int64_t v) { setSchedule(config.parallelism, PipelineSchedule(v)); }}},
            // Where the layers do not divide over p·v (or a stage should be lighter): the layers of each stage.
            {.kind = Kind::Layout,
             .label = tr("Pipeline layout"),
             .field = "parallelism.pipeline_layout",
             .tip = tr("layers of each virtual stage, in stage order, a run of equal counts as count×run "
                       "(\"7, 8×14, 7\"); empty: the layers split evenly. Applied on Return.")},
            {.kind = Kind::GpuCount, .label = tr("GPUs")},
        }};
}

ControlPanel::Group ControlPanel::batchAndPrecision()
{
    return {
        tr("Batch and precision"),
        {
            {.kind = Kind::Spin,
             .label = tr("Micro-batch (b)"),
             .field = "training.micro_batch_size",
             .range = {1, 4096},
             .access = plain<&Config::training, &TrainingConfig::micro_batch_size>()},
            {.kind = Kind::Sequence, .label = tr("Sequence (s)"), .field = "training.seq_length"},
            {.kind = Kind::Spin,
             .label = tr("Global batch"),
             .field = "training.global_batch_size",
             .range = {0, 1 << 24},
             .access = plain<&Config::training, &TrainingConfig::global_batch_size>(),
             .tip = tr("0: b × d × p, one pipeline fill")},
            {.kind = Kind::Combo,
             .label = tr("Weights"),
             .field = "training.params_dtype",
             .items = {QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp8")},
             .access = plain<&Config::training, &TrainingConfig::params_dtype>()},
            // In Fp8Recipe's order: Megatron's --fp8-recipe names.
            {.kind = Kind::Combo,
             .label = tr("FP8 recipe"),
             .field = "training.fp8_recipe",
             .items = {tr("none"), QStringLiteral("delayed"), QStringLiteral("tensorwise"), QStringLiteral("MXFP8"),
                       QStringLiteral("blockwise")},
             .access = plain<&Config::training, &TrainingConfig::fp8_recipe>(),
             .tip = tr("FP8 GEMMs as Transformer Engine runs them: FP8 weight copies and FP8 saved linear inputs "
                       "beside the 16-bit weights")},
            {.kind = Kind::Combo,
             .label = tr("Gradients"),
             .field = "training.main_grads_dtype",
             .items = {QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16")},
             .access = plain<&Config::training, &TrainingConfig::main_grads_dtype>()},
            {.kind = Kind::Check,
             .label = tr("fp32 parameters"),
             .field = "training.fp32_params",
             .access = plain<&Config::training, &TrainingConfig::fp32_params>(),
             .tip = tr("The parameters are fp32 and are their own master weights, cast to the Weights dtype for "
                       "compute: FSDP's MixedPrecisionPolicy (torchtitan) or torch.autocast (Hugging Face's "
                       "Trainer)")},
            {.kind = Kind::Check,
             .label = tr("fp32 master weights"),
             .field = "training.main_params_dtype",
             .access = plain<&Config::training, &TrainingConfig::main_params_fp32>(),
             .tip = tr("Mixed precision keeps an fp32 copy of the weights for the update (4 bytes per parameter); with "
                       "fp32 parameters they are their own master and this has no effect")},
            {.kind = Kind::Combo,
             .label = tr("Optimizer"),
             .field = "training.optimizer",
             .items = {QStringLiteral("Adam"), QStringLiteral("AdamW"), QStringLiteral("SGD"),
                       QStringLiteral("Adafactor"), tr("8-bit Adam"), QStringLiteral("Muon")},
             .access = plain<&Config::training, &TrainingConfig::optimizer>()},
            // Both Adam moments in one dtype ("default": fp32, or int8 for 8-bit Adam).
            {.kind = Kind::Combo,
             .label = tr("Optimizer states"),
             .field = "training.exp_avg_dtype",
             .items = {tr("default"), QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16"),
                       QStringLiteral("fp8"), QStringLiteral("int8")},
             .access = {[](const Config &config) {
                            return config.training.exp_avg_dtype ? std::int64_t(*config.training.exp_avg_dtype) + 1 : 0;
                        },
                        [](Config &config, std::int64_t v) {
                            config.training.exp_avg_dtype = v == 0 ? std::nullopt : std::optional<Dtype>(Dtype(v - 1));
                            config.training.exp_avg_sq_dtype = config.training.exp_avg_dtype;
                        }},
             .tip = tr("The dtype of Adam's two moments (DeepSeek-V3 keeps them in bf16)")},
        }};
}

ControlPanel::Group ControlPanel::recomputeAndOffload()
{
    return {tr("Recompute and offload"),
            {
                // In Framework's order; picking one applies its defaults (core/config/framework.h).
                {.kind = Kind::Combo,
                 .label = tr("Framework"),
                 .field = "strategy.framework",
                 .items = {QStringLiteral("Megatron-LM"), QStringLiteral("torchtitan"), QStringLiteral("DeepSpeed"),
                           QStringLiteral("Hugging Face")},
                 .access = {[](const Config &config) { return std::int64_t(config.strategy.framework); },
                            [](Config &config, std::int64_t v) {
                                config = withFrameworkDefaults(std::move(config), Framework(v));
                            }},
                 .tip = tr("The training framework: it sets the knobs frameworks disagree on (loss, gradient "
                           "buffers, optimizer kernel, fp32 parameters, FSDP per block); the ledger's choices name "
                           "the behaviour each follows")},
                {.kind = Kind::Check,
                 .label = tr("torch.compile"),
                 .field = "strategy.torch_compile",
                 .access = plain<&Config::strategy, &StrategyConfig::torch_compile>(),
                 .tip = tr("The transformer blocks compiled: inductor fuses the norms' and SwiGLU's elementwise ops "
                           "and recomputes them in the backward instead of saving the eager ops' outputs")},
                {.kind = Kind::Combo,
                 .label = tr("Recompute"),
                 .field = "strategy.recompute_granularity",
                 // In RecomputeGranularity's order; selective_op is torchtitan's per-op policy.
                 .items = {tr("none"), tr("selective"), tr("full"), tr("selective_op")},
                 .access = plain<&Config::strategy, &StrategyConfig::recompute_granularity>(),
                 .tip = tr("selective: Megatron's attention-core recompute; full: each group's input kept; "
                           "selective_op: torchtitan's per-op checkpointing (matmul, attention and reduce-scatter "
                           "outputs kept, every second matmul recomputed)")},
                {.kind = Kind::Combo,
                 .label = tr("Method"),
                 .field = "strategy.recompute_method",
                 .items = {tr("uniform"), tr("block")},
                 .access = plain<&Config::strategy, &StrategyConfig::recompute_method>()},
                {.kind = Kind::Spin,
                 .label = tr("Recompute layers"),
                 .field = "strategy.recompute_num_layers",
                 .range = {1, 1000},
                 .access = plain<&Config::strategy, &StrategyConfig::recompute_num_layers>()},
                {.kind = Kind::Check,
                 .label = tr("FlashAttention"),
                 .field = "strategy.flash_attention",
                 .access = plain<&Config::strategy, &StrategyConfig::flash_attention>()},
                {.kind = Kind::Combo,
                 .label = tr("Optimizer offload"),
                 .field = "strategy.optimizer_offload",
                 .items = {tr("none"), tr("CPU"), tr("NVMe")},
                 .access
                 = {[](const Config &config) { return std::int64_t(config.strategy.optimizer_offload); },
                    [](Config &config, std::int64_t v) { setOptimizerOffload(config.strategy, OffloadTarget(v)); }}},
                {.kind = Kind::Combo,
                 .label = tr("Gradient offload"),
                 .field = "strategy.grad_offload",
                 .items = {tr("none"), tr("CPU")},
                 .access = {[](const Config &config) { return std::int64_t(config.strategy.grad_offload); },
                            [](Config &config, std::int64_t v) { setGradOffload(config.strategy, OffloadTarget(v)); }}},
                {.kind = Kind::Combo,
                 .label = tr("Parameter offload"),
                 .field = "strategy.param_offload",
                 .items = {tr("none"), tr("CPU"), tr("NVMe")},
                 .access = plain<&Config::strategy, &StrategyConfig::param_offload>()},
                {.kind = Kind::Combo,
                 .label = tr("Activation offload"),
                 .field = "strategy.activation_offload",
                 .items = {tr("none"), tr("CPU")},
                 .access = plain<&Config::strategy, &StrategyConfig::activation_offload>()},
                {.kind = Kind::Check,
                 .label = tr("Balance activations"),
                 .field = "strategy.pipeline_activation_balance",
                 .access = plain<&Config::strategy, &StrategyConfig::pipeline_activation_balance>(),
                 .tip = tr("Balance activations across pipeline ranks: park part of the first pipeline ranks' saved "
                           "activations in the later ranks' memory, over NVLink or the network, so that the ranks' "
                           "device totals even out (pipeline_activation_balance)")},
            }};
}

void ControlPanel::add(QFormLayout *form, const Spec &spec)
{
    switch (spec.kind) {
    case Kind::Preset:
        addPresetPicker(form, spec.label, spec.presets);
        break;
    case Kind::Spin:
        addSpin(form, spec.label, spec.range.min, spec.range.max, spec.access.get, spec.access.set, spec.tip);
        break;
    case Kind::Combo:
        addCombo(form, spec.label, spec.items, spec.access.get, spec.access.set, spec.tip);
        break;
    case Kind::Check:
        addCheck(form, spec.label, spec.access.get, spec.access.set, spec.tip);
        break;
    case Kind::Sequence:
        addSequenceSlider(form, spec.label);
        break;
    case Kind::Layout:
        addLayoutEditor(form, spec.label, spec.tip);
        break;
    case Kind::GpuCount:
        addGpuCount(form, spec.label);
        return; // a fact, not a control: no field, no note
    }
    fieldOfLast(QString::fromLatin1(spec.field));
}

void ControlPanel::addGpuCount(QFormLayout *form, const QString &label)
{
    // Its text changes with t, p, d or c: a width of its own (the field's, which is wider than the text)
    // would relayout and repaint the whole panel whenever it grew by a digit.
    m_gpus->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    // In a narrow panel (a 1024-pixel window, 2048 GPUs) the line would be cut at the field's edge: it wraps
    // after "t·p·d·c =" instead, so only a change of its line count relayouts the panel.
    m_gpus->setWordWrap(true);
    m_gpus->setObjectName(QStringLiteral("gpus"));
    addRow(form, label, m_gpus);
    // Off by default: t, p and c are then the user's and the count follows them, as the line above shows.
    m_keepGpus = new QCheckBox(tr("Keep the GPU count (t, p, c change d)"), this);
    m_keepGpus->setObjectName(QStringLiteral("keepGpus"));
    m_keepGpus->setToolTip(tr("When t, p or c changes, d changes with it so that t·p·d·c stays the number of GPUs; an "
                              "edit of d sets a new count"));
    form->addRow(m_keepGpus);
    m_keepNote = new KeptLabel(this);
    m_keepNote->setObjectName(QStringLiteral("keepGpusNote"));
    m_keepNote->setWordWrap(true);
    m_keepNote->setTextFormat(Qt::PlainText);
    m_keepNote->hide();
    form->addRow(m_keepNote);
    connect(m_keepGpus, &QCheckBox::toggled, this, [this](bool on) {
        m_keptGpus = m_document->config().parallelism.gpus();
        m_unkept.reset();
        if (!on)
            setKeepNote({});
    });
}

void ControlPanel::keepGpuCount(const Config &before, Config &after)
{
    if (!m_keepGpus || !m_keepGpus->isChecked())
        return;
    const QString why = toQString(memledger::keepGpuCount(before.parallelism, after.parallelism, m_keptGpus));
    if (why.isEmpty())
        m_unkept.reset();
    else
        m_unkept = after.parallelism;
    setKeepNote(why);
}

void ControlPanel::setKeepNote(const QString &text)
{
    if (m_keepNote->text() != text)
        m_keepNote->setText(text);
    m_keepNote->setVisible(!text.isEmpty());
}

QString ControlPanel::keepGpusNote() const
{
    return m_keepNote->isHidden() ? QString() : m_keepNote->text();
}

void ControlPanel::addLayoutEditor(QFormLayout *form, const QString &label, const QString &tip)
{
    auto *row = new QWidget(this);
    auto *h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto *line = new QLineEdit(row);
    line->setAccessibleName(label);
    line->setToolTip(tip);
    line->setPlaceholderText(tr("even split"));
    // As wide as the fields above it, not as its own hint (about twenty characters), which with the Balance
    // button beside it made the panel, and the window's least width, wider.
    line->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    // Counts, separators and run markers only: what core's layoutFromText reads.
    line->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9,\\s×xX*\\[\\]]*")), line));
    auto *balance = new QToolButton(row);
    balance->setText(tr("Balance"));
    balance->setObjectName(QStringLiteral("balanceLayout"));
    balance->setToolTip(tr("Fill in the most even layout of the model's layers over the p·v stages; the first and "
                           "the last stage, which also hold the embedding and the loss, get the fewest"));
    h->addWidget(line, 1);
    h->addWidget(balance);
    addRow(form, label, row);
    const int id = static_cast<int>(m_controls.size());
    m_controls.push_back(line);
    const auto apply = [this, id](const std::vector<std::int64_t> &layout, const QString &what) {
        if (layout == m_document->config().parallelism.pipeline_layout)
            return;
        edit(what, id, [&](Config &config) { config.parallelism.pipeline_layout = layout; });
    };
    connect(line, &QLineEdit::editingFinished, this, [line, label, apply] {
        if (const auto layout = layoutFromText(line->text().toStdString()))
            apply(*layout, layout->empty() ? tr("Split the layers evenly")
                                           : tr("Set %1 to %2").arg(label, toQString(layoutText(*layout))));
    });
    connect(balance, &QToolButton::clicked, this, [this, apply] {
        const Config &config = m_document->config();
        apply(balancedLayout(config.model.num_layers, config.parallelism.pipelineStages()),
              tr("Balance the pipeline layout"));
    });
    m_syncs.push_back([line](const Config &config) {
        const QString text = toQString(layoutText(config.parallelism.pipeline_layout));
        if (line->text() != text) {
            const QSignalBlocker block(line);
            line->setText(text);
        }
        // The other layout a move of this control gives (the GUI bench, the control table's test): the balanced
        // one where the layers split evenly, the even split where a layout is listed.
        line->setProperty("otherLayout",
                          config.parallelism.pipeline_layout.empty() ? toQString(
                              layoutText(balancedLayout(config.model.num_layers, config.parallelism.pipelineStages())))
                                                                     : QString());
    });
}

void ControlPanel::addRow(QFormLayout *form, const QString &label, QWidget *field)
{
    // As QFormLayout::addRow(QString, QWidget *) makes it, with the label's
    // text kept laid out: a relayout of the panel paints every row's label.
    auto *rowLabel = new KeptLabel(label, this);
    rowLabel->setBuddy(field);
    form->addRow(rowLabel, field);
}

QFormLayout *ControlPanel::addGroup(const QString &title)
{
    auto *box = new KeptGroupBox(title, this); // opaque: moved by copying its pixels, see the constructor
    // Its minimum is its preferred height (not squeezed, see the constructor); it may grow to the height its
    // word-wrapped notes take at the panel's width.
    box->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    auto *form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    static_cast<QVBoxLayout *>(layout())->addWidget(box);
    return form;
}

void ControlPanel::edit(const QString &what, int control, const Setter &set, bool dragging)
{
    m_lastEdited = control;
    m_editedNow = control;
    const Config before = m_document->config();
    Config config = before;
    set(config);
    keepGpuCount(before, config);
    m_document->edit(config, what, dragging ? m_drags : -1);
}

void ControlPanel::addSpin(QFormLayout *form, const QString &label, int min, int max, GetInt get, SetInt set,
                           const QString &tip)
{
    auto *spin = new QSpinBox(this);
    spin->setRange(min, max);
    spin->setToolTip(tip);
    spin->setAccessibleName(label);
    if (min == 0)
        spin->setSpecialValueText(tr("auto"));
    addRow(form, label, spin);
    const int id = static_cast<int>(m_controls.size());
    m_controls.push_back(spin);
    connect(spin, &QSpinBox::valueChanged, this, [this, label, id, set](int v) {
        edit(tr("Set %1 to %2").arg(label).arg(v), id, [&](Config &config) { set(config, v); });
    });
    m_syncs.push_back([spin, get](const Config &config) {
        // QSpinBox::setValue repaints the box (and the group box under it) even
        // for its own value: every edit would repaint every spin box of the panel.
        const int value = static_cast<int>(get(config));
        if (spin->value() == value)
            return;
        const QSignalBlocker block(spin);
        spin->setValue(value);
    });
}

void ControlPanel::addCombo(QFormLayout *form, const QString &label, const QStringList &items, GetInt get, SetInt set,
                            const QString &tip)
{
    auto *combo = new QComboBox(this);
    combo->addItems(items);
    combo->setToolTip(tip);
    combo->setAccessibleName(label);
    addRow(form, label, combo);
    const int id = static_cast<int>(m_controls.size());
    m_controls.push_back(combo);
    connect(combo, &QComboBox::activated, this, [this, label, id, set, combo](int index) {
        edit(tr("Set %1 to %2").arg(label, combo->itemText(index)), id, [&](Config &config) { set(config, index); });
    });
    m_syncs.push_back([combo, get](const Config &config) {
        const int index = static_cast<int>(get(config));
        if (combo->currentIndex() == index)
            return;
        const QSignalBlocker block(combo);
        combo->setCurrentIndex(index);
    });
}

void ControlPanel::addCheck(QFormLayout *form, const QString &label, GetInt get, SetInt set, const QString &tip)
{
    auto *check = new QCheckBox(this);
    check->setToolTip(tip);
    check->setAccessibleName(label);
    addRow(form, label, check);
    const int id = static_cast<int>(m_controls.size());
    m_controls.push_back(check);
    connect(check, &QCheckBox::toggled, this, [this, label, id, set](bool on) {
        edit(on ? tr("Turn on %1").arg(label) : tr("Turn off %1").arg(label), id,
             [&](Config &config) { set(config, on ? 1 : 0); });
    });
    m_syncs.push_back([check, get](const Config &config) {
        const QSignalBlocker block(check);
        check->setChecked(get(config) != 0);
    });
}

void ControlPanel::addSequenceSlider(QFormLayout *form, const QString &label)
{
    auto *row = new QWidget(this);
    auto *h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto *slider = new QSlider(Qt::Horizontal, row);
    slider->setRange(kMinLog2Sequence, kMaxLog2Sequence);
    slider->setPageStep(1);
    slider->setTickPosition(QSlider::TicksBelow);
    slider->setToolTip(tr("sequence length, 512 to 1M tokens (log scale)"));
    slider->setAccessibleName(label);
    auto *value = new KeptLabel(row);
    // A fixed size: a new length repaints the label without relayouting the panel.
    value->setFixedSize(value->fontMetrics().horizontalAdvance(QStringLiteral("1024K")), value->fontMetrics().height());
    h->addWidget(slider, 1);
    h->addWidget(value);
    addRow(form, label, row);
    const int id = static_cast<int>(m_controls.size());
    m_controls.push_back(slider);
    connect(slider, &QSlider::sliderPressed, this, [this] { ++m_drags; });
    connect(slider, &QSlider::valueChanged, this, [this, id, slider](int log2) {
        const std::int64_t tokens = std::int64_t(1) << log2;
        edit(
            tr("Set the sequence length to %1").arg(tokensText(tokens)), id,
            [&](Config &config) { config.training.seq_length = tokens; }, slider->isSliderDown());
    });
    m_syncs.push_back([slider, value](const Config &config) {
        const QSignalBlocker block(slider);
        const std::int64_t s = config.training.seq_length;
        const int position
            = std::clamp(static_cast<int>(std::lround(std::log2(double(s)))), kMinLog2Sequence, kMaxLog2Sequence);
        if (slider->value() != position)
            slider->setValue(position);
        value->setText(tokensText(s));
    });
}

void ControlPanel::addPresetPicker(QFormLayout *form, const QString &label, const char *kind)
{
    auto *combo = new QComboBox(this);
    combo->setAccessibleName(label);
    // Parsed once: the picker follows every edit and must stay cheap.
    std::vector<Config> builtins;
    for (const std::string &n : builtinNames(kind)) {
        const LoadResult loaded = presetFromText(findBuiltin(kind, n)->text, n);
        if (!loaded.config)
            continue;
        combo->addItem(QString::fromStdString(n));
        builtins.push_back(*loaded.config);
    }
    combo->addItem(tr("(from the preset)"));
    addRow(form, label, combo);
    const bool models = std::string_view(kind) == "models";
    const int id = static_cast<int>(m_controls.size());
    m_controls.push_back(combo);
    connect(combo, &QComboBox::activated, this, [this, combo, builtins, models, label, id](int index) {
        if (index < 0 || index >= static_cast<int>(builtins.size()))
            return;
        const Config &b = builtins[static_cast<std::size_t>(index)];
        edit(tr("Use %1 %2").arg(label, combo->itemText(index)), id, [&](Config &config) {
            if (models)
                config.model = b.model;
            else
                config.hardware = b.hardware;
        });
    });
    // Show the built-in the configuration matches, or "(from the preset)".
    m_syncs.push_back([combo, builtins, models](const Config &config) {
        const QSignalBlocker block(combo);
        int match = static_cast<int>(builtins.size());
        for (std::size_t i = 0; i < builtins.size(); ++i) {
            if (models ? builtins[i].model == config.model : builtins[i].hardware == config.hardware) {
                match = static_cast<int>(i);
                break;
            }
        }
        if (combo->currentIndex() != match)
            combo->setCurrentIndex(match);
    });
}

void ControlPanel::fieldOfLast(const QString &path)
{
    QWidget *row = m_controls.back();
    auto *box = qobject_cast<QGroupBox *>(row->parentWidget());
    while (!box && row->parentWidget()) { // the sequence slider sits in a row widget
        row = row->parentWidget();
        box = qobject_cast<QGroupBox *>(row->parentWidget());
    }
    auto *form = box ? qobject_cast<QFormLayout *>(box->layout()) : nullptr;
    Q_ASSERT(form);
    int index = -1;
    QFormLayout::ItemRole role;
    form->getWidgetPosition(row, &index, &role);
    auto *note = new KeptLabel(box);
    note->setWordWrap(true);
    note->setTextFormat(Qt::PlainText);
    note->hide();
    form->insertRow(index + 1, note);
    m_paths.push_back(path);
    m_notes.push_back(note);
}

void ControlPanel::showProblems(const Problems &problems)
{
    std::vector<QStringList> lines(m_controls.size());
    for (const Problem &p : problems) {
        if (!p.isError())
            continue;
        const QString path = QString::fromStdString(p.path);
        int at = m_lastEdited;
        for (std::size_t i = 0; i < m_paths.size(); ++i)
            if (path == m_paths[i])
                at = static_cast<int>(i);
        if (at < 0 || at >= static_cast<int>(lines.size()))
            continue;
        QString line = QString::fromStdString(p.message);
        if (!p.suggestion.empty())
            line += QStringLiteral(" — ") + QString::fromStdString(p.suggestion);
        lines[static_cast<std::size_t>(at)] << line;
    }
    recolorNotes();
    // A drag or a spin through invalid and valid values (t = 3, 4, 5 …) would show and hide notes at every
    // step, and each time the panel below them moves: a relayout and a repaint of the whole panel per step.
    // While one control is edited step after step, a note that clears keeps its room, blank; an edit of
    // another control, an undo or a load gives the room back.
    const int editing = std::exchange(m_editedNow, -1);
    const bool sameRun = editing >= 0 && editing == m_noteRun;
    m_noteRun = editing;
    for (std::size_t i = 0; i < m_notes.size(); ++i) {
        QLabel *note = m_notes[i];
        const QString text = lines[i].join(QLatin1Char('\n'));
        if (!text.isEmpty()) {
            // The same note back within the run: at the height it had. Left free, the form's height-for-width
            // of the group differs by a line between the note's text and its blank room (seen at 1600x1000:
            // 396 and 410 px), and the group and the whole panel resize, and repaint, at every step.
            const bool back = sameRun && note->minimumHeight() > 0 && note->property("runText").toString() == text;
            note->setMaximumHeight(back ? note->minimumHeight() : QWIDGETSIZE_MAX);
            note->setProperty("runText", text);
            if (note->text() != text)
                note->setText(text);
            setNoteBlank(note, false);
            note->setVisible(true);
        } else if (sameRun && note->isVisibleTo(this)) {
            // At the height it had, fixed: with its text kept, the form's height-for-width would give it a
            // line more (see above).
            const int room = std::max(note->minimumHeight(), note->height());
            note->setMinimumHeight(room);
            note->setMaximumHeight(room);
            // Blank, its text kept: QLabel::setText relayouts the group, the panel and the scroll area
            // even at the same size (a Model toggled between a plan that fits and one whose layers do not
            // split paid a whole panel's layout at every step), a change of color only repaints the note.
            setNoteBlank(note, true);
        } else if (!note->isHidden() || !note->text().isEmpty()) {
            note->setMinimumHeight(0);
            note->setMaximumHeight(QWIDGETSIZE_MAX);
            setNoteBlank(note, false);
            note->clear();
            note->hide();
        }
    }
}

void ControlPanel::setNoteBlank(QLabel *note, bool blank)
{
    if (note->property("blank").toBool() != blank)
        note->setProperty("blank", blank);
    const QColor color = blank ? QColor(Qt::transparent) : m_noteColor;
    if (note->palette().color(QPalette::WindowText) == color)
        return;
    QPalette pal = note->palette();
    pal.setColor(QPalette::WindowText, color);
    note->setPalette(pal);
}

void ControlPanel::recolorNotes()
{
    // Asked at every edit (showProblems): the notes are recoloured only when the palette's error colour
    // changed (dark mode), not copied palette by palette each time (0.5 M instructions a move).
    const QColor color = errorTextColor(palette());
    if (color == m_noteColor)
        return;
    m_noteColor = color;
    for (QLabel *note : m_notes)
        setNoteBlank(note, note->property("blank").toBool());
}

void ControlPanel::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        recolorNotes();
}

QString ControlPanel::noteOf(const QWidget *control) const
{
    for (std::size_t i = 0; i < m_controls.size(); ++i)
        if (m_controls[i] == control)
            return m_notes[i]->isHidden() || m_notes[i]->property("blank").toBool() ? QString() : m_notes[i]->text();
    return {};
}

void ControlPanel::syncFromConfig()
{
    const Config &config = m_document->config();
    for (const auto &sync : m_syncs)
        sync(config);
    // The count to keep follows the plan (a load, an undo, an edit of d), except the one an edit could not keep.
    if (!m_unkept || config.parallelism != *m_unkept) {
        m_unkept.reset();
        m_keptGpus = config.parallelism.gpus();
        setKeepNote({});
    }
    const ParallelismConfig &p = config.parallelism;
    const QString gpus = tr("<b>%1</b> = t·p·d·c = %2·%3·%4·%5")
                             .arg(p.gpus())
                             .arg(p.tensor_model_parallel_size)
                             .arg(p.pipeline_model_parallel_size)
                             .arg(p.data_parallel_size)
                             .arg(p.context_parallel_size);
    // QLabel::setText relayouts the group even for the same text: most edits leave this line as it was.
    if (m_gpus->text() != gpus)
        m_gpus->setText(gpus);
}

} // namespace memledger::ui
