// SPDX-License-Identifier: MIT
#include "ui/launchfiles.h"

#include <QAction>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMimeData>
#include <QStatusBar>
#include <QUrl>

#include "ui/document.h"
#include "ui/launchdialogs.h"

namespace memledger::ui {

namespace {

// A DeepSpeed config is a few kilobytes; a .json past this is a profiler
// trace, and is not read on the GUI thread just to be told apart.
constexpr qint64 kMaxConfigBytes = 1 << 20;

bool isLaunchFile(const QString &path)
{
    // A .toml is only ever a torchtitan job config here; the dialog names what is wrong with one that is not.
    if (path.endsWith(QStringLiteral(".sh"), Qt::CaseInsensitive)
        || path.endsWith(QStringLiteral(".toml"), Qt::CaseInsensitive))
        return true;
    if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) || QFileInfo(path).size() > kMaxConfigBytes)
        return false;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    return isDeepSpeedConfigText(file.readAll().toStdString());
}

} // namespace

LaunchFiles::LaunchFiles(QMainWindow *window, Document *document)
    : QObject(window)
    , m_window(window)
    , m_document(document)
    , m_importRunner([](LaunchImportDialog &d) { return d.exec(); })
    , m_exportRunner([](LaunchExportDialog &d) { return d.exec(); })
{
    // Installed after the measured view's filter, so it sees a drop first and
    // passes on what is not a launch config (a trace .json).
    window->installEventFilter(this);
}

void LaunchFiles::addImportAction(QMenu *file)
{
    file->addAction(tr("Import &launch config…"), this, [this] { importLaunch(); })
        ->setToolTip(tr(
            "A Megatron-LM launch script or argument list, a torchtitan TOML job config, or a DeepSpeed JSON config"));
}

void LaunchFiles::addExportActions(QMenu *exports)
{
    // Before the PNG scale submenu, which ChartExport adds last: the exports together, the setting after them.
    QAction *scale = exports->actions().isEmpty() ? nullptr : exports->actions().last();
    auto *megatron = new QAction(tr("As Megatron-LM arguments…"), exports);
    connect(megatron, &QAction::triggered, this, [this] { exportLaunch(LaunchFormat::Megatron); });
    auto *torchtitan = new QAction(tr("As torchtitan TOML…"), exports);
    connect(torchtitan, &QAction::triggered, this, [this] { exportLaunch(LaunchFormat::Torchtitan); });
    auto *deepSpeed = new QAction(tr("As DeepSpeed JSON…"), exports);
    connect(deepSpeed, &QAction::triggered, this, [this] { exportLaunch(LaunchFormat::DeepSpeed); });
    exports->insertSeparator(scale);
    exports->insertActions(scale, {megatron, torchtitan, deepSpeed});
    exports->insertSeparator(scale);
}

bool LaunchFiles::importLaunch(const QString &path)
{
    LaunchImportDialog dialog(m_document->config(), m_window);
    if (!path.isEmpty())
        dialog.loadFile(path);
    if (m_importRunner(dialog) != QDialog::Accepted || !dialog.config())
        return false;
    const QString name = path.isEmpty() ? tr("pasted text") : QFileInfo(path).fileName();
    m_document->edit(*dialog.config(), tr("Import %1").arg(name));
    m_window->statusBar()->showMessage(tr("Imported %1; Edit > Undo gives the previous plan back").arg(name));
    return true;
}

void LaunchFiles::exportLaunch(LaunchFormat format)
{
    LaunchExportDialog dialog(m_document->config(), format, m_window);
    m_exportRunner(dialog);
}

QString LaunchFiles::launchFileFromMimeData(const QMimeData *mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl &url : mime->urls()) {
        if (url.isLocalFile() && isLaunchFile(url.toLocalFile()))
            return url.toLocalFile();
    }
    return {};
}

bool LaunchFiles::eventFilter(QObject *watched, QEvent *event)
{
    if (watched != m_window)
        return false;
    if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
        auto *drag = static_cast<QDragMoveEvent *>(event);
        if (launchFileFromMimeData(drag->mimeData()).isEmpty())
            return false; // perhaps a trace: the measured view decides
        drag->acceptProposedAction();
        return true;
    }
    if (event->type() == QEvent::Drop) {
        auto *drop = static_cast<QDropEvent *>(event);
        const QString path = launchFileFromMimeData(drop->mimeData());
        if (path.isEmpty())
            return false;
        drop->acceptProposedAction();
        importLaunch(path);
        return true;
    }
    return false;
}

} // namespace memledger::ui
