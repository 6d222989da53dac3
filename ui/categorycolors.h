// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>

#include "core/ledger/ledger.h"
#include "core/serving/inference.h"

namespace memledger::ui {

// The one palette of the program: a fixed color per ledger category, used by
// tables, bars, bands and legends alike (docs/architecture.md). Color-blind safe
// (Okabe–Ito), in the fixed category order.
QColor categoryColor(Category category);

// Host DRAM and NVMe use the same hue, lighter.
QColor categoryColor(Category category, Placement placement);

// The serving ledger's categories (core/serving/inference.h): weights, activations and
// the runtime reserve share the training hues; the KV cache, which training
// does not have, gets its own (Okabe–Ito yellow, a darker gold on a dark
// palette so it keeps its contrast there too).
QColor kvCacheColor(bool dark = false);
QColor inferenceCategoryColor(InferenceCategory category, bool dark = false);

} // namespace memledger::ui
