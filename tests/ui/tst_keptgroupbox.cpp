// SPDX-License-Identifier: MIT
// KeptGroupBox: the control panel's groups keep the image of their frame and
// title. They must look exactly as an opaque QGroupBox does, and draw the
// frame again only when what it depends on changes (issue 16: the style
// stretches a nine-patch over the whole box at every repaint, on Qt's thread pool).
#include <QApplication>
#include <QGroupBox>
#include <QImage>
#include <QPalette>

#include "catchqt.h"
#include "ui/paint/keptgroupbox.h"

#include <cstdlib>

using memledger::ui::KeptGroupBox;

namespace {

// The same picture: the frame's blended edge pixels may differ by a level or two per channel (drawn onto an
// image of the background rather than onto the window's backing store), which no eye tells apart.
bool samePicture(const QImage &a, const QImage &b)
{
    if (a.size() != b.size())
        return false;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            if (std::abs(qRed(p) - qRed(q)) > 2 || std::abs(qGreen(p) - qGreen(q)) > 2
                || std::abs(qBlue(p) - qBlue(q)) > 2)
                return false;
        }
    return true;
}

} // namespace

TEST_CASE("A kept group box looks as an opaque QGroupBox does and draws its frame once per state",
          "[ui][controls][bench]")
{
    for (const bool dark : {false, true}) {
        QPalette pal = QApplication::palette();
        if (dark) {
            pal.setColor(QPalette::Window, QColor(0x30, 0x30, 0x34));
            pal.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
        }
        QGroupBox plain(QStringLiteral("Parallelism"));
        KeptGroupBox kept(QStringLiteral("Parallelism"));
        plain.setAutoFillBackground(true); // as the panel's groups were: opaque
        for (QGroupBox *box : {&plain, static_cast<QGroupBox *>(&kept)}) {
            box->setPalette(pal);
            box->resize(300, 240);
        }
        INFO("dark " << dark);
        CHECK(kept.testAttribute(Qt::WA_OpaquePaintEvent));
        const QImage image = kept.grab().toImage();
        CHECK(samePicture(image, plain.grab().toImage()));
        CHECK(kept.drawn() == 1);
        kept.grab();
        kept.grab();
        CHECK(kept.drawn() == 1); // painted three times, drawn once

        // What the frame depends on: its size, its title, its palette.
        kept.resize(300, 300);
        plain.resize(300, 300);
        CHECK(samePicture(kept.grab().toImage(), plain.grab().toImage()));
        CHECK(kept.drawn() == 2);
        kept.setTitle(QStringLiteral("Batch and precision"));
        plain.setTitle(QStringLiteral("Batch and precision"));
        CHECK(samePicture(kept.grab().toImage(), plain.grab().toImage()));
        CHECK(kept.drawn() == 3);
        pal.setColor(QPalette::Window, QColor(0x20, 0x40, 0x60));
        kept.setPalette(pal);
        plain.setPalette(pal);
        CHECK(samePicture(kept.grab().toImage(), plain.grab().toImage()));
        CHECK(kept.drawn() == 4);
    }
}
