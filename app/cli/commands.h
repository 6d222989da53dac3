// SPDX-License-Identifier: MIT
// The commands of memledger-cli, each from parsed options to an exit code.
#pragma once

#include "app/cli/options.h"

#include <iosfwd>

namespace memledger::cli {

// ledgercommands.cpp
int evalOrCheck(const Options &o, std::ostream &out, std::ostream &err);
int listPresets(std::ostream &out);
int importHf(const Options &o, std::ostream &out, std::ostream &err);

// launchcommands.cpp
int importLaunch(const Options &o, std::ostream &out, std::ostream &err);
int exportLaunch(const Options &o, std::ostream &out, std::ostream &err);

// simulationcommands.cpp
int timeline(const Options &o, std::ostream &out, std::ostream &err);
int compare(const Options &o, std::ostream &out, std::ostream &err);

// inferencecommand.cpp
int inference(const Options &o, std::ostream &out, std::ostream &err);

// searchcommand.cpp
int search(const Options &o, std::ostream &out, std::ostream &err);

} // namespace memledger::cli
