// SPDX-License-Identifier: MIT
#include "testutil.h"

#include "core/check/validate.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/planner/tensorplan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace memledger::test {

const nlohmann::json &referenceCases()
{
    static const nlohmann::json cases = [] {
        std::ifstream in(std::string(MEMLEDGER_TEST_DATA) + "/reference_cases.json");
        return nlohmann::json::parse(in);
    }();
    return cases;
}

nlohmann::json scenarioDoc(const std::string &name)
{
    const BuiltinPreset *b = findBuiltin("scenarios", name);
    REQUIRE(b != nullptr);
    return nlohmann::json::parse(b->text);
}

Config configFrom(nlohmann::json doc, const std::vector<std::string> &sets)
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

Config scenario(const std::string &name, const std::vector<std::string> &sets)
{
    return configFrom(scenarioDoc(name), sets);
}

nlohmann::json emptyDoc()
{
    return {{"format", "memledger-preset"}, {"version", 1}, {"name", "test"}};
}

Config served(const std::string &model, const std::vector<std::string> &sets)
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = model;
    doc["inference"] = nlohmann::json::object();
    return configFrom(doc, sets);
}

ParallelismConfig pipelineOf(std::int64_t p, std::int64_t v, PipelineSchedule schedule)
{
    ParallelismConfig par;
    par.pipeline_model_parallel_size = p;
    par.virtual_pipeline_model_parallel_size = v;
    par.pipeline_schedule = schedule;
    return par;
}

Bytes entryBytes(const RankLedger &rank, Category c, const std::string &label, Placement where)
{
    Bytes total = 0;
    for (const LedgerEntry &e : rank.entries)
        if (e.category == c && e.label == label && e.placement == where)
            total += e.bytes;
    return total;
}

double minOverheadAt(const std::vector<TensorPlan> &frontier, Bytes device)
{
    double best = INFINITY;
    for (const TensorPlan &p : frontier)
        if (p.deviceBytes <= device)
            best = std::min(best, p.overhead);
    return best;
}

Bytes modelStatesOf(const RankLedger &rank, const std::string &label)
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
