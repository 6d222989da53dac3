// SPDX-License-Identifier: MIT
// Document::saveFile: the preset written through QSaveFile reads back as the
// same configuration; a failing disk (RLIMIT_FSIZE: the kernel refuses the
// write, EFBIG, even for root) or a read-only directory (/proc) leaves the old
// file byte for byte, no temporary behind, and the document untouched.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "../core/filesizelimit.h"
#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "ui/document.h"

#include <csignal>
#include <sys/resource.h>

using memledger::ui::Document;

using memledger::test::FileSizeLimit;

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    return file.readAll();
}

// Counts every signal the document emits while it lives.
struct Spies
{
    QSignalSpy config, ledger, problems;
    explicit Spies(Document &d)
        : config(&d, &Document::configChanged)
        , ledger(&d, &Document::ledgerChanged)
        , problems(&d, &Document::problemsChanged)
    { }
    int total() const { return int(config.count() + ledger.count() + problems.count()); }
};

// The kernel refuses writes past `bytes` (EFBIG) while this lives.

} // namespace

TEST_CASE("saveFile writes a preset that loads back as the same plan", "[ui][document][files]")
{
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("plan.json"));
    Spies spies(document);
    QString error;
    REQUIRE(document.saveFile(path, &error));
    CHECK(error.isEmpty());
    CHECK(spies.total() == 0);
    const memledger::LoadResult back = memledger::presetFromFile(path.toStdString());
    REQUIRE(back.config.has_value());
    CHECK(*back.config == document.config());
    CHECK(QDir(dir.path()).entryList(QDir::Files) == QStringList{QStringLiteral("plan.json")});
}

TEST_CASE("A failed save leaves the old file and the document untouched", "[ui][document][files]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("plan.json"));
    Document document;
    REQUIRE(document.loadBuiltinScenario("seed-000-7b-a-plain"));
    REQUIRE(document.saveFile(path));
    const QByteArray old = readAll(path);

    REQUIRE(document.loadBuiltinScenario("llama-3-70b-128xh100"));
    const memledger::Config before = document.config();
    Spies spies(document);
    QString error;

    SECTION("the disk refuses the write")
    {
        {
            FileSizeLimit limit(64);
            CHECK_FALSE(document.saveFile(path, &error));
        }
        CHECK_FALSE(error.isEmpty());
        CHECK(readAll(path) == old);
        CHECK(QDir(dir.path()).entryList(QDir::Files) == QStringList{QStringLiteral("plan.json")});
    }
    SECTION("a read-only directory (/proc, read-only for root too)")
    {
        const QByteArray version = readAll(QStringLiteral("/proc/version"));
        CHECK_FALSE(document.saveFile(QStringLiteral("/proc/version"), &error));
        CHECK(error.contains(QStringLiteral("/proc/version")));
        CHECK(readAll(QStringLiteral("/proc/version")) == version);
    }
    SECTION("a parent that is a file")
    {
        CHECK_FALSE(document.saveFile(path + QStringLiteral("/inner.json"), &error));
        CHECK(readAll(path) == old);
    }
    CHECK(document.config() == before);
    CHECK(spies.total() == 0);
}
