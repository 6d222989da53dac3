// SPDX-License-Identifier: MIT
#pragma once

#include <QFont>
#include <QLabel>
#include <QMargins>
#include <QString>

#include "ui/paint/keptimages.h"

#include <utility>
#include <vector>

namespace memledger::ui {

// A QLabel that keeps the work its text costs: the image of its plain text at
// its size and colour, and its size hints and height for each width asked,
// for as long as its text, font and layout flags stay the same. QLabel shapes
// its text again (HarfBuzz) at every paint and every size query: a relayout of
// the control panel painted each row's label and asked each word-wrapped note
// its height several times, about 0.2 M instructions a label, the panel's
// labels half of a control's first move (issue 16).
class KeptLabel : public QLabel
{
    Q_OBJECT
public:
    using QLabel::QLabel;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    int heightForWidth(int width) const override;

    // Images of the text drawn so far, and text layouts measured (tests: what
    // is kept is not done again).
    int drawn() const { return m_image.drawn(); }
    int measured() const { return m_measured; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    // What QLabel's sizes depend on; the kept sizes are dropped when it changes. Compared member by member:
    // a key string built at each query cost a tenth of the shaping it saved.
    struct SizeInputs
    {
        QString text;
        QFont font;
        int alignment = 0, wordWrap = 0, textFormat = 0, margin = 0, indent = 0, frameWidth = 0;
        QMargins contents;
        bool operator==(const SizeInputs &) const = default;
    };
    SizeInputs sizeInputs() const;
    void keepSizesFor(const SizeInputs &inputs) const;
    // `kept`, or QLabel's size hint (`minimum`: its minimum size hint) the first time it is asked since
    // what the sizes depend on changed.
    QSize keptSize(QSize &kept, bool minimum) const;

    mutable SizeInputs m_sizeInputs;
    mutable QSize m_sizeHint, m_minimumSizeHint; // invalid until asked
    mutable std::vector<std::pair<int, int>> m_heights; // width, height
    mutable int m_measured = 0;

    // The image of its text: what the sizes depend on, and its size, colour, state and pixel ratio (paintEvent).
    KeptImages m_image{1};
};

} // namespace memledger::ui
