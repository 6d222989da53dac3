// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

namespace memledger::ui {

class MainWindow;

// `memledger --bench-ui N`: moves every control of the panel N times and
// measures the time from the value change until the window has repainted:
// event-loop passes until none has work left (the deferred recompute, every
// view's update and what those post in turn), then the frame itself, which
// paints and flushes what changed. Returns the line
// "slider-to-repaint p50 X ms p99 Y ms"; MEMLEDGER_BENCH_DETAIL=1 adds each
// control's worst move and the thread's CPU time on stderr.
QString benchSliders(MainWindow &window, int moves);

} // namespace memledger::ui
