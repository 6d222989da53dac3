// SPDX-License-Identifier: MIT
// The command line of memledger-cli: its usage text, its options, the numbers
// they carry and the preset they name.
#pragma once

#include "core/config/config.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace memledger::cli {

extern const char *const kUsage;

struct Options
{
    std::string command;
    std::string preset;
    std::vector<std::string> sets;
    std::string format = "table";
    bool formatGiven = false;
    std::string rank; // timeline and compare --rank
    std::string serve; // timeline --inference prefill|decode
    std::string device; // compare --device
    std::string trace; // compare TRACE
    std::string gpus, top, margin; // search (--gpus also import)
    std::string model; // import --model
    std::string to; // export --to
};

// Splits `args` (command first) into `o`; prints the problem and returns false on a bad option.
bool parse(const std::vector<std::string> &args, Options &o, std::ostream &err);

// A whole-string integer or number, or nullopt.
std::optional<long long> integerOf(const std::string &text);
std::optional<double> numberOf(const std::string &text);

// --rank as timeline and compare read it: a whole-string int >= 0, or nullopt
// after printing why.
std::optional<int> pipelineRankOf(const std::string &text, std::ostream &err);

// False, after printing why, when `rank` is not one of the plan's pipeline ranks.
bool rankInPlan(int rank, const Config &config, std::ostream &err);

// What load() holds a preset to: a plan that must run as written, or the base
// of a search, which chooses the split and the rest of its settings itself and
// stops only on what it keeps (core's searchBlockers).
enum class LoadCheck { Plan, SearchBase };

// Loads the preset (a file or a built-in scenario), applies --set, validates.
// Prints every problem; returns nullopt on errors.
std::optional<Config> load(const Options &o, std::ostream &err, LoadCheck check = LoadCheck::Plan);

} // namespace memledger::cli
