// SPDX-License-Identifier: MIT
#pragma once

#include "core/allocator/streams.h"
#include "core/base/category.h"
#include "core/base/problem.h"
#include "core/base/units.h"
#include "core/config/config.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memledger {

enum class Placement { Device, Host, NVMe };
std::string_view placementName(Placement p);

// Which parameters a model-state row holds, so the timeline can create each
// gradient when backward reaches its parameters.
enum class ParamGroup { None, Layers, Experts, Embeddings, OutputLayer };

// The part of each backward a row is alive in, where not the whole iteration.
enum class BackwardWindow : std::uint8_t {
    None,
    // While the rank's layers run their backward, from the last layer's to
    // the first's, after the loss's and the output layer's backward (FSDP's
    // per-block reduce-scatter buffers).
    Layers,
    // From the output layer's backward to the backward's end (the root
    // unit's output-layer gradient, which waits for the root's post-backward).
    FromOutputLayer,
    // The backward's last moments, its first layer's (the root unit's
    // reduce-scatter, which FSDP2's final callback runs).
    End,
};

// One row of a rank's ledger: where it lives, how many bytes, and the
// formula with the configuration's values substituted.
struct LedgerEntry
{
    Category category = Category::Weights;
    Placement placement = Placement::Device;
    std::string label;
    Bytes bytes = 0;
    std::string formula;
    std::string note; // the choice made where frameworks differ; may be empty
    ParamGroup group = ParamGroup::None;
    bool transient = false; // alive only while the optimizer step runs (the timeline places it there)
    // Alive only in part of each backward, where the timeline places it
    // (BackwardWindow); the whole iteration otherwise.
    BackwardWindow window = BackwardWindow::None;
    // What the rank's simulated peak holds beyond the other rows (core/timeline/peakledger.h).
    bool atPeak = false;
    // The stream whose pool the caching allocator serves it from (FSDP2's
    // gradients and all-gather buffers have their own).
    StreamId stream = kComputeStream;
};

using ByCategory = std::array<Bytes, kCategoryCount>;

struct RankLedger
{
    int pipeline_rank = 0;
    std::int64_t parameters = 0; // parameters held by this rank before ZeRO sharding
    std::int64_t largest_parameter_tensor = 0; // elements of the largest single tensor on this rank
    std::int64_t layers = 0; // transformer layers on this rank (all chunks)
    double in_flight_microbatches = 0; // in stage-micro-batches (a chunk counts 1/v)
    std::int64_t in_flight_chunks = 0; // chunk-micro-batches alive at the peak
    Bytes layer_activation_bytes = 0; // one layer, one micro-batch, as stored (after recompute policy)
    ByCategory device{};
    ByCategory host{}; // host DRAM and NVMe together
    Bytes device_total_bytes = 0;
    Bytes host_total_bytes = 0;
    bool fits = false; // device total <= hbm capacity
    // Whether what this rank offloads fits where it goes (hostFits): its host
    // DRAM rows within hardware.host_bytes and its NVMe rows within nvme_bytes.
    bool host_fits = true;
    // strategy.pipeline_activation_balance: saved activations this rank parks
    // in other ranks' memory, and other ranks' it holds (both in device_total_bytes).
    Bytes parked_out_bytes = 0;
    Bytes parked_in_bytes = 0;
    Bytes unbalancedDeviceTotal() const { return device_total_bytes + parked_out_bytes - parked_in_bytes; }
    std::vector<LedgerEntry> entries;
};

// One donor-receiver pair of strategy.pipeline_activation_balance (core/ledger/balance.h).
struct ParkedActivations
{
    int from = 0; // the donor's pipeline rank
    int to = 0; // the receiver's
    Bytes bytes = 0; // per GPU, at the donor's peak
    bool nvlink = false; // both ranks' GPUs in one node; else the network
    double link_bytes_per_s = 0; // per direction
};

struct Ledger
{
    std::int64_t total_parameters = 0;
    std::int64_t gpus = 0;
    std::int64_t micro_batches = 0;
    std::vector<RankLedger> ranks;
    int peak_rank = 0;
    Bytes peak_bytes = 0;
    Bytes capacity_bytes = 0;
    Bytes usable_bytes = 0; // capacity minus the runtime reserve
    Bytes host_capacity_bytes = 0; // host memory per GPU (offload targets)
    Problems warnings; // non-fatal remarks (validation warnings and ledger notes)
    std::vector<std::string> choices; // one line per implementation choice in force
    std::vector<ParkedActivations> parked; // empty unless activations are balanced across ranks
    Bytes balance_level_bytes = 0; // the level the device totals were evened to
    Bytes unbalanced_peak_bytes = 0; // the peak before balancing (= peak_bytes without it)

    bool fits() const; // every rank fits the device
    bool hostFits() const; // every rank's offloaded bytes fit the host memory per GPU
    // Per pipeline rank, the elements of its largest parameter tensor (what backwardBuffers sizes by).
    std::vector<std::int64_t> largestParameterTensors() const;
};

// The host-memory verdict for one rank: its host total (host DRAM and NVMe rows
// together) within the host memory per GPU. A capacity of 0 means no host
// memory, so any offloaded byte is over it.
bool hostFits(Bytes hostTotalBytes, Bytes hostCapacityBytes);

// An entry's share of its rank's total in the same place (device rows of the
// device total, host and NVMe rows of the host total), and a rank's share of
// the device capacity; 0 when the whole is 0.
double shareOfRank(const RankLedger &rank, const LedgerEntry &entry);
double shareOfCapacity(const Ledger &ledger, const RankLedger &rank);

// The ledger of a configuration. Precondition: validate(config) has no errors.
// ZB-V's op order depends on its passes' times, which this layer does not
// know: here they are equal (the handcrafted schedule's). The ledger of the
// simulated iteration, which every view and verdict reads, takes the order
// timed by the cost model (computeLedger(config, scheduledOps(...)),
// core/ledger/scheduledledger.h and core/time/passtimes.h).
Ledger computeLedger(const Config &config);

} // namespace memledger
