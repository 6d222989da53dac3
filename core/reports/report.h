// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/ledger/ledger.h"
#include "core/timeline/reserved.h"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace memledger {

// The plan's parallel layout in one line, every degree above 1 named:
// "t=8 p=4 v=2 d=16 c=2 e=8 +SP ZeRO-1" (t, p and d always).
std::string parallelSummary(const Config &config);

// Renderings of a ledger for the CLI and for export from the GUI. With
// `reserved` (simulateReserved of the same plan), each rank's reserved
// memory and what runs out, reserved plus the runtime reserve, beside the
// ledger's rows ("reserved_…"); the peak and the verdict stay the ledger's.
nlohmann::json ledgerToJson(const Config &config, const Ledger &ledger, const PlanReserved *reserved = nullptr);
std::string ledgerToTable(const Config &config, const Ledger &ledger, const PlanReserved *reserved = nullptr);
std::string ledgerToCsv(const Ledger &ledger, const PlanReserved *reserved = nullptr);
std::string ledgerToMarkdown(const Config &config, const Ledger &ledger, const PlanReserved *reserved = nullptr);
// "Reserved: rank 3 reaches 45.65 GB of 85.90 GB — fits: ..." (the table's and the header tooltip's line).
std::string reservedVerdict(const PlanReserved &reserved);
// The allocator's settings as strategy.allocator writes them.
nlohmann::json allocatorToJson(const AllocatorConfig &settings);
// A rank's reserved memory, the keys eval's and timeline's ranks share:
// reserved_bytes, allocated_peak_bytes, fragmentation_bytes,
// cached_free_bytes, alloc_retries, allocator_ooms.
nlohmann::json reservedToJson(const RankReserved &rank);
// "PyTorch's defaults", "expandable segments, max_split_size 512 MB".
std::string allocatorSummary(const AllocatorConfig &settings);

} // namespace memledger
