// SPDX-License-Identifier: MIT
#pragma once

#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/timeline/timeline.h"

#include <catch2/catch.hpp>
#include <string_view>

namespace memledger::test {

// One simulated iteration of a built-in scenario (the test stops if it does not load).
inline Timeline scenarioTimeline(std::string_view name)
{
    const BuiltinPreset *preset = findBuiltin("scenarios", name);
    REQUIRE(preset != nullptr);
    const LoadResult loaded = presetFromText(preset->text);
    REQUIRE(loaded.config.has_value());
    return simulateIteration(*loaded.config);
}

} // namespace memledger::test
