// SPDX-License-Identifier: MIT
// Reserved memory: each rank's simulated iteration as the requests PyTorch's
// caching allocator receives (core/timeline/allocationstream.h) and what the
// allocator reserves for them (core/timeline/reserved.h). The stream is held
// against the timeline it comes from, and against the requests of the
// measured runs of tools/measure: the same allocator rules must reserve the
// same for the model's requests as for the run's own.
#include "core/config/config.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/model/activations.h"
#include "core/timeline/allocationstream.h"
#include "core/timeline/reserved.h"
#include "core/timeline/timeline.h"
#include "core/trace/allocatorreplay.h"
#include "core/trace/traceimport.h"
#include "testutil.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

Bytes runtimeRows(const RankLedger &rank)
{
    Bytes sum = 0;
    for (const LedgerEntry &e : rank.entries)
        if (e.category == Category::Runtime && e.placement == Placement::Device)
            sum += e.bytes;
    return sum;
}

Config fixturePreset(const std::filesystem::path &dir)
{
    std::ifstream in(dir / "preset.json");
    std::stringstream text;
    text << in.rdbuf();
    const LoadResult loaded = presetFromText(text.str());
    REQUIRE(loaded.config.has_value());
    return *loaded.config;
}

} // namespace

TEST_CASE("The allocation stream carries the timeline's lifetimes: its requested peak is the timeline's peak",
          "[reserved][allocator]")
{
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const Config config = scenario(name);
        const Timeline tl = simulateIteration(config);
        const PlanReserved reserved = simulateReserved(config, tl);
        REQUIRE(reserved.ranks.size() == tl.ranks.size());
        for (const RankReserved &r : reserved.ranks) {
            CAPTURE(r.pipeline_rank);
            const RankTimeline &rank = tl.ranks[static_cast<std::size_t>(r.pipeline_rank)];
            // The runtime reserve is no tensor of the allocator's.
            CHECK(r.requested_peak
                  == rank.peak_bytes - runtimeRows(tl.ledger.ranks[static_cast<std::size_t>(r.pipeline_rank)]));
            // Rounding and unsplit tails make blocks at least the requests; segments hold the blocks.
            CHECK(r.allocated_peak >= r.requested_peak);
            CHECK(r.reserved_peak >= r.allocated_at_reserved_peak);
            CHECK(r.reserved_peak == r.allocated_at_reserved_peak + r.fragmentation + r.cached);
            CHECK(r.fragmentation >= 0);
            CHECK(r.cached >= 0);
            CHECK(r.curve.back().bytes <= r.reserved_peak);
            // What runs out: reserved and the runtime reserve, within the device and without a failed request.
            CHECK(r.device_peak_bytes == r.reserved_peak + r.runtime_bytes);
            CHECK(r.fits == (r.device_peak_bytes <= tl.ledger.capacity_bytes && r.ooms == 0));
            // cudaMalloc gets only what the rank's runtime rows leave, DeepEP's own
            // buffers among them: past it the allocator empties its cache, or fails.
            CHECK((r.ooms > 0 || r.reserved_peak <= config.hardware.hbm_bytes - r.runtime_bytes));
            CHECK(r.device_peak_bytes <= reserved.peak_bytes);
        }
    }
}

TEST_CASE("Every allocation of an iteration is freed in it, after it was made", "[reserved][allocator]")
{
    for (const std::string name : {"llama-3-70b-128xh100", "seed-000-7b-c-offload", "deepseek-v3-2048xh100-p16-v4"}) {
        CAPTURE(name);
        const Config config = scenario(name);
        const Timeline tl = simulateIteration(config);
        for (const RankTimeline &rank : tl.ranks) {
            const AllocationStream s
                = allocationStream(config, tl.ledger.ranks[static_cast<std::size_t>(rank.pipeline_rank)], rank);
            std::map<std::int32_t, int> state; // 1 allocated, 2 freed
            double last = -1;
            for (const AllocationEvent &e : s.iteration) {
                CHECK(e.time >= last);
                last = e.time;
                int &st = state[e.tensor];
                CHECK(st == (e.free ? 1 : 0));
                st = e.free ? 2 : 1;
            }
            for (const auto &[tensor, st] : state)
                CHECK(st == 2);
            for (const AllocationEvent &e : s.setup)
                CHECK(state.count(e.tensor) == 0);
        }
    }
}

TEST_CASE("Model states: parameters one tensor each, Megatron's buffers whole, Adam's moments made in the first step",
          "[reserved][allocator]")
{
    // Plain PyTorch (the 7B seed plan without offload): .grad on demand, torch.optim's
    // AdamW with an fp32 master copy made with the optimizer.
    const Config config = scenario("seed-000-7b-a-plain");
    const Timeline tl = simulateIteration(config);
    const RankLedger &ledger = tl.ledger.ranks.front();
    const AllocationStream s = allocationStream(config, ledger, tl.ranks.front());
    Bytes setup = 0, lazy = 0;
    for (const AllocationEvent &e : s.setup)
        setup += e.bytes;
    std::map<std::int32_t, bool> inIteration;
    for (const AllocationEvent &e : s.iteration)
        inIteration[e.tensor] = true;
    for (const AllocationEvent &e : s.firstIteration)
        if (!e.free && !inIteration.count(e.tensor))
            lazy += e.bytes;
    Bytes weights = 0, gradientBuffers = 0, optimizer = 0, other = 0;
    for (const LedgerEntry &e : ledger.entries) {
        if (e.placement != Placement::Device || e.category == Category::Runtime)
            continue;
        if (e.category == Category::Weights)
            weights += e.bytes;
        else if (e.category == Category::OptimizerStates)
            optimizer += e.bytes;
        else if (e.category == Category::Gradients && config.strategy.grad_buffer == GradBuffer::Contiguous)
            gradientBuffers += e.bytes;
        else if (e.category != Category::Gradients && e.category != Category::Activations)
            other += e.bytes;
    }
    // The master copy is a third of Adam's fp32 states (4 of 12 bytes a parameter).
    const StrategyConfig &st = config.strategy;
    INFO("grad_buffer " << gradBufferName(st.grad_buffer));
    CHECK(lazy == Approx(double(optimizer) * 2.0 / 3.0).epsilon(1e-6));
    CHECK(setup == weights + gradientBuffers + other + (optimizer - lazy));
    // Weights one request a parameter tensor: at least one per layer's matrices.
    CHECK(s.setup.size() > std::size_t(4 * config.model.num_layers));
}

TEST_CASE("The model's requests reserve what the measured runs' own requests reserve, under the same allocator",
          "[reserved][allocator][measured]")
{
    // tools/measure's twelve CPU runs: each run's allocations and frees, and
    // the model's stream for its preset, through the same caching-allocator
    // rules. Sizes, order and lifetimes must be real enough for the segments
    // to come out the same: a working set counted as one request, or
    // parameters as one per ledger row, reserved 20 MiB segments the runs never
    // needed (up to 2.6 times the run's reserved on the small models).
    const std::filesystem::path root = std::filesystem::path(MEMLEDGER_TEST_DATA) / "measured";
    // The five Llama runs' reserve is a handful of 2 MiB segments (about 20 MB
    // in all): they are held to one segment either way, which the full
    // recompute runs need (their recomputed tensors are requested in the
    // ledger's order, not in the forward's op by op).
    int exact = 0, runs = 0, llamaRuns = 0;
    for (const auto &entry : std::filesystem::directory_iterator(root)) {
        const std::string run = entry.path().filename().string();
        CAPTURE(run);
        const Config config = fixturePreset(entry.path());
        const Timeline tl = simulateIteration(config);
        const RankReserved modelled = simulateReserved(config, tl).ranks.front();
        const TraceLoadResult loaded = loadTraceFile((entry.path() / "snapshot.pickle.gz").string());
        REQUIRE(loaded.trace.has_value());
        const AllocatorReplay measured = replayThroughAllocator(*loaded.trace);
        if (run.rfind("llama-", 0) == 0) {
            CHECK(std::abs(modelled.reserved_peak - measured.stats.reserved_peak) <= Bytes(2) << 20);
            ++llamaRuns;
            continue;
        }
        CHECK(double(modelled.reserved_peak) == Approx(double(measured.stats.reserved_peak)).epsilon(0.05));
        exact += modelled.reserved_peak == measured.stats.reserved_peak;
        ++runs;
    }
    CHECK(runs == 12);
    CHECK(llamaRuns == 5);
    // All twelve exact. medium-plain-selective was one 2 MiB segment short
    // (-3 %) until the forward made the attention core it does not keep
    // (Megatron's selective recompute runs the core under no_grad), whose
    // freed blocks the kept tensors that follow land beside.
    CHECK(exact == 12);
}

TEST_CASE("Working sets are requested tensor by tensor, adding up to the timeline's sizes", "[reserved][allocator]")
{
    // GPT-3 with unfused attention: the MLP's backward holds the arriving and
    // the produced gradient (s·b·h each) and the GeLU's two inner gradients;
    // the attention's the same two and the two score gradients (a·s²·b each).
    Config config = scenario("gpt-3-175b-64gpus-tp-only");
    config.strategy.flash_attention = false;
    const TransientActivations ta = transientActivations(config);
    const Bytes A = 2, s = config.training.seq_length, b = config.training.micro_batch_size;
    const Bytes h = config.model.hidden_size, a = config.model.num_attention_heads;
    const Bytes t = config.parallelism.tensor_model_parallel_size, f = config.model.ffn() / t;
    CHECK(ta.mlpBackwardParts == std::vector<Bytes>{A * s * b * h, A * s * b * h, A * s * b * f, A * s * b * f});
    CHECK(ta.attentionBackwardParts
          == std::vector<Bytes>{A * s * b * h, A * s * b * h, A * a / t * s * s * b, A * a / t * s * s * b});
    const auto sum = [](const std::vector<Bytes> &v) { return std::accumulate(v.begin(), v.end(), Bytes(0)); };
    CHECK(sum(ta.mlpBackwardParts) == ta.mlpBackward);
    CHECK(sum(ta.attentionBackwardParts) == ta.attentionBackward);
    CHECK(sum(ta.recomputedForwardParts) == ta.recomputedForward);
    CHECK(sum(ta.lossForwardParts) == ta.lossForward);
    CHECK(sum(ta.lossBackwardParts) == ta.lossBackward);
}

TEST_CASE("Expandable segments and a fragmenting plan: reserved follows the allocator's settings",
          "[reserved][allocator]")
{
    // DeepSeek-V3's last stage holds its big loss and output-layer tensors
    // beside the layers' smaller ones: blocks split and free beside blocks in
    // use. Pages mapped as needed leave fewer of them.
    Config config = scenario("deepseek-v3-2048xh100-p16-v4");
    const Timeline tl = simulateIteration(config);
    const RankReserved plain = simulateReserved(config, tl).ranks.back();
    config.strategy.allocator.expandable_segments = true;
    const RankReserved expandable = simulateReserved(config, tl).ranks.back();
    CHECK(plain.fragmentation > 0);
    CHECK(expandable.reserved_peak < plain.reserved_peak);
    CHECK(expandable.reserved_peak >= expandable.allocated_at_reserved_peak);
}

TEST_CASE("A layer's forward makes the tensors its checkpoint rebuilds, in forward order among those it keeps",
          "[reserved][allocator][selective_op]")
{
    // torchtitan's Llama block under per-op checkpointing (one 8,192-token
    // sequence, h 4,096, 32 heads, 8 KV groups of 128), eager as it ran in
    // December 2024. Attention.forward, in order: the RMSNorm's fp32 copy of
    // its input, rstd and its output; wq's output (kept, the 1st matmul),
    // wk's (the 2nd, not kept), wv's (kept); repeat_kv's copies of K and V at
    // every head; the flash kernel's output and log-sum-exp (kept). The
    // checkpoint packs a holder, not the tensor, so what is not kept is freed
    // as the module returns: by the time the MLP half starts.
    const Config config = scenario("llama-3.1-8b-8xh100-torchtitan-fsdp", {"training.micro_batch_size=1"});
    const Timeline tl = simulateIteration(config);
    const RankTimeline &rank = tl.ranks[0];
    const AllocationStream s = allocationStream(config, tl.ledger.ranks[0], rank);
    double attentionStart = -1, mlpStart = -1;
    for (const Lifetime &l : rank.lifetimes)
        if (l.kind == LifetimeKind::Activations && l.layer == 1 && l.microbatch == 0)
            (l.piece == SavedPiece::Attention ? attentionStart : mlpStart) = l.start;
    REQUIRE(attentionStart >= 0);
    REQUIRE(mlpStart > attentionStart);
    std::vector<const AllocationEvent *> made;
    for (const AllocationEvent &e : s.iteration)
        if (!e.free && e.time == attentionStart)
            made.push_back(&e);
    const Bytes sh = 8192 * 4096;
    // The block's input (kept, the checkpoint's own), then the forward's tensors.
    const std::vector<std::pair<Bytes, bool>> expected = {
        {2 * sh, true}, // the block's input
        {4 * sh, false}, // x.float()
        {4 * 8192, false}, // rstd
        {2 * sh, false}, // the normalised x cast back to bf16
        {2 * sh, false}, // times the weight: the norm's output, the projections' input
        {2 * sh, true}, // q = wq(x)
        {2 * 8192 * 1024, false}, // k = wk(x)
        {2 * 8192 * 1024, true}, // v = wv(x)
        {2 * sh, false}, // repeat_kv(k)
        {2 * sh, false}, // repeat_kv(v)
        {4 * 8192 * 32, true}, // log-sum-exp
        {2 * sh, true}, // the attention output
    };
    REQUIRE(made.size() >= expected.size());
    const std::size_t first = made.size() - expected.size();
    std::map<std::int32_t, bool> kept;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        CHECK(made[first + i]->bytes == expected[i].first);
        kept[made[first + i]->tensor] = expected[i].second;
    }
    // What is not kept is freed where the MLP half begins; the rest waits for the backward.
    for (const AllocationEvent &e : s.iteration)
        if (e.free && kept.count(e.tensor)) {
            CAPTURE(e.tensor);
            if (kept[e.tensor])
                CHECK(e.time > mlpStart);
            else
                CHECK(e.time == mlpStart);
        }
}
