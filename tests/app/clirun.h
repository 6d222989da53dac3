// SPDX-License-Identifier: MIT
// Runs the real memledger-cli binary and captures its exit code, stdout and
// stderr, for tests that use the CLI as a user does.
#pragma once

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace memledger::test {

struct CliRun
{
    int code = -1;
    std::string out;
    std::string err;
};

// Single-quoted for /bin/sh.
inline std::string shellQuote(const std::string &s)
{
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline std::filesystem::path tempPath(const std::string &name)
{
    return std::filesystem::temp_directory_path() / ("memledger-test-" + std::to_string(::getpid()) + "-" + name);
}

// A shipped scenario's file, quoted as one shell word.
inline std::string scenarioArg(const std::string &name)
{
    return shellQuote(std::string(MEMLEDGER_PRESET_DIR) + "/scenarios/" + name + ".json");
}

// `args` is appended to the binary's path as shell words: quote paths with shellQuote.
inline CliRun runCli(const std::string &args)
{
    static int counter = 0;
    const std::string errPath = tempPath("stderr-" + std::to_string(counter++)).string();
    const std::string cmd = std::string(MEMLEDGER_CLI) + " " + args + " 2>" + shellQuote(errPath);
    CliRun r;
    FILE *pipe = ::popen(cmd.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0)
        r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(errPath);
    r.err.assign(std::istreambuf_iterator<char>(err), {});
    std::filesystem::remove(errPath);
    return r;
}

// Bad input is refused the same way by every command: exit 2, nothing on
// stdout, and stderr naming the field or option (`mentions`).
inline void checkRefused(const std::string &args, const std::string &mentions)
{
    CAPTURE(args);
    const CliRun r = runCli(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(mentions) != std::string::npos);
}

// A file that removes itself at the end of the test.
class TempFile
{
public:
    TempFile(const std::string &name, const std::string &text)
        : m_path(tempPath(name))
    {
        std::ofstream(m_path) << text;
    }
    ~TempFile() { std::filesystem::remove(m_path); }
    TempFile(const TempFile &) = delete;
    TempFile &operator=(const TempFile &) = delete;
    std::string path() const { return m_path.string(); }
    std::string quoted() const { return shellQuote(m_path.string()); }

private:
    std::filesystem::path m_path;
};

} // namespace memledger::test
