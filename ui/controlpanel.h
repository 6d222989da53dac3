// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>
#include <QStringList>
#include <QWidget>

#include "core/base/problem.h"
#include "core/config/config.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

class QCheckBox;
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
    // Per control, in the same order: the preset field it edits ("parallelism.tensor_model_parallel_size").
    const std::vector<QString> &fieldPaths() const { return m_paths; }
    // The explanation shown under a control while the configuration has an
    // error there (empty and hidden otherwise).
    QString noteOf(const QWidget *control) const;
    // "Keep the GPU count": with it on, an edit of t, p or c moves d so that t·p·c·d stays the count.
    QCheckBox *keepGpusBox() const { return m_keepGpus; }
    // Why the count could not be kept at the last edit; empty when it was (or the box is off).
    QString keepGpusNote() const;
    // Whether the change being applied now is an edit made with one of the controls (not an undo or a load):
    // the memory charts hold their axes through a run of such edits (MainWindow::refreshCurrentView).
    bool appliesControlEdit() const { return m_editedNow >= 0; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void recolorNotes();
    // A note whose error cleared during a run of edits of its control keeps its room and its text, drawn
    // in no color (see showProblems); `blank` false: in the error color.
    void setNoteBlank(QLabel *note, bool blank);
    using Setter = std::function<void(Config &)>;
    using GetInt = std::function<std::int64_t(const Config &)>;
    using SetInt = std::function<void(Config &, std::int64_t)>;
    // How a control reads its value from a configuration and writes one into it.
    struct Access
    {
        GetInt get;
        SetInt set;
    };
    // The access to a field of a section written as is (an integer, a flag or an enumeration):
    // `(config.*Section).*Field`.
    template<auto Section, auto Field>
    static Access plain();
    // One row of the panel's table of controls (controlpanel.cpp): what kind of control, its label, the
    // preset field it edits (its errors are shown under it), its range or items, and its access.
    enum class Kind { Preset, Spin, Combo, Check, Sequence, Layout, GpuCount };
    struct Range
    {
        int min = 0, max = 0;
    };
    struct Spec
    {
        Kind kind;
        QString label;
        const char *field = nullptr;
        Range range = {}; // Spin
        QStringList items = {}; // Combo
        const char *presets = nullptr; // Preset: the built-ins of this kind ("models", "hardware")
        Access access = {};
        QString tip = {};
    };
    struct Group
    {
        QString title;
        std::vector<Spec> controls;
    };
    // The table, a group each: the panel's order, top to bottom.
    static Group modelAndHardware();
    static Group parallelism();
    static Group batchAndPrecision();
    static Group recomputeAndOffload();
    // Adds the control a row describes, and its note under it.
    void add(QFormLayout *form, const Spec &spec);
    // The GPU count t·p·d·c, a line of text under the parallel degrees, and the "keep the GPU count" box with
    // its note (why the count could not be kept).
    void addGpuCount(QFormLayout *form, const QString &label);
    // The pipeline layout: the layers of each virtual stage as text ("7, 8×14, 7"; empty: the even split),
    // applied when the typing is done, and a button that fills in core's balanced layout for p·v stages.
    void addLayoutEditor(QFormLayout *form, const QString &label, const QString &tip);
    // With "keep the GPU count" on, an edit of t, p or c moves d (core's keepGpuCount); the note says why not
    // where it cannot.
    void keepGpuCount(const Config &before, Config &after);
    void setKeepNote(const QString &text);
    // One undo step per edit, except the moves of one continuous drag
    // (`dragging`), which merge into one step named by the final value.
    void edit(const QString &what, int control, const Setter &set, bool dragging = false);
    void addSpin(QFormLayout *form, const QString &label, int min, int max, GetInt get, SetInt set,
                 const QString &tip = {});
    void addCombo(QFormLayout *form, const QString &label, const QStringList &items, GetInt get, SetInt set,
                  const QString &tip = {});
    void addCheck(QFormLayout *form, const QString &label, GetInt get, SetInt set, const QString &tip = {});
    void addSequenceSlider(QFormLayout *form, const QString &label);
    void addRow(QFormLayout *form, const QString &label, QWidget *field);
    void addPresetPicker(QFormLayout *form, const QString &label, const char *kind);
    void syncFromConfig();
    // The preset field the last added control edits; adds its note row below it.
    void fieldOfLast(const QString &path);
    // Errors go under the control whose field they name; the rest (a layer
    // count that no longer divides, a batch that no longer splits) under the
    // control edited last, which is what made them.
    void showProblems(const Problems &problems);
    QFormLayout *addGroup(const QString &title);

    Document *m_document;
    QLabel *m_gpus;
    QCheckBox *m_keepGpus = nullptr;
    QLabel *m_keepNote = nullptr;
    // The count "keep the GPU count" keeps: the plan's, except after an edit that could not keep it, whose
    // parallelism m_unkept holds (the next edit of t, p or c aims at the count from before it again).
    std::int64_t m_keptGpus = 0;
    std::optional<ParallelismConfig> m_unkept;
    std::vector<QWidget *> m_controls;
    std::vector<std::function<void(const Config &)>> m_syncs;
    std::vector<QString> m_paths; // per control: its preset field ("parallelism.tensor_model_parallel_size")
    std::vector<QLabel *> m_notes; // per control: the inline explanation row
    QColor m_noteColor; // the error color of the palette, as recolorNotes last found it
    int m_lastEdited = -1;
    // The control edited from the panel since the last showProblems (-1: none, e.g. an undo):
    // its note keeps its room when its error clears, see showProblems.
    int m_editedNow = -1;
    int m_noteRun = -1; // the control the last showProblems followed an edit of
    int m_drags = 0; // drags begun so far: each is its own merge id
};

} // namespace memledger::ui
