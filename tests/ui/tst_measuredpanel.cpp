// SPDX-License-Identifier: MIT
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBrush>
#include <QPalette>
#include <QStyle>
#include <QTableView>

#include "catchqt.h"
#include "measuredfixtures.h"
#include "ui/comparisontablemodel.h"
#include "ui/measuredpanel.h"
#include "ui/peakallocationsmodel.h"
#include "ui/theme.h"

using memledger::ui::ComparisonTableModel;
using memledger::ui::MeasuredPanel;
using memledger::ui::PeakAllocationsModel;
using Agreement = ComparisonTableModel::Agreement;

namespace {

QString cell(const QAbstractItemModel &model, int row, int column, int role = Qt::DisplayRole)
{
    return model.data(model.index(row, column), role).toString();
}

QColor foreground(const QAbstractItemModel &model, int row, int column)
{
    const QVariant v = model.data(model.index(row, column), Qt::ForegroundRole);
    return v.isValid() ? v.value<QBrush>().color() : QColor();
}

// The palette of the whole application for one scope (the models read it), light again afterwards.
struct PaletteScope
{
    explicit PaletteScope(bool dark) { memledger::ui::applyPalette(dark); }
    ~PaletteScope() { memledger::ui::applyPalette(false); }
};

} // namespace

TEST_CASE("Agreement: within 2 % good, beyond 10 % poor, in between fair", "[ui][measured]")
{
    CHECK(ComparisonTableModel::agreementOf(0.0) == Agreement::Good);
    CHECK(ComparisonTableModel::agreementOf(0.02) == Agreement::Good);
    CHECK(ComparisonTableModel::agreementOf(-0.02) == Agreement::Good);
    CHECK(ComparisonTableModel::agreementOf(0.021) == Agreement::Fair);
    CHECK(ComparisonTableModel::agreementOf(-0.1) == Agreement::Fair);
    CHECK(ComparisonTableModel::agreementOf(0.1001) == Agreement::Poor);
    CHECK(ComparisonTableModel::agreementOf(-0.5) == Agreement::Poor);
    CHECK(ComparisonTableModel::agreementOf(std::numeric_limits<double>::infinity()) == Agreement::Unknown);
    CHECK(ComparisonTableModel::differenceText(0.0132) == QStringLiteral("+1.3 %"));
    CHECK(ComparisonTableModel::differenceText(-0.2) == QStringLiteral("\u221220.0 %"));
    CHECK(ComparisonTableModel::differenceText(-0.00001) == QStringLiteral("0.0 %"));
    CHECK(ComparisonTableModel::differenceText(10.0) == QStringLiteral("+1000.0 %"));
    CHECK(ComparisonTableModel::differenceText(15545087.0) == QStringLiteral("> +1000 %"));
    CHECK(ComparisonTableModel::differenceText(-12.0) == QStringLiteral("< \u22121000 %"));
}

TEST_CASE("The comparison table: peak, steady, then each phase, in GB, the differences coloured", "[ui][measured]")
{
    ComparisonTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    CHECK(model.rowCount() == 0);
    model.setComparison(memledger::test::handBuiltComparison());
    REQUIRE(model.rowCount() == 5);
    REQUIRE(model.columnCount() == ComparisonTableModel::ColumnCount);

    using C = ComparisonTableModel;
    CHECK(cell(model, 0, C::FigureColumn) == QStringLiteral("Peak"));
    CHECK(cell(model, 0, C::MeasuredColumn) == QStringLiteral("20.00 GB"));
    CHECK(cell(model, 0, C::ModelledColumn) == QStringLiteral("20.20 GB"));
    CHECK(cell(model, 0, C::DifferenceColumn) == QStringLiteral("+1.0 %"));
    CHECK(cell(model, 1, C::FigureColumn) == QStringLiteral("Steady state"));
    CHECK(cell(model, 1, C::MeasuredColumn) == QStringLiteral("8.000 GB"));
    CHECK(cell(model, 1, C::DifferenceColumn) == QStringLiteral("+5.0 %"));
    CHECK(cell(model, 2, C::FigureColumn) == QStringLiteral("Forward peak"));
    CHECK(cell(model, 2, C::DifferenceColumn) == QStringLiteral("\u221220.0 %"));
    CHECK(cell(model, 3, C::FigureColumn) == QStringLiteral("Backward peak"));
    CHECK(cell(model, 4, C::FigureColumn) == QStringLiteral("Optimizer step peak"));
    // Nothing measured in a phase: no difference, no color.
    CHECK(cell(model, 4, C::MeasuredColumn) == QStringLiteral("none"));
    CHECK(cell(model, 4, C::DifferenceColumn) == QStringLiteral("\u2014"));

    CHECK(model.data(model.index(0, C::DifferenceColumn), C::AgreementRole).toInt() == int(Agreement::Good));
    CHECK(model.data(model.index(1, C::DifferenceColumn), C::AgreementRole).toInt() == int(Agreement::Fair));
    CHECK(model.data(model.index(2, C::DifferenceColumn), C::AgreementRole).toInt() == int(Agreement::Poor));
    CHECK(model.data(model.index(4, C::DifferenceColumn), C::AgreementRole).toInt() == int(Agreement::Unknown));
    CHECK(model.data(model.index(0, C::MeasuredColumn), C::SortRole).toLongLong() == 20'000'000'000LL);

    // The tooltips say what the figures mean and that the reserve is left out.
    CHECK(cell(model, 0, C::FigureColumn, Qt::ToolTipRole).contains(QStringLiteral("largest allocated total")));
    CHECK(cell(model, 0, C::FigureColumn, Qt::ToolTipRole).contains(QStringLiteral("runtime reserve")));
    CHECK(cell(model, 0, C::FigureColumn, Qt::ToolTipRole).contains(QStringLiteral("in the backward pass")));
    CHECK(cell(model, 1, C::FigureColumn, Qt::ToolTipRole).contains(QStringLiteral("between iterations")));
    CHECK(cell(model, 1, C::MeasuredColumn, Qt::ToolTipRole).contains(QStringLiteral("runtime reserve")));
    CHECK(cell(model, 0, C::DifferenceColumn, Qt::ToolTipRole).contains(QStringLiteral("modelled / measured")));

    model.clear();
    CHECK(model.rowCount() == 0);
    CHECK(model.isEmpty());
}

TEST_CASE("The differences take the palette's good and warning colors, light and dark", "[ui][measured]")
{
    for (const bool dark : {false, true}) {
        INFO((dark ? "dark" : "light"));
        const PaletteScope scope(dark);
        const QPalette palette = QApplication::palette();
        ComparisonTableModel model;
        model.setComparison(memledger::test::handBuiltComparison());
        using C = ComparisonTableModel;
        CHECK(foreground(model, 0, C::DifferenceColumn) == memledger::ui::goodTextColor(palette));
        CHECK_FALSE(foreground(model, 1, C::DifferenceColumn).isValid()); // fair: plain text
        CHECK(foreground(model, 2, C::DifferenceColumn) == memledger::ui::warningTextColor(palette));
        CHECK_FALSE(foreground(model, 4, C::DifferenceColumn).isValid());
        CHECK_FALSE(foreground(model, 0, C::MeasuredColumn).isValid());
        // Readable on the base color of the palette: a clear lightness gap.
        const int base = palette.color(QPalette::Base).lightness();
        for (const QColor &c : {memledger::ui::goodTextColor(palette), memledger::ui::warningTextColor(palette),
                                memledger::ui::measuredColor(palette)})
            CHECK(std::abs(c.lightness() - base) > 80);
    }
}

TEST_CASE("The allocations at the peak: bytes, blocks, frames and the ledger row or unexplained", "[ui][measured]")
{
    PeakAllocationsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const memledger::TraceComparison c = memledger::test::handBuiltComparison();
    model.setAllocations(c.alive_at_peak);
    REQUIRE(model.rowCount() == 2);
    using P = PeakAllocationsModel;
    CHECK(cell(model, 0, P::BytesColumn) == QStringLiteral("4.000 GB"));
    CHECK(cell(model, 0, P::CountColumn) == QStringLiteral("\u00d7 2"));
    CHECK(cell(model, 0, P::FramesColumn) == QStringLiteral("forward (model.py:42) \u2190 step (train.py:7)"));
    CHECK(cell(model, 0, P::FramesColumn, Qt::ToolTipRole)
              .contains(QStringLiteral("/usr/lib/python3/torch/nn/module.py:1500")));
    CHECK(cell(model, 0, P::MatchedColumn) == QStringLiteral("Weights (bf16)"));
    CHECK_FALSE(model.data(model.index(0, P::MatchedColumn), P::UnexplainedRole).toBool());
    CHECK(cell(model, 1, P::BytesColumn) == QStringLiteral("512.0 MB"));
    CHECK(cell(model, 1, P::MatchedColumn) == QStringLiteral("unexplained"));
    CHECK(model.data(model.index(1, P::MatchedColumn), P::UnexplainedRole).toBool());
    CHECK(foreground(model, 1, P::MatchedColumn) == memledger::ui::warningTextColor(QApplication::palette()));
    CHECK(model.unexplainedCount() == 1);

    // Native frames carry no file ("??" in PyTorch's snapshots).
    CHECK(PeakAllocationsModel::frameText({"??", 0, "aten::addmm"}) == QStringLiteral("aten::addmm"));
    CHECK(PeakAllocationsModel::frameText({"/a/b/linear.py", 114, "forward"})
          == QStringLiteral("forward (linear.py:114)"));

    memledger::PeakAllocation bare;
    bare.bytes = 1000;
    model.setAllocations({bare});
    CHECK(cell(model, 0, P::FramesColumn) == QStringLiteral("(no frames recorded)"));
    CHECK(cell(model, 0, P::BytesColumn) == QStringLiteral("1.000 kB"));
}

TEST_CASE("The measured panel shows a comparison, its notes, and goes back to its placeholder", "[ui][measured]")
{
    MeasuredPanel panel;
    panel.resize(1000, 600);
    CHECK_FALSE(panel.hasComparison());
    panel.setComparison(memledger::test::handBuiltComparison(), QStringLiteral("run <1>.pickle.gz"));
    CHECK(panel.hasComparison());
    CHECK(panel.titleText().contains(QStringLiteral("run &lt;1&gt;.pickle.gz")));
    CHECK(panel.summaryText().contains(QStringLiteral("memory snapshot")));
    CHECK(panel.summaryText().contains(QStringLiteral("12,345 events")));
    CHECK(panel.summaryText().contains(
        QStringLiteral("peak measured in the backward pass, modelled in the backward pass")));
    CHECK(panel.notesText().contains(QStringLiteral("ProfilerStep#2")));
    CHECK(panel.comparisonTable()->model()->rowCount() == 5);
    CHECK(panel.allocationsTable()->model()->rowCount() == 2);
    // Every comparison row shows without scrolling.
    panel.show();
    QApplication::processEvents();
    const QTableView *table = panel.comparisonTable();
    CHECK(table->rowViewportPosition(4) + table->rowHeight(4) <= table->viewport()->height());

    panel.clear();
    CHECK_FALSE(panel.hasComparison());
    CHECK(panel.allocationsTable()->model()->rowCount() == 0);
}

TEST_CASE("The allocations table shows each ledger row whole and gives no room to frames never recorded",
          "[ui][measured]")
{
    // Issue 34, item 12: the ledger row was elided ("Activations (stage 0, m…") while the widest column said
    // "(no frames recorded)" on every row.
    memledger::TraceComparison c = memledger::test::handBuiltComparison();
    for (memledger::PeakAllocation &a : c.alive_at_peak)
        a.frames.clear();
    c.alive_at_peak[0].matched = "Saved activations of chunk 0, micro-batches 0 to 7 (stage 0, selective recompute)";
    MeasuredPanel panel;
    panel.resize(900, 600);
    panel.setComparison(c, QStringLiteral("no-stacks.pickle"));
    panel.show();
    QApplication::processEvents();
    QTableView *table = panel.allocationsTable();
    using P = PeakAllocationsModel;
    const QString longest = QString::fromStdString(c.alive_at_peak[0].matched);
    // Un-elided: the column is at least as wide as the text and the cell's margins (3 px each side in
    // QCommonStyle's item view, QStyle::PM_FocusFrameHMargin + 1).
    const int margins = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
    CHECK(table->columnWidth(P::MatchedColumn) >= table->fontMetrics().horizontalAdvance(longest) + margins);
    // No frame anywhere: the frames column is not shown, and the ledger rows get the width.
    CHECK(table->isColumnHidden(P::FramesColumn));
    CHECK(panel.allocationsTitleText().contains(QStringLiteral("no stacks")));

    // With frames recorded the frames take what the ledger rows leave, the ledger rows still whole.
    c = memledger::test::handBuiltComparison();
    c.alive_at_peak[0].matched = longest.toStdString();
    panel.setComparison(c, QStringLiteral("stacks.pickle"));
    QApplication::processEvents();
    CHECK_FALSE(table->isColumnHidden(P::FramesColumn));
    CHECK(table->columnWidth(P::MatchedColumn) >= table->fontMetrics().horizontalAdvance(longest) + margins);
    CHECK(table->columnWidth(P::FramesColumn) > 0);
    CHECK_FALSE(panel.allocationsTitleText().contains(QStringLiteral("no stacks")));
}

TEST_CASE("A long trace file name is elided in the title and does not widen the panel", "[ui][measured]")
{
    // Issue 34, item 16: the title, the file's name, set the page's width, and with it the window's.
    MeasuredPanel panel;
    panel.resize(700, 500);
    panel.show();
    const QString name = QStringLiteral("a-very-long-trace-file-name-recorded-on-rank-0-of-a-long-run-%1.pickle.gz")
                             .arg(QString(40, QLatin1Char('x')));
    panel.setComparison(memledger::test::handBuiltComparison(), name);
    QApplication::processEvents();
    CHECK(panel.minimumSizeHint().width() <= 700);
    CHECK(panel.width() == 700);
    CHECK(panel.titleText().contains(QChar(0x2026)));
    CHECK_FALSE(panel.titleText().contains(name));
    CHECK(panel.titleText().contains(QStringLiteral("Measured vs model")));
}
