// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/config.h"
#include "core/model/parameters.h"

#include <cstdint>
#include <vector>

namespace memledger {

// Muon (Jordan et al. 2024; Liu et al. 2025, "Muon is Scalable for LLM
// Training", Moonshot's Moonlight): SGD momentum on every hidden 2-D matrix,
// the update orthogonalised by a quintic Newton–Schulz iteration run in bf16,
// as Keller Jordan's zeropower_via_newtonschulz5 (also torch.optim.Muon,
// Megatron-LM's emerging_optimizers wrapper) writes it, with X the update
// transposed so that it is m × n with m ≤ n:
//     for 5 steps:  A = X·Xᵀ;  B = b·A + c·A·A;  X = a·X + B·X
// Embeddings, the output layer, norms and biases stay with AdamW (Moonlight).
constexpr int kNewtonSchulzSteps = 5;
constexpr Dtype kNewtonSchulzDtype = Dtype::BF16;

// FLOPs of one iteration on a rows × cols matrix: X·Xᵀ 2m²n, A·A 2m³, B·X 2m²n.
double newtonSchulzIterationFlops(std::int64_t rows, std::int64_t cols);
// Elements alive at once in one iteration: the gathered matrix G (mn), X (mn),
// A and B (m² each) and the next X (mn) while a·X + B·X is formed.
std::int64_t newtonSchulzWorkingElements(std::int64_t rows, std::int64_t cols);

// The Muon matrices of a pipeline rank's transformer layers at their full
// (unsharded) shapes: under ZeRO or TP each is gathered whole, one at a time,
// before its iteration (Moonlight's Distributed Muon).
ParamCount muonFullMatrices(const Config &config, const std::vector<StageLayers> &stages, std::int64_t rank);
ParamCount muonFullMatrices(const Config &config, const std::vector<std::int64_t> &layers); // global layer indices
// The matrix elements of those layers one rank holds: split by TP (ETP for
// experts) and, with ZeRO-1 and above, by the (expert-)data-parallel group.
double muonLocalMatrixElements(const Config &config, const std::vector<std::int64_t> &layers);

// The largest full matrix's Newton–Schulz working set, in kNewtonSchulzDtype
// (newtonSchulzWorkingElements of it): what the ledger reserves for the step.
Bytes muonWorkingSetBytes(const ParamCount &full);
// The data-parallel ranks that share the iterations under training.muon_newton_schulz.
double muonSharers(const Config &config);

} // namespace memledger
