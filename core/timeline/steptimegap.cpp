// SPDX-License-Identifier: MIT
#include "core/timeline/steptimegap.h"

#include "core/base/units.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace memledger {

namespace {

// Why a part differs, in words, for the caption.
std::string reasonFor(std::string_view part, const Config &config, const StepTimeGap &gap)
{
    if (part == "pipeline_wait") {
        std::string why = "the model's bubble is the schedule's formula on an average rank, while the simulation "
                          "waits for each neighbour";
        if (!config.parallelism.pipeline_layout.empty() || config.model.isMoe())
            why += ", so its uneven stages (the pipeline_layout, dense and MoE layers, the embedding and the "
                   "output layer) show";
        return why;
    }
    if (part == "after_pipeline")
        return "the model reduces and updates the last rank's parameters, the simulation ends on rank "
               + std::to_string(gap.last_rank) + "'s gradient reduction and optimizer step";
    return "the simulation's busiest rank is rank " + std::to_string(gap.busiest_rank)
           + ", whose passes it times one by one";
}

} // namespace

StepTimeGap stepTimeGap(const Config &config, const StepTime &model, const Timeline &simulated)
{
    StepTimeGap gap;
    gap.model_s = model.total;
    gap.simulated_s = simulated.step_time;
    const double wait = model.bubble + model.pipelineComm;
    const double after = model.dataComm + model.optimizer;
    double busiest = 0, lastEnd = -1;
    for (const RankTimeline &rt : simulated.ranks) {
        if (rt.busy_s > busiest) {
            busiest = rt.busy_s;
            gap.busiest_rank = rt.pipeline_rank;
        }
        if (rt.optimizer_end > lastEnd) {
            lastEnd = rt.optimizer_end;
            gap.last_rank = rt.pipeline_rank;
        }
    }
    gap.parts = {{{"work", model.total - wait - after, busiest},
                  {"pipeline_wait", wait, simulated.pipeline_time - busiest},
                  {"after_pipeline", after, simulated.step_time - simulated.pipeline_time}}};

    const double rel = gap.relative();
    const std::string modelText = formatSeconds(gap.model_s, 2), simulatedText = formatSeconds(gap.simulated_s, 2);
    gap.caption = "step-time model " + modelText + ": ";
    if (std::abs(rel) < 0.01) {
        gap.caption += "within 1 %";
        gap.explanation = "The simulated iteration, " + simulatedText + ", and the step-time model, " + modelText
                          + ", agree (within 1 %).";
        return gap;
    }
    const std::string head = "The simulated iteration, " + simulatedText + ", is " + formatPercent(std::abs(rel)) + " "
                             + (rel > 0 ? "longer" : "shorter") + " than the step-time model's " + modelText;
    std::vector<const StepTimeGapPart *> differing;
    for (const StepTimeGapPart &p : gap.parts)
        if (std::abs(p.simulated_s - p.model_s) > 0.01 * gap.model_s)
            differing.push_back(&p);
    const auto apart = [](const StepTimeGapPart *a, const StepTimeGapPart *b) {
        return std::abs(a->simulated_s - a->model_s) > std::abs(b->simulated_s - b->model_s);
    };
    // The total may differ by 1 % with no part doing so alone: then the part that differs most says why.
    if (differing.empty())
        differing.push_back(
            &*std::min_element(gap.parts.begin(), gap.parts.end(),
                               [&](const StepTimeGapPart &a, const StepTimeGapPart &b) { return apart(&a, &b); }));
    std::stable_sort(differing.begin(), differing.end(), apart);
    std::string text = head;
    const auto words = [](std::string_view part) -> std::string {
        if (part == "work")
            return "the busiest rank's work";
        if (part == "pipeline_wait")
            return "the pipeline's waits";
        return "the gradient reduction and optimizer step";
    };
    for (std::size_t i = 0; i < differing.size(); ++i) {
        const StepTimeGapPart &p = *differing[i];
        text += i == 0 ? ": " : "; ";
        text += words(p.name) + " take " + formatSeconds(p.simulated_s, 2) + " simulated against "
                + formatSeconds(p.model_s, 2) + " modelled, as " + reasonFor(p.name, config, gap);
    }
    gap.explanation = text + ".";
    // The model's figure against the simulated one: "longer" when the model is.
    gap.caption += formatPercent(std::abs(gap.model_s / gap.simulated_s - 1.0)) + (rel < 0 ? " longer" : " shorter");
    if (!differing.empty())
        gap.caption += ", in " + words(differing.front()->name);
    return gap;
}

} // namespace memledger
