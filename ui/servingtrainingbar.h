// SPDX-License-Identifier: MIT
#pragma once

#include <QWidget>

#include "core/inference.h"
#include "core/ledger.h"

#include <optional>
#include <vector>

namespace memledger::ui {

class Document;

// Seed 001's question beside the memory charts: the same model served and
// trained, one sentence ("serving 8 × 8,192 tokens needs X per GPU; training
// this plan needs Y") over two bars on one GB scale, stacked by category in
// the ledger's colours, the KV cache in its own. The serving numbers come
// from computeInference, the training ones from the document's ledger.
class ServingTrainingBar : public QWidget
{
    Q_OBJECT
public:
    explicit ServingTrainingBar(Document *document, QWidget *parent = nullptr);

    // What is painted, for tests and accessibility.
    QString text() const;
    // The bars' segments in bytes, in painting order (serving: kInferenceCategories; training: kCategories).
    std::vector<Bytes> servingBytes() const;
    std::vector<Bytes> trainingBytes() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void refresh();
    void paintBar(QPainter &painter, int row, const QString &label, const std::vector<Bytes> &bytes,
                  const std::vector<QColor> &colours);
    int rowTop(int row) const;
    int labelWidth() const;

    Document *m_document;
    std::optional<InferenceLedger> m_inference;
    QString m_name;
};

} // namespace memledger::ui
