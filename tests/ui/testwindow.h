// SPDX-License-Identifier: MIT
// The main window as the GUI tests build it: over its own Document, on a
// built-in plan loaded first (so the window opens on it, as the program does),
// shown at a size with the work that showing posts settled, and its controls
// found by their accessible names (what a screen reader announces; the order
// of the panel's controls is the panel's business).
#pragma once

#include <QSize>
#include <QString>

#include "core/formats/builtins.h"
#include "ui/document.h"
#include "ui/mainwindow.h"

#include <catch2/catch.hpp>
#include <string_view>

namespace memledger::test {

// The size most tests show the window at: the GUI's own benchmark's.
inline constexpr QSize kTestWindowSize{1400, 900};
// Shown at the size the window gives itself.
inline constexpr QSize kOwnSize{};
// No plan loaded: a test that opens a file.
inline constexpr std::string_view kNoScenario{};
// The main window's Lifetimes tab (its index in MainWindow::views()).
inline constexpr int kLifetimesTab = 1;

// Runs the event loop until the work the last step posted is done: a layout
// request, the layout it posts in turn (a word-wrapped note takes a second
// pass), the paints. Eight passes, as the GUI benchmark settles a move.
void settle();

// A main window over its own document, not shown (Qt paints nothing, and
// lays out little, until it is): for tests of what the window holds.
class TestWindow
{
public:
    // `scenario` is a built-in scenario's name (kNoScenario loads none).
    explicit TestWindow(std::string_view scenario = kDefaultScenario);

    // Resizes the window to `size` (kOwnSize: leaves it), shows it and settles.
    void show(QSize size = kTestWindowSize);

    // A run of edits (edits with the controls less than a quarter second
    // apart: the memory charts hold their axes through it) ends where the test
    // says, however slow the machine: from here on the timer that ends it
    // (MainWindow::fitAxesTimer) waits an hour, and pauseEdits() fires it.
    void holdRunsUntilPause();
    // The edits pause: the timer that ends the run going on fires now.
    void pauseEdits();

    // The control panel's control of that accessible name; the test stops
    // (REQUIRE) where there is none, or it is no T.
    QWidget *control(const QString &accessibleName) const;
    template<class T>
    T *control(const QString &accessibleName) const
    {
        T *typed = qobject_cast<T *>(control(accessibleName));
        INFO("control " << accessibleName.toStdString());
        REQUIRE(typed != nullptr);
        return typed;
    }

    ui::Document document;
    ui::MainWindow window; // declared after the document: built on it, destroyed before it
};

// A TestWindow shown at `size` and settled: for tests of what the window
// draws and how it lays out.
class ShownWindow : public TestWindow
{
public:
    explicit ShownWindow(std::string_view scenario = kDefaultScenario, QSize size = kTestWindowSize);
};

} // namespace memledger::test
