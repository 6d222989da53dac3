// SPDX-License-Identifier: MIT
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace memledger {

// Exit codes of memledger-cli (README.md, Using the CLI).
enum ExitCode { kExitOk = 0, kExitUsage = 2, kExitBadInput = 2, kExitDoesNotFit = 3 };

// The whole command line of memledger-cli, without the program name.
// Never throws; every failure is a message on `err` and exit code 2.
int runCli(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

} // namespace memledger
