// SPDX-License-Identifier: MIT
#include "ui/servingtrainingbar.h"

#include <QEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QTimer>

#include "ui/categorycolors.h"
#include "ui/document.h"
#include "ui/qtstring.h"

#include <algorithm>
#include <numeric>

namespace memledger::ui {

namespace {

constexpr int kBarHeight = 12;
constexpr int kRowGap = 3;
constexpr int kLabelGap = 6;

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

const RankLedger *peakRank(const Ledger &ledger)
{
    const auto it = std::find_if(ledger.ranks.begin(), ledger.ranks.end(),
                                 [&](const RankLedger &r) { return r.pipeline_rank == ledger.peak_rank; });
    return it == ledger.ranks.end() ? nullptr : &*it;
}

const InferenceRank *peakRank(const InferenceLedger &ledger)
{
    const auto it = std::find_if(ledger.ranks.begin(), ledger.ranks.end(),
                                 [&](const InferenceRank &r) { return r.pipeline_rank == ledger.peak_rank; });
    return it == ledger.ranks.end() ? nullptr : &*it;
}

Bytes sum(const std::vector<Bytes> &bytes)
{
    return std::accumulate(bytes.begin(), bytes.end(), Bytes{0});
}

} // namespace

ServingTrainingBar::ServingTrainingBar(Document *document, QWidget *parent)
    : QWidget(parent)
    , m_document(document)
{
    // Repainted on every edit: opaque, so that the widgets under it (the window's
    // background and every container down to here) are not painted again too.
    setAutoFillBackground(true);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed); // the charts set the column's width
    setAccessibleName(tr("Serving vs training"));
    // The ledger changes with every valid configuration (the inference
    // section included); the document serves the plan once per change, never per frame.
    connect(document, &Document::ledgerChanged, this, &ServingTrainingBar::refresh);
    // Dimmed while the plan has errors: repainted only when that changes.
    connect(document, &Document::problemsChanged, this, [this] {
        if (m_shown && m_shown->stale != m_document->isStale()) {
            m_shown->stale = m_document->isStale();
            update();
        }
    });
    refresh();
}

const InferenceLedger *ServingTrainingBar::inference() const
{
    return m_document->hasLedger() ? &m_document->inference() : nullptr;
}

QString ServingTrainingBar::text() const
{
    const InferenceLedger *inference = this->inference();
    if (!inference)
        return {};
    const InferenceConfig &serving = inference->settings;
    // The plan's name is in the header above; the sentence keeps to the numbers so it fits the column.
    return tr("Serving %1 × %2 tokens needs %3 per GPU; training this plan needs %4")
        .arg(serving.batch_size)
        .arg(toQString(formatThousands(serving.context_length.value_or(0))), bytesText(inference->peak_bytes),
             bytesText(m_document->ledger().peak_bytes));
}

QStringList ServingTrainingBar::linesAt(int width) const
{
    const QString whole = text();
    if (whole.isEmpty())
        return {};
    const QFontMetrics fm = fontMetrics();
    if (fm.horizontalAdvance(whole) <= width)
        return {whole};
    // Two clauses, one number each: break after the "; " first, then between
    // words inside a clause that is still too wide.
    QStringList lines;
    const int cut = whole.indexOf(QStringLiteral("; "));
    const QStringList clauses = cut < 0 ? QStringList{whole} : QStringList{whole.left(cut + 1), whole.mid(cut + 2)};
    for (const QString &clause : clauses) {
        QString line;
        for (const QString &word : clause.split(QLatin1Char(' '))) {
            const QString longer = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
            if (!line.isEmpty() && fm.horizontalAdvance(longer) > width) {
                lines << line;
                line = word;
            } else {
                line = longer;
            }
        }
        lines << line;
    }
    return lines;
}

QStringList ServingTrainingBar::lines() const
{
    return linesAt(width());
}

const QStringList &ServingTrainingBar::shownLines() const
{
    if (m_linesWidth != width()) {
        m_lines = linesAt(width());
        m_linesWidth = width();
    }
    return m_lines;
}

std::vector<Bytes> ServingTrainingBar::servingBytes() const
{
    const InferenceLedger *inference = this->inference();
    const InferenceRank *rank = inference ? peakRank(*inference) : nullptr;
    if (!rank)
        return {};
    return {rank->device.begin(), rank->device.end()};
}

std::vector<Bytes> ServingTrainingBar::trainingBytes() const
{
    const RankLedger *rank = m_document->hasLedger() ? peakRank(m_document->ledger()) : nullptr;
    if (!rank)
        return {};
    return {rank->device.begin(), rank->device.end()};
}

int ServingTrainingBar::labelWidth() const
{
    const QFontMetrics fm = fontMetrics();
    return std::max(fm.horizontalAdvance(tr("Serving")), fm.horizontalAdvance(tr("Training")));
}

int ServingTrainingBar::rowTop(int row) const
{
    const int rowHeight = std::max(fontMetrics().height(), kBarHeight);
    const int lineCount = std::max<int>(1, int(shownLines().size())); // at the current width, shown or not
    return lineCount * fontMetrics().height() + kRowGap + row * (rowHeight + kRowGap);
}

QSize ServingTrainingBar::sizeHint() const
{
    // Narrow on purpose: the strip takes the width its column is given and
    // must not squeeze the charts beside it (the sentence wraps instead).
    return minimumSizeHint();
}

QSize ServingTrainingBar::minimumSizeHint() const
{
    return {labelWidth() * 4, rowTop(2)};
}

ServingTrainingBar::Shown ServingTrainingBar::shown() const
{
    Shown s;
    s.text = text();
    s.name = m_name;
    s.serving = servingBytes();
    s.training = trainingBytes();
    s.capacity = m_document->hasLedger() ? m_document->ledger().capacity_bytes : 0;
    s.servingRank = inference() ? inference()->peak_rank : -1;
    s.trainingRank = m_document->hasLedger() ? m_document->ledger().peak_rank : -1;
    s.stale = m_document->isStale();
    s.dark = isDark(palette());
    return s;
}

void ServingTrainingBar::refresh()
{
    if (m_document->hasLedger())
        m_name = QString::fromStdString(m_document->ledgerConfig().name);
    // Most edits change neither peak (a data-parallel degree under ZeRO 0, the
    // global batch, the step-time knobs): the strip is then left as it was.
    Shown now = shown();
    if (m_shown && *m_shown == now)
        return;
    m_shown = std::move(now);
    m_linesWidth = -1;
    QString rows;
    const auto row = [](const QColor &color, QString label, Bytes bytes) {
        return QStringLiteral("<tr><td><span style='color:%1'>■</span> %2</td><td align='right'>%3</td></tr>")
            .arg(color.name(), label.toHtmlEscaped(), bytesText(bytes));
    };
    const bool dark = isDark(palette());
    const std::vector<Bytes> serving = servingBytes();
    const std::vector<Bytes> training = trainingBytes();
    if (!serving.empty() && !training.empty()) {
        const InferenceConfig &s = inference()->settings;
        rows += tr("<tr><td colspan='2'><b>Serving</b> (%1 weights, %2 KV cache), rank %3</td></tr>")
                    .arg(toQString(servingDtypeName(s.weights_dtype)), toQString(servingDtypeName(s.kv_cache_dtype)))
                    .arg(inference()->peak_rank);
        for (std::size_t i = 0; i < serving.size(); ++i)
            if (serving[i] > 0)
                rows += row(inferenceCategoryColor(kInferenceCategories[i], dark),
                            toQString(inferenceCategoryLabel(kInferenceCategories[i])), serving[i]);
        rows += tr("<tr><td colspan='2'><b>Training</b>, rank %1</td></tr>").arg(m_document->ledger().peak_rank);
        for (std::size_t i = 0; i < training.size(); ++i)
            if (training[i] > 0)
                rows += row(categoryColor(kCategories[i]), toQString(categoryLabel(kCategories[i])), training[i]);
        setToolTip(
            tr("<b>%1</b>: %2<table cellspacing='3'>%3</table>Device bytes per GPU of the fullest rank; the line "
               "is the %4 of HBM. Serving keeps no gradients, no optimizer states and no activations for a "
               "backward, but a KV cache per sequence (Help > Documentation, accounting.md, "
               "Inference).")
                .arg(m_name.toHtmlEscaped(), text().toHtmlEscaped(), rows,
                     bytesText(m_document->ledger().capacity_bytes)));
    } else {
        setToolTip({});
    }
    updateLineCount();
    update();
}

void ServingTrainingBar::updateLineCount()
{
    const int count = std::max<int>(1, int(shownLines().size()));
    if (count == m_lineCount)
        return;
    m_lineCount = count;
    updateGeometry(); // the layout asks sizeHint() for the new height
}

void ServingTrainingBar::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (event->size().width() != event->oldSize().width()) // queued, as PlanHeader does
        QTimer::singleShot(0, this, [this] { updateLineCount(); });
}

ServingTrainingBar::RowGeometry ServingTrainingBar::rowGeometry(int row) const
{
    const QFontMetrics fm = fontMetrics();
    const int top = rowTop(row);
    const int rowHeight = std::max(fm.height(), kBarHeight);
    const int valueWidth = fm.horizontalAdvance(QStringLiteral("0000.00 GB")) + kLabelGap;
    const int left = labelWidth() + kLabelGap;
    const int full = std::max(width() - left - valueWidth, 1);
    const Ledger &ledger = m_document->ledger();
    const std::vector<Bytes> bytes = row == 0 ? servingBytes() : trainingBytes();
    const double scale
        = static_cast<double>(std::max({sum(servingBytes()), sum(trainingBytes()), ledger.capacity_bytes, Bytes{1}}));
    const int end = static_cast<int>(full * static_cast<double>(sum(bytes)) / scale + 0.5);
    RowGeometry g;
    g.row = QRect(0, top, width(), rowHeight);
    g.left = left;
    g.full = full;
    g.scale = scale;
    g.capacityX = left + static_cast<int>(full * static_cast<double>(ledger.capacity_bytes) / scale + 0.5);
    const int totalWidth = fm.horizontalAdvance(bytesText(sum(bytes)));
    int x = left + end + kLabelGap;
    // A bar that ends just short of the HBM line would have its total written across the line (81.62 of
    // 85.90 GB on a talk slide read "8|1.62 GB"): the total goes past the line instead.
    const bool crossed = g.capacityX >= x - 1 && g.capacityX <= x + totalWidth + 1;
    if (crossed)
        x = g.capacityX + kLabelGap;
    g.total = QRect(x, top, totalWidth, rowHeight);
    if (row == 0) {
        const QString hbm = tr("HBM %1").arg(bytesText(ledger.capacity_bytes));
        const int hbmWidth = fm.horizontalAdvance(hbm);
        // Right of the line where there is room, left of it otherwise; after a total moved past the line.
        const int rightOf = crossed ? g.total.right() + 1 + kLabelGap : g.capacityX + kLabelGap;
        if (rightOf + hbmWidth <= width())
            g.hbm = QRect(rightOf, top, hbmWidth, rowHeight);
        else if (!crossed)
            g.hbm = QRect(g.capacityX - kLabelGap - hbmWidth, top, hbmWidth, rowHeight);
    }
    return g;
}

void ServingTrainingBar::paintBar(QPainter &painter, int row, const QString &label, const std::vector<Bytes> &bytes,
                                  const std::vector<QColor> &colors)
{
    const RowGeometry g = rowGeometry(row);
    const int top = g.row.top(), rowHeight = g.row.height(), left = g.left;
    const Ledger &ledger = m_document->ledger();

    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(0, top, left, rowHeight), Qt::AlignLeft | Qt::AlignVCenter, label);
    const int barTop = top + (rowHeight - kBarHeight) / 2;
    // Rounded cumulatively so the segments add up to the bar.
    Bytes cumulative = 0;
    int previous = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        cumulative += bytes[i];
        const int edge = static_cast<int>(g.full * static_cast<double>(cumulative) / g.scale + 0.5);
        if (edge > previous)
            painter.fillRect(QRect(left + previous, barTop, edge - previous, kBarHeight), colors[i]);
        previous = edge;
    }
    painter.drawText(g.total, Qt::AlignLeft | Qt::AlignVCenter, bytesText(sum(bytes)));
    // The HBM capacity, across both rows, named once on the serving row (whose bar is the shorter one).
    painter.setPen(QPen(palette().color(QPalette::PlaceholderText), 1, Qt::DashLine));
    painter.drawLine(g.capacityX, barTop - kRowGap, g.capacityX, barTop + kBarHeight + kRowGap);
    if (!g.hbm.isEmpty())
        painter.drawText(g.hbm, Qt::AlignLeft | Qt::AlignVCenter, tr("HBM %1").arg(bytesText(ledger.capacity_bytes)));
}

void ServingTrainingBar::paintEvent(QPaintEvent *)
{
    const std::vector<Bytes> serving = servingBytes();
    const std::vector<Bytes> training = trainingBytes();
    if (serving.empty() || training.empty())
        return;
    // What is painted follows from what is shown (m_shown), the size, the
    // palette and the font: an edit undone or a control moved back shows a
    // strip painted before, drawn from what was kept.
    PaintKey key = KeptImages::keyOf(*this, text());
    key.state = {m_document->isStale(), m_document->ledger().capacity_bytes, qint64(serving.size())};
    key.state.insert(key.state.end(), serving.begin(), serving.end());
    key.state.insert(key.state.end(), training.begin(), training.end());
    m_painted.paint(*this, key, [&](QPainter &p) { draw(p, serving, training); });
}

void ServingTrainingBar::draw(QPainter &painter, const std::vector<Bytes> &serving, const std::vector<Bytes> &training)
{
    if (m_document->isStale())
        painter.setOpacity(0.45); // the last valid plan's numbers, like the header
    painter.setPen(palette().color(QPalette::WindowText));
    const QFontMetrics fm = fontMetrics();
    const QStringList &sentence = shownLines();
    for (int i = 0; i < sentence.size(); ++i) // elided only where one word is wider than the strip
        painter.drawText(QRect(0, i * fm.height(), width(), fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                         fm.elidedText(sentence[i], Qt::ElideRight, width()));
    const bool dark = isDark(palette());
    std::vector<QColor> servingColors;
    for (InferenceCategory c : kInferenceCategories)
        servingColors.push_back(inferenceCategoryColor(c, dark));
    std::vector<QColor> trainingColors;
    for (Category c : kCategories)
        trainingColors.push_back(categoryColor(c));
    paintBar(painter, 0, tr("Serving"), serving, servingColors);
    paintBar(painter, 1, tr("Training"), training, trainingColors);
}

void ServingTrainingBar::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange) {
        m_linesWidth = -1;
        updateLineCount();
        updateGeometry();
    }
    if (event->type() == QEvent::PaletteChange) {
        m_shown.reset(); // the KV cache's hue follows the palette
        refresh();
    }
    QWidget::changeEvent(event);
}

} // namespace memledger::ui
