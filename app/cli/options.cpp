// SPDX-License-Identifier: MIT
#include "app/cli/options.h"

#include "core/check/validate.h"
#include "core/config/editrules.h"
#include "core/formats/builtins.h"
#include "core/formats/preset.h"
#include "core/planner/search.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string_view>

namespace memledger::cli {

const char *const kUsage = "usage: memledger-cli COMMAND ...\n"
                           "\n"
                           "  eval PRESET [--set section.key=value]... [--format table|json|csv|markdown]\n"
                           "      the per-rank memory ledger of a preset\n"
                           "  check PRESET [--set section.key=value]... [--format table|json]\n"
                           "      exit 0 if every pipeline rank fits the device, 3 if one does not\n"
                           "  inference PRESET [--set section.key=value]... [--format table|json]\n"
                           "      the same model served: weights, KV cache, one forward's activations and the\n"
                           "      runtime per pipeline rank, beside the training plan's peak (inference.* fields)\n"
                           "  timeline PRESET [--set section.key=value]... [--rank R] [--format json|csv]\n"
                           "           [--inference prefill|decode]\n"
                           "      one iteration simulated per pipeline rank: peak, when, what is alive,\n"
                           "      the memory curve and every lifetime (csv: the lifetimes);\n"
                           "      --inference prefill|decode: one serving forward of the same model instead\n"
                           "  search PRESET --gpus N [--top K] [--margin F] [--set ...] [--format table|json]\n"
                           "      the fastest plans (t, p, v, d, c, e, micro-batch, ZeRO, recompute,\n"
                           "      optimizer offload) for N GPUs whose reserved memory (PyTorch's caching\n"
                           "      allocator simulated) plus the runtime reserve stays under F × HBM\n"
                           "      (default 1: the device; lower F is an extra safety factor)\n"
                           "  compare PRESET TRACE [--set ...] [--rank R] [--device N] [--format table|json|markdown]\n"
                           "      a measured run held against the model: TRACE is a PyTorch memory snapshot\n"
                           "      (torch.cuda.memory._dump_snapshot) or a profiler Chrome trace with\n"
                           "      [memory] events, gzip-compressed or not\n"
                           "  import-hf CONFIG.json [--set section.key=value]...\n"
                           "      print a preset built from a Hugging Face model config: the model\n"
                           "      section from the config, the rest defaulted; warnings on stderr\n"
                           "  import FILE [--gpus N] [--model MODEL] [--set section.key=value]...\n"
                           "      print a preset built from a Megatron-LM launch (a shell script that runs\n"
                           "      pretrain_gpt.py, or a list of its arguments), a torchtitan TOML job\n"
                           "      config (.toml; its llama3 flavor, or --model) or a DeepSpeed JSON config\n"
                           "      (its model from --model: a built-in model, a preset file or a Hugging\n"
                           "      Face config.json); every argument or key it does not use is named on\n"
                           "      stderr; --gpus gives or replaces the world size\n"
                           "  export PRESET --to megatron|torchtitan|deepspeed [--set section.key=value]...\n"
                           "      print the plan as a Megatron-LM launch, a torchtitan TOML job config or a\n"
                           "      DeepSpeed JSON config; values the framework cannot express as\n"
                           "      \"# memledger:\" comment lines (Megatron, torchtitan) or under the\n"
                           "      \"memledger\" key (DeepSpeed), which import reads back\n"
                           "  presets\n"
                           "      list the built-in presets (models, hardware, scenarios, decks)\n"
                           "  --version\n"
                           "      print the version\n"
                           "\n"
                           "PRESET is a preset file, or the name of a built-in scenario.\n"
                           "Exit codes: 0 fits / done, 3 does not fit (check), 2 bad input.\n";

bool parse(const std::vector<std::string> &args, Options &o, std::ostream &err)
{
    if (args.empty()) {
        err << kUsage;
        return false;
    }
    o.command = args[0];
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        const auto value = [&](const std::string &flag, std::string &dst) {
            if (a.rfind(flag + "=", 0) == 0) {
                dst = a.substr(flag.size() + 1);
                return true;
            }
            if (a == flag) {
                if (i + 1 >= args.size()) {
                    err << "memledger-cli: " << flag << " needs a value\n";
                    return false;
                }
                dst = args[++i];
                return true;
            }
            return false;
        };
        std::string v;
        if (a == "--set" || a.rfind("--set=", 0) == 0) {
            if (!value("--set", v))
                return false;
            o.sets.push_back(v);
        } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
            if (!value("--format", o.format))
                return false;
            o.formatGiven = true;
        } else if ((o.command == "timeline" || o.command == "compare")
                   && (a == "--rank" || a.rfind("--rank=", 0) == 0)) {
            if (!value("--rank", o.rank))
                return false;
        } else if (o.command == "timeline" && (a == "--inference" || a.rfind("--inference=", 0) == 0)) {
            if (!value("--inference", o.serve))
                return false;
        } else if (o.command == "compare" && (a == "--device" || a.rfind("--device=", 0) == 0)) {
            if (!value("--device", o.device))
                return false;
        } else if ((o.command == "search" || o.command == "import") && (a == "--gpus" || a.rfind("--gpus=", 0) == 0)) {
            if (!value("--gpus", o.gpus))
                return false;
        } else if (o.command == "search" && (a == "--top" || a.rfind("--top=", 0) == 0)) {
            if (!value("--top", o.top))
                return false;
        } else if (o.command == "search" && (a == "--margin" || a.rfind("--margin=", 0) == 0)) {
            if (!value("--margin", o.margin))
                return false;
        } else if (o.command == "import" && (a == "--model" || a.rfind("--model=", 0) == 0)) {
            if (!value("--model", o.model))
                return false;
        } else if (o.command == "export" && (a == "--to" || a.rfind("--to=", 0) == 0)) {
            if (!value("--to", o.to))
                return false;
        } else if (!a.empty() && a[0] == '-') {
            err << "memledger-cli: unknown option " << a << "\n" << kUsage;
            return false;
        } else if (o.preset.empty()) {
            o.preset = a;
        } else if (o.command == "compare" && o.trace.empty()) {
            o.trace = a;
        } else {
            err << "memledger-cli: unexpected argument " << a << "\n";
            return false;
        }
    }
    return true;
}

std::optional<long long> integerOf(const std::string &text)
{
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
        return std::nullopt;
    }
    return used == text.size() ? std::optional<long long>(v) : std::nullopt;
}

std::optional<double> numberOf(const std::string &text)
{
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception &) {
        return std::nullopt;
    }
    return used == text.size() ? std::optional<double>(v) : std::nullopt;
}

std::optional<int> pipelineRankOf(const std::string &text, std::ostream &err)
{
    if (const auto r = integerOf(text); r && *r >= 0 && *r <= std::numeric_limits<int>::max())
        return static_cast<int>(*r);
    err << "--rank: expected a pipeline rank (0, 1, ...), got \"" << text << "\"\n";
    return std::nullopt;
}

bool rankInPlan(int rank, const Config &config, std::ostream &err)
{
    if (rank < config.parallelism.pipeline_model_parallel_size)
        return true;
    err << "--rank: the plan has pipeline ranks 0 to " << config.parallelism.pipeline_model_parallel_size - 1
        << ", got " << rank << "\n";
    return false;
}

namespace {

// The key an assignment names: "parallelism.pipeline_layout=[...]" -> "parallelism.pipeline_layout".
std::string_view assignedKey(std::string_view assignment)
{
    return assignment.substr(0, assignment.find('='));
}

// A --set of p or v leaves a preset's pipeline_layout describing another
// pipeline unless the same command line gives a new layout: then it goes, as
// when the GUI's p or v control moves (dropStaleLayout in core/config/editrules.h).
bool layoutMayGoStale(const std::vector<std::string> &sets)
{
    bool pipelineChanged = false;
    for (const std::string &s : sets) {
        const std::string_view key = assignedKey(s);
        if (key == "parallelism.pipeline_layout" || key == "parallelism")
            return false;
        pipelineChanged |= key == "parallelism.pipeline_model_parallel_size"
                           || key == "parallelism.virtual_pipeline_model_parallel_size";
    }
    return pipelineChanged;
}

bool readText(const std::string &preset, std::string &text, std::ostream &err)
{
    std::ifstream in(preset, std::ios::binary);
    if (in) {
        std::ostringstream ss;
        ss << in.rdbuf();
        text = ss.str();
        return true;
    }
    if (const BuiltinPreset *b = findBuiltin("scenarios", preset)) {
        text = std::string(b->text);
        return true;
    }
    err << preset << ": cannot read the file (and no built-in scenario has that name)\n";
    return false;
}

} // namespace

std::optional<Config> load(const Options &o, std::ostream &err, LoadCheck check)
{
    std::string text;
    if (!readText(o.preset, text, err))
        return std::nullopt;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
        // Re-run through the loader for its line/column message.
        const LoadResult failed = presetFromText(text, o.preset);
        for (const Problem &p : failed.problems)
            err << p.toString() << "\n";
        return std::nullopt;
    }
    Problems problems;
    for (const std::string &s : o.sets) {
        Problems p = applyOverride(doc, s);
        problems.insert(problems.end(), p.begin(), p.end());
    }
    if (!problems.empty()) {
        for (const Problem &p : problems)
            err << "--set " << p.toString() << "\n";
        return std::nullopt;
    }
    LoadResult loaded = presetFromJson(doc);
    if (!loaded.config) {
        for (const Problem &p : loaded.problems)
            err << p.toString() << "\n";
        return std::nullopt;
    }
    if (layoutMayGoStale(o.sets)) {
        const std::size_t stages = loaded.config->parallelism.pipeline_layout.size();
        if (dropStaleLayout(loaded.config->parallelism))
            err << "note: --set: parallelism.pipeline_layout lists " << stages << " stages, not p·v = "
                << loaded.config->parallelism.pipeline_model_parallel_size
                       * loaded.config->parallelism.virtual_pipeline_model_parallel_size
                << "; dropped, the layers are split evenly\n";
    }
    const Problems issues = check == LoadCheck::SearchBase ? searchBlockers(*loaded.config) : validate(*loaded.config);
    bool bad = false;
    for (const Problem &p : issues) {
        if (p.isError()) {
            err << p.toString() << "\n";
            bad = true;
        }
    }
    if (bad)
        return std::nullopt;
    return loaded.config;
}

} // namespace memledger::cli
