// SPDX-License-Identifier: MIT
#include "ui/helpmenu.h"

#include <QAction>
#include <QApplication>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeySequence>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>

namespace memledger::ui {

HelpMenu::HelpMenu(QMainWindow *window)
    : QObject(window)
    , m_window(window)
{
    QMenu *help = window->menuBar()->addMenu(tr("&Help"));
    QAction *keys = help->addAction(tr("&Keyboard shortcuts"), this, &HelpMenu::showShortcuts);
    keys->setShortcut(QKeySequence(Qt::Key_F1));
    help->addAction(tr("&Documentation"), this, &HelpMenu::showDocumentation);
    help->addSeparator();
    help->addAction(tr("&About MemLedger"), this, &HelpMenu::showAbout)->setMenuRole(QAction::AboutRole);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

void HelpMenu::showShortcuts()
{
    if (!m_shortcuts) {
        m_shortcuts = new QDialog(m_window);
        m_shortcuts->setObjectName(QStringLiteral("shortcuts"));
        m_shortcuts->setWindowTitle(tr("Keyboard shortcuts"));
        auto *table = new QTableWidget(0, 2, m_shortcuts);
        table->setHorizontalHeaderLabels({tr("Keys"), tr("What they do")});
        table->verticalHeader()->hide();
        table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        table->setSelectionMode(QAbstractItemView::NoSelection);
        table->setAlternatingRowColors(true);
        table->horizontalHeader()->setStretchLastSection(true);
        const auto add = [table](const QString &keys, const QString &what) {
            const int row = table->rowCount();
            table->insertRow(row);
            table->setItem(row, 0, new QTableWidgetItem(keys));
            table->setItem(row, 1, new QTableWidgetItem(what));
        };
        // Every menu command with a shortcut, in menu order, as the menus name it.
        std::function<void(QMenu *, const QString &)> walk = [&](QMenu *menu, const QString &path) {
            for (QAction *action : menu->actions()) {
                const QString text = action->text().remove(QLatin1Char('&'));
                if (action->menu())
                    walk(action->menu(), path + text + QStringLiteral(" › "));
                else if (!action->shortcut().isEmpty())
                    add(action->shortcut().toString(QKeySequence::NativeText), path + text);
            }
        };
        for (QAction *top : m_window->menuBar()->actions())
            if (top->menu())
                walk(top->menu(), top->text().remove(QLatin1Char('&')) + QStringLiteral(" › "));
        add(tr("Wheel, + and −"), tr("Lifetimes: zoom in and out around the cursor"));
        add(tr("Drag, ← and →"), tr("Lifetimes: pan along the iteration"));
        add(tr("Double-click, 0"), tr("Lifetimes: show the whole iteration again"));
        add(tr("→, Page Down, Space"), tr("Talk mode: next slide"));
        add(tr("←, Page Up, Backspace"), tr("Talk mode: previous slide"));
        add(tr("Esc"), tr("Talk mode: leave, back to your plan as it was"));
        table->resizeColumnsToContents();
        auto *layout = new QVBoxLayout(m_shortcuts);
        layout->addWidget(table);
        auto *close = new QDialogButtonBox(QDialogButtonBox::Close, m_shortcuts);
        connect(close, &QDialogButtonBox::rejected, m_shortcuts, &QDialog::close);
        layout->addWidget(close);
        m_shortcuts->resize(table->horizontalHeader()->length() + 60,
                            std::min(700, table->verticalHeader()->length() + 120));
    }
    m_shortcuts->show();
    m_shortcuts->raise();
    m_shortcuts->activateWindow();
}

void HelpMenu::showAbout()
{
    QString version = QCoreApplication::applicationVersion();
#ifdef MEMLEDGER_VERSION
    if (version.isEmpty())
        version = QStringLiteral(MEMLEDGER_VERSION);
#endif
    auto *box = new QMessageBox(QMessageBox::NoIcon, tr("About MemLedger"),
                                tr("<h3>MemLedger %1</h3>"
                                   "<p>Shows where every byte of GPU memory goes when a large model is trained: "
                                   "weights, gradients, optimizer states, activations, communication buffers and "
                                   "the runtime's reserve, per pipeline rank, with the formula behind each.</p>"
                                   "<p>The accounting follows Megatron-LM (Korthikanti et al. 2022, "
                                   "<i>Reducing Activation Recomputation in Large Transformer Models</i>), "
                                   "ZeRO (Rajbhandari et al. 2020) and PyTorch's caching allocator.</p>"
                                   "<p>MIT licence.</p>")
                                    .arg(version.toHtmlEscaped()),
                                QMessageBox::Ok, m_window);
    box->setObjectName(QStringLiteral("about"));
    box->setIconPixmap(m_window->windowIcon().pixmap(64, 64));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QString HelpMenu::documentationFolder()
{
    QStringList folders;
#ifdef MEMLEDGER_DOC_FROM_BIN
    folders << QCoreApplication::applicationDirPath() + QLatin1Char('/') + QStringLiteral(MEMLEDGER_DOC_FROM_BIN);
#endif
#ifdef MEMLEDGER_BUILD_DOC_DIR
    folders << QStringLiteral(MEMLEDGER_BUILD_DOC_DIR);
#endif
    for (const QString &folder : folders)
        if (QFileInfo::exists(folder + QStringLiteral("/README.md")))
            return QDir(folder).canonicalPath();
    return {};
}

QStringList HelpMenu::guides()
{
    const QString folder = documentationFolder();
    if (folder.isEmpty())
        return {};
    const QDir dir(folder);
    QStringList files{dir.filePath(QStringLiteral("README.md"))};
    for (const QString &name : QDir(dir.filePath(QStringLiteral("docs"))).entryList({QStringLiteral("*.md")}))
        files << dir.filePath(QStringLiteral("docs/") + name);
    if (dir.exists(QStringLiteral("presets/README.md")))
        files << dir.filePath(QStringLiteral("presets/README.md"));
    return files;
}

namespace {

// A guide's first heading ("# The time model"), else its file name.
QString guideTitle(const QString &path)
{
    QFile file(path);
    if (file.open(QIODevice::ReadOnly | QIODevice::Text))
        for (int line = 0; line < 5 && !file.atEnd(); ++line) {
            const QString text = QString::fromUtf8(file.readLine()).trimmed();
            if (text.startsWith(QStringLiteral("# ")))
                return text.mid(2);
        }
    return QFileInfo(path).fileName();
}

} // namespace

void HelpMenu::showDocumentation()
{
    const QString folder = documentationFolder();
    QStringList links;
    for (const QString &file : guides())
        links << QStringLiteral("<a href='%1'>%2</a> (%3)")
                     .arg(QUrl::fromLocalFile(file).toString(), guideTitle(file).toHtmlEscaped(),
                          QDir(folder).relativeFilePath(file).toHtmlEscaped());
    QString text = tr("<p>MemLedger's guides are Markdown files: the README (the views, the presets, the command "
                      "line) and the docs folder (how the ledger is built, how measured runs are compared).</p>");
    text += links.isEmpty()
                ? tr("<p>They are not installed beside this program: <tt>cmake --install</tt> puts them in "
                     "share/doc/memledger.</p>")
                : QStringLiteral("<p>") + links.join(QStringLiteral("<br>")) + QStringLiteral("</p><p>")
                      + tr("In %1").arg(QDir::toNativeSeparators(folder).toHtmlEscaped()) + QStringLiteral("</p>");
    auto *box = new QMessageBox(QMessageBox::Information, tr("Documentation"), text, QMessageBox::Ok, m_window);
    box->setObjectName(QStringLiteral("documentation"));
    box->setTextFormat(Qt::RichText);
    box->setTextInteractionFlags(Qt::TextBrowserInteraction);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace memledger::ui
