// SPDX-License-Identifier: MIT
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "ui/document.h"

using memledger::ui::Document;

using memledger::test::writeFile;

TEST_CASE("Document loads the default scenario", "[ui][document]")
{
    Document document;
    QSignalSpy ledgerSpy(&document, &Document::ledgerChanged);
    QString error;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario, &error));
    CHECK(error.isEmpty());
    CHECK(ledgerSpy.count() == 1);
    CHECK(document.hasLedger());
    CHECK_FALSE(document.isStale());
    CHECK_FALSE(document.ledger().ranks.empty());

    CHECK_FALSE(document.loadBuiltinScenario("no-such-scenario", &error));
    CHECK(error.contains(QStringLiteral("no-such-scenario")));
    CHECK(ledgerSpy.count() == 1);
}

TEST_CASE("A malformed file changes nothing", "[ui][document]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    const memledger::Config before = document.config();
    const memledger::Ledger ledgerBefore = document.ledger();

    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString path
        = writeFile(dir, QStringLiteral("bad.json"),
                    QByteArrayLiteral(R"({"format": "memledger-preset", "version": 1, "model": {"num_layers": "x"}})"));

    QSignalSpy configSpy(&document, &Document::configChanged);
    QSignalSpy ledgerSpy(&document, &Document::ledgerChanged);
    QSignalSpy problemsSpy(&document, &Document::problemsChanged);
    QString error;
    CHECK_FALSE(document.loadFile(path, &error));
    CHECK(error.contains(QStringLiteral("model.num_layers")));
    CHECK(document.config() == before);
    CHECK(document.ledger().peak_bytes == ledgerBefore.peak_bytes);
    CHECK(configSpy.count() == 0);
    CHECK(ledgerSpy.count() == 0);
    CHECK(problemsSpy.count() == 0);

    CHECK_FALSE(document.loadFile(dir.filePath(QStringLiteral("missing.json")), &error));
    CHECK_FALSE(error.isEmpty());
    CHECK(document.config() == before);
    CHECK(ledgerSpy.count() == 0);
}

TEST_CASE("An invalid configuration keeps the last valid ledger", "[ui][document]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    const memledger::Bytes peakBefore = document.ledger().peak_bytes;

    QSignalSpy ledgerSpy(&document, &Document::ledgerChanged);
    QSignalSpy problemsSpy(&document, &Document::problemsChanged);
    memledger::Config broken = document.config();
    broken.parallelism.tensor_model_parallel_size = 0;
    document.setConfig(broken);

    CHECK(ledgerSpy.count() == 0);
    CHECK(problemsSpy.count() == 1);
    CHECK(document.isStale());
    CHECK(document.config() == broken);
    CHECK(document.ledger().peak_bytes == peakBefore);
    CHECK(memledger::hasErrors(document.problems()));
}

TEST_CASE("New starts from the documented defaults with a fresh history", "[ui][document]")
{
    memledger::ui::Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    document.newPlan();
    CHECK(document.config() == memledger::Config{});
    CHECK(document.hasLedger());
    CHECK_FALSE(document.isStale());
    CHECK(document.undoStack()->count() == 0);
}
