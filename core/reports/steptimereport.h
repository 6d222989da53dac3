// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/time/steptime.h"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace memledger {

// The step-time estimate as the CLI and the exports print it: JSON
// {total_s, mfu, model_flops_per_gpu, parts_s {name: seconds}, choices[]},
// one line for the table, a section for the markdown explanation.
nlohmann::json stepTimeToJson(const Config &config, const StepTime &time);
std::string stepTimeLine(const StepTime &time);
std::string stepTimeToMarkdown(const Config &config, const StepTime &time);

// The time model's choices in force, one sentence each (which framework
// behaviour each option follows).
std::vector<std::string> stepTimeChoices(const Config &config);

} // namespace memledger
