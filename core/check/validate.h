// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/problem.h"
#include "core/config/config.h"

namespace memledger {

// Every problem of a configuration at once: the field path, the reason and a
// suggestion. Errors make the configuration unusable; warnings do not.
Problems validate(const Config &config);

} // namespace memledger
