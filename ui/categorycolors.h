// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>

#include "core/ledger.h"

namespace memledger::ui {

// The one palette of the program: a fixed colour per ledger category, used by
// tables, bars, bands and legends alike (DESIGN.md, Views). Colour-blind safe
// (Okabe–Ito), in the fixed category order.
QColor categoryColor(Category category);

// Host DRAM and NVMe use the same hue, lighter.
QColor categoryColor(Category category, Placement placement);

} // namespace memledger::ui
