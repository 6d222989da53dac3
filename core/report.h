// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"
#include "core/ledger.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace memledger {

// Renderings of a ledger for the CLI and for export from the GUI.
nlohmann::json ledgerToJson(const Config &config, const Ledger &ledger);
std::string ledgerToTable(const Config &config, const Ledger &ledger);
std::string ledgerToCsv(const Ledger &ledger);
std::string ledgerToMarkdown(const Config &config, const Ledger &ledger);

} // namespace memledger
