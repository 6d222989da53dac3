// SPDX-License-Identifier: MIT
#pragma once

#include <QLabel>
#include <QPixmap>
#include <QString>

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
    int drawn() const { return m_drawn; }
    int measured() const { return m_measured; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    // What QLabel's sizes depend on; the kept sizes are dropped when it changes.
    QString sizeKey() const;
    void keepSizesFor(const QString &key) const;

    mutable QString m_sizeKey;
    mutable QSize m_sizeHint, m_minimumSizeHint; // invalid until asked
    mutable std::vector<std::pair<int, int>> m_heights; // width, height
    mutable int m_measured = 0;

    QString m_imageKey;
    QPixmap m_image;
    int m_drawn = 0;
};

} // namespace memledger::ui
