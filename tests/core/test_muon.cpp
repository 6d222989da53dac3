// SPDX-License-Identifier: MIT
// Muon (Jordan et al. 2024; Liu et al. 2025, Moonlight): one momentum buffer
// per hidden matrix element instead of Adam's two, AdamW for the rest, and a
// Newton–Schulz working set of one full matrix at a time. Counted by hand.
#include "core/formats/preset.h"
#include "core/model/modelstates.h"
#include "core/model/muon.h"
#include "core/schedule/stagelayers.h"
#include "core/time/costmodel.h"
#include "core/time/muonstep.h"
#include "core/time/steptime.h"
#include "core/timeline/lifetimelabels.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;
using namespace memledger::test;

namespace {

// Two layers, h = 64, 4 heads, ffn 256, GeLU, RMSNorm, no biases, RoPE,
// vocabulary 1000 padded to 1024, untied output layer.
nlohmann::json tinyDoc()
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"num_layers", 2},
                    {"hidden_size", 64},
                    {"num_attention_heads", 4},
                    {"ffn_hidden_size", 256},
                    {"vocab_size", 1000},
                    {"normalization", "RMSNorm"},
                    {"add_bias_linear", false},
                    {"position_embedding_type", "rope"},
                    {"untie_embeddings_and_output_weights", true}};
    doc["training"] = {{"seq_length", 128}, {"micro_batch_size", 1}, {"optimizer", "muon"}};
    return doc;
}

Bytes deviceRows(const RankLedger &r, Category c, bool transient)
{
    Bytes sum = 0;
    for (const LedgerEntry &e : r.entries)
        if (e.category == c && e.placement == Placement::Device && e.transient == transient)
            sum += e.bytes;
    return sum;
}

} // namespace

TEST_CASE("Muon keeps one momentum buffer per matrix element, AdamW two for the rest", "[muon][modelstates]")
{
    // Per layer: QKV 64×192 = 12,288, proj 64×64 = 4,096, fc1 64×256 = 16,384,
    // fc2 256×64 = 16,384: 49,152 matrix elements; two RMSNorm weights 128.
    // Word embedding 1024×64 = 65,536; output layer 65,536 + final norm 64.
    const std::int64_t matrices = 2 * 49152; // 98,304 → Muon
    const std::int64_t others = 2 * 128 + 65536 + 65536 + 64; // 131,392 → AdamW
    const std::int64_t psi = matrices + others; // 229,696
    const Ledger muon = computeLedger(configFrom(tinyDoc()));
    REQUIRE(muon.total_parameters == psi);
    const RankLedger &r = muon.ranks[0];
    // bf16 weights: 4 B fp32 master for all, 4 B momentum per matrix element, 4 + 4 B moments for the rest.
    CHECK(deviceRows(r, Category::OptimizerStates, false) == psi * 4 + matrices * 4 + others * 8); // 2,363,136
    // Adam: 12 B for every parameter; Muon saves one 4-byte buffer per matrix element.
    const Ledger adam = computeLedger(configFrom(tinyDoc(), {"training.optimizer=adam"}));
    CHECK(deviceRows(adam.ranks[0], Category::OptimizerStates, false) == psi * 12); // 2,756,352
    CHECK(deviceRows(adam.ranks[0], Category::OptimizerStates, false) - deviceRows(r, Category::OptimizerStates, false)
          == matrices * 4); // 393,216
    // Weights and gradients do not change.
    CHECK(r.device[int(Category::Weights)] == adam.ranks[0].device[int(Category::Weights)]);

    // The momentum follows exp_avg_dtype (bf16: 2 B), as do AdamW's moments.
    TrainingConfig tr;
    tr.optimizer = Optimizer::Muon;
    tr.exp_avg_dtype = Dtype::BF16;
    const StateBytes sb = stateBytes(tr);
    CHECK(sb.states == 2);
    CHECK(sb.fallbackStates == 2 + 4);
    CHECK(modelStates(sb, 1000, 0, 0, 1, 600).optimizer == 1000 * 4 + 600 * 2 + 400 * 6);
    CHECK(!muon.choices.empty());
}

TEST_CASE("Newton–Schulz FLOPs and working set, counted from the iteration", "[muon]")
{
    // A = X·Xᵀ: 2·m·n·m; A·A: 2·m³; B·X: 2·m·m·n (m ≤ n).
    // 4096 × 11008 (a LLaMA-7B MLP matrix): 4·4096²·11008 + 2·4096³
    // = 738,734,374,912 + 137,438,953,472.
    CHECK(newtonSchulzIterationFlops(4096, 11008) == Approx(876173328384.0));
    CHECK(newtonSchulzIterationFlops(11008, 4096) == Approx(876173328384.0)); // transposed first
    // G, X, next X (m×n) and A, B (m×m): 3·64·256 + 2·64² = 49,152 + 8,192.
    CHECK(newtonSchulzWorkingElements(256, 64) == 57344);

    // The tiny model, both layers: per iteration fc1 and fc2 4,718,592 each
    // (2·64²·256·2 + 2·64³), QKV 3,670,016 (2·64²·192·2 + 2·64³), proj
    // 1,572,864 (6·64³): 14,680,064 a layer; 5 iterations, 2 layers.
    const Config c = configFrom(tinyDoc());
    const ParamCount full = muonFullMatrices(c, stageLayers(c), 0);
    CHECK(full.matrices == 8);
    CHECK(full.matrixParams == 98304);
    const MuonStep ms = muonStep(c.hardware, full, double(full.matrixParams), true);
    CHECK(ms.flops == Approx(5.0 * 2 * 14680064.0));
    CHECK(ms.gatherBytes == 0); // nothing sharded, nothing gathered
    CHECK(ms.gemmSeconds > 0);
}

TEST_CASE("Muon's working set is one whole matrix, gathered on demand under TP and ZeRO", "[muon][ledger]")
{
    // The largest matrix is fc1/fc2: 57,344 elements × 2 B bf16 = 114,688 B,
    // whether or not TP and the distributed optimizer split it.
    const auto row = [](const Config &c) {
        const Ledger ledger = computeLedger(c); // alive for the loop: ranks[0] of a temporary would dangle
        for (const LedgerEntry &e : ledger.ranks[0].entries)
            if (e.transient)
                return e;
        return LedgerEntry{};
    };
    const LedgerEntry alone = row(configFrom(tinyDoc()));
    CHECK(alone.bytes == 57344 * 2);
    CHECK(alone.category == Category::OptimizerStates);
    CHECK(alone.note.find("one at a time") != std::string::npos);
    const Config split = configFrom(tinyDoc(), {"parallelism.tensor_model_parallel_size=2",
                                                "parallelism.data_parallel_size=4", "parallelism.zero_stage=1"});
    CHECK(row(split).bytes == 57344 * 2);
    // Each rank gathers what it lacks: all matrix elements but its 1/(t·d) share, in bf16.
    const ParamCount full = muonFullMatrices(split, stageLayers(split), 0);
    const double local = muonLocalMatrixElements(split, {0, 1});
    CHECK(local == Approx(98304.0 / 8));
    const MuonStep ms = muonStep(split.hardware, full, local, true);
    CHECK(ms.gatherBytes == Approx((98304.0 - 98304.0 / 8) * 2));
    CHECK(ms.gatherSeconds > 0);
    // Offloaded, the step is timed as CPU-Adam (a warning says so): no device working set.
    CHECK(row(configFrom(tinyDoc(), {"strategy.optimizer_offload=cpu"})).bytes == 0);
    // Adam has no such row.
    CHECK(row(configFrom(tinyDoc(), {"training.optimizer=adam"})).bytes == 0);
}

TEST_CASE("Muon's step time adds the Newton–Schulz GEMMs — the timeline holds its working set only then",
          "[muon][time]")
{
    const Config muon = configFrom(tinyDoc());
    const Config adam = configFrom(tinyDoc(), {"training.optimizer=adam"});
    const StepInputs in = stepInputsOf(muon);
    const ParamCount full = muonFullMatrices(muon, stageLayers(muon), 0);
    CHECK(in.muonSeconds
          == Approx(muonStep(muon.hardware, full, double(full.matrixParams), in.dataOnNvlink).seconds()));
    CHECK(estimateStepTime(muon).optimizer > estimateStepTime(adam).optimizer);

    const Timeline tl = simulateIteration(muon);
    const RankTimeline &rt = tl.ranks[0];
    bool seen = false;
    for (const Lifetime &l : rt.lifetimes) {
        if (l.kind != LifetimeKind::OptimizerTemporaries)
            continue;
        seen = true;
        CHECK(l.bytes == 57344 * 2);
        CHECK(l.start == Approx(rt.optimizer_start));
        CHECK(l.end == Approx(rt.optimizer_end));
        CHECK(lifetimeLabel(tl, rt, l).find("Newton") != std::string::npos);
    }
    CHECK(seen);
    CHECK(rt.optimizer_device_s >= in.muonSeconds);
}

TEST_CASE("An unknown optimizer names the field and lists muon", "[muon][preset]")
{
    nlohmann::json doc = tinyDoc();
    doc["training"]["optimizer"] = "muonn";
    const LoadResult r = presetFromJson(doc);
    REQUIRE(!r.problems.empty());
    CHECK(r.problems[0].path == "training.optimizer");
    CHECK(r.problems[0].message.find("\"muon\"") != std::string::npos);
    // Written back as it was read.
    const Config c = configFrom(tinyDoc());
    CHECK(presetToJson(c)["training"]["optimizer"] == "muon");
}

TEST_CASE("Layer-wise Newton–Schulz shares the iterations over the data-parallel group", "[muon][time]")
{
    // Moonlight's Distributed Muon: every data-parallel rank iterates on every
    // matrix whole; Megatron-LM's layer-wise optimizer gives each matrix to one
    // rank of the d ranks, so each does 1/d of the FLOPs (here d = 4).
    const Config redundant = configFrom(tinyDoc(), {"parallelism.data_parallel_size=4", "parallelism.zero_stage=1"});
    const Config layerWise = configFrom(tinyDoc(), {"parallelism.data_parallel_size=4", "parallelism.zero_stage=1",
                                                    "training.muon_newton_schulz=layer_wise"});
    CHECK(muonSharers(redundant) == 1);
    CHECK(muonSharers(layerWise) == 4);
    const ParamCount full = muonFullMatrices(redundant, stageLayers(redundant), 0);
    CHECK(muonStep(redundant.hardware, full, 0.0, true, muonSharers(layerWise)).flops
          == Approx(5.0 * 2 * 14680064.0 / 4));
    CHECK(stepInputsOf(layerWise).muonSeconds < stepInputsOf(redundant).muonSeconds);
    // The working set is still one whole matrix on the rank that iterates on it.
    CHECK(computeLedger(layerWise).ranks[0].device[int(Category::OptimizerStates)]
          == computeLedger(redundant).ranks[0].device[int(Category::OptimizerStates)]);
    CHECK(presetToJson(layerWise)["training"]["muon_newton_schulz"] == "layer_wise");
    nlohmann::json doc = tinyDoc();
    doc["training"]["muon_newton_schulz"] = "sharded";
    const LoadResult bad = presetFromJson(doc);
    REQUIRE(!bad.problems.empty());
    CHECK(bad.problems[0].path == "training.muon_newton_schulz");
    CHECK(bad.problems[0].message.find("\"redundant\", \"layer_wise\"") != std::string::npos);
}
