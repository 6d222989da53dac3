// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

#include "core/time/steptime.h"

#include <optional>

namespace memledger::ui {

// The time model's answer beside the memory header: "≈ 31.8 s / step · MFU
// 50 %" over a thin bar stacked by part (compute, recompute, bubble, exposed
// communication, optimizer, offload stalls), each part's seconds and share in
// the tooltip. It only draws a StepTime from core/time/steptime.h.
class StepTimeBar : public QWidget
{
    Q_OBJECT
public:
    explicit StepTimeBar(QWidget *parent = nullptr);

    void setStepTime(const StepTime &time);
    // The last valid plan's time, dimmed (the plan being edited is invalid).
    void setStale(bool stale);
    void clear();

    // What is painted, for tests and accessibility.
    QString text() const;
    // The painted segments' widths in pixels, in stepTimeParts order (0 for an empty part).
    std::vector<int> segmentWidths() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    // One color per part, in stepTimeParts order (color-blind safe, Okabe–Ito hues).
    static QColor partColor(std::size_t part);

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void refresh();
    QRect barRect() const;

    std::optional<StepTime> m_time;
    bool m_stale = false;
};

} // namespace memledger::ui
