// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

class QMessageBox;
class QWidget;

namespace memledger::ui {

// "<file> could not be loaded; nothing was changed", the problems under it
// and, when they are many, behind "Show Details" so the box stays on screen.
// Every refused load says so this way: a preset, a deck, a Hugging Face
// config, a measured trace.
QMessageBox *loadFailureBox(QWidget *parent, const QString &title, const QString &path, const QString &error);
// The same box, shown modally: returns once it is closed.
void showLoadFailure(QWidget *parent, const QString &title, const QString &path, const QString &error);

} // namespace memledger::ui
