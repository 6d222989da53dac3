// SPDX-License-Identifier: MIT
// recompute_granularity "selective_op": torchtitan's per-op selective
// activation checkpointing (torchtitan/distributed/activation_checkpoint.py,
// SelectiveAC): inside each block the outputs of matmuls, of the attention
// kernel and of reduce-scatters are kept, except every second matmul; the
// rest is recomputed. A Llama block's matmuls run wq, wk, wv, wo, w1, w3, w2.
#include "core/check/validate.h"
#include "core/formats/preset.h"
#include "core/ledger/ledger.h"
#include "core/model/activations.h"
#include "core/time/costmodel.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

namespace {

// Llama 3.1 8B (h 4,096, 32 heads of 128 in 8 groups, SwiGLU width 14,336),
// one 8,192-token sequence, bf16, FlashAttention.
Config llama8b(const std::string &recompute, std::int64_t t = 1)
{
    nlohmann::json doc = test::emptyDoc();
    doc["model"] = "llama-3.1-8b";
    doc["hardware"] = "H100-SXM-80GB";
    doc["training"] = {{"seq_length", 8192}, {"micro_batch_size", 1}, {"global_batch_size", 8}};
    doc["parallelism"] = {{"tensor_model_parallel_size", t}, {"sequence_parallel", t > 1}, {"data_parallel_size", 1}};
    doc["strategy"] = {{"flash_attention", true}, {"recompute_granularity", recompute}};
    return test::configFrom(doc);
}

Bytes storedAs(const LayerActivations &la, const std::string &name)
{
    for (const SavedTensor &s : la.tensors)
        if (s.name == name)
            return s.fate == TensorFate::Store ? s.bytes : 0;
    return -1;
}

} // namespace

TEST_CASE("selective_op keeps what torchtitan's per-op policy keeps of a Llama block", "[activations][selective_op]")
{
    const std::int64_t s = 8192, h = 4096, a = 32, g = 8, d = 128, f = 14336;
    const LayerActivations la = layerActivations(llama8b("selective_op"), false, true);
    // Kept: the block's input; wq's and wv's outputs (matmuls 1 and 3); the
    // flash kernel's output and fp32 log-sum-exp; w1's output (the 5th) and
    // w2's (the 7th). Recomputed: the norms, wk (2nd), wo (4th), w3 (6th), SiLU·up.
    CHECK(storedAs(la, "input_norm.input") == 2 * s * h);
    CHECK(storedAs(la, "attention.q") == 2 * s * a * d);
    CHECK(storedAs(la, "attention.k") == 0);
    CHECK(storedAs(la, "attention.v") == 2 * s * g * d);
    CHECK(storedAs(la, "attention.softmax_lse") == 4 * s * a);
    CHECK(storedAs(la, "attention.proj.input") == 2 * s * a * d);
    CHECK(storedAs(la, "mlp.fc1.gate") == 2 * s * f);
    CHECK(storedAs(la, "mlp.fc1.up") == 0);
    CHECK(storedAs(la, "mlp.fc2.input") == 0);
    CHECK(storedAs(la, "mlp.fc2.output") == 2 * s * h);
    CHECK(la.kept == s * (2 * h + 2 * a * d + 2 * g * d + 4 * a + 2 * a * d + 2 * f + 2 * h)); // 521,142,272 B
    CHECK(la.kept == 521142272);
    CHECK(la.kept + la.recomputed == la.total);
    // Between Megatron's selective (which keeps nearly everything with FlashAttention) and full recompute.
    CHECK(la.kept < layerActivations(llama8b("selective"), false, false).kept);
    CHECK(la.kept > layerActivations(llama8b("full"), false, false).checkpoint);
}

TEST_CASE("selective_op with tensor parallelism keeps the reduce-scatters and w2's unsharded output",
          "[activations][selective_op]")
{
    // t = 8 with sequence-parallel norms, as torchtitan's tensor-parallel plan:
    // wo's and w2's local outputs are partial sums over the whole sequence,
    // reduce-scattered into sequence shards. The policy keeps both
    // reduce-scatters and w2's output (a matmul's, kept whole), recomputes wo's.
    const std::int64_t s = 8192, h = 4096, a = 32, g = 8, d = 128, f = 14336, t = 8;
    const LayerActivations la = layerActivations(llama8b("selective_op", t), false, true);
    CHECK(storedAs(la, "input_norm.input") == 2 * s * h / t);
    CHECK(storedAs(la, "attention.q") == 2 * s * a * d / t);
    CHECK(storedAs(la, "attention.v") == 2 * s * g * d / t);
    CHECK(storedAs(la, "attention.proj.reduce_scatter") == 2 * s * h / t);
    CHECK(storedAs(la, "mlp.fc1.gate") == 2 * s * f / t);
    CHECK(storedAs(la, "mlp.fc2.output") == 2 * s * h);
    CHECK(storedAs(la, "mlp.fc2.reduce_scatter") == 2 * s * h / t);
}

TEST_CASE("selective_op compiled keeps only what the backward reads: not w2's output or its reduce-scatter",
          "[activations][selective_op]")
{
    // Eager, the checkpoint's dispatch mode stores every MUST_SAVE output for
    // the recomputation to replay (torch/utils/checkpoint.py,
    // _CachingTorchDispatchMode). Compiled, MUST_SAVE only bans the node from
    // recomputation (torch/_functorch/partitioners.py, should_ban_recomputation)
    // and the min-cut saves what the backward needs: w2's output and the
    // reduce-scatter after it feed only the residual add, whose backward
    // reads neither. Everything else the backward reads is the same.
    const std::int64_t s = 8192, h = 4096, t = 8;
    for (const std::int64_t tp : {std::int64_t(1), t}) {
        CAPTURE(tp);
        const Config eager = llama8b("selective_op", tp);
        Config compiled = eager;
        compiled.strategy.torch_compile = true;
        const LayerActivations e = layerActivations(eager, false, true);
        const LayerActivations c = layerActivations(compiled, false, true);
        CHECK(storedAs(c, "mlp.fc2.output") == -1);
        CHECK(storedAs(c, "mlp.fc2.reduce_scatter") == -1);
        CHECK(storedAs(c, "attention.q") == storedAs(e, "attention.q"));
        CHECK(storedAs(c, "mlp.fc1.gate") == storedAs(e, "mlp.fc1.gate"));
        CHECK(storedAs(c, "attention.proj.reduce_scatter") == storedAs(e, "attention.proj.reduce_scatter"));
        CHECK(e.kept - c.kept == 2 * s * h + (tp > 1 ? 2 * s * h / tp : 0));
        // The ledger's choices say which behaviour the compiled plan follows.
        bool said = false;
        for (const std::string &choice : computeLedger(compiled).choices)
            said = said || choice.find("w2's output") != std::string::npos;
        CHECK(said);
    }
}

TEST_CASE("selective_op under torchtitan's Float8 keeps the same matmul outputs when compiled and refuses eager",
          "[activations][selective_op][fp8]")
{
    // torchao's tensorwise Float8Linear (December 2024) multiplies two
    // Float8Tensors with torch.mm (manual_float8_matmul_with_args_in_float8);
    // a TorchDispatchMode runs before a tensor subclass's __torch_dispatch__,
    // so the policy sees aten.mm, counts it and keeps every other 16-bit
    // output, as in bf16. Its aten.abs outputs (max(abs(x)) for each scale)
    // feed only the amax, which is what a compiled backward reads.
    Config bf16 = llama8b("selective_op");
    bf16.strategy.torch_compile = true;
    Config fp8 = bf16;
    fp8.training.fp8_recipe = Fp8Recipe::Tensorwise;
    fp8.strategy.fp8_implementation = Fp8Implementation::Torchao;
    CHECK_FALSE(hasErrors(validate(fp8)));
    const LayerActivations a = layerActivations(bf16, false, true);
    const LayerActivations b = layerActivations(fp8, false, true);
    CHECK(b.kept == a.kept);
    CHECK(storedAs(b, "attention.q") == 2 * 8192 * 4096);
    CHECK(storedAs(b, "mlp.fc1.gate") == 2 * 8192 * 14336);
    bool said = false;
    for (const std::string &choice : computeLedger(fp8).choices)
        said = said || choice.find("aten.mm on Float8") != std::string::npos;
    CHECK(said);

    // Eager, the dispatch mode would store every abs output: refused by name,
    // as is a recipe torchtitan's Float8 does not run (Transformer Engine's).
    const auto refused = [](const Config &c) {
        for (const Problem &p : validate(c))
            if (p.isError() && p.path == "strategy.recompute_granularity")
                return true;
        return false;
    };
    Config eager = fp8;
    eager.strategy.torch_compile = false;
    CHECK(refused(eager));
    Config te = fp8;
    te.strategy.fp8_implementation = Fp8Implementation::TransformerEngine;
    CHECK(refused(te));
    CHECK_FALSE(refused(fp8));
}

TEST_CASE("selective_op is refused by name where torchtitan's block is not the model", "[validate][selective_op]")
{
    Config moe = test::scenario("mixtral-8x22b-64xh100-dropless");
    moe.strategy.recompute_granularity = RecomputeGranularity::SelectiveOp;
    moe.strategy.tensor_policies.clear();
    bool named = false;
    for (const Problem &p : validate(moe))
        named = named || (p.isError() && p.path == "strategy.recompute_granularity");
    CHECK(named);

    Config unfused = llama8b("selective_op");
    unfused.strategy.flash_attention = false;
    CHECK(hasErrors(validate(unfused)));
    CHECK_FALSE(hasErrors(validate(llama8b("selective_op"))));
}

TEST_CASE("selective_op: the preset names it, the backward rebuilds the rest, and costs less than full",
          "[selective_op]")
{
    const Config c = llama8b("selective_op");
    const LoadResult again = presetFromText(presetToText(c));
    REQUIRE(again.config.has_value());
    CHECK(again.config->strategy.recompute_granularity == RecomputeGranularity::SelectiveOp);
    CHECK(presetToText(c).find("\"selective_op\"") != std::string::npos);

    // The recompute re-runs wk, wo and w3 and the elementwise ops, not the kept matmuls or the attention kernel.
    const double perOp = costModel(c).dense.recompute.seconds;
    const double full = costModel(llama8b("full")).dense.recompute.seconds;
    CHECK(perOp > 0);
    CHECK(perOp < 0.6 * full);

    // The timeline rebuilds each layer's recomputed tensors as its backward
    // begins (the checkpoint re-runs the block at its first unpack); autograd
    // frees each as the node that saved it runs, so the MLP half's go as the
    // MLP's backward ends, midway, and the attention half's at the layer's end.
    const Timeline tl = simulateIteration(c);
    const LayerActivations la = layerActivations(c, false, false);
    CHECK(la.recomputedMlp > 0);
    CHECK(la.recomputedMlp < la.recomputed);
    std::map<std::int32_t, std::vector<const Lifetime *>> byLayer;
    for (const Lifetime &l : tl.ranks[0].lifetimes)
        if (l.kind == LifetimeKind::TensorRecompute && l.microbatch == 0)
            byLayer[l.layer].push_back(&l);
    REQUIRE(byLayer.size() == std::size_t(c.model.num_layers));
    for (const auto &[layer, pieces] : byLayer) {
        CAPTURE(layer);
        REQUIRE(pieces.size() == 2);
        const Lifetime &mlp = *(pieces[0]->piece == SavedPiece::Mlp ? pieces[0] : pieces[1]);
        const Lifetime &attention = *(pieces[0]->piece == SavedPiece::Mlp ? pieces[1] : pieces[0]);
        CHECK(mlp.bytes == la.recomputedMlp);
        CHECK(attention.bytes == la.recomputed - la.recomputedMlp);
        CHECK(mlp.start == attention.start);
        CHECK(mlp.end == Approx((attention.start + attention.end) / 2));
    }
}
