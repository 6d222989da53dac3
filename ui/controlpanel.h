// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

#include "core/config.h"

#include <functional>
#include <vector>

class QFormLayout;
class QLabel;

namespace memledger::ui {

class Document;

// A control for every knob of the plan. Each change becomes one edit of the
// document (a drag or a held spin button merges into one undo step); the
// controls follow the document's configuration back, so undo moves them too.
class ControlPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ControlPanel(Document *document, QWidget *parent = nullptr);

    // Every value control in order (the GUI bench moves each of them).
    const std::vector<QWidget *> &controls() const { return m_controls; }

private:
    using Setter = std::function<void(Config &)>;
    using GetInt = std::function<std::int64_t(const Config &)>;
    using SetInt = std::function<void(Config &, std::int64_t)>;
    void edit(const QString &what, int mergeId, const Setter &set);
    void addSpin(QFormLayout *form, const QString &label, int min, int max, GetInt get, SetInt set, const QString &tip = {});
    void addCombo(QFormLayout *form, const QString &label, const QStringList &items, GetInt get, SetInt set,
                  const QString &tip = {});
    void addCheck(QFormLayout *form, const QString &label, GetInt get, SetInt set, const QString &tip = {});
    void addSequenceSlider(QFormLayout *form);
    void addPresetPicker(QFormLayout *form, const QString &label, const char *kind);
    void syncFromConfig();
    QFormLayout *addGroup(const QString &title);

    Document *m_document;
    QLabel *m_gpus;
    std::vector<QWidget *> m_controls;
    std::vector<std::function<void(const Config &)>> m_syncs;
};

} // namespace memledger::ui
