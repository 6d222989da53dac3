// SPDX-License-Identifier: MIT
#pragma once

#include <QStringList>
#include <QWidget>

#include "core/ledger/ledger.h"
#include "core/serving/inference.h"
#include "ui/paint/keptimages.h"

#include <optional>
#include <vector>

namespace memledger::ui {

class Document;

// Seed 001's question beside the memory charts: the same model served and
// trained, one sentence ("serving 8 × 8,192 tokens needs X per GPU; training
// this plan needs Y") over two bars on one GB scale, stacked by category in
// the ledger's colors, the KV cache in its own. The serving numbers are
// the document's inference() (computeInference), the training ones its ledger.
class ServingTrainingBar : public QWidget
{
    Q_OBJECT
public:
    explicit ServingTrainingBar(Document *document, QWidget *parent = nullptr);

    // What is painted, for tests and accessibility.
    QString text() const;
    // text() as painted at the current width: one line, or broken after its
    // "; " (and between words where a clause is still too wide) so both
    // numbers read whole; elided only where a single word does not fit.
    QStringList lines() const;
    // The bars' segments in bytes, in painting order (serving: kInferenceCategories; training: kCategories).
    std::vector<Bytes> servingBytes() const;
    std::vector<Bytes> trainingBytes() const;

    // Where row `row` (0 serving, 1 training) writes its total, where the HBM line crosses it, and where
    // the serving row names the HBM (empty on the training row, or when there is no room): the line
    // never runs through a total, which goes past the line when its bar ends just short of it.
    struct RowGeometry
    {
        QRect total;
        int capacityX = 0;
        QRect hbm;
        // And what the row's painting shares: the row, where its bars start, their full length, the bytes
        // that length stands for (the longest of both rows and the HBM).
        QRect row;
        int left = 0, full = 1;
        double scale = 1;
    };
    RowGeometry rowGeometry(int row) const;

    // Times the strip was drawn afresh rather than from a kept image (tests).
    int drawn() const { return m_painted.drawn(); }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void refresh();
    // The document's plan served; null without a ledger.
    const InferenceLedger *inference() const;
    void draw(QPainter &painter, const std::vector<Bytes> &serving, const std::vector<Bytes> &training);
    void paintBar(QPainter &painter, int row, const QString &label, const std::vector<Bytes> &bytes,
                  const std::vector<QColor> &colors);
    int rowTop(int row) const;
    // lines() at the current width, kept until the text, the width or the font changes (painting
    // measures the sentence word by word otherwise, on every repaint).
    const QStringList &shownLines() const;
    int labelWidth() const;
    QStringList linesAt(int width) const;
    void updateLineCount();

    Document *m_document;
    QString m_name;
    int m_lineCount = 1; // of the sentence at the current width; the height follows it
    // What the strip shows: a new ledger or problems list that leaves all of it as it was repaints nothing.
    struct Shown
    {
        QString text, name;
        std::vector<Bytes> serving, training;
        Bytes capacity = 0;
        int servingRank = -1, trainingRank = -1;
        bool stale = false, dark = false;
        bool operator==(const Shown &) const = default;
    };
    Shown shown() const;
    std::optional<Shown> m_shown;
    mutable QStringList m_lines;
    mutable int m_linesWidth = -1; // the width m_lines were broken for; -1: to be broken again
    KeptImages m_painted{4}; // the strip as painted, for the last few contents
};

} // namespace memledger::ui
