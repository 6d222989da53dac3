// SPDX-License-Identifier: MIT
// Rajbhandari et al. 2020, Figure 1: model states per GPU under ZeRO stages (GB).
#include "core/model/modelstates.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace memledger;
using namespace memledger::test;

TEST_CASE("ZeRO Figure 1: 7.5 B parameters, K = 12, N_d = 64", "[modelstates][reference]")
{
    const nlohmann::json &z = referenceCases()["zero_figure1"];
    const std::int64_t psi = static_cast<std::int64_t>(double(z["parameters"]));
    const std::int64_t nd = z["dp"];
    // The paper's mixed precision: fp16 weights and gradients, fp32 master + Adam moments.
    TrainingConfig tr;
    tr.params_dtype = Dtype::FP16;
    tr.main_grads_dtype = Dtype::FP16;
    tr.optimizer = Optimizer::Adam;
    const StateBytes sb = stateBytes(tr);
    REQUIRE(sb.optimizerPerParam() == Approx(double(z["k"])));

    CHECK(modelStates(sb, psi, 0, 0, nd).total() / kGB == Approx(double(z["baseline_gb"])));
    CHECK(modelStates(sb, psi, 0, 1, nd).total() / kGB == Approx(double(z["os_gb"])).epsilon(0.002));
    CHECK(modelStates(sb, psi, 0, 2, nd).total() / kGB == Approx(double(z["os_g_gb"])).epsilon(0.003));
    CHECK(modelStates(sb, psi, 0, 3, nd).total() / kGB == Approx(double(z["os_g_p_gb"])));
}

TEST_CASE("ZeRO stages through the ledger: each stage shards one more category over d", "[ledger][reference]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "llama-2-7b";
    doc["training"] = {{"seq_length", 2048},
                       {"micro_batch_size", 1},
                       {"global_batch_size", 64},
                       {"params_dtype", "fp16"},
                       {"main_grads_dtype", "fp16"}};
    doc["parallelism"] = {{"data_parallel_size", 64}};
    doc["hardware"] = "A100-SXM-80GB";
    const double psi = double(computeLedger(configFrom(doc)).total_parameters);
    const auto states = [&](int stage) {
        const RankLedger r
            = computeLedger(configFrom(doc, {"parallelism.zero_stage=" + std::to_string(stage)})).ranks[0];
        return double(r.device[int(Category::Weights)] + r.device[int(Category::Gradients)]
                      + r.device[int(Category::OptimizerStates)]);
    };
    // (2 + 2 + K) Psi, 4 Psi + K Psi / N_d, 2 Psi + (2 + K) Psi / N_d, (2 + 2 + K) Psi / N_d.
    CHECK(states(0) == Approx(16 * psi));
    CHECK(states(1) == Approx(4 * psi + 12 * psi / 64).epsilon(1e-6));
    CHECK(states(2) == Approx(2 * psi + 14 * psi / 64).epsilon(1e-6));
    CHECK(states(3) == Approx(16 * psi / 64).epsilon(1e-6));
    // use_distributed_optimizer is ZeRO-1.
    CHECK(double(computeLedger(configFrom(doc, {"parallelism.use_distributed_optimizer=true"}))
                     .ranks[0]
                     .device[int(Category::OptimizerStates)])
          == Approx(12 * psi / 64).epsilon(1e-6));
}

TEST_CASE("Bytes per parameter are derived from precision and optimizer", "[modelstates]")
{
    TrainingConfig tr; // bf16 params, fp32 master, fp32 main grads, Adam: Megatron's 18 bytes
    StateBytes sb = stateBytes(tr);
    CHECK(sb.weight + sb.grad + sb.optimizerPerParam() == 18);
    tr.main_grads_dtype = Dtype::BF16; // seed 000's 16 bytes
    CHECK(stateBytes(tr).weight + stateBytes(tr).grad + stateBytes(tr).optimizerPerParam() == 16);
    tr.params_dtype = Dtype::FP32; // fp32 training: 4 + 4 + 8, no master copy
    tr.main_grads_dtype = Dtype::FP32;
    CHECK(stateBytes(tr).master == 0);
    CHECK(stateBytes(tr).weight + stateBytes(tr).grad + stateBytes(tr).optimizerPerParam() == 16);
    tr = TrainingConfig{};
    tr.optimizer = Optimizer::SGD; // momentum only
    CHECK(stateBytes(tr).optimizerPerParam() == 8);
    tr.optimizer = Optimizer::Adam8bit; // 1 + 1 byte moments plus block scales
    CHECK(stateBytes(tr).optimizerPerParam() == Approx(4 + 2 + 8.0 / 2048));
    tr.optimizer = Optimizer::Adafactor;
    // Factored: a 4096 x 4096 matrix keeps 4096 + 4096 fp32 second-moment entries.
    const ModelStates ms = modelStates(stateBytes(tr), 4096 * 4096, 8192, 0, 1);
    CHECK(ms.optimizer == 4 * 4096 * 4096 + 4 * 8192);
}
