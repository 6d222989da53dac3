// SPDX-License-Identifier: MIT
// Saves are atomic even when the disk fails: the device full mid-write
// (writes redirected into /dev/full, and a real EFBIG from RLIMIT_FSIZE),
// a read-only directory and a parent that is a file all leave the old file
// byte for byte and no temporary behind. Tests run as root, where chmod
// blocks nothing, hence /proc (read-only for root too) and fd-level faults.
#include "core/check/validate.h"
#include "core/formats/atomicfile.h"
#include "core/formats/preset.h"
#include "filesizelimit.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

using namespace memledger;
using namespace memledger::test;
namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path &path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// A scratch directory holding one saved plan.
struct Scratch
{
    fs::path dir = fs::temp_directory_path() / ("memledger-atomic-" + std::to_string(::getpid()));
    fs::path plan = dir / "plan.json";
    std::string old;
    Scratch()
    {
        fs::create_directories(dir);
        old = presetToText(scenario("llama-3-70b-128xh100"));
        REQUIRE(writeFileAtomically(plan.string(), old).empty());
    }
    ~Scratch() { fs::remove_all(dir); }
    std::size_t files() const
    {
        return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
    }
};

// Writes the bytes into /dev/full instead of the temporary file: ENOSPC.
bool writeToFullDevice(int, std::string_view contents)
{
    const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    REQUIRE(full >= 0);
    const bool ok = writeAll(full, contents);
    const int saved = errno;
    ::close(full);
    errno = saved;
    return ok;
}

struct WriterOverride
{
    FileWriter previous;
    explicit WriterOverride(FileWriter w)
        : previous(setFileWriterForTesting(w))
    { }
    ~WriterOverride() { setFileWriterForTesting(previous); }
};

} // namespace

TEST_CASE("A save replaces the file and keeps its permissions", "[files]")
{
    Scratch s;
    fs::permissions(s.plan, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    const std::string next = presetToText(scenario("seed-000-7b-a-plain"));
    REQUIRE(writeFileAtomically(s.plan.string(), next).empty());
    CHECK(readAll(s.plan) == next);
    CHECK(fs::status(s.plan).permissions() == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
    CHECK(s.files() == 1);
}

TEST_CASE("A full disk (writes into /dev/full) leaves the old file intact", "[files]")
{
    Scratch s;
    WriterOverride full(&writeToFullDevice);
    const std::string error = writeFileAtomically(s.plan.string(), presetToText(scenario("seed-000-7b-a-plain")));
    CHECK(error.find("No space left on device") != std::string::npos);
    CHECK(readAll(s.plan) == s.old);
    CHECK(s.files() == 1); // the temporary is gone
}

TEST_CASE("A write the kernel refuses (file size limit, EFBIG) leaves the old file intact", "[files]")
{
    Scratch s;
    std::string error;
    {
        FileSizeLimit limit(64);
        error = writeFileAtomically(s.plan.string(), presetToText(scenario("seed-000-7b-a-plain")));
    }
    CHECK(error.find("File too large") != std::string::npos);
    CHECK(readAll(s.plan) == s.old);
    CHECK(s.files() == 1);
}

TEST_CASE("A read-only directory or a file as parent fails cleanly", "[files]")
{
    // /proc refuses new files even to root; /proc/version is an old file there.
    const std::string before = readAll("/proc/version");
    CHECK_FALSE(writeFileAtomically("/proc/version", "overwritten").empty());
    CHECK(readAll("/proc/version") == before);

    Scratch s;
    CHECK_FALSE(writeFileAtomically((s.plan / "inner.json").string(), "{}").empty());
    CHECK(readAll(s.plan) == s.old);
    CHECK(s.files() == 1);
}

TEST_CASE("A failed load changes nothing it was given", "[files]")
{
    Scratch s;
    std::ofstream(s.dir / "truncated.json") << s.old.substr(0, s.old.size() / 2);
    const LoadResult r = presetFromFile((s.dir / "truncated.json").string());
    CHECK_FALSE(r.config.has_value());
    CHECK(hasErrors(r.problems));
    CHECK(readAll(s.plan) == s.old);
}
