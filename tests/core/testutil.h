// SPDX-License-Identifier: MIT
// Shared helpers for the core tests: reference cases from tests/data and
// configurations built from the shipped presets the way a user writes them.
#pragma once

#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "core/planner/tensorplan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memledger::test {

inline const nlohmann::json &referenceCases()
{
    static const nlohmann::json cases = [] {
        std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/reference_cases.json");
        return nlohmann::json::parse(in);
    }();
    return cases;
}

// A preset document: a built-in scenario, or a bare document around sections.
inline nlohmann::json scenarioDoc(const std::string &name)
{
    const BuiltinPreset *b = findBuiltin("scenarios", name);
    REQUIRE(b != nullptr);
    return nlohmann::json::parse(b->text);
}

inline Config configFrom(nlohmann::json doc, const std::vector<std::string> &sets = {})
{
    for (const std::string &s : sets) {
        const Problems p = applyOverride(doc, s);
        INFO(s);
        REQUIRE(p.empty());
    }
    LoadResult r = presetFromJson(doc);
    for (const Problem &p : r.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(r.config.has_value());
    for (const Problem &p : validate(*r.config))
        if (p.isError())
            FAIL(p.toString());
    return *r.config;
}

inline Config scenario(const std::string &name, const std::vector<std::string> &sets = {})
{
    return configFrom(scenarioDoc(name), sets);
}

inline nlohmann::json emptyDoc()
{
    return {{"format", "memledger-preset"}, {"version", 1}, {"name", "test"}};
}

// The preset's model served: an empty `inference` section, its defaults.
inline Config served(const std::string &model, const std::vector<std::string> &sets = {})
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = model;
    doc["inference"] = nlohmann::json::object();
    return configFrom(doc, sets);
}

// A pipeline of p ranks, v chunks each, under one schedule (for the op-order tests).
inline ParallelismConfig pipelineOf(std::int64_t p, std::int64_t v, PipelineSchedule schedule)
{
    ParallelismConfig par;
    par.pipeline_model_parallel_size = p;
    par.virtual_pipeline_model_parallel_size = v;
    par.pipeline_schedule = schedule;
    return par;
}

inline Bytes entryBytes(const RankLedger &rank, Category c, const std::string &label,
                        Placement where = Placement::Device)
{
    Bytes total = 0;
    for (const LedgerEntry &e : rank.entries)
        if (e.category == c && e.label == label && e.placement == where)
            total += e.bytes;
    return total;
}

// The least overhead of a tensor-frontier plan keeping at most `device` bytes.
inline double minOverheadAt(const std::vector<TensorPlan> &frontier, Bytes device)
{
    double best = INFINITY;
    for (const TensorPlan &p : frontier)
        if (p.deviceBytes <= device)
            best = std::min(best, p.overhead);
    return best;
}

inline Bytes modelStatesOf(const RankLedger &rank, const std::string &label)
{
    Bytes total = 0;
    for (const LedgerEntry &e : rank.entries)
        if (e.label == label
            && (e.category == Category::Weights || e.category == Category::Gradients
                || e.category == Category::OptimizerStates))
            total += e.bytes;
    return total;
}

} // namespace memledger::test
