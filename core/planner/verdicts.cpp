// SPDX-License-Identifier: MIT
#include "core/planner/verdicts.h"

#include "core/base/units.h"
#include "core/time/steptime.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace memledger::plansearch {

namespace {

std::string labelOf(SearchDimension d, std::int64_t v)
{
    if (d == SearchDimension::Recompute)
        return std::string(granularityName(static_cast<RecomputeGranularity>(v)));
    if (d == SearchDimension::Offload) {
        constexpr std::array<const char *, 4> names = {"none", "optimizer", "activations", "optimizer+activations"};
        return names[static_cast<std::size_t>(v & 3)];
    }
    if (d == SearchDimension::Schedule)
        return std::string(scheduleName(static_cast<PipelineSchedule>(v)));
    return std::to_string(v);
}

// The value in a sentence: "t = 3", "micro-batch 4", "ZeRO 1", "full recompute".
std::string phraseOf(SearchDimension d, std::int64_t v)
{
    switch (d) {
    case SearchDimension::MicroBatch:
        return "micro-batch " + std::to_string(v);
    case SearchDimension::ZeroStage:
        return "ZeRO " + std::to_string(v);
    case SearchDimension::Recompute: {
        constexpr std::array<const char *, 3> names = {"no recompute", "selective recompute", "full recompute"};
        return names[static_cast<std::size_t>(std::clamp<std::int64_t>(v, 0, 2))];
    }
    case SearchDimension::Offload: {
        constexpr std::array<const char *, 4> names
            = {"no offload", "the optimizer on the CPU", "activations offloaded to the host",
               "the optimizer on the CPU and activations on the host"};
        return names[static_cast<std::size_t>(v & 3)];
    }
    case SearchDimension::Schedule:
        return "the " + std::string(scheduleName(static_cast<PipelineSchedule>(v))) + " schedule";
    default:
        return std::string(dimensionName(d)) + " = " + std::to_string(v);
    }
}

// "a", "a or b", "a, b or c".
std::string orList(const std::vector<std::string> &items)
{
    std::string out;
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (k > 0)
            out += k + 1 == items.size() ? " or " : ", ";
        out += items[k];
    }
    return out;
}

std::string joined(const std::vector<std::string> &items, const char *sep)
{
    std::string out;
    for (std::size_t k = 0; k < items.size(); ++k)
        out += (k > 0 ? sep : "") + items[k];
    return out;
}

// Formats bytes rounded down to the digits formatGB shows, so "needs at least"
// never overstates the bound.
std::string floorGB(Bytes bytes)
{
    const double a = static_cast<double>(bytes);
    double quantum = 1;
    for (const double unit : {1e12, 1e9, 1e6, 1e3})
        if (a >= unit) {
            quantum = unit * (a >= 100 * unit ? 0.1 : a >= 10 * unit ? 0.01 : 0.001);
            break;
        }
    return formatGB(std::floor(a / quantum) * quantum);
}

// Why no valid plan has this value, from the rules that skipped it.
std::string structuralReason(SearchDimension d, std::int64_t v, std::uint32_t why, const Facts &f)
{
    const std::string it = phraseOf(d, v), N = std::to_string(f.N), G = std::to_string(f.G);
    const std::string L = std::to_string(f.L), GB = std::to_string(f.GB);
    std::vector<std::string> own, other;
    if (d == SearchDimension::T) {
        std::vector<std::string> divides;
        if (why & kTHeads)
            divides.push_back("the " + std::to_string(f.heads) + " attention heads");
        if ((why & kTGroups) && f.groups != f.heads)
            divides.push_back("the " + std::to_string(f.groups) + " query groups");
        if (why & kTFfn)
            divides.push_back("the FFN width of " + std::to_string(f.ffn));
        if (why & kTSharedFfn)
            divides.push_back("the shared-expert FFN width of " + std::to_string(f.sharedFfn));
        if ((why & kTExpertFfn) && !f.etpFixed)
            divides.push_back("the expert FFN width of " + std::to_string(f.moeFfn));
        if (why & kTGpus)
            divides.push_back("the " + N + " GPUs");
        if (!divides.empty())
            own.push_back(it + " does not divide " + orList(divides));
        if ((why & kTExpertFfn) && f.etpFixed)
            own.push_back("the expert FFN width of " + std::to_string(f.moeFfn)
                          + " does not divide by the expert tensor-parallel size " + std::to_string(f.etp));
        if (why & kTNode)
            own.push_back(it + " leaves the " + G + "-GPU NVLink node");
    }
    if (d == SearchDimension::C) {
        if ((why & kCGpus) && f.N % v)
            own.push_back(it + " does not divide the " + N + " GPUs");
        if (why & kCSeq)
            own.push_back("the " + std::to_string(f.s)
                          + "-token sequence does not split into 2c = " + std::to_string(2 * v) + " chunks");
    }
    if (d == SearchDimension::D && (why & kBatch) && f.GB % v)
        own.push_back(it + " does not divide the global batch of " + GB + " sequences");
    if (d == SearchDimension::V && (why & kVNeedsP)) {
        // p = 1 cannot interleave; say what ruled out every p > 1 as well.
        std::vector<std::string> withP;
        if (why & kVLayers)
            withP.push_back("p × " + std::to_string(v) + " exceeds the " + L + " layers");
        if (why & kInterleaveBatch)
            withP.push_back("the micro-batches per replica are not a multiple of p");
        if (!(why & ~(kVNeedsP | kVLayers | kInterleaveBatch)))
            return withP.empty() ? it + " interleaves pipeline stages, which needs p > 1"
                                 : it + " needs p > 1, and for every p > 1 here " + orList(withP);
    }
    if (d == SearchDimension::MicroBatch && (why & kBatch))
        own.push_back(it + " does not divide the global batch per data-parallel replica (" + GB + " / d)");
    if (!own.empty())
        return joined(own, "; ");

    if ((why & kCGpus) && !(d == SearchDimension::C && f.N % v))
        other.push_back("t × c does not divide the " + N + " GPUs");
    if ((why & kCSeq) && d != SearchDimension::C)
        other.push_back("the " + std::to_string(f.s) + "-token sequence does not split into 2 × c chunks");
    if (why & kPGpus)
        other.push_back("t × c × p does not divide the " + N + " GPUs");
    if (why & kEGroup)
        other.push_back("t × c × d is not a multiple of the expert tensor-parallel size × e");
    if (why & kVNeedsP)
        other.push_back("interleaving needs p > 1");
    if (why & kVLayers)
        other.push_back("p × v exceeds the " + L + " layers");
    if (why & kSpRule)
        other.push_back("an MoE model with t > 1 needs sequence parallelism, which needs t to divide the sequence per "
                        "context rank");
    if ((why & kBatch) && d != SearchDimension::MicroBatch && !(d == SearchDimension::D && f.GB % v))
        other.push_back("micro-batch × d does not divide the global batch of " + GB);
    if (why & kInterleaveBatch)
        other.push_back("interleaving needs the micro-batches per replica to be a multiple of p");
    if (!other.empty() || !own.empty()) {
        own.insert(own.end(), other.begin(), other.end());
        return "no valid plan has " + it + ": every split with it breaks a rule (" + joined(own, "; ") + ")";
    }
    if (d == SearchDimension::D)
        return it + " leaves " + std::to_string(f.N / v)
               + " GPUs per replica, and no valid t × c × p makes that "
                 "(t within the "
               + G + "-GPU node, p dividing the " + L + " layers)";
    return "no valid split of the " + N + " GPUs reaches " + it;
}

void memoryVerdict(ValueVerdict &vv, const Slot &slot, const std::string &it, const VerdictContext &vc)
{
    vv.kind = VerdictKind::Memory;
    vv.leastPeakBytes = slot.least.bound;
    vv.example = configOf(vc.base, slot.least, vc.facts.GB);
    std::string need = floorGB(slot.least.bound), lim = formatGB(double(vc.limit));
    vv.reason
        = "every plan with " + it + " needs at least " + need + " on its busiest GPU; the limit is " + vc.limitText;
    if (need == lim)
        vv.reason += " (" + formatThousands(slot.least.bound) + " > " + formatThousands(vc.limit) + " bytes)";
}

// The fastest plan with this value, confirmed; else the next fastest, a few at most.
void slowerOrLedgerVerdict(ValueVerdict &vv, SearchDimension d, const Slot &slot, const std::string &it,
                           const std::vector<Candidate> &kept, LedgerCheck &check, const SearchResult &res,
                           const VerdictContext &vc)
{
    std::optional<std::pair<Config, LedgerUnder>> ok;
    Candidate found = slot.fastest;
    ok = check(found);
    if (!ok) {
        std::vector<Candidate> others;
        for (const Candidate &x : kept)
            if (valueOf(x, d) == vv.value && identityOf(x) != identityOf(found))
                others.push_back(x);
        constexpr std::size_t kTries = 8;
        const std::size_t n = std::min(others.size(), kTries);
        std::partial_sort(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(n), others.end(),
                          [](const Candidate &a, const Candidate &b) { return rankKey(a) < rankKey(b); });
        for (std::size_t j = 0; j < n && !ok; ++j)
            if ((ok = check(others[j])))
                found = others[j];
    }
    if (!ok) {
        vv.kind = VerdictKind::Ledger;
        vv.reason = "plans with " + it
                    + " pass the search's lower bound, but the fastest of them fail the full ledger "
                      "(over the limit of "
                    + vc.limitText + ") or validation";
        return;
    }
    vv.kind = VerdictKind::Slower;
    vv.stepTimeSeconds = found.time;
    vv.slowerPercent = percentSlower(found.time, vc.bestTime);
    vv.example = std::move(ok->first);
    vv.reason = "fits, but the fastest plan with " + it + " takes " + stepAgainstBest(found.time, vc.bestTime);
    if (vv.slowerPercent < 0.05)
        vv.reason += ", ranked below the top " + std::to_string(res.plans.size()) + " (ties go to the simpler plan)";
    if (vv.slowerPercent >= 0.05 && !res.plans.empty())
        vv.reason
            += "; " + stepTimeDifference(estimateStepTime(*vv.example, vc.opt.gpusPerNode), res.plans.front().time);
}

std::string sizesText(const std::vector<std::int64_t> &sizes)
{
    std::vector<std::string> items;
    for (const std::int64_t p : sizes)
        items.push_back(std::to_string(p));
    return joined(items, ", ");
}

// Schedule values the enumeration does not produce itself: GPipe, which it
// never tries, and the split schedules, which trySplitSchedules tried on the
// fastest pipelined plans. Returns false for 1F1B and interleaved plans that
// the enumeration visited, which take the other dimensions' path.
bool scheduleVerdict(ValueVerdict &vv, const Slot &slot, const Enumeration &en, const std::vector<ScheduleTry> &tries,
                     const std::vector<DimensionVerdicts> &done, const SearchResult &res, const VerdictContext &vc)
{
    const auto s = static_cast<PipelineSchedule>(vv.value);
    const std::string it = phraseOf(SearchDimension::Schedule, vv.value);
    const std::string L = std::to_string(vc.facts.L);
    if (s == PipelineSchedule::GPipe) {
        vv.kind = VerdictKind::Structural;
        vv.tried = false;
        vv.reason = "the search does not try " + it
                    + ": it has 1F1B's bubble ((p − 1) stage-micro-batches, Narayanan et al. 2021) but holds all m "
                      "micro-batches' activations instead of at most p, so a 1F1B plan is never slower nor larger";
        return true;
    }
    if (s == PipelineSchedule::OneFOneB || s == PipelineSchedule::Interleaved) {
        if (slot.tried())
            return false;
        vv.kind = VerdictKind::Structural;
        const DimensionVerdicts &v = done.at(dimIndex(SearchDimension::V));
        const auto two
            = std::find_if(v.values.begin(), v.values.end(), [](const ValueVerdict &x) { return x.value == 2; });
        if (s == PipelineSchedule::OneFOneB)
            vv.reason
                = "no valid split of the " + std::to_string(vc.facts.N) + " GPUs has a pipeline (p ≥ 2) to run " + it;
        else if (two == v.values.end()) {
            vv.reason = "the search tries no interleaving: its chunks per rank stop at 1";
            vv.tried = false;
        } else
            vv.reason = "no valid plan interleaves (v ≥ 2): " + two->reason;
        return true;
    }
    const auto t = std::find_if(tries.begin(), tries.end(), [&](const ScheduleTry &x) { return x.schedule == s; });
    if (t == tries.end())
        return false;
    const std::vector<std::int64_t> pipelined = pipelineSizesFor(en, PipelineSchedule::ZbH1, vc.facts.L);
    const std::vector<std::int64_t> usable = pipelineSizesFor(en, s, vc.facts.L);
    // "the 2 plans it was tried on (...)", "the plan it was tried on (...)".
    const bool one = t->tried == 1;
    const std::string onTried
        = (one ? std::string("the plan") : "the " + std::to_string(t->tried) + " plans")
          + " it was tried on (the fastest pipelined " + (one ? "one" : "ones")
          + (t->elsewhere > 0 && t->elsewhere < t->tried ? ", then the fastest at other pipeline sizes)" : ")");
    if (pipelined.empty()) {
        vv.kind = VerdictKind::Structural;
        vv.reason = it + " needs a pipeline (p ≥ 2), and no valid split here has one";
        const DimensionVerdicts &pv = done.at(dimIndex(SearchDimension::P));
        for (const ValueVerdict &x : pv.values)
            if (x.value >= 2 && x.kind == VerdictKind::Structural) {
                vv.reason += " (" + x.reason + ")";
                break;
            }
    } else if (usable.empty()) {
        vv.kind = VerdictKind::Structural;
        if (s == PipelineSchedule::DualPipe)
            vv.reason = it + " pairs rank r with rank p − 1 − r, so p must be even; no valid p here is (p = "
                        + sizesText(pipelined) + ")";
        else
            vv.reason = it + " places two chunks on each rank in a V, so the " + L
                        + " layers must fill 2p chunks of a layer or more; no valid p (" + sizesText(pipelined)
                        + ") leaves that many";
    } else if (t->fastestFit) {
        const SearchPlan &fit = *t->fastestFit;
        const StepTime &best = res.plans.front().time;
        vv.kind = VerdictKind::Slower;
        vv.stepTimeSeconds = fit.time.total;
        vv.slowerPercent = percentSlower(fit.time.total, best.total);
        vv.example = fit.config;
        vv.reason = "fits on " + (one ? onTried : std::to_string(t->faster + t->slower) + " of " + onTried)
                    + ", but the fastest plan with " + it + " takes " + stepAgainstBest(fit.time.total, best.total);
        if (vv.slowerPercent < 0.05)
            vv.reason += ", ranked below the top " + std::to_string(res.plans.size());
        if (vv.slowerPercent >= 0.05)
            vv.reason += "; " + stepTimeDifference(fit.time, best);
    } else if (t->leastOver) {
        vv.kind = VerdictKind::Memory;
        vv.leastPeakBytes = t->leastOver->reservedBytes;
        vv.example = t->leastOver->config;
        vv.reason = (one ? "on " : "on each of ") + onTried + ", " + it + " needs at least "
                    + floorGB(vv.leastPeakBytes) + " on its busiest GPU; the limit is " + vc.limitText;
    } else if (!t->invalid.empty()) {
        vv.kind = VerdictKind::Structural;
        vv.reason = it + " is not valid on " + (one ? "" : "any of ") + onTried + " (p = " + sizesText(usable)
                    + " could run it): " + t->invalid;
    } else {
        // No pipelined plan to put it on: every one is over the limit already.
        const Domain &pd = en.domains[dimIndex(SearchDimension::P)];
        const Slot *least = nullptr;
        bool kept = false;
        for (const std::int64_t p : usable) {
            const Slot &ps = pd.slots[pd.indexOf(p)];
            kept |= ps.kept();
            if (!least || ps.least.bound < least->least.bound)
                least = &ps;
        }
        if (kept || !least) {
            vv.kind = VerdictKind::Ledger;
            vv.reason = "the pipelined plans " + it
                        + " could run on pass the search's lower bound but fail the full ledger (over the limit of "
                        + vc.limitText + ") or validation, so it had no plan to run on";
        } else {
            vv.kind = VerdictKind::Memory;
            vv.leastPeakBytes = least->least.bound;
            vv.example = configOf(vc.base, least->least, vc.facts.GB);
            vv.reason = it + " needs a pipeline, and every pipelined plan needs at least " + floorGB(vv.leastPeakBytes)
                        + " on its busiest GPU under 1F1B or interleaving already; the limit is " + vc.limitText;
        }
    }
    return true;
}

} // namespace

std::string stepAgainstBest(double seconds, double best)
{
    const std::string step = formatSeconds(seconds, 3) + " a step, ";
    if (percentSlower(seconds, best) < 0.05)
        return step + "a tie with the best within 0.1 %";
    // percentSlower's figure as a fraction (formatPercent multiplies by 100 as it does).
    const double slower = best > 0 ? seconds / best - 1.0 : 0.0;
    return step + formatPercent(slower) + " slower than the best (" + formatSeconds(best, 3) + ")";
}

VerdictContext verdictContextOf(const Config &base, const SearchOptions &opt, const Facts &facts, Bytes limit,
                                double bestTime)
{
    return {.base = base,
            .opt = opt,
            .facts = facts,
            .limit = limit,
            .limitText = formatGB(double(limit)) + " (" + formatPercentCompact(opt.margin) + " of "
                         + formatGB(double(base.hardware.hbm_bytes)) + ")",
            .bestTime = bestTime};
}

std::vector<DimensionVerdicts> dimensionVerdicts(const Enumeration &en, LedgerCheck &check, const SearchResult &res,
                                                 const VerdictContext &vc, const std::vector<ScheduleTry> &tries)
{
    std::vector<DimensionVerdicts> out;
    const std::string topText = "in the top " + std::to_string(res.plans.size());
    for (const SearchDimension d : kSearchDimensions) {
        const Domain &dm = en.domains[dimIndex(d)];
        DimensionVerdicts dv;
        dv.dimension = d;
        for (std::size_t k = 0; k < dm.values.size(); ++k) {
            const Slot &slot = dm.slots[k];
            ValueVerdict vv;
            vv.value = dm.values[k];
            vv.label = labelOf(d, vv.value);
            const std::string it = phraseOf(d, vv.value);
            const bool inTop = std::any_of(res.plans.begin(), res.plans.end(), [&](const SearchPlan &p) {
                return dimensionValue(p.config, d) == vv.value;
            });
            if (inTop) {
                vv.kind = VerdictKind::InTop;
                vv.reason = it + " is " + topText;
            } else if (d == SearchDimension::Schedule && scheduleVerdict(vv, slot, en, tries, out, res, vc)) {
                // GPipe, the split schedules, or a schedule no valid split runs
            } else if (!slot.tried()) {
                vv.kind = VerdictKind::Structural;
                vv.reason = structuralReason(d, vv.value, slot.why, vc.facts);
            } else if (!slot.kept()) {
                memoryVerdict(vv, slot, it, vc);
            } else {
                slowerOrLedgerVerdict(vv, d, slot, it, en.kept, check, res, vc);
            }
            dv.values.push_back(std::move(vv));
        }
        out.push_back(std::move(dv));
    }
    return out;
}

} // namespace memledger::plansearch
