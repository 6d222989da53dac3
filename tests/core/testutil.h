// SPDX-License-Identifier: MIT
// Shared helpers for the core tests: reference cases from tests/data and
// configurations built from the shipped presets the way a user writes them.
// Declarations only: they are defined once, in testutil.cpp, so that no test
// file compiles the preset loader's, the validator's and nlohmann's templates
// for them again; each test file includes what it uses itself.
#pragma once

#include "core/config/config.h"
#include "core/ledger/ledger.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace memledger {
struct TensorPlan;
} // namespace memledger

namespace memledger::test {

// tests/data/reference_cases.json, parsed once.
const nlohmann::json &referenceCases();

// A preset document: a built-in scenario (REQUIRE'd to exist).
nlohmann::json scenarioDoc(const std::string &name);

// The configuration of a preset document with `sets` applied as --set does;
// the test stops (REQUIRE) unless each override applies and the result
// loads and validates without errors.
Config configFrom(nlohmann::json doc, const std::vector<std::string> &sets = {});

Config scenario(const std::string &name, const std::vector<std::string> &sets = {});

// A bare preset document, to put sections in.
nlohmann::json emptyDoc();

// The preset's model served: an empty `inference` section, its defaults.
Config served(const std::string &model, const std::vector<std::string> &sets = {});

// A pipeline of p ranks, v chunks each, under one schedule (for the op-order tests).
ParallelismConfig pipelineOf(std::int64_t p, std::int64_t v, PipelineSchedule schedule);

// The bytes of a rank's rows of that category and label, in one place.
Bytes entryBytes(const RankLedger &rank, Category c, const std::string &label, Placement where = Placement::Device);

// The least overhead of a tensor-frontier plan keeping at most `device` bytes.
double minOverheadAt(const std::vector<TensorPlan> &frontier, Bytes device);

// A label's weights, gradients and optimizer states, wherever they are.
Bytes modelStatesOf(const RankLedger &rank, const std::string &label);

} // namespace memledger::test
