// SPDX-License-Identifier: MIT
#include "ui/planfiles.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QStringList>
#include <QUndoStack>

#include "core/formats/builtins.h"
#include "core/reports/report.h"
#include "ui/document.h"
#include "ui/loadfailure.h"
#include "ui/qtstring.h"

namespace memledger::ui {

namespace {

constexpr int kMaxRecentFiles = 8;
const QString kRecentFilesKey = QStringLiteral("recentFiles");

} // namespace

PlanFiles::PlanFiles(QMainWindow *window, Document *document)
    : QObject(window)
    , m_window(window)
    , m_document(document)
{
    connect(m_document, &Document::sourceChanged, this, &PlanFiles::updateTitle);
    connect(m_document->undoStack(), &QUndoStack::cleanChanged, this, &PlanFiles::updateTitle);
    // Without a file the title is the plan's name, which an edit may change.
    connect(m_document, &Document::problemsChanged, this, &PlanFiles::updateTitle);
    updateTitle();
}

void PlanFiles::addActions(QMenu *file)
{
    file->addAction(tr("&New"), QKeySequence::New, this, [this] {
        if (!maybeSave())
            return;
        m_document->newPlan();
    });
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &PlanFiles::openFile);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    updateRecentMenu();
    file->addAction(tr("&Save"), QKeySequence::Save, this, &PlanFiles::save);
    // Save as and Quit have no standard keys outside GNOME and KDE: the usual ones then.
    QAction *saveAsAction = file->addAction(tr("Save &as…"), this, [this] { saveAs(); });
    saveAsAction->setShortcuts(QKeySequence::keyBindings(QKeySequence::SaveAs).isEmpty()
                                   ? QList<QKeySequence>{QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)}
                                   : QKeySequence::keyBindings(QKeySequence::SaveAs));
    file->addAction(tr("Import &Hugging Face config…"), this, &PlanFiles::importHfConfig);
}

void PlanFiles::addScenarios(QMenu *file)
{
    QMenu *scenarios = file->addMenu(tr("Open &built-in scenario"));
    for (const std::string &name : builtinNames("scenarios")) {
        scenarios->addAction(QString::fromStdString(name), this, [this, name] {
            if (!maybeSave())
                return;
            QString error;
            if (!m_document->loadBuiltinScenario(name, &error))
                showLoadFailure(m_window, tr("Cannot open scenario"), QString::fromStdString(name), error);
        });
    }
}

void PlanFiles::showMessage(const QString &message)
{
    m_window->statusBar()->showMessage(message);
}

void PlanFiles::openFile()
{
    if (!maybeSave())
        return;
    const QString path = m_openChooser ? m_openChooser(m_window)
                                       : QFileDialog::getOpenFileName(m_window, tr("Open preset"), QString(),
                                                                      tr("MemLedger presets (*.json);;All files (*)"));
    if (!path.isEmpty())
        openPath(path);
}

bool PlanFiles::openPath(const QString &path)
{
    QString error;
    if (!m_document->loadFile(path, &error)) {
        showMessage(tr("Could not open %1").arg(path));
        showLoadFailure(m_window, tr("Cannot open preset"), path, error);
        return false;
    }
    rememberRecent(path);
    showMessage(tr("Opened %1").arg(path));
    return true;
}

QString PlanFiles::filePath() const
{
    return m_document->filePath();
}

bool PlanFiles::save()
{
    // A description written for the plan as loaded may quote figures this one no longer has ("micro-batch 2;
    // peak 67.75 GB (fits)" over a plan at micro-batch 4 needing 88 GB): Save asks, through Save as's dialog
    // (the file it writes, the current facts, the old description beside them), rather than write it
    // unchanged. Only the user can tell prose that still holds from figures that do not.
    if (filePath().isEmpty() || descriptionMayBeStale())
        return saveAs();
    return saveTo(filePath());
}

bool PlanFiles::descriptionMayBeStale() const
{
    return m_document->isEditedSinceLoad() && !m_document->config().description.empty();
}

bool PlanFiles::saveAs()
{
    SavePlanDialog dialog(saveSuggestion(), m_window);
    for (;;) {
        if ((m_saveRunner ? m_saveRunner(dialog) : dialog.exec()) != QDialog::Accepted)
            return false;
        const QString path = dialog.path();
        if (path == filePath() || !QFileInfo::exists(path)
            || QMessageBox::question(m_window, tr("Replace the file?"),
                                     tr("%1 already exists. Replace it?").arg(QFileInfo(path).fileName()),
                                     QMessageBox::Yes | QMessageBox::No, QMessageBox::No)
                   == QMessageBox::Yes)
            return saveAs(path, dialog.name(), dialog.description());
    }
}

SavePlanDialog::Suggestion PlanFiles::saveSuggestion() const
{
    const Config &config = m_document->config();
    SavePlanDialog::Suggestion suggestion;
    suggestion.name = QString::fromStdString(config.name);
    suggestion.description = QString::fromStdString(config.description);
    // The header marks an edited plan "(edited)" until it is saved; the mark is no part of its name (a name
    // saved with it, before, read "(edited) (edited)" after the next edit).
    const QString mark = tr(" (edited)");
    while (suggestion.name.endsWith(mark))
        suggestion.name.chop(mark.size());
    if (m_document->isEditedSinceLoad()) {
        // The description was written for the plan as loaded and may quote
        // numbers this one no longer has ("8K-token sequences" at 64K).
        suggestion.previousDescription = suggestion.description;
        suggestion.description = currentFacts();
    }
    const QString file = filePath();
    suggestion.path = !file.isEmpty() && !SavePlanDialog::isShippedPreset(file)
                          ? file
                          : SavePlanDialog::suggestedPath(SavePlanDialog::defaultFolder(), suggestion.name);
    return suggestion;
}

QString PlanFiles::currentFacts() const
{
    const Config &config = m_document->config();
    QString facts = tr("%1, %2-token sequences, micro-batch %3")
                        .arg(toQString(parallelSummary(config)))
                        .arg(config.training.seq_length)
                        .arg(config.training.micro_batch_size);
    const Ledger &ledger = m_document->ledger();
    if (m_document->hasLedger() && !m_document->isStale())
        facts
            += tr("; peak %1 of %2 on %3 (%4)")
                   .arg(bytesText(ledger.peak_bytes), bytesText(ledger.capacity_bytes),
                        QString::fromStdString(config.hardware.name), ledger.fits() ? tr("fits") : tr("does not fit"));
    return facts + QLatin1Char('.');
}

bool PlanFiles::saveAs(const QString &path, const QString &name, const QString &description)
{
    Config named = m_document->config();
    named.name = name.toStdString();
    named.description = description.toStdString();
    if (!(named == m_document->config()))
        m_document->edit(named, tr("Name the plan %1").arg(name));
    return saveTo(path);
}

bool PlanFiles::saveTo(const QString &path)
{
    QString error;
    if (!m_document->saveFile(path, &error)) {
        QMessageBox::warning(m_window, tr("Save failed"), tr("%1\nThe file on disk was left as it was.").arg(error));
        return false;
    }
    m_document->markSaved(path);
    rememberRecent(path);
    showMessage(tr("Saved %1").arg(path));
    return true;
}

bool PlanFiles::maybeSave()
{
    if (m_document->undoStack()->isClean())
        return true;
    const auto answer = QMessageBox::question(
        m_window, tr("Unsaved changes"), tr("The plan has changes that are not saved. Save them first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void PlanFiles::updateTitle()
{
    // Qt's convention: the file's name with a [*] that setWindowModified shows
    // as '*'; the platform appends the application's name ("plan.json* — MemLedger").
    const QString path = filePath();
    m_window->setWindowFilePath(path);
    m_window->setWindowTitle(
        (path.isEmpty() ? QString::fromStdString(m_document->config().name) : QFileInfo(path).fileName())
        + QStringLiteral("[*]"));
    m_window->setWindowModified(!m_document->undoStack()->isClean());
}

void PlanFiles::rememberRecent(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(kRecentFilesKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecentFiles)
        recent.removeLast();
    settings.setValue(kRecentFilesKey, recent);
    updateRecentMenu();
}

void PlanFiles::updateRecentMenu()
{
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(kRecentFilesKey).toStringList();
    for (const QString &path : recent) {
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            if (maybeSave())
                                openPath(path);
                        })
            ->setToolTip(path);
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void PlanFiles::importHfConfig()
{
    if (!maybeSave())
        return;
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Import Hugging Face config"), QString(),
                                                      tr("Hugging Face configs (config.json *.json);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!m_document->importHfConfig(path, &error)) {
        showMessage(tr("Could not import %1").arg(path));
        showLoadFailure(m_window, tr("Cannot import Hugging Face config"), path, error);
        return;
    }
    showMessage(m_document->problems().empty()
                    ? tr("Imported %1").arg(path)
                    : tr("Imported %1; the problems list names what the import could not carry over").arg(path));
}

} // namespace memledger::ui
