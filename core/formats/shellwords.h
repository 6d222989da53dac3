// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

// The argument words of a launch script, without a shell. Launch scripts
// (Megatron-LM's examples/*.sh) build their command from plain variables,
// `${VAR:-default}`, `$((A*B))`, bash arrays (`ARGS=( ... )`, `ARGS+=( ... )`,
// `${ARGS[@]}`) and `if [[ "$X" == "y" ]]` blocks; this reader follows exactly
// those, statement by statement, with bash's quoting, comments, line
// continuations and word splitting. Nothing runs: a command substitution
// `$(...)` stays as its text, an environment variable is unset (the script is
// read as if started with no arguments and a clean environment), and a
// condition it cannot decide (`[ -f FILE ]`) leaves both branches unread,
// with a warning naming the line. Loops, `case` and functions are skipped
// with a warning.

struct ShellWord
{
    std::string text;
    // Variables the word used that the script never set ($1, $NUM_LAYERS):
    // what a message about a missing or odd value names. A word that expanded
    // to nothing hands its unset names to the word before it.
    std::vector<std::string> unset;
};

struct ShellCommand
{
    std::vector<ShellWord> words;
    int line = 0; // where the command starts, 1-based
};

// A whole-line comment "# memledger: KEY=VALUE  # why" (what an export writes
// for a value the framework has no argument for).
struct ShellAnnotation
{
    std::string text; // after "# memledger:", trimmed
    int line = 0;
};

struct ShellScript
{
    std::vector<ShellCommand> commands; // the simple commands the script runs, in order
    std::vector<ShellAnnotation> annotations;
    std::map<std::string, std::vector<std::string>> variables; // at the end; a scalar is one element
    Problems problems; // warnings, paths "line N"
};

ShellScript readShellScript(std::string_view text);

} // namespace memledger
