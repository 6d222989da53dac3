// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/ledger/ledger.h"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace memledger {

// The plan's parallel layout in one line, every degree above 1 named:
// "t=8 p=4 v=2 d=16 c=2 e=8 +SP ZeRO-1" (t, p and d always).
std::string parallelSummary(const Config &config);

// Renderings of a ledger for the CLI and for export from the GUI.
nlohmann::json ledgerToJson(const Config &config, const Ledger &ledger);
std::string ledgerToTable(const Config &config, const Ledger &ledger);
std::string ledgerToCsv(const Ledger &ledger);
std::string ledgerToMarkdown(const Config &config, const Ledger &ledger);

} // namespace memledger
