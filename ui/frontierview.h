// SPDX-License-Identifier: MIT
#pragma once

#include <QString>
#include <QWidget>

#include "core/config/config.h"
#include "core/planner/chain.h"
#include "core/planner/settingspoints.h"
#include "core/planner/tensorplan.h"

#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace memledger::ui {

struct FrontierPlotData;

class Document;
class FrontierPlot;

// A planner's frontier for the document's configuration: memory against
// recompute time, the exact frontier as a step line, the settings a preset can
// express as diamonds with the current plan ringed. Clicking a diamond applies
// its setting as one undoable edit. On the tensor frontier every point is a
// preset (strategy.tensor_policies): clicking it applies it as one undoable
// edit, and "Export point as preset…" writes it to a file. On the chain
// frontier a point no setting reaches only shows its plan and names the
// nearest setting at no more memory.
//
// Chain: checkpointing one pipeline rank's layers (frontierDP on
// chainFromConfig), peak bytes against recompute seconds for one micro-batch.
// Tensor: store / recompute / offload / quantise per tensor of one layer
// (tensorFrontier on layerGraph), device bytes against the time overhead,
// under the roofline or the FLOPs-only cost model, with or without offload and
// fp8, above a table of the current plan's saved tensors and their fates.
//
// It recomputes on the document's ledgerChanged only while visible, and
// otherwise once when next shown; a frontier whose chain or layer graph did
// not change is kept.
class FrontierView : public QWidget
{
    Q_OBJECT
public:
    enum class Planner { Chain, Tensor };
    // Above this many layers per rank the exact chain programme takes seconds
    // (measured 130 ms at 126 layers, 1.6 s at 256): only the settings are drawn.
    static constexpr int kMaxExactChainLayers = 128;

    FrontierView(Document *document, Planner planner, QWidget *parent = nullptr);

    Planner planner() const { return m_planner; }
    // Tensor planner only.
    void setCostModel(TensorCost cost);
    TensorCost costModel() const { return m_cost; }
    void setOffload(bool offload);
    bool offload() const { return m_offload; }
    void setQuantize(bool quantize);
    bool quantize() const { return m_quantize; }
    // The selected tensor-frontier point as a complete preset; false with a
    // message when none is selected or the file cannot be written.
    bool exportSelectedPoint(const QString &path, QString *error);
    // The tensor table: one row per saved tensor of the current plan's layer.
    QTableWidget *tensorTable() const { return m_tensorTable; }

    // What is drawn, in core's units (for tests and the owner).
    const std::vector<ChainPlan> &chainFrontier() const { return m_chainFrontier; }
    const std::vector<TensorPlan> &tensorFrontier() const { return m_tensorFrontier; }
    const std::vector<SettingPoint> &settings() const { return m_settings; }
    const std::vector<SettingMarker> &markers() const { return m_markers; }
    // The marker a setting is drawn in (-1: left out, beaten by another).
    int markerOf(const std::string &settingLabel) const;
    FrontierPlot *plot() const { return m_plot; }
    QString caption() const;
    QString details() const;
    // How many times the frontier itself was computed (cached otherwise).
    int frontierComputations() const { return m_frontierComputations; }
    bool isStale() const { return m_stale; }

protected:
    void showEvent(QShowEvent *event) override;

private:
    void onLedgerChanged();
    // Applies a clicked point or diamond as one undoable edit, and remembers
    // the plan it made: the details and the selected point speak of it.
    void applyPlan(const Config &plan, const QString &undoText);
    QString hintText() const;
    void refresh();
    void computeChain();
    void computeTensor();
    void rebuildPlot();
    // What rebuildPlot draws: the exact frontier's points, the settings' diamonds (costs scaled to the plot's
    // unit), and the caption above the plot with its explanation.
    void addFrontierPoints(FrontierPlotData &data, double costScale) const;
    void addSettingMarkers(FrontierPlotData &data, double costScale) const;
    void showCaption();
    void onMarkerClicked(int index);
    void onFrontierPointClicked(int index);
    void onExportClicked();
    void fillTensorTable();
    QString settingText(const SettingPoint &s) const;
    QString memoryText(double bytes) const;
    QString costText(double cost) const;
    QString fatesText(const std::vector<Fate> &fates) const;

    Document *m_document;
    Planner m_planner;
    TensorCost m_cost = TensorCost::Roofline;
    bool m_offload = false;
    Config m_config;
    bool m_hasConfig = false;
    bool m_stale = true;

    Chain m_chain;
    std::vector<ChainPlan> m_chainFrontier;
    bool m_chainCapped = false;
    LayerGraph m_graph;
    std::vector<TensorPlan> m_tensorFrontier;
    bool m_haveFrontier = false;
    TensorCost m_frontierCost = TensorCost::Roofline;
    bool m_frontierOffload = false;
    bool m_quantize = false;
    bool m_frontierQuantize = false;
    std::vector<Fate> m_chosenFates; // the tensor-frontier point last clicked (empty: none)
    std::optional<Config> m_appliedPlan; // the plan the last click applied, while it is the document's
    bool m_applying = false; // inside applyPlan's edit
    std::vector<SettingPoint> m_settings;
    std::vector<SettingMarker> m_markers;
    int m_frontierComputations = 0;
    double m_memoryScale = 1e-6; // bytes to the display unit
    QString m_memoryUnit;

    QComboBox *m_costCombo = nullptr;
    QCheckBox *m_offloadBox = nullptr;
    QCheckBox *m_quantizeBox = nullptr;
    QPushButton *m_exportButton = nullptr;
    QTableWidget *m_tensorTable = nullptr;
    QLabel *m_caption;
    FrontierPlot *m_plot;
    QLabel *m_details;
};

} // namespace memledger::ui
