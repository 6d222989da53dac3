// SPDX-License-Identifier: MIT
#pragma once

class QColor;
class QPalette;

namespace memledger::ui {

// Light or dark palette for the whole application (Fusion style, so the
// palette is honoured on every platform). Charts follow through their own
// setDark(); the painted views read the palette directly.
void applyPalette(bool dark);
// The red of refusals and "does not fit": dark red on a light palette, a
// lighter red that keeps its contrast on a dark one.
QColor errorTextColour(const QPalette &palette);

} // namespace memledger::ui
