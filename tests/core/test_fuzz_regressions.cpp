// SPDX-License-Identifier: MIT
// Every input a fuzzer once crashed on (tests/data/fuzz-regressions/<target>/)
// goes through the same entry point again, in the normal and the ASan build.
#include "tests/fuzz/entrypoints.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::string readAll(const fs::path &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Replays one target's folder, which must exist and hold at least one input;
// every entry there but the notes (.md) must be a file that was replayed (a
// subfolder or a dangling link would otherwise be skipped without a word).
void replay(const std::string &target, std::string (*entry)(std::string_view))
{
    const fs::path dir = fs::path(MEMLEDGER_TEST_DATA) / "fuzz-regressions" / target;
    INFO(dir.string());
    REQUIRE(fs::is_directory(dir));
    std::size_t entries = 0, replayed = 0;
    for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
        if (e.path().extension() == ".md")
            continue;
        ++entries;
        if (!e.is_regular_file())
            continue;
        INFO(e.path().string());
        CHECK(entry(readAll(e.path())).empty());
        ++replayed;
    }
    CHECK(entries > 0);
    CHECK(replayed == entries);
}

} // namespace

TEST_CASE("Inputs the fuzzers crashed on load, or are refused, without crashing", "[fuzz]")
{
    using namespace memledger::fuzz;
    replay("preset", runPreset);
    replay("hfimport", runHfImport);
    replay("deck", runDeck);
    replay("profilertrace", runProfilerTrace);
    replay("snapshot", runSnapshot);
    replay("launchimport", runLaunchImport);
}

TEST_CASE("The fuzz entry points accept every shipped preset and HF config", "[fuzz]")
{
    using namespace memledger::fuzz;
    for (const char *root : {MEMLEDGER_PRESET_DIR, MEMLEDGER_TEST_DATA "/hf"}) {
        for (const fs::directory_entry &e : fs::recursive_directory_iterator(root)) {
            if (e.path().extension() != ".json")
                continue;
            INFO(e.path().string());
            const std::string text = readAll(e.path());
            CHECK(runPreset(text).empty());
            CHECK(runHfImport(text).empty());
            CHECK(runDeck(text).empty());
        }
    }
}

TEST_CASE("The launch importers' fuzz entry point accepts every launch fixture", "[fuzz][launch]")
{
    // Megatron-LM scripts, torchtitan TOML and DeepSpeed JSON configs: each
    // imports (DeepSpeed's model the entry point's default), and the export
    // back to its framework holds its plan.
    std::size_t files = 0;
    for (const fs::directory_entry &e : fs::directory_iterator(fs::path(MEMLEDGER_TEST_DATA) / "launch")) {
        if (e.path().extension() == ".source")
            continue;
        INFO(e.path().string());
        CHECK(memledger::fuzz::runLaunchImport(readAll(e.path())).empty());
        ++files;
    }
    CHECK(files >= 10);
}

TEST_CASE("A number beyond double's range is a JSON error, not an exception", "[fuzz][preset]")
{
    const memledger::LoadResult r = memledger::presetFromText(R"({"format": "memledger-preset", "version": 1e999999})");
    CHECK_FALSE(r.config.has_value());
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].message.find("not valid JSON") != std::string::npos);
}
