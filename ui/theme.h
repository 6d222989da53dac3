// SPDX-License-Identifier: MIT
#pragma once

class QColor;
class QPalette;

namespace memledger::ui {

// Light or dark palette for the whole application (Fusion style, so the
// palette is honoured on every platform). Charts follow through their own
// setDark(); the painted views read the palette directly.
void applyPalette(bool dark);
// The one red of refusals, "does not fit" and the lines and marks that say
// so: dark red on a light background, a lighter red that keeps its contrast
// on a dark one. Charts pass their own theme's darkness; widgets their palette.
QColor errorColor(bool dark);
QColor errorTextColor(const QPalette &palette);
// A figure that agrees (a model within its target of a measurement): green,
// lighter on a dark palette.
QColor goodTextColor(const QPalette &palette);
// A figure that disagrees enough to look into, but is no refusal: amber, lighter on a dark palette.
QColor warningTextColor(const QPalette &palette);
// The measured curve drawn over the modelled one: a hue no category uses
// (categorycolors.cpp is Okabe–Ito): violet, lighter on a dark palette.
QColor measuredColor(const QPalette &palette);
// Text drawn on a `fill` (a label inside a bar): white or near-black,
// whichever has the higher WCAG 2 contrast ratio against it (white text
// on the Okabe–Ito orange or yellow reads at about 2:1).
QColor textColorOn(const QColor &fill);
// WCAG 2's contrast ratio of two colors, 1 to 21 (tests check text against this).
double contrastRatio(const QColor &a, const QColor &b);

} // namespace memledger::ui
