// SPDX-License-Identifier: MIT
// The sizes of what a backward allocates for a moment (core/model/backwardbuffers.h).
#include "core/model/backwardbuffers.h"
#include "testutil.h"

#include <catch2/catch.hpp>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("A materialised weight gradient is the rank's largest tensor in the parameter dtype", "[timeline]")
{
    // GPT-3 175B with t = 8, p = 8, bf16 parameters. Counted by hand: the word
    // embedding on rank 0 (and its tied copy on rank 7) is 51,200 padded
    // vocabulary rows / 8 × 12,288 = 78,643,200 elements; the largest layer
    // matrix, fc1, is 12,288 × 49,152 / 8 = 75,497,472. Two bytes each.
    const Config c = scenario("gpt-3-175b-64gpus-tp-only");
    const BackwardBuffers b = backwardBuffers(c, computeLedger(c).largestParameterTensors());
    REQUIRE(b.weightGradient.size() == 8);
    CHECK(b.weightGradient[0] == 78'643'200 * 2);
    CHECK(b.weightGradient[3] == 75'497'472 * 2);
    CHECK(b.weightGradient[7] == 78'643'200 * 2);
    CHECK(b.gradBytesPerLayer == 0); // no grad_offload
}

TEST_CASE("Which backwards materialise a weight gradient before accumulating it", "[timeline]")
{
    StrategyConfig st;
    // Megatron's contiguous buffer: with gradient-accumulation fusion the GEMM
    // writes into main_grad directly; without it every backward materialises.
    st.grad_buffer = GradBuffer::Contiguous;
    st.gradient_accumulation_fusion = true;
    CHECK_FALSE(materializesWeightGradient(st, true));
    CHECK_FALSE(materializesWeightGradient(st, false));
    st.gradient_accumulation_fusion = false;
    CHECK(materializesWeightGradient(st, true));
    CHECK(materializesWeightGradient(st, false));
    // PyTorch's .grad: the first backward's AccumulateGrad adopts the tensor;
    // later micro-batches add theirs to it.
    st.grad_buffer = GradBuffer::OnDemand;
    CHECK_FALSE(materializesWeightGradient(st, true));
    CHECK(materializesWeightGradient(st, false));
}
