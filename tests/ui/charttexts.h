// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QStringList>

#include <vector>

// The texts of a Qt chart as drawn, for the GUI tests.
namespace memledger::test {

// Every text item the chart shows (title, legend, axis titles and labels).
inline std::vector<QGraphicsTextItem *> shownChartTexts(QChartView *view)
{
    std::vector<QGraphicsTextItem *> texts;
    for (QGraphicsItem *item : view->scene()->items())
        if (auto *text = dynamic_cast<QGraphicsTextItem *>(item);
            text && text->isVisible() && !text->toPlainText().isEmpty())
            texts.push_back(text);
    return texts;
}

// The texts Qt Charts cut short to fit ("activa...", "micro...").
inline QStringList elidedChartTexts(QChartView *view)
{
    QStringList cut;
    for (QGraphicsTextItem *text : shownChartTexts(view))
        if (text->toPlainText().contains(QStringLiteral("...")) || text->toPlainText().contains(QChar(0x2026)))
            cut << text->toPlainText();
    return cut;
}

} // namespace memledger::test
