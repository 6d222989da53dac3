// SPDX-License-Identifier: MIT
#include "ui/loadfailure.h"

#include <QFileInfo>
#include <QMessageBox>

#include <memory>

namespace memledger::ui {

QMessageBox *loadFailureBox(QWidget *parent, const QString &title, const QString &path, const QString &error)
{
    auto *box
        = new QMessageBox(QMessageBox::Warning, title,
                          QObject::tr("%1 could not be loaded; nothing was changed.").arg(QFileInfo(path).fileName()),
                          QMessageBox::Ok, parent);
    // A long list of problems goes behind "Show Details" so the box stays on screen.
    constexpr int kShownLines = 8;
    if (error.count(QLatin1Char('\n')) >= kShownLines) {
        box->setInformativeText(error.section(QLatin1Char('\n'), 0, kShownLines - 1) + QStringLiteral("\n…"));
        box->setDetailedText(error);
    } else {
        box->setInformativeText(error);
    }
    return box;
}

void showLoadFailure(QWidget *parent, const QString &title, const QString &path, const QString &error)
{
    std::unique_ptr<QMessageBox> box(loadFailureBox(parent, title, path, error));
    box->exec();
}

} // namespace memledger::ui
