// SPDX-License-Identifier: MIT
#pragma once

#include <QImage>
#include <QString>

class QWidget;

namespace memledger::ui {

// Exports of what the window shows. Each returns false with a reason in
// `error` and leaves an existing file as it was when writing fails.

// `widget` drawn at `scale` device pixels per pixel (2: a slide or a paper's
// figure stays sharp), with `caption` (the model and the plan, so an image
// that leaves the program still says what it shows) in a strip under it.
QImage renderImage(QWidget *widget, double scale = 1.0, const QString &caption = {});
// A raster image of `widget` (PNG, or any format Qt can write): renderImage's.
bool exportImage(QWidget *widget, const QString &path, QString *error, double scale = 1.0, const QString &caption = {});
// Vector output of `widget` (QSvgGenerator): real shapes and text, no embedded
// raster, with `caption` as text in a strip under it.
bool exportSvg(QWidget *widget, const QString &path, const QString &title, QString *error, const QString &caption = {});
// `text` written atomically (core's writeFileAtomically): CSV and Markdown exports.
bool exportText(const std::string &text, const QString &path, QString *error);

} // namespace memledger::ui
