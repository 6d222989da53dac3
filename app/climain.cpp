// SPDX-License-Identifier: MIT
// memledger-cli: a thin shell around core/cli, which tests call in-process too.
#include "core/cli.h"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    return memledger::runCli(args, std::cout, std::cerr);
}
