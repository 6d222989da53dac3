// SPDX-License-Identifier: MIT
#include <QAction>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

using memledger::ui::Document;

using memledger::test::writeFile;
using namespace memledger::test;

namespace {

const QByteArray kMistral = QByteArrayLiteral(R"({
  "architectures": ["MistralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "vocab_size": 32000})");

} // namespace

TEST_CASE("Document imports a Hugging Face config and keeps its warnings", "[ui][document][hfimport]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    QSignalSpy ledgerSpy(&document, &Document::ledgerChanged);

    QString error;
    REQUIRE(document.importHfConfig(writeFile(dir, QStringLiteral("config.json"), kMistral), &error));
    CHECK(error.isEmpty());
    CHECK(ledgerSpy.count() == 1);
    const memledger::LoadResult builtin
        = memledger::presetFromText(memledger::findBuiltin("models", "mistral-7b")->text);
    REQUIRE(builtin.config.has_value());
    CHECK(document.config().model == builtin.config->model);
    CHECK(document.config().parallelism == memledger::ParallelismConfig{}); // the rest is defaulted
    CHECK(document.source().contains(QStringLiteral("config.json")));
    // The sliding window it cannot model is listed, and stays through edits.
    const auto hasWindowWarning = [&] {
        for (const memledger::Problem &p : document.problems())
            if (p.path == "hf.sliding_window" && !p.isError())
                return true;
        return false;
    };
    CHECK(hasWindowWarning());
    memledger::Config edited = document.config();
    edited.training.micro_batch_size = 2;
    document.setConfig(edited);
    CHECK(hasWindowWarning());
    CHECK_FALSE(document.isStale());

    // Loading another source forgets the import's warnings.
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    CHECK_FALSE(hasWindowWarning());
}

TEST_CASE("A config that cannot be imported changes nothing", "[ui][document][hfimport]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    Document document;
    REQUIRE(document.loadBuiltinScenario(memledger::kDefaultScenario));
    const memledger::Config before = document.config();
    QSignalSpy configSpy(&document, &Document::configChanged);
    QSignalSpy problemsSpy(&document, &Document::problemsChanged);

    QString error;
    CHECK_FALSE(document.importHfConfig(
        writeFile(dir, QStringLiteral("gpt2.json"), QByteArrayLiteral(R"({"architectures": ["GPT2LMHeadModel"]})")),
        &error));
    CHECK(error.contains(QStringLiteral("hf.architectures")));
    CHECK_FALSE(document.importHfConfig(
        writeFile(dir, QStringLiteral("bad.json"), QByteArrayLiteral("{\"hidden_size\":")), &error));
    CHECK(error.contains(QStringLiteral("not valid JSON")));
    CHECK_FALSE(document.importHfConfig(dir.filePath(QStringLiteral("missing.json")), &error));
    CHECK(document.config() == before);
    CHECK(configSpy.count() == 0);
    CHECK(problemsSpy.count() == 0);
}

TEST_CASE("The File menu offers the Hugging Face import", "[ui][mainwindow][hfimport]")
{
    TestWindow gui;
    bool found = false;
    for (const QAction *menu : gui.window.menuBar()->actions())
        if (menu->menu())
            for (const QAction *action : menu->menu()->actions())
                found
                    = found || action->text().remove(QLatin1Char('&')) == QStringLiteral("Import Hugging Face config…");
    CHECK(found);
}
