// SPDX-License-Identifier: MIT
#include "core/planner/trystrategies.h"

#include "core/base/units.h"
#include "core/check/validate.h"
#include "core/ledger/ledger.h"
#include "core/model/gradoffload.h"
#include "core/planner/confirm.h"
#include "core/planner/verdicts.h"
#include "core/time/steptime.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace memledger {

namespace {

// The answer's fastest plans tried, as trySplitSchedules does: each try is a
// ledger and a step time, so a few keep the search interactive.
constexpr std::size_t kPlansTried = 2;
// Plans over the limit tried (the nearest first): the ones a strategy may bring under it.
constexpr std::size_t kOverLimitTried = 4;

constexpr std::array<SearchDimension, 3> kStrategyDims
    = {SearchDimension::ActivationBalance, SearchDimension::GradOffload, SearchDimension::Fp8Recipe};

std::vector<std::int64_t> valuesOf(SearchDimension d)
{
    if (d == SearchDimension::Fp8Recipe)
        return {int(Fp8Recipe::None), int(Fp8Recipe::Delayed), int(Fp8Recipe::Tensorwise), int(Fp8Recipe::MXFP8),
                int(Fp8Recipe::Blockwise)};
    return {0, 1};
}

std::string labelOf(SearchDimension d, std::int64_t v)
{
    if (d == SearchDimension::ActivationBalance)
        return std::string(activationBalanceName(static_cast<ActivationBalance>(v)));
    if (d == SearchDimension::GradOffload)
        return v ? "cpu" : "none";
    return std::string(fp8RecipeName(static_cast<Fp8Recipe>(v)));
}

// The value in a sentence.
std::string phraseOf(SearchDimension d, std::int64_t v)
{
    if (d == SearchDimension::ActivationBalance)
        return v ? "activations balanced across the pipeline ranks" : "no activation balancing";
    if (d == SearchDimension::GradOffload)
        return v ? "gradients and the optimizer step on the CPU (ZeRO-Offload)" : "no gradient offload";
    return v ? "the " + labelOf(d, v) + " FP8 recipe" : "no FP8 recipe";
}

// Plan names get a word per strategy: "... zero1 selective balance".
std::string suffixOf(SearchDimension d, std::int64_t v)
{
    if (d == SearchDimension::ActivationBalance)
        return "balance";
    if (d == SearchDimension::GradOffload)
        return "grad-offload";
    return "fp8-" + labelOf(d, v);
}

Config variantOf(const Config &plan, SearchDimension d, std::int64_t v)
{
    Config cfg = plan;
    if (d == SearchDimension::ActivationBalance)
        cfg.strategy.pipeline_activation_balance = static_cast<ActivationBalance>(v);
    else if (d == SearchDimension::GradOffload)
        setGradOffload(cfg.strategy, v ? OffloadTarget::CPU : OffloadTarget::None); // brings the optimizer step along
    else
        cfg.training.fp8_recipe = static_cast<Fp8Recipe>(v);
    cfg.name = plan.name + " " + suffixOf(d, v);
    return cfg;
}

// Why a strategy cannot apply to any plan of this search, before trying it:
// FP8 recipes need FP8 tensor cores and 16-bit (bf16) training.
std::string precondition(const Config &base, SearchDimension d)
{
    if (d != SearchDimension::Fp8Recipe)
        return {};
    if (base.training.params_dtype != Dtype::BF16)
        return "FP8 training casts bf16 weights and activations to FP8 for the linear layers' GEMMs (Transformer "
               "Engine's fp8_autocast inside bf16 training); this preset trains in "
               + std::string(dtypeName(base.training.params_dtype)) + " (training.params_dtype), so no recipe is tried";
    if (base.hardware.peak_fp8_flops <= 0)
        return base.hardware.name
               + " has no FP8 tensor cores (hardware.peak_fp8_flops is 0), so no FP8 recipe is tried";
    return {};
}

// What became of one value of one strategy over every plan it was tried on.
struct Trial
{
    SearchDimension dim = SearchDimension::ActivationBalance;
    std::int64_t value = 0;
    int tried = 0; // valid variants
    int over = 0; // of them over the limit
    int madeFit = 0; // variants under the limit of plans that were over it
    std::string invalid; // the first validation error
    Bytes leastPeak = std::numeric_limits<Bytes>::max();
    std::optional<Config> leastConfig;
    std::optional<SearchPlan> fastest; // the fastest variant under the limit
    // The fastest variant that improves on its own plan: faster than it, or
    // under the limit where it was over. Only these join the answer: a
    // variant that fits as its plan did, only slower, adds nothing.
    std::optional<SearchPlan> better;
};

// The value the search's own plans carry: the strategies are off there,
// except the preset's own FP8 recipe (configOf keeps training settings).
std::int64_t baseValueOf(const Config &base, SearchDimension d)
{
    return d == SearchDimension::Fp8Recipe ? std::int64_t(base.training.fp8_recipe) : 0;
}

struct Base
{
    const Config *config;
    double seconds; // the plan's step time (infinity for one over the limit)
};

// The plans a strategy is tried on: the answer's fastest, its leanest and the
// nearest plans over the limit (confirmed by the ledger). `bases` points into
// `answer` and `over`: filled in place by choosePlans, never copied.
struct TriedPlans
{
    std::vector<SearchPlan> answer; // the answer before any variant joins
    std::vector<Config> over;
    Bytes nearestOver = std::numeric_limits<Bytes>::max(); // the least peak of `over`, without any strategy
    std::vector<Base> bases;
};

void choosePlans(TriedPlans &tp, SearchResult &res, const std::vector<Config> &overLimit, Bytes limit)
{
    tp.answer = res.plans;
    const std::vector<SearchPlan> &answer = tp.answer;
    for (std::size_t i = 0; i < std::min(kPlansTried, answer.size()); ++i)
        tp.bases.push_back({&answer[i].config, answer[i].time.total});
    // And the answer's leanest plan: the fastest ones often sit at the limit,
    // where a strategy that adds bytes (FP8's weight copies) cannot fit.
    const auto leanest = std::min_element(answer.begin(), answer.end(), [](const SearchPlan &a, const SearchPlan &b) {
        return a.ledger.peak_bytes < b.ledger.peak_bytes;
    });
    if (leanest != answer.end() && std::size_t(leanest - answer.begin()) >= kPlansTried)
        tp.bases.push_back({&leanest->config, leanest->time.total});
    for (const Config &cfg : overLimit) {
        if (tp.over.size() >= kOverLimitTried)
            break;
        if (hasErrors(validate(cfg)))
            continue;
        // By the simulated peak: a plan under it but over by what the allocator reserves is not tried.
        const plansearch::LedgerUnder under = plansearch::ledgerUnder(cfg, limit, false);
        ++res.ledgersRun;
        if (under.fits)
            continue; // fits as it is: in the answer or slower than it
        tp.nearestOver = std::min(tp.nearestOver, under.deviceBytes);
        tp.over.push_back(cfg);
    }
    for (const Config &cfg : tp.over)
        tp.bases.push_back({&cfg, std::numeric_limits<double>::infinity()});
}

// Value v of strategy d on every plan tried: each variant validated, its
// ledger and, under the limit, its step time.
Trial tryValue(SearchDimension d, std::int64_t v, const std::vector<Base> &bases, const SearchOptions &opt, Bytes limit,
               std::int64_t &ledgersRun)
{
    Trial trial;
    trial.dim = d;
    trial.value = v;
    for (const Base &b : bases) {
        if (dimensionValue(*b.config, d) == v)
            continue; // the plan's own value: nothing to try
        Config cfg = variantOf(*b.config, d, v);
        const Problems problems = validate(cfg);
        const auto error = std::find_if(problems.begin(), problems.end(), [](const Problem &p) { return p.isError(); });
        if (error != problems.end()) {
            if (trial.invalid.empty())
                trial.invalid = error->path + ": " + error->message;
            continue;
        }
        ++trial.tried;
        SearchPlan variant;
        // By the simulated peak first; the allocator is simulated only for a variant that would be `better`.
        plansearch::LedgerUnder under = plansearch::ledgerUnder(cfg, limit, false);
        if (under.fits) {
            variant.time = estimateStepTime(cfg, opt.gpusPerNode);
            if (variant.time.total < b.seconds && (!trial.better || variant.time.total < trial.better->time.total))
                under = plansearch::ledgerUnder(cfg, limit);
        }
        variant.ledger = std::move(under.ledger);
        variant.reservedBytes = under.deviceBytes;
        ++ledgersRun;
        if (!under.fits) {
            ++trial.over;
            if (under.deviceBytes < trial.leastPeak) {
                trial.leastPeak = under.deviceBytes;
                trial.leastConfig = cfg;
            }
            continue;
        }
        variant.estimateBytes = under.rowsPeak;
        variant.config = std::move(cfg);
        if (b.seconds == std::numeric_limits<double>::infinity())
            ++trial.madeFit;
        if (variant.time.total < b.seconds && (!trial.better || variant.time.total < trial.better->time.total))
            trial.better = variant;
        if (!trial.fastest || variant.time.total < trial.fastest->time.total)
            trial.fastest = std::move(variant);
    }
    return trial;
}

// Each strategy's fastest variant that improves on its plan competes with
// the answer; the top stay. One per strategy: the same layout under three FP8
// recipes (or on the answer's next plans) would crowd the layouts out of
// the list, and the other values' verdicts still give their times.
void joinAnswer(SearchResult &res, const std::vector<Trial> &trials, const SearchOptions &opt)
{
    for (const SearchDimension d : kStrategyDims) {
        const Trial *fastest = nullptr;
        for (const Trial &t : trials)
            if (t.dim == d && t.better && (!fastest || t.better->time.total < fastest->better->time.total))
                fastest = &t;
        if (fastest)
            res.plans.push_back(*fastest->better);
    }
    std::stable_sort(res.plans.begin(), res.plans.end(),
                     [](const SearchPlan &a, const SearchPlan &b) { return a.time.total < b.time.total; });
    if (static_cast<int>(res.plans.size()) > opt.top)
        res.plans.resize(static_cast<std::size_t>(opt.top));
}

// What the verdicts measure against: the final answer and the plans tried.
struct FinalAnswer
{
    const SearchResult &res;
    const TriedPlans &tried;
    const Config &base;
    std::string topText; // "in the top 5"
    std::string limitText;
    double best; // the answer's fastest step, 0 without one
};

// One value's verdict; `listed` gets "auto on 2 plans" for a value in the answer other than the base's.
ValueVerdict trialVerdict(const Trial &t, const std::string &why, const FinalAnswer &fa,
                          std::vector<std::string> &listed)
{
    const SearchDimension d = t.dim;
    const SearchResult &res = fa.res;
    ValueVerdict vv;
    vv.value = t.value;
    vv.label = labelOf(d, t.value);
    const std::string it = phraseOf(d, t.value);
    int inTop = 0;
    for (const SearchPlan &p : res.plans)
        inTop += dimensionValue(p.config, d) == t.value;
    if (inTop > 0) {
        vv.kind = VerdictKind::InTop;
        vv.reason = it + " is " + fa.topText;
        if (t.madeFit > 0)
            vv.reason += "; it brings " + std::to_string(t.madeFit) + " plan" + (t.madeFit > 1 ? "s" : "") + " over "
                         + fa.limitText + " under it";
        if (t.value != baseValueOf(fa.base, d))
            listed.push_back(vv.label + " on " + std::to_string(inTop) + " plan" + (inTop > 1 ? "s" : ""));
    } else if (t.value == baseValueOf(fa.base, d)) {
        // The search's own plans have this value: they fit but were pushed out, or none fits.
        const std::vector<SearchPlan> &answer = fa.tried.answer;
        if (!answer.empty()) {
            vv.kind = VerdictKind::Slower;
            vv.stepTimeSeconds = answer.front().time.total;
            vv.slowerPercent = percentSlower(vv.stepTimeSeconds, fa.best);
            vv.example = answer.front().config;
            vv.reason = "fits, but the fastest plan with " + it + " takes "
                        + plansearch::stepAgainstBest(vv.stepTimeSeconds, fa.best);
        } else {
            const Bytes nearestOver = fa.tried.nearestOver;
            vv.kind = VerdictKind::Memory;
            vv.leastPeakBytes = nearestOver == std::numeric_limits<Bytes>::max() ? 0 : nearestOver;
            vv.reason = "no plan with " + it + " stays under the limit of " + fa.limitText;
            if (vv.leastPeakBytes > 0)
                vv.reason += "; the nearest one the ledger confirmed needs " + formatGB(double(nearestOver));
        }
    } else if (!why.empty()) {
        vv.kind = VerdictKind::Structural;
        vv.reason = why;
    } else if (t.tried == 0) {
        vv.kind = VerdictKind::Structural;
        vv.tried = !t.invalid.empty() || !fa.tried.bases.empty(); // refused by the validator, or nothing to try on
        vv.reason = !t.invalid.empty()       ? "no plan tried can run " + it + " (" + t.invalid + ")"
                    : fa.tried.bases.empty() ? "no plan to try " + it
                                                   + " on: nothing fits and no plan over the "
                                                     "limit passed validation"
                                             : "every plan tried already has " + it;
    } else if (!t.fastest) {
        vv.kind = VerdictKind::Memory;
        vv.leastPeakBytes = t.leastPeak;
        vv.example = t.leastConfig;
        vv.reason = "over the limit of " + fa.limitText + " on every plan it was tried on (" + std::to_string(t.tried)
                    + "); the least peak with " + it + " is " + formatGB(double(t.leastPeak));
    } else {
        vv.kind = VerdictKind::Slower;
        vv.stepTimeSeconds = t.fastest->time.total;
        vv.slowerPercent = percentSlower(vv.stepTimeSeconds, fa.best);
        vv.example = t.fastest->config;
        const bool fastEnough = !res.plans.empty() && vv.stepTimeSeconds < res.plans.back().time.total;
        vv.reason = "fits, but the fastest plan with " + it + " takes "
                    + plansearch::stepAgainstBest(vv.stepTimeSeconds, fa.best)
                    + (fastEnough ? "; the answer lists one plan per strategy, its fastest value's"
                                  : ", behind the top " + std::to_string(res.plans.size()));
    }
    return vv;
}

// The strategy's note: never applicable (why), the values in the answer, or none.
std::string strategyNote(SearchDimension d, const std::string &why, const std::vector<std::string> &listed,
                         std::size_t plansTried)
{
    std::string note = "Strategy " + std::string(dimensionName(d)) + ": ";
    if (!why.empty())
        note += why;
    else if (!listed.empty()) {
        note += "in the answer (";
        for (std::size_t k = 0; k < listed.size(); ++k)
            note += (k ? ", " : "") + listed[k];
        note += ")";
    } else
        note += "tried on " + std::to_string(plansTried) + " plan" + (plansTried == 1 ? "" : "s")
                + ", none in the answer (see its verdicts)";
    return note + ".";
}

} // namespace

bool isStrategyDimension(SearchDimension d)
{
    return std::find(kStrategyDims.begin(), kStrategyDims.end(), d) != kStrategyDims.end();
}

std::vector<DimensionVerdicts> tryStrategies(SearchResult &res, const Config &base, const SearchOptions &opt,
                                             Bytes limit, const std::vector<Config> &overLimit)
{
    TriedPlans tried;
    choosePlans(tried, res, overLimit, limit);
    std::vector<Trial> trials;
    for (const SearchDimension d : kStrategyDims) {
        const std::string why = precondition(base, d);
        for (const std::int64_t v : valuesOf(d)) {
            // Not the base's own value, and applicable at all: else tried on no plan.
            const bool tryIt = v != baseValueOf(base, d) && why.empty();
            trials.push_back(tryValue(d, v, tryIt ? tried.bases : std::vector<Base>{}, opt, limit, res.ledgersRun));
        }
    }
    joinAnswer(res, trials, opt);

    // Verdicts against the final answer.
    const FinalAnswer fa{.res = res,
                         .tried = tried,
                         .base = base,
                         .topText = "in the top " + std::to_string(res.plans.size()),
                         .limitText = formatGB(double(limit)),
                         .best = res.plans.empty() ? 0.0 : res.plans.front().time.total};
    std::vector<DimensionVerdicts> out;
    for (const SearchDimension d : kStrategyDims) {
        DimensionVerdicts dv;
        dv.dimension = d;
        const std::string why = precondition(base, d);
        std::vector<std::string> listed;
        for (const Trial &t : trials)
            if (t.dim == d)
                dv.values.push_back(trialVerdict(t, why, fa, listed));
        res.notes.push_back(strategyNote(d, why, listed, tried.bases.size()));
        out.push_back(std::move(dv));
    }
    return out;
}

} // namespace memledger
