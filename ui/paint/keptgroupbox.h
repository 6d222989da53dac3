// SPDX-License-Identifier: MIT
#pragma once

#include <QGroupBox>
#include <QString>

#include "ui/paint/keptimages.h"

namespace memledger::ui {

// An opaque QGroupBox that keeps the image of its frame and title for as long
// as its size, title, state, palette and font stay the same. The Fusion style
// draws a group box's frame by stretching a nine-patch pixmap over the whole
// box, which Qt's raster engine scales on its thread pool (rasterthreadpool.h):
// every repaint of a control panel group cost about 0.5 M instructions and a
// couple of milliseconds of waiting for those threads (issue 16). Opaque, the
// box is also moved by copying its pixels when a note above it appears.
class KeptGroupBox : public QGroupBox
{
    Q_OBJECT
public:
    explicit KeptGroupBox(const QString &title, QWidget *parent = nullptr);

    // Images of the frame drawn so far (tests: a repaint of the same box draws none).
    int drawn() const { return m_image.drawn(); }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    KeptImages m_image{1};
};

} // namespace memledger::ui
