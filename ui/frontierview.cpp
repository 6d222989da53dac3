// SPDX-License-Identifier: MIT
#include "ui/frontierview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QShowEvent>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/base/units.h"
#include "core/formats/preset.h"
#include "core/model/activations.h"
#include "core/model/tensorpolicy.h"
#include "ui/document.h"
#include "ui/frontierplot.h"
#include "ui/qtstring.h"

#include <algorithm>

namespace memledger::ui {

namespace {

constexpr int kMaxListed = 24; // checkpoints listed in a tooltip before "…"

bool sameGraph(const LayerGraph &a, const LayerGraph &b)
{
    if (a.nodes.size() != b.nodes.size() || a.forwardFlops != b.forwardFlops || a.backwardFlops != b.backwardFlops
        || a.forwardSeconds != b.forwardSeconds || a.backwardSeconds != b.backwardSeconds || a.peakFlops != b.peakFlops
        || a.hbmBytesPerS != b.hbmBytesPerS || a.linkBytesPerS != b.linkBytesPerS)
        return false;
    for (std::size_t k = 0; k < a.nodes.size(); ++k) {
        const TensorNode &x = a.nodes[k], &y = b.nodes[k];
        if (x.bytes != y.bytes || x.flops != y.flops || x.bytesMoved != y.bytesMoved || x.deps != y.deps
            || x.attentionCore != y.attentionCore || x.quantizedBytes != y.quantizedBytes)
            return false;
    }
    return true;
}

QString joinNumbers(const std::vector<int> &v)
{
    QStringList parts;
    for (std::size_t i = 0; i < v.size() && i < std::size_t(kMaxListed); ++i)
        parts << QString::number(v[i]);
    if (v.size() > std::size_t(kMaxListed))
        parts << QStringLiteral("…");
    return parts.join(QStringLiteral(", "));
}

// The tag beside a diamond ("uniform 2", "none + offload"), from core's
// structured kind: the label is display text only, never parsed.
QString tagOf(const SettingPoint &s)
{
    const bool offload = s.edit.activationOffload && *s.edit.activationOffload != OffloadTarget::None;
    const QString plus = offload ? QObject::tr(" + offload") : QString();
    switch (s.kind) {
    case SettingKind::NoFullRecompute:
        // It keeps the plan's own granularity: only without any recompute does it store all.
        switch (s.edit.granularity) {
        case RecomputeGranularity::Selective:
            return QObject::tr("selective");
        case RecomputeGranularity::SelectiveOp:
            return toQString(granularityName(s.edit.granularity));
        case RecomputeGranularity::None:
        case RecomputeGranularity::Full:
            break;
        }
        return QObject::tr("store all");
    case SettingKind::TensorPolicies:
        return QObject::tr("per-tensor");
    case SettingKind::FullUniform:
        return QObject::tr("uniform %1").arg(s.edit.numLayers.value_or(1));
    case SettingKind::FullBlock:
        return QObject::tr("block %1").arg(s.edit.numLayers.value_or(1));
    case SettingKind::None:
        return QObject::tr("none") + plus;
    case SettingKind::Selective:
        return QObject::tr("selective") + plus;
    case SettingKind::Full:
        return QObject::tr("full") + plus;
    }
    return toQString(s.label);
}

QString editText(const SettingEdit &e)
{
    QStringList parts;
    parts << QStringLiteral("recompute_granularity=%1").arg(toQString(granularityName(e.granularity)));
    if (e.method)
        parts << QStringLiteral("recompute_method=%1").arg(toQString(methodName(*e.method)));
    if (e.numLayers)
        parts << QStringLiteral("recompute_num_layers=%1").arg(*e.numLayers);
    if (e.activationOffload)
        parts << QStringLiteral("activation_offload=%1").arg(toQString(offloadName(*e.activationOffload)));
    return parts.join(QStringLiteral(", "));
}

} // namespace

FrontierView::FrontierView(Document *document, Planner planner, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
    , m_planner(planner)
    , m_caption(new QLabel)
    , m_plot(new FrontierPlot)
    , m_details(new QLabel)
{
    auto *layout = new QVBoxLayout(this);
    if (planner == Planner::Tensor) {
        auto *row = new QHBoxLayout;
        row->addWidget(new QLabel(tr("Cost:")));
        m_costCombo = new QComboBox;
        m_costCombo->addItem(tr("achieved rates"));
        m_costCombo->addItem(tr("FLOPs only"));
        m_costCombo->setToolTip(
            tr("Achieved rates: each op takes its FLOPs at the GEMM rate the device reaches for its size "
               "plus its memory traffic at the HBM bandwidth it reaches (the time model: "
               "Help > Documentation, time-model.md). FLOPs only: as if every op ran at peak. FLOPs alone "
               "under-price the memory-bound softmax and dropout; switch to see selective "
               "recompute's overhead shrink."));
        row->addWidget(m_costCombo);
        m_offloadBox = new QCheckBox(tr("Offload"));
        row->addSpacing(12);
        row->addWidget(m_offloadBox);
        m_quantizeBox = new QCheckBox(tr("fp8"));
        m_quantizeBox->setToolTip(
            tr("A fourth fate per tensor: kept in fp8 (1 byte per element plus one scale per "
               "block, strategy.activation_quant_block_size) and dequantised in the backward; "
               "two memory-bound passes. With offload also fp8 then offloaded. 16-bit training only."));
        row->addStretch(1);
        layout->addLayout(row);
        m_exportButton = new QPushButton(tr("Export point…"));
        m_exportButton->setToolTip(tr("Click a point of the frontier first: its plan is written as a preset "
                                      "(strategy.tensor_policies) that memledger-cli eval accepts."));
        m_exportButton->setEnabled(false);
        connect(m_costCombo, &QComboBox::currentIndexChanged, this,
                [this](int index) { setCostModel(index == 1 ? TensorCost::Flops : TensorCost::Roofline); });
        connect(m_offloadBox, &QCheckBox::toggled, this, &FrontierView::setOffload);
        connect(m_quantizeBox, &QCheckBox::toggled, this, &FrontierView::setQuantize);
        connect(m_exportButton, &QPushButton::clicked, this, &FrontierView::onExportClicked);
    }
    m_caption->setWordWrap(true);
    m_caption->setTextFormat(Qt::PlainText);
    m_details->setWordWrap(true);
    m_details->setTextFormat(Qt::PlainText);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setText(hintText());
    layout->addWidget(m_caption);
    layout->addWidget(m_plot, 1);
    if (m_exportButton) {
        // Beside the details, which are several lines tall anyway: no extra
        // height, and the top row stays narrow enough for half a window.
        auto *bottom = new QHBoxLayout;
        bottom->addWidget(m_details, 1);
        auto *side = new QHBoxLayout;
        side->addWidget(m_quantizeBox);
        side->addWidget(m_exportButton);
        bottom->addLayout(side);
        bottom->setAlignment(side, Qt::AlignTop);
        layout->addLayout(bottom);
    } else {
        layout->addWidget(m_details);
    }
    if (planner == Planner::Tensor) {
        m_tensorTable = new QTableWidget(0, 4);
        m_tensorTable->setAccessibleName(tr("Saved tensors and their fates"));
        m_tensorTable->setHorizontalHeaderLabels({tr("Saved tensor"), tr("Saved"), tr("Fate"), tr("Kept as")});
        m_tensorTable->setToolTip(tr("What one transformer layer saves for one micro-batch, tensor by tensor, and what "
                                     "the current plan does with each (recompute_granularity refined by "
                                     "strategy.tensor_policies)."));
        m_tensorTable->verticalHeader()->hide();
        m_tensorTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
        m_tensorTable->setSelectionMode(QAbstractItemView::NoSelection);
        for (int col = 0; col < 3; ++col)
            m_tensorTable->horizontalHeader()->setSectionResizeMode(col, QHeaderView::ResizeToContents);
        m_tensorTable->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
        m_tensorTable->setMaximumHeight(180);
        // It scrolls: a short window keeps the plot, not every row.
        m_tensorTable->setMinimumHeight(60);
        layout->addWidget(m_tensorTable);
    }

    connect(m_plot, &FrontierPlot::markerClicked, this, &FrontierView::onMarkerClicked);
    connect(m_plot, &FrontierPlot::frontierPointClicked, this, &FrontierView::onFrontierPointClicked);
    connect(document, &Document::ledgerChanged, this, &FrontierView::onLedgerChanged);
    if (document->hasLedger()) {
        m_config = document->config();
        m_hasConfig = true;
    }
}

void FrontierView::setCostModel(TensorCost cost)
{
    if (m_costCombo && m_costCombo->currentIndex() != (cost == TensorCost::Flops ? 1 : 0))
        m_costCombo->setCurrentIndex(cost == TensorCost::Flops ? 1 : 0); // comes back here
    if (cost == m_cost)
        return;
    m_cost = cost;
    m_stale = true;
    if (isVisible())
        refresh();
}

void FrontierView::setOffload(bool offload)
{
    if (m_offloadBox && m_offloadBox->isChecked() != offload)
        m_offloadBox->setChecked(offload); // comes back here
    if (offload == m_offload)
        return;
    m_offload = offload;
    m_stale = true;
    if (isVisible())
        refresh();
}

void FrontierView::setQuantize(bool quantize)
{
    if (m_quantizeBox && m_quantizeBox->isChecked() != quantize)
        m_quantizeBox->setChecked(quantize); // comes back here
    if (quantize == m_quantize)
        return;
    m_quantize = quantize;
    m_stale = true;
    if (isVisible())
        refresh();
}

QString FrontierView::hintText() const
{
    return m_planner == Planner::Tensor
               ? tr("Hover a point for its plan. Click a diamond or a frontier point to apply it (one undo step).")
               : tr("Hover a point for its plan. Click a diamond to apply that setting (one undo step).");
}

void FrontierView::applyPlan(const Config &plan, const QString &undoText)
{
    m_applying = true;
    m_document->edit(plan, undoText);
    m_applying = false;
    m_appliedPlan = m_document->config();
}

void FrontierView::onLedgerChanged()
{
    // Once the plan is no longer the one a click applied (an undo, another
    // edit, a file opened), what the details say of it and the point it
    // selected describe another plan: they go.
    if (!m_applying && m_appliedPlan && *m_appliedPlan != m_document->config()) {
        m_appliedPlan.reset();
        m_chosenFates.clear();
        m_plot->setSelectedFrontierPoint(-1);
        if (m_exportButton)
            m_exportButton->setEnabled(false);
        m_details->setText(hintText());
    }
    m_config = m_document->config();
    m_hasConfig = true;
    m_stale = true;
    if (isVisible())
        refresh();
}

void FrontierView::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_stale)
        refresh();
}

void FrontierView::refresh()
{
    m_stale = false;
    if (!m_hasConfig) {
        FrontierPlotData empty;
        empty.emptyText = tr("No valid configuration yet.");
        m_plot->setData(empty);
        return;
    }
    if (m_planner == Planner::Chain)
        computeChain();
    else
        computeTensor();
    // The tensor view has a handful of settings: all are drawn, the beaten hollow.
    m_markers = settingMarkers(m_settings, m_planner == Planner::Tensor);
    rebuildPlot();
}

void FrontierView::computeChain()
{
    Chain chain = chainFromConfig(m_config);
    if (!m_haveFrontier || chain.size != m_chain.size || chain.cost != m_chain.cost) {
        m_chain = std::move(chain);
        m_chainCapped = m_chain.layers() > kMaxExactChainLayers;
        m_chainFrontier = m_chainCapped ? std::vector<ChainPlan>{} : frontierDP(m_chain);
        m_haveFrontier = true;
        ++m_frontierComputations;
    }
    m_settings = chainSettings(m_config, m_chain);
}

void FrontierView::computeTensor()
{
    LayerGraph graph = layerGraph(m_config);
    const bool offload = m_offload && graph.linkBytesPerS > 0;
    const bool quantize = m_quantize && activationBytes(m_config) == 2;
    if (!m_haveFrontier || !sameGraph(graph, m_graph) || m_cost != m_frontierCost || offload != m_frontierOffload
        || quantize != m_frontierQuantize) {
        m_graph = std::move(graph);
        m_tensorFrontier = memledger::tensorFrontier(m_graph, m_cost, offload, quantize);
        m_frontierCost = m_cost;
        m_frontierOffload = offload;
        m_frontierQuantize = quantize;
        m_chosenFates.clear(); // a point of the old frontier
        m_haveFrontier = true;
        ++m_frontierComputations;
    }
    m_settings = tensorSettings(m_config, m_graph, m_cost, offload);
    if (m_offloadBox) {
        m_offloadBox->setEnabled(m_graph.linkBytesPerS > 0);
        // The link in the tooltip, not the label: the Planners view's two plots fit beside the plan panel on
        // a 1024 px wide screen (issue 34, item 16); the caption names the link when offload is on.
        m_offloadBox->setToolTip(
            tr("A third fate per tensor: copied to host memory after the forward and back before the backward, "
               "stalling compute where the copy does not hide.")
            + QLatin1Char(' ')
            + (m_graph.linkBytesPerS > 0 ? tr("Over the %1 GB/s host link.").arg(m_graph.linkBytesPerS / kGB, 0, 'f', 0)
                                         : tr("This device has no host link.")));
    }
    if (m_quantizeBox) {
        m_quantizeBox->setEnabled(activationBytes(m_config) == 2);
    }
    fillTensorTable();
}

void FrontierView::fillTensorTable()
{
    if (!m_tensorTable)
        return;
    // The rows and their fates are core's (layerActivations with the plan's
    // tensor_policies); only the words are chosen here.
    const LayerActivations la = layerActivations(m_config, false, true);
    const bool full = m_config.strategy.recompute_granularity == RecomputeGranularity::Full;
    m_tensorTable->setRowCount(int(la.tensors.size()));
    for (int row = 0; row < int(la.tensors.size()); ++row) {
        const SavedTensor &t = la.tensors[std::size_t(row)];
        const bool input = t.name == "input_norm.input";
        QString fate, kept;
        if (full) {
            fate = input ? tr("stored (checkpoint)") : tr("recomputed (full)");
            kept = input ? tr("%1, device").arg(bytesText(t.bytes)) : tr("rebuilt");
        } else {
            switch (t.fate) {
            case TensorFate::Store:
                fate = tr("stored");
                break;
            case TensorFate::Recompute:
                fate = tr("recomputed");
                break;
            case TensorFate::Offload:
                fate = tr("offloaded");
                break;
            case TensorFate::QuantizeFp8:
                fate = t.placed == t.bytes ? tr("quantised (unchanged: not 16-bit)") : tr("quantised (fp8)");
                break;
            case TensorFate::QuantizeFp8Offload:
                fate = tr("quantised (fp8) and offloaded");
                break;
            case TensorFate::QuantizeE5M6:
                fate = t.placed == t.bytes ? tr("quantised (unchanged: not 16-bit)") : tr("quantised (E5M6)");
                break;
            }
            kept = t.fate == TensorFate::Recompute ? tr("rebuilt")
                   : offloads(t.fate)              ? tr("%1, host").arg(bytesText(t.placed))
                                                   : tr("%1, device").arg(bytesText(t.placed));
        }
        const QStringList cells = {toQString(t.name), bytesText(t.bytes), fate, kept};
        for (int col = 0; col < 4; ++col) {
            auto *item = new QTableWidgetItem(cells[col]);
            if (col == 1)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_tensorTable->setItem(row, col, item);
        }
    }
}

QString FrontierView::memoryText(double bytes) const
{
    return QStringLiteral("%1 %2")
        .arg(bytes * m_memoryScale, 0, 'f', bytes * m_memoryScale < 10 ? 2 : 1)
        .arg(m_memoryUnit);
}

QString FrontierView::costText(double cost) const
{
    if (m_planner == Planner::Chain)
        return tr("recompute %1 ms").arg(cost * 1e3, 0, 'f', cost * 1e3 < 10 ? 2 : 1);
    return tr("overhead %1 %").arg(cost * 100, 0, 'f', 2);
}

QString FrontierView::fatesText(const std::vector<Fate> &fates) const
{
    QStringList stored, recomputed, offloaded, quantized, quantizedOffloaded;
    for (std::size_t k = 0; k < fates.size() && k < m_graph.nodes.size(); ++k) {
        const TensorNode &n = m_graph.nodes[k];
        if (n.bytes == 0)
            continue;
        const QString name = toQString(n.name);
        switch (fates[k]) {
        case Fate::Store:
            stored << name;
            break;
        case Fate::Recompute:
            recomputed << name;
            break;
        case Fate::Offload:
            offloaded << name;
            break;
        case Fate::QuantizeFp8:
        case Fate::QuantizeE5M6: // the planner proposes fp8 only
            quantized << name;
            break;
        case Fate::QuantizeFp8Offload:
            quantizedOffloaded << name;
            break;
        }
    }
    QStringList lines;
    if (!recomputed.isEmpty())
        lines << tr("Recomputed: %1").arg(recomputed.join(QStringLiteral(", ")));
    if (!offloaded.isEmpty())
        lines << tr("Offloaded: %1").arg(offloaded.join(QStringLiteral(", ")));
    if (!quantized.isEmpty())
        lines << tr("In fp8: %1").arg(quantized.join(QStringLiteral(", ")));
    if (!quantizedOffloaded.isEmpty())
        lines << tr("In fp8, offloaded: %1").arg(quantizedOffloaded.join(QStringLiteral(", ")));
    lines << tr("Stored: %1").arg(stored.join(QStringLiteral(", ")));
    return lines.join(QLatin1Char('\n'));
}

QString FrontierView::settingText(const SettingPoint &s) const
{
    return tr("%1 (%2, %3)").arg(toQString(s.label), memoryText(s.memory), costText(s.cost));
}

int FrontierView::markerOf(const std::string &settingLabel) const
{
    for (std::size_t m = 0; m < m_markers.size(); ++m)
        for (int i : m_markers[m].settings)
            if (m_settings[std::size_t(i)].label == settingLabel)
                return int(m);
    return -1;
}

QString FrontierView::caption() const
{
    return m_caption->text();
}

QString FrontierView::details() const
{
    return m_details->text();
}

void FrontierView::rebuildPlot()
{
    const bool chain = m_planner == Planner::Chain;
    double maxMemory = 0;
    for (const SettingPoint &s : m_settings)
        maxMemory = std::max(maxMemory, s.memory);
    for (const ChainPlan &p : m_chainFrontier)
        maxMemory = std::max(maxMemory, p.peak);
    for (const TensorPlan &p : m_tensorFrontier)
        maxMemory = std::max(maxMemory, double(p.deviceBytes));
    const bool gb = maxMemory >= kGB;
    m_memoryScale = gb ? 1.0 / kGB : 1e-6;
    m_memoryUnit = gb ? QStringLiteral("GB") : QStringLiteral("MB");
    const double costScale = chain ? 1e3 : 100;

    FrontierPlotData data;
    data.memoryUnit = m_memoryUnit;
    data.costUnit = chain ? QStringLiteral("ms") : QStringLiteral("%");
    if (chain) {
        data.memoryTitle = tr("peak memory, %1 per micro-batch").arg(m_memoryUnit);
        data.costTitle = tr("recompute, ms per micro-batch");
        data.memoryShortTitle = tr("peak memory, %1").arg(m_memoryUnit);
        data.costShortTitle = tr("recompute, ms");
    } else {
        // Short: the caption above the plot says one layer, one micro-batch and which cost model.
        data.memoryTitle = tr("device memory per layer, %1").arg(m_memoryUnit);
        data.costTitle = tr("overhead, % of forward + backward");
        data.memoryShortTitle = tr("%1 per layer").arg(m_memoryUnit);
        data.costShortTitle = tr("overhead, %");
    }
    addFrontierPoints(data, costScale);
    addSettingMarkers(data, costScale);
    showCaption();
    data.emptyText = tr("Nothing to draw.");
    m_plot->setData(std::move(data));
    // Keep the clicked point selected across the redraw its own edit causes.
    for (std::size_t k = 0; k < m_tensorFrontier.size() && !m_chosenFates.empty(); ++k)
        if (m_tensorFrontier[k].fates == m_chosenFates)
            m_plot->setSelectedFrontierPoint(int(k));
    if (m_exportButton)
        m_exportButton->setEnabled(!m_chosenFates.empty());
}

void FrontierView::addFrontierPoints(FrontierPlotData &data, double costScale) const
{
    const bool chain = m_planner == Planner::Chain;
    auto sameAs = [&](double memory, double cost) {
        const int m = markerAt(m_markers, memory, cost);
        return m < 0 ? QString()
                     : QLatin1Char('\n')
                           + tr("= the setting %1")
                                 .arg(toQString(
                                     m_settings[std::size_t(m_markers[std::size_t(m)].settings.front())].label));
    };
    if (chain) {
        for (const ChainPlan &p : m_chainFrontier) {
            FrontierPlotPoint pt{p.recompute * costScale, p.peak * m_memoryScale, {}, {}, false};
            pt.toolTip
                = tr("Exact optimum: peak %1, %2").arg(memoryText(p.peak), costText(p.recompute)) + QLatin1Char('\n')
                  + (p.checkpoints.empty() ? tr("No checkpoint: one segment, every layer but the last recomputed")
                                           : tr("Checkpoints after layers %1\nSegment lengths %2")
                                                 .arg(joinNumbers(p.checkpoints), joinNumbers(p.segmentLengths())))
                  + sameAs(p.peak, p.recompute);
            data.frontier.push_back(std::move(pt));
        }
    } else {
        for (const TensorPlan &p : m_tensorFrontier) {
            const double mem = double(p.deviceBytes);
            FrontierPlotPoint pt{p.overhead * costScale, mem * m_memoryScale, {}, {}, false};
            pt.toolTip = tr("Exact optimum: %1 on the device, %2").arg(memoryText(mem), costText(p.overhead))
                         + QLatin1Char('\n') + fatesText(p.fates) + sameAs(mem, p.overhead);
            data.frontier.push_back(std::move(pt));
        }
    }
}

void FrontierView::addSettingMarkers(FrontierPlotData &data, double costScale) const
{
    const bool chain = m_planner == Planner::Chain;
    for (std::size_t m = 0; m < m_markers.size(); ++m) {
        const SettingMarker &marker = m_markers[m];
        const SettingPoint &s = m_settings[std::size_t(marker.settings.front())];
        FrontierPlotPoint pt{s.cost * costScale, s.memory * m_memoryScale, {}, tagOf(s), marker.beaten};
        QStringList lines;
        lines << settingText(s);
        if (chain)
            lines << (s.checkpoints.size() + 1 == std::size_t(m_chain.layers())
                          ? tr("Every layer's input kept: nothing recomputed under the chain model")
                          : tr("Checkpoints after layers %1").arg(joinNumbers(s.checkpoints)));
        else
            lines << fatesText(s.fates);
        if (marker.settings.size() > 1) {
            QStringList others;
            for (std::size_t i = 1; i < marker.settings.size() && i <= 3; ++i)
                others << toQString(m_settings[std::size_t(marker.settings[i])].label);
            if (marker.settings.size() > 4)
                others << tr("%1 more").arg(marker.settings.size() - 4);
            lines << tr("Same point: %1").arg(others.join(QStringLiteral("; ")));
        }
        if (marker.beaten)
            lines << tr("Another setting has no more memory and no more overhead.");
        lines << (marker.current ? tr("The current plan lands here.") : tr("Click to apply: %1").arg(editText(s.edit)));
        pt.toolTip = lines.join(QLatin1Char('\n'));
        if (marker.current)
            data.currentMarker = int(m);
        data.markers.push_back(std::move(pt));
    }
}

void FrontierView::showCaption()
{
    const bool chain = m_planner == Planner::Chain;
    const Config &config = m_config;
    const QString hw = toQString(config.hardware.name);
    QString caption, explanation;
    if (chain) {
        caption = tr("One micro-batch, one pipeline rank's %1 layers, timed at %2's achieved rates. Chen's chain: "
                     "memory counts layer inputs only. A setting sits at the recompute its plan's step time "
                     "charges.")
                      .arg(m_chain.layers())
                      .arg(hw);
        explanation
            = tr("Chen et al. 2016's model: a layer is one op whose backward needs only its input, so a plan keeps "
                 "checkpoints (layer inputs) and re-runs the forward of each segment but its last layer. What a "
                 "layer saves inside is the per-tensor view's. The exact frontier's recompute is the forward time "
                 "of those layers at the device's achieved rates. A setting's diamond sits at the recompute the "
                 "step time charges its plan, what applying it reproduces: Megatron re-runs a checkpointed group "
                 "whole, its last layer too, so every full uniform k re-runs every layer, and block k a chunk's "
                 "first k.");
        if (m_chainCapped)
            caption += QLatin1Char(' ')
                       + tr("Exact frontier skipped above %1 layers per rank (it takes seconds); only the settings are "
                            "drawn.")
                             .arg(kMaxExactChainLayers);
    } else {
        caption
            = tr("One %1 layer, one micro-batch, %2 on %3%4; overhead = (recompute + stalls) / (forward + backward).")
                  .arg(config.model.isMoe() || config.model.multi_latent_attention ? tr("dense GPT")
                                                                                   : tr("transformer"))
                  .arg(m_cost == TensorCost::Roofline ? tr("achieved rates") : tr("FLOPs at peak"))
                  .arg(hw)
                  .arg(m_frontierOffload ? tr(" (%1 GB/s host link)").arg(m_graph.linkBytesPerS / kGB, 0, 'f', 0)
                                         : QString());
        explanation
            = tr("The graph of the 13 tensors a GPT layer saves (Korthikanti et al. 2022's accounting): each is "
                 "stored, recomputed from its "
                 "inputs once, or offloaded (its copies hide under the layer's forward and backward, the excess "
                 "stalls). FLOPs at peak ignore memory traffic and so under-price softmax and dropout.");
        if (config.strategy.activation_offload != OffloadTarget::None && !m_frontierOffload)
            caption += QLatin1Char(' ') + tr("The current plan offloads activations: allow offload to place it.");
    }
    m_caption->setText(caption);
    m_caption->setToolTip(explanation);
}

void FrontierView::onMarkerClicked(int index)
{
    if (index < 0 || index >= int(m_markers.size()))
        return;
    const SettingMarker &marker = m_markers[std::size_t(index)];
    const SettingPoint &s = m_settings[std::size_t(marker.settings.front())];
    if (marker.current) {
        m_details->setText(tr("%1: the current plan lands here, nothing to apply.").arg(settingText(s)));
        return;
    }
    const QString label = toQString(s.label);
    m_details->setText(tr("Applied %1: %2.").arg(settingText(s), editText(s.edit)));
    applyPlan(applySetting(m_document->config(), s.edit), m_planner == Planner::Chain
                                                              ? tr("Apply %1 from the chain frontier").arg(label)
                                                              : tr("Apply %1 from the tensor frontier").arg(label));
}

void FrontierView::onFrontierPointClicked(int index)
{
    const bool chain = m_planner == Planner::Chain;
    const int count = chain ? int(m_chainFrontier.size()) : int(m_tensorFrontier.size());
    if (index < 0 || index >= count)
        return;
    m_plot->setSelectedFrontierPoint(index);
    const double memory
        = chain ? m_chainFrontier[std::size_t(index)].peak : double(m_tensorFrontier[std::size_t(index)].deviceBytes);
    const double cost
        = chain ? m_chainFrontier[std::size_t(index)].recompute : m_tensorFrontier[std::size_t(index)].overhead;
    QString text = tr("Exact optimum: %1, %2.").arg(memoryText(memory), costText(cost)) + QLatin1Char(' ');
    if (chain) {
        const ChainPlan &p = m_chainFrontier[std::size_t(index)];
        text += p.checkpoints.empty() ? tr("No checkpoint.")
                                      : tr("Checkpoints after layers %1.").arg(joinNumbers(p.checkpoints));
    } else {
        // Every tensor-frontier point is a preset: apply it.
        const std::vector<Fate> fates = m_tensorFrontier[std::size_t(index)].fates;
        text += fatesText(fates).replace(QLatin1Char('\n'), QStringLiteral(". ")) + QLatin1Char('.');
        const Config applied = withTensorPlan(m_document->config(), m_graph, fates);
        m_chosenFates = fates;
        if (m_exportButton)
            m_exportButton->setEnabled(true);
        if (applied == m_document->config()) {
            m_appliedPlan = applied;
            m_details->setText(text + QLatin1Char('\n') + tr("The current plan is this point."));
            return;
        }
        m_details->setText(tr("Applied as tensor_policies (one undo step): ") + text);
        applyPlan(applied, tr("Apply a per-tensor plan from the tensor frontier"));
        return;
    }
    text += QLatin1Char('\n');
    const int same = markerAt(m_markers, memory, cost);
    if (same >= 0) {
        text += tr("It is the setting %1; click its diamond to apply it.")
                    .arg(toQString(m_settings[std::size_t(m_markers[std::size_t(same)].settings.front())].label));
    } else {
        const int nearest = nearestMarkerAtMost(m_markers, memory);
        text += tr("A preset cannot express this plan. ");
        text += nearest >= 0
                    ? tr("Nearest setting at no more memory: %1; click its diamond to apply it.")
                          .arg(settingText(m_settings[std::size_t(m_markers[std::size_t(nearest)].settings.front())]))
                    : tr("No setting reaches this little memory.");
    }
    m_details->setText(text);
}

bool FrontierView::exportSelectedPoint(const QString &path, QString *error)
{
    if (m_planner != Planner::Tensor || m_chosenFates.empty()) {
        if (error)
            *error = tr("Click a point of the tensor frontier first.");
        return false;
    }
    Config config = withTensorPlan(m_config, m_graph, m_chosenFates);
    config.description
        = tr("Per-tensor plan from the tensor frontier of \"%1\": %2.")
              .arg(toQString(m_config.name), fatesText(m_chosenFates).replace(QLatin1Char('\n'), QStringLiteral(". ")))
              .toStdString();
    const std::string problem = writeFileAtomically(path.toStdString(), presetToText(config));
    if (!problem.empty()) {
        if (error)
            *error = toQString(problem);
        return false;
    }
    return true;
}

void FrontierView::onExportClicked()
{
    const QString path
        = QFileDialog::getSaveFileName(this, tr("Export point as preset"), QString(), tr("MemLedger presets (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    m_details->setText(exportSelectedPoint(path, &error) ? tr("Exported the point to %1.").arg(path)
                                                         : tr("Could not export: %1").arg(error));
}

} // namespace memledger::ui
