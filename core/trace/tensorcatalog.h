// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"

#include <string>
#include <vector>

namespace memledger {

// The tensors the model accounts for on one pipeline rank, by size, so that a
// measured block can be named: parameters in each dtype they are held in
// (weights, gradients, fp32 main copies and optimizer moments), the saved
// activations of a layer and of the first and last stage, the logits and
// the contiguous gradient buffer. A measured block is matched by its size,
// exactly or rounded up to PyTorch's CUDA caching allocator's 512-byte blocks
// (c10/cuda/CUDACachingAllocator.cpp, kMinBlockSize); two tensors of one size
// are told apart only by the order below, so a match names a likely tensor,
// not a proven one.
struct CatalogTensor
{
    Bytes bytes = 0;
    std::string label; // "Weights: mlp.fc1.weight (bf16)"
    bool parameterShaped = false; // weights, gradients, main copies, optimizer moments
};

std::vector<CatalogTensor> tensorCatalog(const Config &config);

// The first tensor whose size matches `bytes`, or nullptr. With
// `optimizerStack` (the block was allocated inside an optimizer step) the
// parameter-shaped tensors are tried first: Adam's moments have a
// parameter's size, which activations often share.
const CatalogTensor *matchBySize(const std::vector<CatalogTensor> &catalog, Bytes bytes, bool optimizerStack = false);

} // namespace memledger
