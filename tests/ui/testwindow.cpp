// SPDX-License-Identifier: MIT
#include "testwindow.h"

#include <QApplication>
#include <QTimer>
#include <QWidget>

#include "ui/controlpanel.h"

#include <chrono>

namespace memledger::test {

namespace {

// The document with the scenario loaded, for the window's constructor.
ui::Document *loaded(ui::Document &document, std::string_view scenario)
{
    if (!scenario.empty()) {
        INFO("scenario " << scenario);
        REQUIRE(document.loadBuiltinScenario(scenario));
    }
    return &document;
}

} // namespace

void settle()
{
    for (int pass = 0; pass < 8; ++pass)
        QApplication::processEvents();
}

TestWindow::TestWindow(std::string_view scenario)
    : window(loaded(document, scenario))
{ }

void TestWindow::show(QSize size)
{
    if (size.isValid())
        window.resize(size);
    window.show();
    settle();
}

void TestWindow::holdRunsUntilPause()
{
    window.fitAxesTimer()->setInterval(std::chrono::hours(1));
}

void TestWindow::pauseEdits()
{
    QTimer *timer = window.fitAxesTimer();
    REQUIRE(timer->isActive()); // an edit with a control started it: a run is going on
    const std::chrono::milliseconds interval = timer->intervalAsDuration();
    timer->start(0);
    settle();
    CHECK_FALSE(timer->isActive());
    timer->setInterval(interval);
}

QWidget *TestWindow::control(const QString &accessibleName) const
{
    for (QWidget *w : window.controlPanel()->controls())
        if (w->accessibleName() == accessibleName)
            return w;
    FAIL("no control is named " << accessibleName.toStdString());
    return nullptr;
}

ShownWindow::ShownWindow(std::string_view scenario, QSize size)
    : TestWindow(scenario)
{
    show(size);
}

} // namespace memledger::test
