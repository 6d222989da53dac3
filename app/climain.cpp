// SPDX-License-Identifier: MIT
// memledger-cli: a thin shell around app/cli. Tests run this binary as a user
// does (tests/app/clirun.h) and read its exit code, stdout and stderr.
#include "app/cli/cli.h"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    return memledger::runCli(args, std::cout, std::cerr);
}
