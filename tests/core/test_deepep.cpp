// SPDX-License-Identifier: MIT
// DeepEP's dispatch (strategy.moe_token_dispatcher "deepep"): its buffer sized
// by hand from deep_ep's size hints (csrc/legacy/config.hpp) and the configs
// deep_ep/buffers/legacy.py recommends, and the ledger rows it makes.
#include "core/check/validate.h"
#include "core/formats/launchimport.h"
#include "core/formats/megatronargs.h"
#include "core/ledger/ledger.h"
#include "core/model/deepep.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace memledger;
using test::configFrom;
using test::emptyDoc;

TEST_CASE("DeepEP buffer of an expert-parallel group of 64 with h = 7168, from its size hints by hand", "[moe][deepep]")
{
    // hidden_bytes = 7168 × max(2, 2) = 14,336; num_sms 20 → 10 channels; 64
    // ranks → 8 NVLink peers and 8 RDMA ranks. The configs for 64 ranks:
    // dispatch (32, 288, 8, 128) and combine (1, 288, 8, 128), so 288 NVLink
    // receive tokens and align_up(128, 8) = 128 RDMA receive tokens.
    // NVLink: 10·8·(2·8 + 3)·4 = 6,080 plus 10·8·288 tokens × (14,336 data +
    // 8 source meta + 128·8 top-k indices + 128·4 weights + 128·4 scales =
    // 16,392 B) = 377,671,680: 377,677,760, rounded up to 128 B 377,677,824.
    // RDMA: 10·8·(8·2 + 2)·2·4 = 11,520 plus 10·8·128·2 × (16,392 + 16 int4
    // signal) = 336,035,840: 336,047,360, a multiple of 128 already.
    const auto b = deepEpBuffer(64, 7168 * 2);
    REQUIRE(b);
    CHECK(b->nvlRecvTokens == 288);
    CHECK(b->rdmaRecvTokens == 128);
    CHECK(b->channels == 10);
    CHECK(b->nvl == 377'677'824);
    CHECK(b->rdma == 336'047'360);
}

TEST_CASE("DeepEP within one node has no RDMA buffer, and no config for an odd group", "[moe][deepep]")
{
    // 8 ranks: 256-token queues, 10·8·(2·1 + 3)·4 = 1,600 plus
    // 10·8·256 × (4,096·2 + 8 + 1,024 + 512 + 512 = 10,248) = 209,879,040.
    const auto b = deepEpBuffer(8, 4096 * 2);
    REQUIRE(b);
    CHECK(b->rdma == 0);
    CHECK(b->nvl == (1'600 + 209'879'040 + 127) / 128 * 128);
    CHECK_FALSE(deepEpBuffer(12, 4096 * 2));
    CHECK_FALSE(deepEpBuffer(256, 4096 * 2));
}

TEST_CASE("DeepEP dispatch in the ledger: a token once per rank, and its buffer outside the allocator",
          "[moe][deepep][ledger]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "mixtral-8x7b";
    doc["training"] = {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 16}};
    doc["parallelism"] = {{"data_parallel_size", 16}, {"expert_model_parallel_size", 8}};
    const Config all = configFrom(doc);
    const Config deep = configFrom(doc, {"strategy.moe_token_dispatcher=deepep"});
    const Ledger la = computeLedger(all);
    const Ledger ld = computeLedger(deep);
    // The all-to-all dispatcher: 4,096·2 copies sent and the worst case received (8 ranks × 4,096 × 1 local expert).
    CHECK(test::entryBytes(la.ranks[0], Category::Communication, "MoE all-to-all buffers")
          == (4096LL * 2 + 8 * 4096) * 4096 * 2);
    // DeepEP: 4,096 tokens received from at most min(k, e) = 2 ranks each, and the combine's 4,096 tokens back.
    CHECK(test::entryBytes(ld.ranks[0], Category::Communication, "MoE dispatch and combine (DeepEP)")
          == (4096LL * 2 + 4096) * 4096 * 2);
    CHECK(test::entryBytes(ld.ranks[0], Category::Runtime, "DeepEP buffers") == deepEpBuffer(8, 4096 * 2)->nvl);
    CHECK(test::entryBytes(ld.ranks[0], Category::Communication, "MoE all-to-all buffers") == 0);
    // DeepEP's buffer is not a tensor of PyTorch's caching allocator: it is with the runtime reserve.
    const Timeline tl = simulateIteration(deep, {200});
    const PlanReserved res = simulateReserved(deep, tl);
    CHECK(res.ranks[0].runtime_bytes == deep.hardware.runtime_reserve_bytes + deepEpBuffer(8, 4096 * 2)->nvl);
}

TEST_CASE("DeepEP needs a group size it has a config for, and the Megatron-LM flex dispatcher selects it",
          "[moe][deepep][validate]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = "deepseek-v3";
    doc["parallelism"] = {{"data_parallel_size", 256}, {"expert_model_parallel_size", 128}};
    CHECK_FALSE(hasErrors(validate(configFrom(doc, {"strategy.moe_token_dispatcher=deepep"}))));
    doc["parallelism"]["expert_model_parallel_size"] = 256;
    Config wide = configFrom(doc);
    wide.strategy.moe_token_dispatcher = MoeDispatcher::DeepEP;
    const Problems p = validate(wide);
    CHECK(std::any_of(p.begin(), p.end(),
                      [](const Problem &x) { return x.isError() && x.path == "strategy.moe_token_dispatcher"; }));

    const std::string base = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --max-position-embeddings 512 "
                             "--seq-length 512 --micro-batch-size 1 --vocab-size 1000 --num-experts 8 "
                             "--expert-model-parallel-size 8 --moe-router-topk 2 ";
    for (const auto &[args, deepep] : std::vector<std::pair<std::string, bool>>{
             {"--moe-token-dispatcher-type alltoall", false},
             {"--moe-token-dispatcher-type flex --moe-enable-deepep", true},
             {"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep", true},
             {"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep", false}}) {
        INFO(args);
        LaunchOptions options;
        options.gpus = 8;
        LaunchImport r = importMegatronLaunch(base + args, options);
        finishLaunchImport(r, {});
        REQUIRE(r.config);
        CHECK((r.config->strategy.moe_token_dispatcher == MoeDispatcher::DeepEP) == deepep);
    }
}
