// SPDX-License-Identifier: MIT
#pragma once

#include <QFont>
#include <QHashFunctions>
#include <QSize>
#include <QString>

#include <vector>

namespace memledger::ui {

// Everything the pixels of a kept image depend on (KeptImages): two paints
// with equal keys would paint the same pixels, so the second draws the first
// one's image. Its own size and pixel ratio are the image's. What a painter
// reads besides (a style option's state and features, an alignment, a single
// colour where the palette is not read) goes in `state`, in an order the
// painter fixes. Compared member by member: a key string built at every paint
// cost more than the lookups it served (KeptLabel's sizes taught that).
struct PaintKey
{
    QString content; // what is drawn: a text, a title, a content the widget names
    QSize size; // logical pixels
    double dpr = 1; // device pixels per logical pixel
    qint64 palette = 0; // QPalette::cacheKey(); 0 where the colours read are in `state`
    QFont font;
    std::vector<qint64> state;

    bool operator==(const PaintKey &) const = default;
};

inline size_t qHash(const PaintKey &key, size_t seed = 0)
{
    seed = qHashMulti(seed, key.content, key.size.width(), key.size.height(), key.dpr, key.palette, key.font);
    return qHashRange(key.state.begin(), key.state.end(), seed);
}

} // namespace memledger::ui
