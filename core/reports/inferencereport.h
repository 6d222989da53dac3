// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/serving/inference.h"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace memledger {

// Renderings of an inference ledger for `memledger-cli inference` (the CLI contract's keys, held by
// tests/app/test_cli_inference.cpp).
nlohmann::json inferenceToJson(const Config &config, const InferenceLedger &ledger);
std::string inferenceToTable(const Config &config, const InferenceLedger &ledger);

} // namespace memledger
