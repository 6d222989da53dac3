// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <string>

namespace memledger {

// Context parallelism's exchange of keys and values (strategy.cp_comm_type)
// for the layer whose attention runs, one micro-batch: the ledger's
// communication row and the search's bound share it. Zero bytes without
// context parallelism.
struct CpExchange
{
    Bytes bytes = 0;
    std::string label, formula, note;
};
CpExchange contextParallelExchange(const Config &config, bool withText = true);

} // namespace memledger
