// SPDX-License-Identifier: MIT
#pragma once

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QMargins>
#include <QPen>
#include <QRectF>
#include <QSize>
#include <QString>

#include <vector>

class QChart;

namespace memledger::ui {

// A chart's legend drawn in the chart's own scene (so exports carry it) that
// never cuts a name: in a column on the right while that leaves the plot
// most of the width, otherwise in as many columns as fit under the plot,
// each name whole. Qt Charts' attached legend gives a right-hand legend at
// most 40 % of the chart's width and a bottom one a single row, and elides
// the names that do not fit ("Optimizer …", "Communic…" at 1024 pixels).
class ChartLegend : public QGraphicsItem
{
public:
    struct Entry
    {
        QString label;
        QColor fill; // a square swatch, or
        QPen line; // a line swatch when its style is not Qt::NoPen
    };
    enum class Placement { Right, Below };

    explicit ChartLegend(QChart *chart);

    void setEntries(std::vector<Entry> entries);
    const std::vector<Entry> &entries() const { return m_entries; }
    // Right or below, whichever the chart's width allows (Right preferred
    // when `preferRight`), and the chart's margins set to leave it the room.
    void relayout(bool preferRight);
    Placement placement() const { return m_placement; }
    // The room the legend adds to the chart's margins (the chart's minimum size counts it).
    QSize extraRoom() const;
    // Each entry's swatch and name as drawn, in scene coordinates.
    std::vector<QRectF> entryRects() const;
    // The width each entry's name needs whole, in the legend's font.
    double labelWidth(std::size_t entry) const;

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    QChart *m_chart;
    std::vector<Entry> m_entries;
    std::vector<QRectF> m_rects; // item coordinates
    QRectF m_bounds;
    Placement m_placement = Placement::Right;
};

} // namespace memledger::ui
