// SPDX-License-Identifier: MIT
#include "ui/benchui.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QSlider>
#include <QSpinBox>

#include "core/stats.h"
#include "ui/controlpanel.h"
#include "ui/mainwindow.h"

#include <vector>

namespace memledger::ui {

namespace {

// One move of a control: up and back down again on alternate calls, so the
// plan stays near the preset (and mostly valid) however many moves are made.
void nudge(QWidget *control, int move)
{
    const int delta = move % 2 == 0 ? 1 : -1;
    if (auto *spin = qobject_cast<QSpinBox *>(control))
        spin->setValue(spin->value() + (spin->value() + delta > spin->maximum() ? -delta : delta));
    else if (auto *slider = qobject_cast<QSlider *>(control))
        slider->setValue(slider->value() + (slider->value() + delta > slider->maximum() ? -delta : delta));
    else if (auto *check = qobject_cast<QCheckBox *>(control))
        check->toggle();
    else if (auto *combo = qobject_cast<QComboBox *>(control)) {
        const int next = (combo->currentIndex() + (delta > 0 ? 1 : combo->count() - 1)) % combo->count();
        combo->setCurrentIndex(next);
        Q_EMIT combo->activated(next); // what a user's pick emits; setCurrentIndex alone does not
    }
}

} // namespace

QString benchSliders(MainWindow &window, int moves)
{
    std::vector<double> samples;
    QElapsedTimer timer;
    for (QWidget *control : window.controlPanel()->controls()) {
        for (int i = 0; i < moves; ++i) {
            timer.start();
            nudge(control, i);
            QApplication::processEvents(); // the coalesced recompute and the views' updates
            window.repaint();              // and their paint, synchronously
            samples.push_back(double(timer.nsecsElapsed()) / 1e6);
        }
    }
    return QStringLiteral("slider-to-repaint p50 %1 ms p99 %2 ms")
        .arg(percentile(samples, 0.50), 0, 'f', 2)
        .arg(percentile(samples, 0.99), 0, 'f', 2);
}

} // namespace memledger::ui
