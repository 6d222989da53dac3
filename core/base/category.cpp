// SPDX-License-Identifier: MIT
#include "core/base/category.h"

namespace memledger {

std::string_view categoryKey(Category c)
{
    switch (c) {
    case Category::Weights:
        return "weights";
    case Category::Gradients:
        return "gradients";
    case Category::OptimizerStates:
        return "optimizer_states";
    case Category::Activations:
        return "activations";
    case Category::Communication:
        return "communication";
    case Category::Runtime:
        return "runtime";
    }
    return "runtime";
}

std::string_view categoryLabel(Category c)
{
    switch (c) {
    case Category::Weights:
        return "Weights";
    case Category::Gradients:
        return "Gradients";
    case Category::OptimizerStates:
        return "Optimizer states";
    case Category::Activations:
        return "Activations";
    case Category::Communication:
        return "Communication";
    case Category::Runtime:
        return "Runtime";
    }
    return "Runtime";
}

} // namespace memledger
