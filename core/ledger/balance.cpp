// SPDX-License-Identifier: MIT
#include "core/ledger/balance.h"

#include "core/base/textcat.h"
#include "core/base/units.h"

#include <algorithm>
#include <cstdio>

namespace memledger {

namespace {

constexpr const char *kLayersRow = "Transformer layers";

LedgerEntry *layersRow(RankLedger &rank)
{
    for (LedgerEntry &e : rank.entries)
        if (e.category == Category::Activations && e.placement == Placement::Device && e.label == kLayersRow)
            return &e;
    return nullptr;
}

const LedgerEntry *layersRow(const RankLedger &rank)
{
    return layersRow(const_cast<RankLedger &>(rank));
}

Bytes give(const std::vector<Bytes> &totals, const std::vector<Bytes> &movable, Bytes level)
{
    Bytes sum = 0;
    for (std::size_t r = 0; r < totals.size(); ++r)
        sum += std::min(movable[r], std::max<Bytes>(0, totals[r] - level));
    return sum;
}

Bytes take(const std::vector<Bytes> &totals, Bytes level)
{
    Bytes sum = 0;
    for (Bytes t : totals)
        sum += std::max<Bytes>(0, level - t);
    return sum;
}

// The smallest L in [lo, hi) with f(L) ≤ 0, else hi (what a binary search
// over [lo, hi] finds), for a non-increasing f that is linear between the
// integer `kinks`: f is evaluated at the kinks only, and the crossing inside
// the one segment where f changes sign is solved exactly, in O(p log p)
// rather than a search over the ~2^36 byte levels.
template<typename F>
Bytes firstNonPositive(Bytes lo, Bytes hi, std::vector<Bytes> &kinks, F f)
{
    if (lo >= hi)
        return lo;
    Bytes fa = f(lo);
    if (fa <= 0)
        return lo;
    kinks.push_back(hi);
    std::sort(kinks.begin(), kinks.end());
    Bytes a = lo;
    for (Bytes b : kinks) {
        if (b <= a || b > hi)
            continue;
        const Bytes fb = f(b);
        if (fb <= 0) {
            // f(a + k) = fa − k·slope on [a, b], slope > 0 a whole number.
            const Bytes slope = (fa - fb) / (b - a);
            return std::min(hi, a + (fa + slope - 1) / slope);
        }
        a = b;
        fa = fb;
    }
    return hi;
}

std::string gb(Bytes b)
{
    return formatGB(static_cast<double>(b));
}

std::string rate(double bytesPerS)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f GB/s", bytesPerS / 1e9);
    return buf;
}

std::string_view linkName(const ParkedActivations &p)
{
    return p.nvlink ? "NVLink" : "the network";
}

} // namespace

bool pipelineRanksShareNode(const ParallelismConfig &par, std::int64_t gpusPerNode, std::int64_t a, std::int64_t b)
{
    const std::int64_t stage = par.tensor_model_parallel_size * par.context_parallel_size * par.data_parallel_size;
    const std::int64_t lo = std::min(a, b), hi = std::max(a, b);
    const std::int64_t node = std::max<std::int64_t>(1, gpusPerNode);
    return (lo * stage) / node == (hi * stage + stage - 1) / node;
}

WaterFill waterFill(const std::vector<Bytes> &totals, const std::vector<Bytes> &movable)
{
    WaterFill f;
    const std::size_t n = totals.size();
    f.out.assign(n, 0);
    f.in.assign(n, 0);
    if (n == 0)
        return f;
    // give(L) falls and take(L) rises with L: the smallest L where the
    // donors can give no more than the receivers can take.
    const Bytes lo = *std::min_element(totals.begin(), totals.end());
    const Bytes hi = *std::max_element(totals.begin(), totals.end());
    // give − take bends where a donor's excess reaches its movable bytes or
    // nothing, and where a receiver's room starts.
    std::vector<Bytes> kinks;
    kinks.reserve(2 * n + 1);
    for (std::size_t r = 0; r < n; ++r) {
        kinks.push_back(totals[r]);
        kinks.push_back(totals[r] - movable[r]);
    }
    f.level = firstNonPositive(lo, hi, kinks, [&](Bytes l) { return give(totals, movable, l) - take(totals, l); });
    Bytes given = 0;
    for (std::size_t r = 0; r < n; ++r) {
        f.out[r] = std::min(movable[r], std::max<Bytes>(0, totals[r] - f.level));
        given += f.out[r];
    }
    if (given == 0)
        return f;
    // The receivers fill from the bottom to a common level (never above L,
    // since take(L) ≥ given); the last bytes one each.
    kinks.assign(totals.begin(), totals.end()); // take bends where each receiver's room starts
    const Bytes rlo = firstNonPositive(lo, f.level, kinks, [&](Bytes l) { return given - take(totals, l); });
    Bytes left = given;
    for (std::size_t r = 0; r < n; ++r)
        if (f.out[r] == 0 && totals[r] < rlo - 1) {
            f.in[r] = rlo - 1 - totals[r];
            left -= f.in[r];
        }
    for (std::size_t r = 0; r < n && left > 0; ++r)
        if (f.out[r] == 0 && totals[r] + f.in[r] < rlo) {
            ++f.in[r];
            --left;
        }
    return f;
}

std::vector<ParkedActivations> pairParked(const WaterFill &fill, const Config &config)
{
    const std::int64_t p = static_cast<std::int64_t>(fill.out.size());
    std::vector<Bytes> out = fill.out, in = fill.in;
    std::vector<ParkedActivations> pairs;
    const auto link = [&](std::int64_t a, std::int64_t b) {
        ParkedActivations pa;
        pa.from = static_cast<int>(a);
        pa.to = static_cast<int>(b);
        pa.nvlink = pipelineRanksShareNode(config.parallelism, config.hardware.gpus_per_node, a, b);
        pa.link_bytes_per_s = pa.nvlink ? config.hardware.nvlink_bytes_per_s : config.hardware.network_bytes_per_s;
        return pa;
    };
    for (int pass = 0; pass < 2; ++pass)
        for (std::int64_t d = 0; d < p; ++d)
            for (std::int64_t r = p - 1; r >= 0 && out[std::size_t(d)] > 0; --r) {
                if (in[std::size_t(r)] <= 0
                    || (pass == 0 && !pipelineRanksShareNode(config.parallelism, config.hardware.gpus_per_node, d, r)))
                    continue;
                const Bytes moved = std::min(out[std::size_t(d)], in[std::size_t(r)]);
                out[std::size_t(d)] -= moved;
                in[std::size_t(r)] -= moved;
                auto same = std::find_if(pairs.begin(), pairs.end(),
                                         [&](const ParkedActivations &x) { return x.from == d && x.to == r; });
                if (same != pairs.end()) {
                    same->bytes += moved;
                    continue;
                }
                ParkedActivations pa = link(d, r);
                pa.bytes = moved;
                pairs.push_back(pa);
            }
    return pairs;
}

BalanceCopy balanceCopy(double bytes, double share, double backwardSeconds, double linkBytesPerS)
{
    BalanceCopy b;
    if (bytes <= 0 || linkBytesPerS <= 0)
        return b;
    b.copySeconds = bytes / linkBytesPerS;
    b.windowSeconds = std::max(0.0, 1.0 - share) * backwardSeconds;
    b.stallSeconds = std::max(0.0, b.copySeconds - b.windowSeconds);
    b.neededBytesPerS = b.windowSeconds > 0 ? bytes / b.windowSeconds : 0.0;
    return b;
}

double donorLinkBytesPerS(const Ledger &ledger, int rank)
{
    double bytes = 0, seconds = 0;
    for (const ParkedActivations &pa : ledger.parked)
        if (pa.from == rank && pa.link_bytes_per_s > 0) {
            bytes += double(pa.bytes);
            seconds += double(pa.bytes) / pa.link_bytes_per_s;
        }
    return seconds > 0 ? bytes / seconds : 0.0;
}

Bytes unbalancedActivationBytes(const RankLedger &rank)
{
    return rank.device[static_cast<int>(Category::Activations)] + rank.parked_out_bytes - rank.parked_in_bytes;
}

double parkedShare(const Ledger &ledger, int rank)
{
    if (rank < 0 || static_cast<std::size_t>(rank) >= ledger.ranks.size())
        return 0.0;
    const RankLedger &r = ledger.ranks[static_cast<std::size_t>(rank)];
    const LedgerEntry *row = layersRow(r);
    const Bytes before = (row ? row->bytes : 0) + r.parked_out_bytes;
    return before > 0 ? static_cast<double>(r.parked_out_bytes) / static_cast<double>(before) : 0.0;
}

void balanceActivations(Ledger &ledger, const Config &config)
{
    const std::size_t p = ledger.ranks.size();
    ledger.unbalanced_peak_bytes = ledger.peak_bytes;
    if (config.strategy.pipeline_activation_balance != ActivationBalance::Auto || p < 2)
        return;
    std::vector<Bytes> totals, movable;
    for (RankLedger &r : ledger.ranks) {
        totals.push_back(r.device_total_bytes);
        // A donor keeps at least the group being computed: of n groups in
        // flight, at most n − 1 groups' worth moves.
        const LedgerEntry *row = layersRow(r);
        const std::int64_t n = r.in_flight_chunks;
        movable.push_back(row && n > 1 ? static_cast<Bytes>(static_cast<long double>(row->bytes) * (n - 1) / n) : 0);
    }
    const WaterFill fill = waterFill(totals, movable);
    ledger.balance_level_bytes = fill.level;
    ledger.parked = pairParked(fill, config);
    constexpr std::string_view why = "strategy.pipeline_activation_balance = auto";

    // Each figure formatted once: the level, every rank's total, every
    // pair's bytes and the two links' rates recur across the rows.
    const std::string level = gb(fill.level);
    std::vector<std::string> total(p), pairBytes(ledger.parked.size()), rank(p);
    for (std::size_t i = 0; i < p; ++i)
        rank[i] = std::to_string(i);
    const std::string gpus = std::to_string(config.hardware.gpus_per_node);
    std::string nvlinkRate, networkRate;
    for (std::size_t j = 0; j < ledger.parked.size(); ++j) {
        const ParkedActivations &pa = ledger.parked[j];
        const std::size_t from = static_cast<std::size_t>(pa.from), to = static_cast<std::size_t>(pa.to);
        RankLedger &donor = ledger.ranks[from];
        RankLedger &receiver = ledger.ranks[to];
        donor.parked_out_bytes += pa.bytes;
        receiver.parked_in_bytes += pa.bytes;
        if (total[from].empty())
            total[from] = gb(totals[from]);
        pairBytes[j] = gb(pa.bytes);
        std::string &linkRate = pa.nvlink ? nvlinkRate : networkRate;
        if (linkRate.empty())
            linkRate = rate(pa.link_bytes_per_s);
        receiver.entries.push_back(
            {Category::Activations, Placement::Device, cat("Parked activations from rank ", rank[from]), pa.bytes,
             cat("rank ", rank[from], "'s device total ", total[from], " − level ", level, ": ", pairBytes[j],
                 " of it held here, up to the level"),
             cat("held for rank ", rank[from], " between each micro-batch's forward and backward, over ", linkName(pa),
                 " at ", linkRate, " per direction (ranks ", rank[from], " and ", rank[to],
                 pa.nvlink ? " share a node of " : " are in different nodes of ", gpus, " GPUs; ", why, ")")});
    }
    for (std::size_t i = 0; i < p; ++i) {
        RankLedger &r = ledger.ranks[i];
        if (r.parked_out_bytes > 0) {
            LedgerEntry *row = layersRow(r);
            const Bytes before = row->bytes;
            row->bytes -= r.parked_out_bytes;
            std::string to;
            to.reserve(48 * ledger.parked.size()); // "rank 7 (1.234 GB over the network)" each
            for (std::size_t j = 0; j < ledger.parked.size(); ++j) {
                const ParkedActivations &pa = ledger.parked[j];
                if (pa.from == static_cast<int>(i))
                    append(to, to.empty() ? "" : ", ", "rank ", rank[static_cast<std::size_t>(pa.to)], " (",
                           pairBytes[j], " over ", linkName(pa), ")");
            }
            const std::string shareText
                = formatPercent(static_cast<double>(r.parked_out_bytes) / static_cast<double>(before), 0);
            append(row->formula, " − ", gb(r.parked_out_bytes), " parked (device total ", total[i], " − level ", level,
                   ", at most this row)");
            append(row->note, row->note.empty() ? "" : "; ", "Activations parked on ", to, ": the earliest-saved ",
                   shareText,
                   " of every micro-batch's group leaves after its forward and comes back during its backward (", why,
                   ")");
        }
        r.device[static_cast<int>(Category::Activations)] += r.parked_in_bytes - r.parked_out_bytes;
        r.device_total_bytes += r.parked_in_bytes - r.parked_out_bytes;
        r.fits = r.device_total_bytes <= config.hardware.hbm_bytes;
    }
    ledger.peak_bytes = 0;
    for (const RankLedger &r : ledger.ranks)
        if (r.device_total_bytes > ledger.peak_bytes) {
            ledger.peak_bytes = r.device_total_bytes;
            ledger.peak_rank = r.pipeline_rank;
        }

    if (ledger.parked.empty()) {
        ledger.choices.push_back("Activation balance: auto, but no rank's saved activations can bring the device "
                                 "totals closer; nothing is parked.");
        return;
    }
    std::string moves;
    moves.reserve(48 * ledger.parked.size()); // "rank 0 → rank 7 1.234 GB over NVLink" each
    for (std::size_t j = 0; j < ledger.parked.size(); ++j) {
        const ParkedActivations &pa = ledger.parked[j];
        append(moves, moves.empty() ? "" : ", ", "rank ", rank[static_cast<std::size_t>(pa.from)], " → ",
               rank[static_cast<std::size_t>(pa.to)], " ", pairBytes[j], " over ", linkName(pa));
    }
    ledger.choices.push_back(cat("Activation balance: ranks above the level ", level,
                                 " park their earliest-saved activations in the memory of ranks below it (", moves,
                                 "); the peak goes from ", gb(ledger.unbalanced_peak_bytes), " to ",
                                 gb(ledger.peak_bytes), " (pipeline_activation_balance = auto)."));
}

} // namespace memledger
