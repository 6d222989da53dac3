// SPDX-License-Identifier: MIT
#pragma once

namespace memledger::ui {

// Light or dark palette for the whole application (Fusion style, so the
// palette is honoured on every platform). Charts follow through their own
// setDark(); the painted views read the palette directly.
void applyPalette(bool dark);

} // namespace memledger::ui
