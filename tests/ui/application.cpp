// SPDX-License-Identifier: MIT
// The QApplication of the GUI tests, which run on Catch2's prebuilt main
// (Catch2::Catch2WithMain): a listener creates it before the first test case
// and destroys it after the last, so that no test file compiles Catch2's
// runner. Listeners are among Catch2's external interfaces, which this file
// alone includes (and so it is left out of the precompiled Catch2 header).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <QApplication>
#include <QByteArray>
#include <QFile>
#include <QTemporaryDir>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>

namespace {

class QtApplication : public Catch::TestEventListenerBase
{
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testRunStarting(const Catch::TestRunInfo &info) override
    {
        TestEventListenerBase::testRunStarting(info);
        // Headless everywhere (CI, ctest, a developer's desktop): Qt Charts needs
        // a QApplication, and offscreen still renders fonts.
        qputenv("QT_QPA_PLATFORM", QByteArrayLiteral("offscreen"));
        // Settings (dark palette, recent files) of this process alone: ctest runs
        // test cases in parallel processes, and one that turns the dark palette on
        // must not repaint another's charts, nor touch the developer's own settings.
        m_home = std::make_unique<QTemporaryDir>();
        if (!m_home->isValid()) {
            Catch::cerr() << "error: no temporary directory for the tests' settings\n";
            std::exit(1);
        }
        const QByteArray root = QFile::encodeName(m_home->path());
        qputenv("XDG_CONFIG_HOME", root + "/config");
        qputenv("XDG_DATA_HOME", root + "/data");
        qputenv("XDG_CACHE_HOME", root + "/cache");
        m_app = std::make_unique<QApplication>(m_argc, m_argv);
    }

    void testRunEnded(const Catch::TestRunStats &stats) override
    {
        m_app.reset(); // before its settings' directory
        m_home.reset();
        TestEventListenerBase::testRunEnded(stats);
    }

private:
    // QApplication keeps references to both for its lifetime.
    int m_argc = 1;
    char m_name[sizeof("memledger_ui_tests")] = "memledger_ui_tests";
    char *m_argv[2] = {m_name, nullptr};
    std::unique_ptr<QTemporaryDir> m_home;
    std::unique_ptr<QApplication> m_app;
};

} // namespace

CATCH_REGISTER_LISTENER(QtApplication)
