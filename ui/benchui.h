// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

namespace memledger::ui {

class MainWindow;

// `memledger --bench-ui N`: moves every control of the panel N times and
// measures the time from the value change until the window has repainted
// (the deferred recompute, every view's update and a synchronous paint).
// Returns the line "slider-to-repaint p50 X ms p99 Y ms".
QString benchSliders(MainWindow &window, int moves);

} // namespace memledger::ui
