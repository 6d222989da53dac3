// SPDX-License-Identifier: MIT
#include <QSignalSpy>
#include <QUndoStack>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "measuredfixtures.h"
#include "ui/document.h"
#include "ui/measuredrun.h"

#include <atomic>
#include <chrono>
#include <thread>

using memledger::ui::Document;
using memledger::ui::MeasuredRun;

namespace {

// Stand-ins for core's importer and comparison, so that these tests pin the
// GUI's behaviour (threads, cancel, coalescing) whatever the importers do.
// "good*" loads, "bad*" fails with a problem, "slow*" reports progress until it
// is cancelled (or ten seconds pass). The comparison's modelled peak is the
// micro-batch size in GB, and its rank the one asked for: the tests read back
// which plan and rank it was of.
struct FakeBackend
{
    std::atomic<int> compares{0};

    MeasuredRun::Backend backend()
    {
        return {[](const std::string &path, const memledger::TraceImportOptions &options) {
                    memledger::TraceLoadResult result;
                    if (path.find("bad") != std::string::npos) {
                        result.problems.push_back({path, "byte 12: opcode GLOBAL (c) is refused: a pickle is data"});
                        return result;
                    }
                    if (path.find("slow") != std::string::npos) {
                        constexpr std::uint64_t kTotal = 1000;
                        for (std::uint64_t read = 0; read < kTotal * 1000; ++read) {
                            if (!options.progress(options.progress_context, read % kTotal, kTotal)) {
                                result.problems.push_back({path, "cancelled"});
                                return result;
                            }
                            std::this_thread::sleep_for(std::chrono::milliseconds(10));
                        }
                    }
                    memledger::MeasuredTrace trace;
                    trace.events.resize(path.size());
                    result.trace = std::move(trace);
                    return result;
                },
                [this](const memledger::Config &config, const memledger::MeasuredTrace &trace,
                       const memledger::CompareOptions &options) {
                    ++compares;
                    memledger::TraceComparison c = memledger::test::handBuiltComparison();
                    c.modelled_peak_bytes = config.training.micro_batch_size * 1'000'000'000;
                    c.pipeline_rank = options.pipeline_rank.value_or(-1);
                    c.events = static_cast<std::int64_t>(trace.events.size());
                    return c;
                }};
    }
};

struct Fixture
{
    Fixture() { REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario)); }
    Document document;
    FakeBackend fake;
    MeasuredRun run{&document, fake.backend()};

    void importAndWait(const QString &path)
    {
        run.import(path);
        REQUIRE(run.waitUntilIdle());
    }
    std::int64_t microBatch() const { return document.config().training.micro_batch_size; }
};

} // namespace

TEST_CASE("An import runs off the GUI thread and brings the trace with its comparison", "[ui][measured][import]")
{
    Fixture f;
    QSignalSpy started(&f.run, &MeasuredRun::importStarted);
    QSignalSpy finished(&f.run, &MeasuredRun::importFinished);
    QSignalSpy changed(&f.run, &MeasuredRun::changed);
    f.run.import(QStringLiteral("/tmp/good.pickle.gz"));
    CHECK(f.run.isImporting());
    CHECK(started.count() == 1);
    CHECK_FALSE(f.run.hasTrace()); // nothing changes until the import is done
    REQUIRE(f.run.waitUntilIdle());
    CHECK(finished.count() == 1);
    CHECK(changed.count() == 1); // the trace and its comparison arrive together
    REQUIRE(f.run.hasTrace());
    CHECK(f.run.fileName() == QStringLiteral("good.pickle.gz"));
    REQUIRE(f.run.comparison().has_value());
    CHECK(f.run.comparison()->modelled_peak_bytes == f.microBatch() * 1'000'000'000);
    CHECK(f.run.comparison()->pipeline_rank == 0);
    CHECK(f.run.compareCount() == 1);
}

TEST_CASE("Edits re-run the comparison on the kept trace, coalesced, and follow undo", "[ui][measured][import]")
{
    Fixture f;
    f.importAndWait(QStringLiteral("good.json"));
    const int before = f.run.compareCount();
    const std::int64_t original = f.microBatch();

    // A burst of edits in one pass (a slider drag) compares once, against the last.
    for (const std::int64_t mb : {original + 1, original + 2, original + 3}) {
        memledger::Config edited = f.document.config();
        edited.training.micro_batch_size = mb;
        f.document.setConfig(edited);
    }
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.run.compareCount() == before + 1);
    CHECK(f.run.comparison()->modelled_peak_bytes == (original + 3) * 1'000'000'000);

    // Through the undo stack: an edit, then undo.
    memledger::Config edited = f.document.config();
    edited.training.micro_batch_size = original + 7;
    f.document.edit(edited, QStringLiteral("micro-batch"));
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.run.comparison()->modelled_peak_bytes == (original + 7) * 1'000'000'000);
    f.document.undoStack()->undo();
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.run.comparison()->modelled_peak_bytes == (original + 3) * 1'000'000'000);

    // A configuration with errors keeps the last comparison (like the ledger) and compares nothing.
    const int settled = f.run.compareCount();
    memledger::Config invalid = f.document.config();
    invalid.parallelism.tensor_model_parallel_size = 3; // does not divide the heads
    f.document.setConfig(invalid);
    REQUIRE(f.document.isStale());
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.run.compareCount() == settled);
    CHECK(f.run.comparison()->modelled_peak_bytes == (original + 3) * 1'000'000'000);
}

TEST_CASE("The pipeline rank the trace is held against is kept within the plan", "[ui][measured][import]")
{
    Fixture f;
    f.importAndWait(QStringLiteral("good.pickle"));
    const int ranks = static_cast<int>(f.document.ledger().ranks.size());
    REQUIRE(ranks > 2);
    f.run.setPipelineRank(2);
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.run.comparison()->pipeline_rank == 2);
    f.run.setPipelineRank(ranks + 5);
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.run.comparison()->pipeline_rank == ranks - 1);
}

TEST_CASE("Cancelling an import leaves the trace and its comparison as they were", "[ui][measured][import]")
{
    Fixture f;
    f.importAndWait(QStringLiteral("good-first.pickle"));
    const QString path = f.run.path();
    const memledger::TraceComparison comparison = *f.run.comparison();
    const int compares = f.run.compareCount();

    QSignalSpy progress(&f.run, &MeasuredRun::importProgress);
    QSignalSpy cancelled(&f.run, &MeasuredRun::importCancelled);
    QSignalSpy failed(&f.run, &MeasuredRun::importFailed);
    QSignalSpy changed(&f.run, &MeasuredRun::changed);
    f.run.import(QStringLiteral("slow.pickle"));
    REQUIRE(progress.wait(5000));
    CHECK(progress.constLast().at(1).toLongLong() == 1000);
    f.run.cancelImport();
    REQUIRE(f.run.waitUntilIdle(10000));
    CHECK(cancelled.count() == 1);
    CHECK(failed.count() == 0); // a cancel is no failure: no error box
    CHECK(changed.count() == 0);
    CHECK(f.run.path() == path);
    CHECK(f.run.comparison()->events == comparison.events);
    CHECK(f.run.compareCount() == compares);
    CHECK_FALSE(f.run.isImporting());
}

TEST_CASE("A file that fails to load says why and changes nothing", "[ui][measured][import]")
{
    Fixture f;
    f.importAndWait(QStringLiteral("good-first.pickle"));
    const QString path = f.run.path();
    QSignalSpy failed(&f.run, &MeasuredRun::importFailed);
    QSignalSpy changed(&f.run, &MeasuredRun::changed);
    f.importAndWait(QStringLiteral("/tmp/bad.pickle"));
    REQUIRE(failed.count() == 1);
    CHECK(failed.constFirst().at(0).toString() == QStringLiteral("/tmp/bad.pickle"));
    CHECK(failed.constFirst().at(1).toString().contains(QStringLiteral("opcode GLOBAL")));
    CHECK(changed.count() == 0);
    CHECK(f.run.path() == path);
    CHECK(f.run.comparison().has_value());
}

TEST_CASE("A second import cancels the first and then runs — clear forgets the trace", "[ui][measured][import]")
{
    Fixture f;
    QSignalSpy progress(&f.run, &MeasuredRun::importProgress);
    QSignalSpy cancelled(&f.run, &MeasuredRun::importCancelled);
    f.run.import(QStringLiteral("slow.pickle"));
    REQUIRE(progress.wait(5000));
    f.run.import(QStringLiteral("good-second.json"));
    REQUIRE(f.run.waitUntilIdle(10000));
    CHECK(cancelled.count() == 1);
    CHECK(f.run.fileName() == QStringLiteral("good-second.json"));
    REQUIRE(f.run.comparison().has_value());

    QSignalSpy changed(&f.run, &MeasuredRun::changed);
    f.run.clear();
    CHECK(changed.count() == 1);
    CHECK_FALSE(f.run.hasTrace());
    CHECK_FALSE(f.run.comparison().has_value());
    // Edits compare nothing once cleared.
    const int compares = f.fake.compares;
    memledger::Config edited = f.document.config();
    edited.training.micro_batch_size += 1;
    f.document.setConfig(edited);
    REQUIRE(f.run.waitUntilIdle());
    CHECK(f.fake.compares == compares);
}
