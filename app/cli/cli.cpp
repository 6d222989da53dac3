// SPDX-License-Identifier: MIT
#include "app/cli/cli.h"

#include "app/cli/commands.h"
#include "app/cli/options.h"

#include <exception>
#include <ostream>

namespace memledger {

namespace {

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    using namespace cli;
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
        out << kUsage;
        return kExitOk;
    }
    if (!args.empty() && args[0] == "--version") {
        out << "memledger-cli " << MEMLEDGER_VERSION << '\n'; // project(VERSION) in CMakeLists.txt
        return kExitOk;
    }
    Options o;
    if (!parse(args, o, err))
        return kExitUsage;
    if (o.command == "presets")
        return listPresets(out);
    if (o.command == "import-hf")
        return importHf(o, out, err);
    if (o.command == "import")
        return importLaunch(o, out, err);
    if (o.command == "export")
        return exportLaunch(o, out, err);
    if (o.command == "timeline")
        return timeline(o, out, err);
    if (o.command == "search")
        return search(o, out, err);
    if (o.command == "inference")
        return inference(o, out, err);
    if (o.command == "compare")
        return compare(o, out, err);
    if (o.command == "eval" || o.command == "check")
        return evalOrCheck(o, out, err);
    err << "memledger-cli: unknown command \"" << o.command << "\"\n" << kUsage;
    return kExitUsage;
}

} // namespace

int runCli(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    try {
        return run(args, out, err);
    } catch (const std::exception &e) {
        err << "memledger-cli: internal error: " << e.what() << "\n";
    } catch (...) {
        err << "memledger-cli: internal error\n";
    }
    return kExitBadInput;
}

} // namespace memledger
