// SPDX-License-Identifier: MIT
// KeptImages: the one way the GUI keeps what it painted (ui/paint/). A paint
// whose key (PaintKey: what its pixels depend on) was drawn before draws that
// image; any difference in the key draws afresh; the bound keeps the last few.
#include <QImage>
#include <QPainter>

#include "catchqt.h"
#include "ui/paint/keptimages.h"

using memledger::ui::KeptImages;
using memledger::ui::PaintKey;

namespace {

PaintKey keyOf(const QString &content, QSize size = {40, 20})
{
    return {content, size, 1.0, 0, QFont(), {}};
}

// Paints `key` with `kept` onto a fresh image and returns that image.
QImage paintOnce(KeptImages &kept, const PaintKey &key, const QColor &color)
{
    QImage target(key.size, QImage::Format_ARGB32_Premultiplied);
    target.fill(Qt::white);
    QPainter painter(&target);
    kept.paint(painter, {}, key, Qt::transparent, [&](QPainter &p) { p.fillRect(QRect(0, 0, 10, 10), color); });
    painter.end();
    return target;
}

} // namespace

TEST_CASE("KeptImages draws a key once and paints it from the image after", "[ui][paint]")
{
    KeptImages kept(4);
    const QImage first = paintOnce(kept, keyOf(QStringLiteral("a")), Qt::red);
    CHECK(kept.drawn() == 1);
    // The same key: the kept image, whatever `draw` would do now.
    const QImage again = paintOnce(kept, keyOf(QStringLiteral("a")), Qt::blue);
    CHECK(kept.drawn() == 1);
    CHECK(again == first);
    CHECK(first.pixelColor(5, 5) == QColor(Qt::red));
    CHECK(first.pixelColor(20, 5) == QColor(Qt::white)); // transparent where nothing was drawn

    // Any member of the key that differs draws afresh.
    PaintKey other = keyOf(QStringLiteral("a"));
    other.state = {1};
    paintOnce(kept, other, Qt::blue);
    CHECK(kept.drawn() == 2);
    other = keyOf(QStringLiteral("a"));
    other.palette = 7;
    paintOnce(kept, other, Qt::blue);
    CHECK(kept.drawn() == 3);
    other = keyOf(QStringLiteral("a"), {41, 20});
    paintOnce(kept, other, Qt::blue);
    CHECK(kept.drawn() == 4);
}

TEST_CASE("KeptImages keeps the last few images its bound allows", "[ui][paint]")
{
    KeptImages two(2);
    paintOnce(two, keyOf(QStringLiteral("a")), Qt::red);
    paintOnce(two, keyOf(QStringLiteral("b")), Qt::red);
    paintOnce(two, keyOf(QStringLiteral("a")), Qt::red); // kept, and now the most recent
    CHECK(two.drawn() == 2);
    paintOnce(two, keyOf(QStringLiteral("c")), Qt::red); // "b" gives way
    paintOnce(two, keyOf(QStringLiteral("a")), Qt::red);
    CHECK(two.drawn() == 3);
    paintOnce(two, keyOf(QStringLiteral("b")), Qt::red);
    CHECK(two.drawn() == 4);

    // By kilobytes: an image over the whole budget is painted, never kept.
    KeptImages small(1, KeptImages::Budget::Kilobytes);
    const PaintKey big = keyOf(QStringLiteral("big"), {64, 64}); // 16 KiB
    CHECK(paintOnce(small, big, Qt::red).pixelColor(5, 5) == QColor(Qt::red));
    paintOnce(small, big, Qt::red);
    CHECK(small.drawn() == 2);
    const PaintKey tiny = keyOf(QStringLiteral("tiny"), {8, 8}); // under a kilobyte: costs one
    paintOnce(small, tiny, Qt::red);
    paintOnce(small, tiny, Qt::red);
    CHECK(small.drawn() == 3);
}
