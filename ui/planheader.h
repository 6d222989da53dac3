// SPDX-License-Identifier: MIT
#pragma once

#include <QStaticText>
#include <QStringList>
#include <QTextDocument>
#include <QWidget>

#include "ui/paint/keptimages.h"

namespace memledger::ui {

// The lines above the views: the plan's name, its facts and its peak (rich
// text), then one line of detail, the description or, in red, why the
// configuration is refused (elided to the width). A
// word-wrapped QLabel lays its text out three or four times per change (size
// hint, height for width, paint) and relayouts the whole window each time;
// this widget lays the text out once per change and asks for a new geometry
// only when the first line wraps differently, so a slider drag repaints the
// header without moving the charts below it. The detail line never wraps (but
// in talk mode, setWrapDetail), so
// an invalid edit does not push the charts down either.
class PlanHeader : public QWidget
{
    Q_OBJECT
public:
    explicit PlanHeader(QWidget *parent = nullptr);

    void setContent(const QString &titleHtml, const QString &detail, bool detailIsError);
    // Talk mode: the detail line wraps, whole, instead of being elided to one
    // line (a slide's description is what tells the slides apart).
    void setWrapDetail(bool wrap);
    bool wrapsDetail() const { return m_wrapDetail; }
    // The detail as painted: whole, or elided to the width.
    QString shownDetail() const;
    // The text as shown, without markup (tests, accessibility).
    QString plainText() const;
    // The title as set, with its markup (tests: the colours written into it).
    QString titleHtml() const { return m_html; }
    // The title's lines as laid out at the widget's width, without markup (tests).
    QStringList titleLines() const;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    // Times the text was drawn afresh rather than from a kept image (tests).
    int drawn() const { return m_painted.drawn(); }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    // Lays the first line(s) out at `width` and returns their height.
    int textHeight(int width) const;
    // The detail's height at `width`: one line, or its wrapped lines when it wraps.
    int detailHeight(int width) const;
    // The wrapped detail's lines at `width`: as many as a quarter of the screen's height holds with the title,
    // in a smaller font (m_wrappedFont) where that holds them all, else the last elided (issue 34, item 16: a
    // long slide description grew the window past the screen).
    const QStringList &wrappedDetailLines(int width) const;

    QString m_html;
    QString m_detail;
    bool m_detailIsError = false;
    bool m_wrapDetail = false;
    mutable QTextDocument m_document; // laid out at the widget's width, except inside heightForWidth

    int m_textHeight = 0;
    // Paints the text (and the background) at the painter's origin.
    void draw(QPainter &painter);

    QStaticText m_detailText; // the one-line detail as painted, laid out once
    mutable QStringList m_wrappedLines; // wrappedDetailLines' last answer, for the key below
    mutable QString m_wrappedKey;
    mutable QFont m_wrappedFont; // the font the lines were wrapped in
    QString m_detailKey; // the detail, width and font it was laid out for
    // The header as painted, for the last few contents: an edit undone, a
    // control moved back, a plan toggled show a header painted before, and
    // drawing its rich text (the title at a large size, bold) is most of a
    // repaint's cost (issue 16: a tenth of the bench's instructions).
    KeptImages m_painted{4};
};

} // namespace memledger::ui
