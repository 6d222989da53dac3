// SPDX-License-Identifier: MIT
// The control panel is built from a table of control specs (controlpanel.cpp):
// the panel has every row of it in order, and each row's control writes the
// configuration and reads back what it wrote, and an undo gives both back.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSlider>
#include <QSpinBox>
#include <QUndoStack>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "ui/controlpanel.h"
#include "ui/document.h"

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

using namespace memledger;
using namespace memledger::ui;

namespace {

// What a control shows, whatever its kind.
int valueOf(const QWidget *control)
{
    if (auto *spin = qobject_cast<const QSpinBox *>(control))
        return spin->value();
    if (auto *combo = qobject_cast<const QComboBox *>(control))
        return combo->currentIndex();
    if (auto *check = qobject_cast<const QCheckBox *>(control))
        return check->isChecked() ? 1 : 0;
    if (auto *slider = qobject_cast<const QSlider *>(control))
        return slider->value();
    if (auto *line = qobject_cast<const QLineEdit *>(control))
        return static_cast<int>(qHash(line->text()));
    return -1;
}

// Moves a control one step as a user would (a spin's arrow, a combo's next item, a click, a slider's step):
// returns the value it was moved to.
int step(QWidget *control)
{
    if (auto *spin = qobject_cast<QSpinBox *>(control)) {
        spin->stepUp();
        return spin->value();
    }
    if (auto *combo = qobject_cast<QComboBox *>(control)) {
        // A preset picker's last item, "(from the preset)", is what it shows for a plan no built-in matches: not a
        // pick.
        const bool picker = combo->itemText(combo->count() - 1) == QStringLiteral("(from the preset)");
        const int next = (combo->currentIndex() + 1) % (combo->count() - (picker ? 1 : 0));
        combo->setCurrentIndex(next);
        Q_EMIT combo->activated(next);
        return next;
    }
    if (auto *check = qobject_cast<QCheckBox *>(control)) {
        check->toggle();
        return check->isChecked() ? 1 : 0;
    }
    if (auto *line = qobject_cast<QLineEdit *>(control)) {
        // The pipeline layout: another layout typed and applied (Return), the one the panel names as the other.
        const QString other = line->property("otherLayout").toString();
        REQUIRE(other != line->text());
        line->setText(other);
        Q_EMIT line->editingFinished();
        return valueOf(line);
    }
    auto *slider = qobject_cast<QSlider *>(control);
    REQUIRE(slider != nullptr);
    slider->setValue(slider->value() == slider->maximum() ? slider->value() - 1 : slider->value() + 1);
    return slider->value();
}

// The value at a preset field's path ("training.seq_length", or a whole section: "model"); null when absent.
nlohmann::json at(const nlohmann::json &doc, const QString &path)
{
    const nlohmann::json *node = &doc;
    for (const QString &key : path.split(QLatin1Char('.'))) {
        const std::string k = key.toStdString();
        if (!node->is_object() || !node->contains(k))
            return nullptr;
        node = &(*node)[k];
    }
    return *node;
}

} // namespace

TEST_CASE("The control panel has every row of its table, in order", "[ui][controls]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    ControlPanel panel(&document);
    QStringList names;
    for (const QWidget *control : panel.controls())
        names << control->accessibleName();
    CHECK(names
          == QStringList{QStringLiteral("Model"),
                         QStringLiteral("GPU"),
                         QStringLiteral("Tensor (t)"),
                         QStringLiteral("Pipeline (p)"),
                         QStringLiteral("Virtual stages (v)"),
                         QStringLiteral("Data (d)"),
                         QStringLiteral("Context (c)"),
                         QStringLiteral("Expert (e)"),
                         QStringLiteral("MoE dispatch"),
                         QStringLiteral("Sequence parallel"),
                         QStringLiteral("ZeRO stage"),
                         QStringLiteral("HSDP shard group"),
                         QStringLiteral("FSDP reshard"),
                         QStringLiteral("FSDP root unit"),
                         QStringLiteral("Schedule"),
                         QStringLiteral("Pipeline layout"),
                         QStringLiteral("Micro-batch (b)"),
                         QStringLiteral("Sequence (s)"),
                         QStringLiteral("Global batch"),
                         QStringLiteral("Weights"),
                         QStringLiteral("FP8 recipe"),
                         QStringLiteral("Gradients"),
                         QStringLiteral("fp32 parameters"),
                         QStringLiteral("fp32 master weights"),
                         QStringLiteral("Optimizer"),
                         QStringLiteral("Optimizer states"),
                         QStringLiteral("Framework"),
                         QStringLiteral("torch.compile"),
                         QStringLiteral("Recompute"),
                         QStringLiteral("Method"),
                         QStringLiteral("Recompute layers"),
                         QStringLiteral("FlashAttention"),
                         QStringLiteral("Optimizer offload"),
                         QStringLiteral("Gradient offload"),
                         QStringLiteral("Parameter offload"),
                         QStringLiteral("Activation offload"),
                         QStringLiteral("Balance activations")});
}

TEST_CASE("Each row of the control table writes the plan and reads back what it wrote", "[ui][controls][undo]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(kDefaultScenario));
    ControlPanel panel(&document);
    // The rows whose edit brings another field along, as the table's setters say.
    const std::map<QString, QStringList> brings = {
        {QStringLiteral("Virtual stages (v)"), {QStringLiteral("Schedule")}},
        {QStringLiteral("Schedule"), {QStringLiteral("Virtual stages (v)")}},
        // ZeRO-Offload's gradients go with the optimizer step on the host (core's setGradOffload).
        {QStringLiteral("Gradient offload"), {QStringLiteral("Optimizer offload")}},
        {QStringLiteral("Optimizer offload"), {QStringLiteral("Gradient offload")}},
        // A framework brings its defaults (core's withFrameworkDefaults): torchtitan's fp32 parameters.
        {QStringLiteral("Framework"), {QStringLiteral("fp32 parameters")}},
    };
    const std::vector<QWidget *> &controls = panel.controls();
    REQUIRE(panel.fieldPaths().size() == controls.size());
    for (std::size_t c = 0; c < controls.size(); ++c) {
        QWidget *control = controls[c];
        const QString name = control->accessibleName();
        const QString path = panel.fieldPaths()[c];
        INFO(name.toStdString() << " edits " << path.toStdString());
        const Config before = document.config();
        std::vector<int> others;
        for (const QWidget *other : controls)
            others.push_back(valueOf(other));
        const int shown = valueOf(control);
        const int moved = step(control);
        REQUIRE(moved != shown);
        QApplication::processEvents(); // the edit is applied at the next pass
        CHECK_FALSE(document.config() == before);
        // The field the row names (where its errors are shown) is the one the edit changed in the preset file.
        CHECK(at(presetToJson(document.config()), path) != at(presetToJson(before), path));
        // The panel follows the document back (syncFromConfig): what the row's getter reads of what its
        // setter wrote is the value the control was moved to, and the row wrote its own field: no other
        // control shows another value, but those its setter brings along.
        CHECK(valueOf(control) == moved);
        for (std::size_t i = 0; i < controls.size(); ++i) {
            if (controls[i] == control || valueOf(controls[i]) == others[i])
                continue;
            const auto brought = brings.find(name);
            UNSCOPED_INFO("also changed: " << controls[i]->accessibleName().toStdString());
            CHECK((brought != brings.end() && brought->second.contains(controls[i]->accessibleName())));
        }
        document.undoStack()->undo();
        QApplication::processEvents();
        CHECK(document.config() == before);
        CHECK(valueOf(control) == shown);
    }
}
