// SPDX-License-Identifier: MIT
#include "core/formats/builtins.h"

namespace memledger {

namespace detail {
extern const std::vector<BuiltinPreset> kBuiltinPresets; // generated from presets/
}

const std::vector<BuiltinPreset> &builtinPresets()
{
    return detail::kBuiltinPresets;
}

const BuiltinPreset *findBuiltin(std::string_view kind, std::string_view name)
{
    for (const BuiltinPreset &b : detail::kBuiltinPresets)
        if (b.kind == kind && b.name == name)
            return &b;
    return nullptr;
}

std::vector<std::string> builtinNames(std::string_view kind)
{
    std::vector<std::string> names;
    for (const BuiltinPreset &b : detail::kBuiltinPresets)
        if (b.kind == kind)
            names.emplace_back(b.name);
    return names;
}

} // namespace memledger
