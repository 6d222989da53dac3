// SPDX-License-Identifier: MIT
#include <QAbstractItemModelTester>
#include <QBrush>
#include <QByteArrayView>
#include <QColor>
#include <QStringList>
#include <QTextDocument>

#include "catchqt.h"
#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "ui/categorycolors.h"
#include "ui/ledgertablemodel.h"

using memledger::ui::LedgerTableModel;

namespace {

memledger::Ledger defaultLedger()
{
    const auto *builtin = memledger::findBuiltin("scenarios", memledger::kDefaultScenario);
    REQUIRE(builtin != nullptr);
    const auto loaded = memledger::presetFromText(builtin->text, memledger::kDefaultScenario);
    REQUIRE(loaded.config.has_value());
    REQUIRE_FALSE(memledger::hasErrors(memledger::validate(*loaded.config)));
    return memledger::computeLedger(*loaded.config);
}

} // namespace

TEST_CASE("LedgerTableModel passes QAbstractItemModelTester", "[ui][model]")
{
    memledger::test::modelTestMessages.clear();
    const QtMessageHandler previous = qInstallMessageHandler(memledger::test::collectModelTestMessages);
    {
        LedgerTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
        model.setLedger(defaultLedger());
        model.setLedger(memledger::Ledger{}); // empty, then full again
        model.setLedger(defaultLedger());
    }
    qInstallMessageHandler(previous);
    CHECK(memledger::test::modelTestMessages == QStringList{});
}

TEST_CASE("LedgerTableModel mirrors the core ledger", "[ui][model]")
{
    const memledger::Ledger ledger = defaultLedger();
    REQUIRE_FALSE(ledger.ranks.empty());
    LedgerTableModel model;
    model.setLedger(ledger);

    REQUIRE(model.rowCount() == static_cast<int>(ledger.ranks.size()));
    REQUIRE(model.columnCount() == LedgerTableModel::ColumnCount);

    for (int r = 0; r < model.rowCount(); ++r) {
        const auto &rank = ledger.ranks.at(static_cast<std::size_t>(r));
        const QModelIndex rankIndex = model.index(r, 0);
        INFO("rank " << rank.pipeline_rank);
        REQUIRE(model.rowCount(rankIndex) == static_cast<int>(rank.entries.size()));
        CHECK(model.data(rankIndex).toString().startsWith(QStringLiteral("Rank %1 · ").arg(rank.pipeline_rank)));
        CHECK(model.data(rankIndex).toString().endsWith(rank.fits ? QStringLiteral("· fits")
                                                                  : QStringLiteral("· does not fit")));

        qint64 sum = 0;
        for (int e = 0; e < model.rowCount(rankIndex); ++e) {
            const auto &entry = rank.entries.at(static_cast<std::size_t>(e));
            const QModelIndex bytes = model.index(e, LedgerTableModel::BytesColumn, rankIndex);
            REQUIRE(bytes.data(Qt::UserRole).userType() == QMetaType::LongLong);
            CHECK(bytes.data(Qt::UserRole).toLongLong() == entry.bytes);
            sum += bytes.data(Qt::UserRole).toLongLong();

            const QString formula = QString::fromStdString(entry.formula);
            const QString note = QString::fromStdString(entry.note);
            for (int c = 0; c < LedgerTableModel::ColumnCount; ++c) {
                const QString tip
                    = memledger::test::plainText(model.index(e, c, rankIndex).data(Qt::ToolTipRole).toString());
                INFO(entry.label << ", column " << c);
                CHECK(tip.contains(formula));
                CHECK(tip.contains(note));
            }
            CHECK(model.index(e, LedgerTableModel::FormulaColumn, rankIndex).data().toString() == formula);

            const QVariant swatch
                = model.index(e, LedgerTableModel::CategoryColumn, rankIndex).data(Qt::DecorationRole);
            REQUIRE(swatch.canConvert<QColor>());
            CHECK(swatch.value<QColor>() == memledger::ui::categoryColor(entry.category, entry.placement));
        }
        CHECK(sum == rank.device_total_bytes + rank.host_total_bytes);
    }
}

TEST_CASE("A rank that does not fit is drawn in red", "[ui][model]")
{
    memledger::Ledger ledger = defaultLedger();
    ledger.ranks.front().fits = false;
    LedgerTableModel model;
    model.setLedger(ledger);
    const QVariant foreground = model.index(0, LedgerTableModel::BytesColumn).data(Qt::ForegroundRole);
    REQUIRE(foreground.isValid());
    const QColor color = foreground.value<QBrush>().color();
    CHECK(color.red() > 2 * color.green());
    CHECK(model.index(0, 0).data().toString().endsWith(QStringLiteral("does not fit")));
}

TEST_CASE("Category colors are distinct, host rows lighter", "[ui][colors]")
{
    for (std::size_t i = 0; i < memledger::kCategories.size(); ++i) {
        const auto category = memledger::kCategories[i];
        const QColor device = memledger::ui::categoryColor(category, memledger::Placement::Device);
        const QColor host = memledger::ui::categoryColor(category, memledger::Placement::Host);
        CHECK(host.lightness() > device.lightness());
        for (std::size_t j = i + 1; j < memledger::kCategories.size(); ++j)
            CHECK(device != memledger::ui::categoryColor(memledger::kCategories[j]));
    }
}
