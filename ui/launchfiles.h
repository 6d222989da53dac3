// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>

#include "core/formats/launchimport.h"

#include <functional>

class QMainWindow;
class QMenu;
class QMimeData;

namespace memledger::ui {

class Document;
class LaunchExportDialog;
class LaunchImportDialog;

// A training framework's launch configuration in and out (issue 33): File >
// Import launch config…, a dropped Megatron-LM .sh, torchtitan .toml or
// DeepSpeed .json (a .json that is neither a preset nor a trace, as the core
// tells), and File > Export > As Megatron-LM arguments… / As torchtitan TOML… /
// As DeepSpeed JSON…. An applied import is one
// edit of the document, so Edit > Undo gives the previous plan back.
class LaunchFiles : public QObject
{
    Q_OBJECT
public:
    LaunchFiles(QMainWindow *window, Document *document);

    void addImportAction(QMenu *file);
    void addExportActions(QMenu *exports);
    // Opens the import dialog, with `path` loaded when given; true when a plan was applied.
    bool importLaunch(const QString &path = {});
    void exportLaunch(LaunchFormat format);

    // What runs the dialogs (exec() by default; tests answer them here).
    using ImportRunner = std::function<int(LaunchImportDialog &dialog)>;
    using ExportRunner = std::function<int(LaunchExportDialog &dialog)>;
    void setImportRunner(ImportRunner runner) { m_importRunner = std::move(runner); }
    void setExportRunner(ExportRunner runner) { m_exportRunner = std::move(runner); }

    // The first local launch config a drag carries (a .sh, a .toml, or a .json the core
    // reads as a DeepSpeed config), or empty.
    static QString launchFileFromMimeData(const QMimeData *mime);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QMainWindow *m_window;
    Document *m_document;
    ImportRunner m_importRunner;
    ExportRunner m_exportRunner;
};

} // namespace memledger::ui
