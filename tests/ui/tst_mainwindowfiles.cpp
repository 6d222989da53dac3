// SPDX-License-Identifier: MIT
// Which file am I editing: the window's title and file path follow Qt's
// convention (the file's name with a [*] marker; the platform adds the
// application's name), and the title, the status bar and Save agree after a
// Save as and an undo.
#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QWindow>

#include "catchqt.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/planfiles.h"
#include "ui/planheader.h"
#include "ui/saveplandialog.h"

#include <algorithm>

using namespace memledger;
using namespace memledger::ui;
using namespace memledger::test;

namespace {

QByteArray readFile(const QString &path)
{
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    return file.readAll();
}

} // namespace

TEST_CASE("The title names the file Ctrl+S writes and marks unsaved edits, also after Save as and undo",
          "[ui][mainwindow][files]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    ShownWindow gui(kDefaultScenario, kOwnSize);

    // A built-in plan goes by its own name. The window never names the program
    // itself: the platform appends the application's display name.
    const QString name = QString::fromStdString(gui.document.config().name);
    CHECK(gui.window.windowTitle() == name + QStringLiteral("[*]"));
    CHECK_FALSE(gui.window.windowTitle().contains(QStringLiteral("MemLedger")));
    CHECK(gui.window.windowFilePath().isEmpty());
    CHECK_FALSE(gui.window.isWindowModified());

    // An edit marks the window modified.
    Config edited = gui.document.config();
    edited.training.micro_batch_size += 1;
    gui.document.edit(edited, QStringLiteral("Set Micro-batch (b)"));
    QApplication::processEvents();
    CHECK(gui.window.isWindowModified());
    CHECK(gui.window.windowHandle()->title().endsWith(QLatin1Char('*')));

    // Save as a file of the user's: the title and the file path name it, the marker goes.
    const QString path = dir.filePath(QStringLiteral("mine.json"));
    REQUIRE(gui.window.files()->saveTo(path));
    QApplication::processEvents();
    CHECK(gui.window.files()->filePath() == path);
    CHECK(gui.window.windowFilePath() == path);
    CHECK(gui.window.windowTitle() == QStringLiteral("mine.json[*]"));
    CHECK_FALSE(gui.window.isWindowModified());
    CHECK(gui.window.windowHandle()->title() == QStringLiteral("mine.json"));

    // Undo: modified again, and the status bar names the file Ctrl+S writes, not the built-in.
    gui.document.undoStack()->undo();
    QApplication::processEvents();
    CHECK(gui.window.isWindowModified());
    CHECK(gui.window.windowTitle() == QStringLiteral("mine.json[*]"));
    const QString status = gui.window.statusBar()->currentMessage();
    CHECK(status.contains(path));
    CHECK_FALSE(status.contains(QStringLiteral("built-in")));
    // The description was written before the undo: Save asks (below, the dialog accepted as it comes).
    gui.window.files()->setSaveDialogRunner([](SavePlanDialog &) { return int(QDialog::Accepted); });
    REQUIRE(gui.window.files()->save());
    const LoadResult back = presetFromFile(path.toStdString());
    REQUIRE(back.config.has_value());
    CHECK(*back.config == gui.document.config());
    CHECK_FALSE(gui.window.isWindowModified());

    // Another built-in: no file again, Ctrl+S will ask where.
    REQUIRE(gui.document.loadBuiltinScenario("seed-000-7b-a-plain"));
    QApplication::processEvents();
    CHECK(gui.window.files()->filePath().isEmpty());
    CHECK(gui.window.windowFilePath().isEmpty());
    CHECK(gui.window.windowTitle() == QString::fromStdString(gui.document.config().name) + QStringLiteral("[*]"));
}

TEST_CASE("Save as starts in the user's documents, with a name and description of the plan as it is now",
          "[ui][mainwindow][files]")
{
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    // The shipped preset, opened from a presets/scenarios folder.
    REQUIRE(QDir(dir.path()).mkpath(QStringLiteral("scenarios")));
    const QString shipped = test::writeFile(dir, QStringLiteral("scenarios/llama-3-70b-128xh100.json"),
                                            QByteArray(findBuiltin("scenarios", "llama-3-70b-128xh100")->text.data()));
    ShownWindow gui(kNoScenario);
    REQUIRE(gui.window.files()->openPath(shipped));
    QApplication::processEvents();
    const QString name = QString::fromStdString(gui.document.config().name);
    const QString description = QString::fromStdString(gui.document.config().description);
    REQUIRE(description.contains(QStringLiteral("8K-token sequences")));
    auto *header = gui.window.findChild<PlanHeader *>();
    REQUIRE(header != nullptr);
    CHECK_FALSE(header->plainText().contains(QStringLiteral("(edited)")));

    // Never over the shipped file: a file named after the plan in the user's documents.
    SavePlanDialog::Suggestion suggestion = gui.window.files()->saveSuggestion();
    CHECK(QFileInfo(suggestion.path).absolutePath() == QDir(SavePlanDialog::defaultFolder()).absolutePath());
    CHECK(QFileInfo(suggestion.path).fileName() == QStringLiteral("llama-3-70b-128xh100.json"));
    CHECK(suggestion.name == name);
    CHECK(suggestion.description == description);
    CHECK(suggestion.previousDescription.isEmpty());

    // 64K-token sequences: the header says the name and description are the plan's as loaded.
    Config edited = gui.document.config();
    edited.training.seq_length = 65536;
    gui.document.edit(edited, QStringLiteral("Set the sequence length to 64K"));
    QApplication::processEvents();
    CHECK(header->plainText().contains(QStringLiteral("(edited)")));
    CHECK(header->plainText().contains(QStringLiteral("As loaded, before the edits: ")));

    // Save as offers the plan's name, never with the header's "(edited)" mark in it, and not the old
    // description's numbers as this plan's.
    suggestion = gui.window.files()->saveSuggestion();
    CHECK(suggestion.name == name);
    CHECK_FALSE(suggestion.description.contains(QStringLiteral("8K-token")));
    CHECK(suggestion.description.contains(QStringLiteral("65536-token sequences")));
    CHECK(suggestion.previousDescription == description);
    CHECK(QFileInfo(suggestion.path).absolutePath() == QDir(SavePlanDialog::defaultFolder()).absolutePath());

    // The dialog starts from the suggestion; a name and a file are needed to save.
    SavePlanDialog dialog(suggestion);
    CHECK(dialog.name() == suggestion.name);
    CHECK(dialog.description() == suggestion.description);
    CHECK(dialog.path() == suggestion.path);
    QPushButton *saveButton = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Save);
    REQUIRE(saveButton != nullptr);
    CHECK(saveButton->isEnabled());
    dialog.setName(QString());
    CHECK_FALSE(saveButton->isEnabled());
    dialog.setName(QStringLiteral("Llama 3 70B at 64K"));
    dialog.setPath(dir.filePath(QStringLiteral("mine")));
    CHECK(dialog.path() == dir.filePath(QStringLiteral("mine.json")));

    // The user's name and description go into the file and the header.
    const QString path = dialog.path();
    REQUIRE(gui.window.files()->saveAs(path, dialog.name(), QStringLiteral("Llama 3 70B with 64K-token sequences.")));
    QApplication::processEvents();
    const LoadResult back = presetFromFile(path.toStdString());
    REQUIRE(back.config.has_value());
    CHECK(back.config->name == "Llama 3 70B at 64K");
    CHECK(back.config->description == "Llama 3 70B with 64K-token sequences.");
    CHECK(back.config->training.seq_length == 65536);
    CHECK(gui.document.undoStack()->isClean());
    CHECK_FALSE(gui.window.isWindowModified());
    CHECK(header->plainText().contains(QStringLiteral("Llama 3 70B at 64K")));
    CHECK_FALSE(header->plainText().contains(QStringLiteral("(edited)")));
    // One undo step named the plan; the file is the user's now, suggested again as it is.
    CHECK(gui.window.files()->saveSuggestion().path == path);
}

TEST_CASE("Save as suggests a file name made from the plan's name", "[ui][files]")
{
    CHECK(SavePlanDialog::suggestedPath(QStringLiteral("/home/u/Documents"), QStringLiteral("Llama 3 70B, 64K!"))
          == QStringLiteral("/home/u/Documents/llama-3-70b-64k.json"));
    CHECK(SavePlanDialog::suggestedPath(QStringLiteral("/d"), QStringLiteral("  ")) == QStringLiteral("/d/plan.json"));
    CHECK(SavePlanDialog::isShippedPreset(QStringLiteral("/opt/x/presets/scenarios/llama-3-70b-128xh100.json")));
    CHECK_FALSE(SavePlanDialog::isShippedPreset(QStringLiteral("/home/u/llama-3-70b-128xh100.json")));
    CHECK_FALSE(SavePlanDialog::isShippedPreset(QStringLiteral("/home/u/scenarios/mine.json")));
}

TEST_CASE("A plain Save asks about a description written before the edits, and clears the edited mark",
          "[ui][mainwindow][files]")
{
    // Issue 34: Ctrl+S kept "micro-batch 2; peak 67.75 GB (fits)" in a file at micro-batch 4 needing 88 GB,
    // and Save as's " (edited)" went into the name, so the header read "(edited) (edited)" after the next edit.
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString path = test::writeFile(dir, QStringLiteral("mine.json"),
                                         QByteArray(findBuiltin("scenarios", "llama-3-70b-128xh100")->text.data()));
    ShownWindow gui(kNoScenario);
    REQUIRE(gui.window.files()->openPath(path));
    QApplication::processEvents();
    const std::string name = gui.document.config().name;
    const std::string description = gui.document.config().description;
    REQUIRE_FALSE(description.empty());
    auto *header = gui.window.findChild<PlanHeader *>();
    REQUIRE(header != nullptr);

    int asked = 0;
    int answer = QDialog::Rejected;
    SavePlanDialog::Suggestion shown;
    gui.window.files()->setSaveDialogRunner([&](SavePlanDialog &dialog) {
        ++asked;
        shown = {dialog.name(), dialog.description(), {}, dialog.path()};
        return answer;
    });
    const auto editMicroBatch = [&](int microBatch) {
        Config edited = gui.document.config();
        edited.training.micro_batch_size = microBatch;
        edited.training.global_batch_size = std::max<std::int64_t>(edited.training.global_batch_size, microBatch);
        gui.document.edit(edited, QStringLiteral("Set Micro-batch (b)"));
        QApplication::processEvents();
        REQUIRE(gui.document.config().training.micro_batch_size == microBatch);
    };

    // Unedited: Save writes the file without asking.
    REQUIRE(gui.window.files()->save());
    CHECK(asked == 0);

    // Edited: Save asks, with the file it writes, the plan's own name and the current facts; Cancel writes nothing.
    editMicroBatch(2);
    const QByteArray before = readFile(path);
    CHECK_FALSE(gui.window.files()->save());
    CHECK(asked == 1);
    CHECK(shown.path == path);
    CHECK(shown.name == QString::fromStdString(name));
    CHECK(shown.description.contains(QStringLiteral("micro-batch 2")));
    CHECK(readFile(path) == before);
    CHECK(gui.window.isWindowModified());

    // Accepted: the file holds the current facts, the header drops its mark and the name is the plan's.
    answer = QDialog::Accepted;
    REQUIRE(gui.window.files()->save());
    CHECK(asked == 2);
    LoadResult back = presetFromFile(path.toStdString());
    REQUIRE(back.config.has_value());
    CHECK(back.config->name == name);
    CHECK(back.config->description != description);
    CHECK(back.config->description.find("micro-batch 2") != std::string::npos);
    QApplication::processEvents();
    CHECK_FALSE(header->plainText().contains(QStringLiteral("(edited)")));
    CHECK_FALSE(gui.window.isWindowModified());

    // The next edit: Save asks again (the description quotes micro-batch 2), the mark shows once.
    editMicroBatch(4);
    CHECK(header->plainText().count(QStringLiteral("(edited)")) == 1);
    REQUIRE(gui.window.files()->save());
    CHECK(asked == 3);
    back = presetFromFile(path.toStdString());
    REQUIRE(back.config.has_value());
    CHECK(back.config->training.micro_batch_size == 4);
    CHECK(back.config->description.find("micro-batch 4") != std::string::npos);
    CHECK(back.config->description.find("micro-batch 2") == std::string::npos);
    CHECK(back.config->name == name);
}

TEST_CASE("Save as never suggests a name with the edited mark in it", "[ui][mainwindow][files]")
{
    // A file saved by an earlier version with " (edited)" baked into its name.
    TestWindow gui;
    Config named = gui.document.config();
    const std::string name = named.name;
    named.name += " (edited) (edited)";
    gui.document.edit(named, QStringLiteral("Name"));
    QApplication::processEvents();
    CHECK(gui.window.files()->saveSuggestion().name == QString::fromStdString(name));
}
