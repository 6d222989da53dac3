// SPDX-License-Identifier: MIT
#pragma once

#include <QObject>
#include <QString>

#include "ui/saveplandialog.h"

#include <functional>

class QMainWindow;
class QMenu;

namespace memledger::ui {

class Document;

// The window's plan files: File > New, Open, Open recent, Save, Save as,
// Import Hugging Face config and the built-in scenarios; asking before
// unsaved edits are lost; and the window's title, which names the file (Qt's
// convention: setWindowFilePath, the file's name and a [*] marker).
// Messages go to the window's status bar, refusals to message boxes.
class PlanFiles : public QObject
{
    Q_OBJECT
public:
    PlanFiles(QMainWindow *window, Document *document);

    // New, Open…, Open recent, Save, Save as…, Import Hugging Face config…, in that order.
    void addActions(QMenu *file);
    // Open built-in scenario.
    void addScenarios(QMenu *file);

    // The preset file the plan was opened from or saved to, the one Save
    // writes; empty for a built-in.
    QString filePath() const;
    // Writes the file the plan came from; without one, or when the plan was
    // edited since its description was written, asks as Save as does.
    bool save();
    bool saveAs();
    // Writes the plan to `path` (what Save as does once a file is chosen); the
    // window names that file from now on.
    bool saveTo(const QString &path);
    // What Save as's dialog starts with: the plan's name, a description that
    // does not quote numbers of the plan as loaded once it was edited, and a
    // file in the user's documents unless the plan has a file of the user's.
    SavePlanDialog::Suggestion saveSuggestion() const;
    // Save as with the name, description and file the dialog gave (the new
    // name and description are one undo step).
    bool saveAs(const QString &path, const QString &name, const QString &description);
    // Opens a preset file (errors in a message box, the plan untouched).
    bool openPath(const QString &path);
    // With unsaved edits, asks to save, discard or cancel; true to go on.
    bool maybeSave();
    // What File > Open asks the user for a file with (QFileDialog by default;
    // tests put a stub here). Returns the chosen path, or empty.
    using FileChooser = std::function<QString(QWidget *parent)>;
    void setOpenFileChooser(FileChooser chooser) { m_openChooser = std::move(chooser); }
    // What runs Save as's dialog and returns its result (exec() by default;
    // tests answer the dialog here).
    using SaveDialogRunner = std::function<int(SavePlanDialog &dialog)>;
    void setSaveDialogRunner(SaveDialogRunner runner) { m_saveRunner = std::move(runner); }

private:
    void openFile();
    void importHfConfig();
    // Puts `path` first in File > Open recent.
    void rememberRecent(const QString &path);
    void updateRecentMenu();
    // The title: the file's name (or the plan's, without a file) and the unsaved-edits marker.
    void updateTitle();
    // The current plan in one line: its parallel degrees, sequence, micro-batch and peak (core's figures).
    QString currentFacts() const;
    void showMessage(const QString &message);
    // The plan was edited since it was loaded or saved, and has a description written before the edits.
    bool descriptionMayBeStale() const;

    QMainWindow *m_window;
    Document *m_document;
    QMenu *m_recentMenu = nullptr;
    FileChooser m_openChooser;
    SaveDialogRunner m_saveRunner;
};

} // namespace memledger::ui
