// SPDX-License-Identifier: MIT
#pragma once

#include <QCache>
#include <QPixmap>
#include <QString>

#include <functional>

class QPainter;
class QWidget;

namespace memledger::ui {

// An opaque widget painted from images of its last few contents: an edit
// undone, a control moved back or a plan toggled shows a state painted
// before, drawn from its image instead of laying out and shaping its text
// again (issue 16: the header's and the serving strip's rich text were a
// tenth of a slider move's work).
// The image a kept painter keeps: `size` logical pixels at `dpr`, filled with
// `background` (transparent where what lies under the widget shows through),
// then drawn on by `draw` with the widget's font.
QPixmap drawnImage(const QWidget &widget, const QColor &background, const std::function<void(QPainter &)> &draw);

class KeptPaint
{
public:
    explicit KeptPaint(int images)
        : m_images(images)
    { }

    // Paints `widget` from the image kept for `content`, or first draws one
    // with `draw` at the origin, on the widget's background colour. The key
    // adds what every paint depends on: the size, palette, font and pixel ratio.
    void paint(QWidget &widget, const QString &content, const std::function<void(QPainter &)> &draw);
    // Images drawn so far (tests: a state shown before is not drawn again).
    int drawn() const { return m_drawn; }

private:
    QCache<QString, QPixmap> m_images;
    int m_drawn = 0;
};

} // namespace memledger::ui
