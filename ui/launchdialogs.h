// SPDX-License-Identifier: MIT
#pragma once

#include <QDialog>

#include "core/config/config.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"

#include <functional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace memledger::ui {

// File > Import launch config (issue 33): a Megatron-LM launch script or
// argument list, a torchtitan TOML job config or a DeepSpeed JSON config,
// chosen as a file or pasted (pasted TOML is told by its tables). The
// core import (core/formats/launchimport.h) runs on every change, and its
// problems, notes and unused arguments are listed before anything is applied,
// in the core's words: an error names the argument or key and disables Apply.
// What the file does not give comes from the current plan: DeepSpeed's model
// (unless another built-in model is chosen; for torchtitan one chosen replaces
// the file's flavor) and the world size.
class LaunchImportDialog : public QDialog
{
    Q_OBJECT
public:
    explicit LaunchImportDialog(const Config &current, QWidget *parent = nullptr);

    // Reads `path` into the text box; false (with the reason listed) when it cannot be read.
    bool loadFile(const QString &path);
    void setText(const QString &text);
    // 0: the file's model, else the current plan's; otherwise a built-in model's name.
    void setModel(const QString &name);
    // The imported plan, when there is no error.
    const std::optional<Config> &config() const { return m_result.config; }
    const LaunchImport &imported() const { return m_result; }
    // Each line as listed: "Error: …", "Warning: …", "Note: …", "Unused: …".
    QStringList reportLines() const;
    QPushButton *applyButton() const { return m_apply; }
    QPlainTextEdit *textEdit() const { return m_text; }
    QComboBox *modelCombo() const { return m_model; }
    QSpinBox *gpusSpin() const { return m_gpus; }

    // What Choose file… asks with (QFileDialog by default; tests put a stub here).
    using FileChooser = std::function<QString(QWidget *parent)>;
    void setFileChooser(FileChooser chooser) { m_chooser = std::move(chooser); }

private:
    void chooseFile();
    void reimport();
    void showResult();
    LaunchOptions options() const;

    Config m_current;
    QString m_path;
    LaunchImport m_result;
    QLabel *m_file;
    QPlainTextEdit *m_text;
    QComboBox *m_model;
    QSpinBox *m_gpus;
    QCheckBox *m_replaceGpus;
    QLabel *m_summary;
    QListWidget *m_report;
    QPushButton *m_apply;
    FileChooser m_chooser;
};

// File > Export > As Megatron-LM arguments / As torchtitan TOML / As DeepSpeed JSON (issue 33):
// the core export's text (core/formats/launchexport.h), read-only, with Copy
// and Save… (through QSaveFile, as every save of the program).
class LaunchExportDialog : public QDialog
{
    Q_OBJECT
public:
    LaunchExportDialog(const Config &config, LaunchFormat format, QWidget *parent = nullptr);

    QString text() const;
    QPushButton *copyButton() const { return m_copy; }
    QPushButton *saveButton() const { return m_save; }
    using FileChooser = std::function<QString(QWidget *parent)>;
    void setFileChooser(FileChooser chooser) { m_chooser = std::move(chooser); }
    // Writes the text to `path`; false with `error` when it could not be.
    bool saveTo(const QString &path, QString *error = nullptr) const;

private:
    void save();

    LaunchFormat m_format;
    LaunchExport m_export;
    QPlainTextEdit *m_text;
    QPushButton *m_copy;
    QPushButton *m_save;
    FileChooser m_chooser;
};

} // namespace memledger::ui
