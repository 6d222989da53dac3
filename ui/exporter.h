// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

class QWidget;

namespace memledger::ui {

// Exports of what the window shows. Each returns false with a reason in
// `error` and leaves an existing file as it was when writing fails.

// A raster image of `widget` at its current size (PNG, or any format Qt can write).
bool exportImage(QWidget *widget, const QString &path, QString *error);
// Vector output of `widget` (QSvgGenerator): real shapes and text, no embedded raster.
bool exportSvg(QWidget *widget, const QString &path, const QString &title, QString *error);
// `text` written atomically (core's writeFileAtomically): CSV and Markdown exports.
bool exportText(const std::string &text, const QString &path, QString *error);

} // namespace memledger::ui
