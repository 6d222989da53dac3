// SPDX-License-Identifier: MIT
#pragma once

#include "core/config.h"
#include "core/ledger.h"
#include "core/problem.h"

#include <cstdint>
#include <vector>

namespace memledger {

// "Find plans that fit" (issue 6): every split of a GPU count into t, p, v, d,
// c, e with every micro-batch size, ZeRO stage, recompute choice and
// offload choice (none, CPU optimizer, activations to the host, both), for one model, device and global batch.
struct SearchOptions {
    std::int64_t gpus = 8;
    int top = 10;
    double margin = 0.8;          // keep plans whose ledger peak ≤ margin × hbm_bytes (454 runs, none OOM)
    std::int64_t gpusPerNode = 8; // NVLink domain: t and c stay inside it
    std::int64_t maxVirtual = 4;  // interleaved chunks per rank tried: 2..maxVirtual
    std::int64_t maxMicroBatch = 16;
};

// Arguments named as on the command line ("--gpus", "--top", "--margin").
Problems checkSearchOptions(const SearchOptions &options);

// Estimated step time of a plan, seconds, by part. A simple documented model:
// roofline compute of the busiest (last) stage per micro-batch; tensor-parallel
// collectives (4 per layer per micro-batch, 6 with full recompute: ring cost
// 2(t-1)/t of the layer's activation over NVLink) and context-parallel K/V
// all-gathers fully exposed; the pipeline bubble (p-1)/v stage-micro-batch
// times (Narayanan et al. 2021); data-parallel gradient reduction (ring
// all-reduce volume, ×1.5 with ZeRO-3's extra parameter gather) hidden only
// under the backward of the last micro-batch; pipeline sends; the optimizer
// step (device HBM streaming, or CPU-Adam plus host-link copies); activation
// offload stalls where a micro-batch's saved activations take longer to cross
// the host link than the stage's forward (out) or backward (in) lasts.
struct StepTime {
    double compute = 0;    // forward + backward of all micro-batches on the busiest stage
    double recompute = 0;
    double bubble = 0;
    double tensorComm = 0;
    double contextComm = 0;
    double dataComm = 0;   // the exposed part
    double pipelineComm = 0;
    double optimizer = 0;
    double activationOffload = 0; // stalls
    double total = 0;
};

struct SearchPlan {
    Config config;
    Ledger ledger;
    Bytes estimateBytes = 0; // the search's lower bound on the peak (what it pruned with)
    StepTime time;
};

struct SearchResult {
    std::vector<SearchPlan> plans;  // best (fastest) first
    std::int64_t candidates = 0;    // valid plans enumerated
    std::int64_t prunedByBound = 0; // rejected because the lower bound already exceeds the limit
    std::int64_t ledgersRun = 0;    // full ledgers computed to confirm the best
    std::int64_t rejectedByLedger = 0;
    Bytes limitBytes = 0;
    double seconds = 0;
    // Why no plan came back (or what most often ruled plans out), in words.
    std::vector<std::string> notes;
};

// Exactness: a candidate is dropped early only when its lower bound (model
// states, stored layer activations and the runtime reserve of its first or
// last pipeline rank: terms the ledger adds in full, every other ledger term
// being non-negative) exceeds the limit. The rest are visited fastest first
// and confirmed with computeLedger until `top` fit, so every returned plan's
// peak is the ledger's own.
SearchResult searchPlans(const Config &base, const SearchOptions &options);

// The step-time model above for one configuration (used by the search and tests).
StepTime estimateStepTime(const Config &config, std::int64_t gpusPerNode = 8);

} // namespace memledger
