// SPDX-License-Identifier: MIT
#pragma once

#include <QCache>
#include <QPixmap>
#include <QString>

#include "ui/paint/paintkey.h"

#include <functional>

class QColor;
class QPainter;
class QPoint;
class QWidget;

namespace memledger::ui {

// The one way the GUI keeps what it painted: images of a widget's (or a list
// item's) last few contents, each keyed by what its pixels depend on
// (PaintKey). A paint whose key was drawn before draws that image instead of
// laying out and shaping its text, or stretching its style's pixmaps, again
// (issue 16: the header's and the serving strip's rich text were a tenth of a
// slider move's work; the control panel's labels half of a control's first
// move; a group box's frame 0.5 M instructions a repaint; a long note in the
// problems list 0.8 M). An edit undone, a control moved back or a plan toggled
// shows a state painted before.
class KeptImages
{
public:
    // How the bound is counted: images, or kilobytes of them (a list of many small items).
    enum class Budget { Images, Kilobytes };
    explicit KeptImages(int bound, Budget budget = Budget::Images)
        : m_images(bound)
        , m_budget(budget)
    { }

    // Draws the image kept for `key` at `at` with `painter`, or first draws
    // one: `key.size` at `key.dpr`, filled with `background` (transparent
    // where what lies under shows through), then drawn on by `draw` with a
    // painter of its own at the image's origin, which `draw` sets up (font,
    // render hints) as the painting it replaces had it.
    void paint(QPainter &painter, const QPoint &at, const PaintKey &key, const QColor &background,
               const std::function<void(QPainter &)> &draw);
    // An opaque widget's whole paint, keyed by `key` (keyOf, and what else it
    // reads in `key.state`), drawn on its background colour with its font.
    void paint(QWidget &widget, const PaintKey &key, const std::function<void(QPainter &)> &draw);
    // `content` at the widget's size, pixel ratio, palette and font: what every paint of it depends on.
    static PaintKey keyOf(const QWidget &widget, const QString &content);

    // Images drawn so far (tests: a state shown before is not drawn again).
    int drawn() const { return m_drawn; }

private:
    QCache<PaintKey, QPixmap> m_images;
    Budget m_budget;
    int m_drawn = 0;
};

} // namespace memledger::ui
