// SPDX-License-Identifier: MIT
#include "ui/benchui.h"

#include <QAbstractEventDispatcher>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPaintEvent>
#include <QSlider>
#include <QSpinBox>
#include <QStringList>

#include "core/base/stats.h"
#include "ui/controlpanel.h"
#include "ui/mainwindow.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <utility>
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
    } else if (auto *line = qobject_cast<QLineEdit *>(control)) {
        // The pipeline layout: the other layout the panel names (balanced, or the even split), typed and applied.
        line->setText(line->property("otherLayout").toString());
        Q_EMIT line->editingFinished();
    }
}

double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Runs event-loop passes until one finds nothing to do: an edit is applied at
// the next pass, and the views (Qt Charts' scene changes, layouts) post more
// work of their own, all of which a screen shows within the same frame.
void settle()
{
    QAbstractEventDispatcher *dispatcher = QAbstractEventDispatcher::instance();
    for (int pass = 0; pass < 16 && dispatcher->processEvents(QEventLoop::AllEvents); ++pass) { }
}

// One measured move: the edit, what it sets off, and the frame that shows it.
// A function of its own so that a profiler can collect only the moves
// (callgrind --toggle-collect='memledger::ui::*moveAndPaint*'), hence never inlined.
Q_NEVER_INLINE void moveAndPaint(QWidget &window, QWidget *control, int move)
{
    nudge(control, move);
    settle(); // the coalesced recompute, the views' updates and what they post in turn
    // The frame a screen would show: what the edit made dirty is
    // painted and flushed, synchronously (as on the display's update request).
    QEvent frame(QEvent::UpdateRequest);
    QApplication::sendEvent(&window, &frame);
}

// A control's first move, the first time the views show its new state, and most
// often a control's worst: its own function so that a profiler can collect
// only these (callgrind --toggle-collect='memledger::ui::*firstMoveAndPaint*').
Q_NEVER_INLINE void firstMoveAndPaint(QWidget &window, QWidget *control, int move)
{
    moveAndPaint(window, control, move);
}

// Detail mode: which widgets a move paints, and how many pixels of each (the
// paint region's area), so that a move's cost can be traced to what it made dirty.
class PaintCounter : public QObject
{
public:
    std::map<QString, std::pair<int, long long>> painted; // "Class objectName" -> paints, pixels

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint && watched->isWidgetType()) {
            long long pixels = 0;
            for (const QRect &r : static_cast<QPaintEvent *>(event)->region())
                pixels += static_cast<long long>(r.width()) * r.height();
            QString name = QString::fromLatin1(watched->metaObject()->className());
            if (!watched->objectName().isEmpty())
                name += QLatin1Char(' ') + watched->objectName();
            else if (!static_cast<QWidget *>(watched)->accessibleName().isEmpty())
                name += QLatin1Char(' ') + static_cast<QWidget *>(watched)->accessibleName();
            else if (auto *label = qobject_cast<QLabel *>(watched))
                name += QLatin1Char(' ') + label->text().left(12);
            if (qEnvironmentVariableIsSet("MEMLEDGER_BENCH_PARENTS") && watched->parent())
                name += QStringLiteral(" in ") + QString::fromLatin1(watched->parent()->metaObject()->className())
                        + QLatin1Char(' ') + watched->parent()->objectName();
            auto &[count, area] = painted[name];
            ++count;
            area += pixels;
        }
        return false;
    }
};

} // namespace

QString benchSliders(MainWindow &window, int moves)
{
    // Wall time is the measure; the thread's CPU time is printed beside it in
    // the detail mode (MEMLEDGER_BENCH_DETAIL=1) for runs on a busy machine.
    std::vector<double> samples, cpuSamples;
    struct Worst
    {
        double wall = 0, cpu = 0;
        double firstCpu = 0; // a control's first move: the first time the views show its states
        std::vector<double> laterCpu; // its other moves, back and forth between states shown before
    };
    std::vector<Worst> worst(window.controlPanel()->controls().size());
    const bool detail = qEnvironmentVariableIsSet("MEMLEDGER_BENCH_DETAIL");
    PaintCounter counter;
    std::map<QString, std::pair<int, long long>> paintedAll;
    if (detail)
        qApp->installEventFilter(&counter);
    // The window as a user first sees it, laid out and painted once: its
    // first full paint is the window opening, not the first control's move.
    settle();
    QEvent firstFrame(QEvent::UpdateRequest);
    QApplication::sendEvent(&window, &firstFrame);
    counter.painted.clear();
    QElapsedTimer timer;
    // MEMLEDGER_BENCH_CONTROL=NAME moves only the controls whose name starts with NAME (to profile one).
    const QString only = qEnvironmentVariable("MEMLEDGER_BENCH_CONTROL");
    for (std::size_t c = 0; c < worst.size(); ++c) {
        QWidget *control = window.controlPanel()->controls()[c];
        if (!only.isEmpty() && !control->accessibleName().startsWith(only))
            continue;
        for (int i = 0; i < moves; ++i) {
            const double cpuStart = threadCpuMs();
            timer.start();
            if (i == 0)
                firstMoveAndPaint(window, control, i);
            else
                moveAndPaint(window, control, i);
            const double ms = double(timer.nsecsElapsed()) / 1e6;
            const double cpu = threadCpuMs() - cpuStart;
            samples.push_back(ms);
            cpuSamples.push_back(cpu);
            worst[c].wall = std::max(worst[c].wall, ms);
            worst[c].cpu = std::max(worst[c].cpu, cpu);
            if (i == 0)
                worst[c].firstCpu = cpu;
            else
                worst[c].laterCpu.push_back(cpu);
        }
        long long controlPixels = 0;
        std::vector<std::pair<long long, QString>> controlTop;
        for (const auto &[name, paints] : std::exchange(counter.painted, {})) {
            paintedAll[name].first += paints.first;
            paintedAll[name].second += paints.second;
            controlPixels += paints.second;
            controlTop.emplace_back(paints.second, name);
        }
        // Per control: the pixels a move paints and the widgets that paint the most of them.
        if (detail && moves > 0) {
            std::sort(controlTop.begin(), controlTop.end(),
                      [](const auto &a, const auto &b) { return a.first > b.first; });
            QStringList top;
            for (std::size_t i = 0; i < std::min<std::size_t>(controlTop.size(), 3); ++i)
                top << QStringLiteral("%1 %2").arg(controlTop[i].second.left(28)).arg(controlTop[i].first / moves);
            std::fprintf(stderr, "%2zu %-28s %8lld px/move: %s\n", c, qPrintable(control->accessibleName().left(28)),
                         controlPixels / moves, qPrintable(top.join(QStringLiteral("; "))));
        }
    }
    if (detail) {
        qApp->removeEventFilter(&counter);
        // The widgets painted most, by pixels over all moves (a move's cost is mostly its painted area).
        std::vector<std::pair<QString, std::pair<int, long long>>> byArea(paintedAll.begin(), paintedAll.end());
        std::sort(byArea.begin(), byArea.end(),
                  [](const auto &a, const auto &b) { return a.second.second > b.second.second; });
        const double movesAll = double(samples.size());
        for (std::size_t i = 0; i < std::min<std::size_t>(byArea.size(), 40); ++i)
            std::fprintf(stderr, "painted %-44s %6.2f times/move %9.0f px/move\n", qPrintable(byArea[i].first.left(44)),
                         byArea[i].second.first / movesAll, double(byArea[i].second.second) / movesAll);
        for (std::size_t c = 0; c < worst.size(); ++c) {
            const QWidget *control = window.controlPanel()->controls()[c];
            std::fprintf(
                stderr, "%2zu %-12s %-36s worst %6.2f ms (cpu %6.2f ms; first move %6.2f, median after %6.2f)\n", c,
                control->metaObject()->className(), qPrintable(control->accessibleName().left(36)), worst[c].wall,
                worst[c].cpu, worst[c].firstCpu, worst[c].laterCpu.empty() ? 0.0 : percentile(worst[c].laterCpu, 0.5));
        }
        std::fprintf(stderr, "cpu p50 %.2f ms p99 %.2f ms\n", percentile(cpuSamples, 0.50),
                     percentile(cpuSamples, 0.99));
    }
    return QStringLiteral("slider-to-repaint p50 %1 ms p99 %2 ms")
        .arg(percentile(samples, 0.50), 0, 'f', 2)
        .arg(percentile(samples, 0.99), 0, 'f', 2);
}

} // namespace memledger::ui
