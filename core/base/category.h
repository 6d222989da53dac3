// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <string_view>

namespace memledger {

// Fixed order, bottom-up in every chart and table: the model states, then
// activations, buffers and the runtime reserve (docs/accounting.md).
enum class Category { Weights, Gradients, OptimizerStates, Activations, Communication, Runtime };
constexpr int kCategoryCount = 6;
constexpr std::array<Category, kCategoryCount> kCategories
    = {Category::Weights,     Category::Gradients,     Category::OptimizerStates,
       Category::Activations, Category::Communication, Category::Runtime};

std::string_view categoryKey(Category c); // "optimizer_states" (JSON/CSV keys)
std::string_view categoryLabel(Category c); // "Optimizer states" (tables, legends)

} // namespace memledger
