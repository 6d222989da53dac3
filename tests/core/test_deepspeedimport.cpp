// SPDX-License-Identifier: MIT
// DeepSpeed configs in and out (issue 33): real ds_config.json files of
// huggingface/transformers and microsoft/DeepSpeedExamples (tests/data/launch/,
// each with a .source file naming where it comes from) checked key by key
// against the numbers the file writes, refusals that name the key, and the
// export's round trip over every shipped scenario.
#include "core/formats/builtins.h"
#include "core/formats/deepspeedconfig.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"
#include "core/formats/preset.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

using namespace memledger;

namespace {

LaunchImport importDs(const std::string &name, const std::string &model, std::optional<std::int64_t> gpus)
{
    LaunchOptions options;
    options.gpus = gpus;
    options.model = model;
    return importLaunchFile(std::string(MEMLEDGER_TEST_DATA) + "/launch/" + name, options, {});
}

LaunchImport importDsText(const std::string &text, std::optional<std::int64_t> gpus = 8,
                          const std::string &model = "llama-3.1-8b")
{
    LaunchOptions options;
    options.gpus = gpus;
    options.model = model;
    LaunchImport r = importDeepSpeedConfig(text, options);
    finishLaunchImport(r, {});
    return r;
}

bool names(const Problems &problems, const std::string &path)
{
    return std::any_of(problems.begin(), problems.end(),
                       [&](const Problem &p) { return p.isError() && p.path.find(path) != std::string::npos; });
}

const UnusedSetting *unused(const LaunchImport &r, const std::string &name)
{
    const auto it
        = std::find_if(r.unused.begin(), r.unused.end(), [&](const UnusedSetting &u) { return u.name == name; });
    return it == r.unused.end() ? nullptr : &*it;
}

bool noted(const LaunchImport &r, const std::string &text)
{
    return std::any_of(r.notes.begin(), r.notes.end(),
                       [&](const std::string &n) { return n.find(text) != std::string::npos; });
}

} // namespace

TEST_CASE("The Hugging Face ZeRO-2 test config imports with its auto keys named", "[launch][deepspeed]")
{
    const LaunchImport r = importDs("hf-ds-config-zero2.json", "llama-3.1-8b", 8);
    REQUIRE(r.config);
    const Config &c = *r.config;
    // The file's numbers (tests/data/launch/hf-ds-config-zero2.json).
    CHECK(c.strategy.framework == Framework::DeepSpeed);
    CHECK(c.parallelism.zero_stage == 2);
    CHECK(c.strategy.optimizer_offload == OffloadTarget::CPU);
    CHECK(c.strategy.grad_offload == OffloadTarget::CPU);
    CHECK(c.strategy.param_offload == OffloadTarget::None);
    CHECK(c.strategy.ddp_bucket_size == 200000000); // "reduce_bucket_size": 2e8
    CHECK(c.strategy.grad_buffer == GradBuffer::Contiguous); // "contiguous_gradients": true
    CHECK(c.strategy.overlap_grad_reduce); // "overlap_comm": true
    CHECK(c.training.optimizer == Optimizer::AdamW); // "type": "AdamW"
    CHECK(c.training.params_dtype == Dtype::FP16); // the only 16-bit section, "enabled": "auto"
    CHECK(c.parallelism.data_parallel_size == 8);
    CHECK(c.parallelism.tensor_model_parallel_size == 1);
    CHECK(c.model.hidden_size == 4096); // --model llama-3.1-8b
    // The auto batch keys: the Trainer's defaults (per_device_train_batch_size 8, accumulation 1).
    CHECK(c.training.micro_batch_size == 8);
    CHECK(c.globalBatch() == 64);
    CHECK(noted(r, "train_micro_batch_size_per_gpu: \"auto\""));
    CHECK(noted(r, "fp16.enabled: \"auto\""));
    CHECK(noted(r, "training.seq_length: not in a DeepSpeed config"));
    // Every key not used, with why.
    // ZeRO-1/2 all-gather the updated partitions into the flat 16-bit groups in
    // place (deepspeed/runtime/utils.py, all_gather_dp_groups): no bucket is allocated.
    REQUIRE(unused(r, "zero_optimization.allgather_bucket_size"));
    CHECK(unused(r, "zero_optimization.allgather_bucket_size")->noMemoryEffect);
    REQUIRE(unused(r, "optimizer.params.lr"));
    CHECK(unused(r, "optimizer.params.lr")->noMemoryEffect);
    CHECK(unused(r, "optimizer.params.lr")->why.find("auto") != std::string::npos);
    CHECK(unused(r, "scheduler.type"));
    CHECK(unused(r, "fp16.loss_scale_window"));
    CHECK(unused(r, "steps_per_print"));
    CHECK(unused(r, "zero_optimization.offload_optimizer.pin_memory"));
    CHECK_FALSE(unused(r, "zero_optimization.stage"));
    CHECK_FALSE(unused(r, "zero_optimization.reduce_bucket_size"));
    CHECK_FALSE(unused(r, "zero_optimization.overlap_comm"));
}

TEST_CASE("The Hugging Face ZeRO-3 test config imports with a Hugging Face model", "[launch][deepspeed]")
{
    const LaunchImport r
        = importDs("hf-ds-config-zero3.json", std::string(MEMLEDGER_TEST_DATA) + "/hf/Llama-2-7b-hf.json", 16);
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.parallelism.zero_stage == 3);
    CHECK(c.strategy.optimizer_offload == OffloadTarget::CPU);
    CHECK(c.strategy.param_offload == OffloadTarget::CPU);
    CHECK(c.parallelism.data_parallel_size == 16);
    // "reduce_bucket_size": "auto" is hidden_size² as the Trainer fills it; Llama-2-7b-hf's hidden_size is 4096.
    CHECK(c.model.hidden_size == 4096);
    CHECK(c.model.num_layers == 32);
    CHECK(c.strategy.ddp_bucket_size == 4096 * 4096);
    // ZeRO-3's live cap from the file (1e9) and its prefetch window "auto": 0.9 × 4096², as the Trainer fills it.
    CHECK_FALSE(unused(r, "zero_optimization.stage3_max_live_parameters"));
    CHECK(c.strategy.zero3_max_live_parameters == 1000000000);
    CHECK(c.strategy.zero3_prefetch_bucket_size == 4096 * 4096 * 9 / 10);
    CHECK(unused(r, "zero_optimization.sub_group_size"));
    CHECK(unused(r, "zero_optimization.stage3_gather_fp16_weights_on_model_save"));
    // A MemLedger preset file lends its model section the same way.
    const LaunchImport preset
        = importDs("hf-ds-config-zero3.json", std::string(MEMLEDGER_PRESET_DIR) + "/models/llama-2-13b.json", 16);
    REQUIRE(preset.config);
    CHECK(preset.config->model.hidden_size == 5120);
    CHECK(preset.config->strategy.ddp_bucket_size == 5120 * 5120);
}

TEST_CASE("The Hugging Face ZeRO-3 bf16 test config reads the old bfloat16 section", "[launch][deepspeed]")
{
    const LaunchImport r = importDs("hf-ds-config-zero3-bf16.json", "qwen2.5-7b", 8);
    REQUIRE(r.config);
    const Config &c = *r.config;
    // "bfloat16": {"enabled": "auto"}: the section the file provisions, named as taken from the Trainer.
    CHECK(c.training.params_dtype == Dtype::BF16);
    CHECK(c.training.main_params_fp32);
    CHECK(noted(r, "bfloat16.enabled: \"auto\""));
    CHECK(c.parallelism.zero_stage == 3);
    CHECK(c.strategy.optimizer_offload == OffloadTarget::CPU);
    CHECK(c.strategy.param_offload == OffloadTarget::CPU);
    CHECK(c.training.optimizer == Optimizer::AdamW);
    REQUIRE(unused(r, "zero_optimization.sub_group_size"));
    CHECK(unused(r, "zero_optimization.sub_group_size")->value == "1000000000.0");
    CHECK_FALSE(unused(r, "bfloat16.enabled"));
}

TEST_CASE("The DeepSpeedExamples Megatron ZeRO-2 config derives its micro-batch from the world", "[launch][deepspeed]")
{
    const LaunchImport r = importDs("dse-megatron-zero2.json", "gpt-3-175b", 8);
    REQUIRE(r.config);
    const Config &c = *r.config;
    // "train_batch_size": 16, "gradient_accumulation_steps": 1 over 8 GPUs: 2 per GPU.
    CHECK(c.globalBatch() == 16);
    CHECK(c.training.micro_batch_size == 2);
    CHECK(c.microBatches() == 1);
    CHECK(c.parallelism.zero_stage == 2);
    CHECK(c.training.params_dtype == Dtype::FP16);
    CHECK(c.training.optimizer == Optimizer::Adam);
    CHECK(c.strategy.optimizer_offload == OffloadTarget::None);
    // "activation_checkpointing" configured: every layer recomputed.
    CHECK(c.strategy.recompute_granularity == RecomputeGranularity::Full);
    CHECK(c.strategy.recompute_num_layers == 1);
    CHECK(unused(r, "activation_checkpointing.partition_activations"));
    CHECK(unused(r, "activation_checkpointing.contiguous_memory_optimization"));
    CHECK(unused(r, "gradient_clipping"));
    // 16 does not split over 3 GPUs; without --gpus the accumulation alone does not give the world.
    CHECK(names(importDs("dse-megatron-zero2.json", "gpt-3-175b", 3).problems, "train_batch_size"));
    CHECK(names(importDs("dse-megatron-zero2.json", "gpt-3-175b", std::nullopt).problems, "--gpus"));
}

TEST_CASE("The DeepSpeedExamples ZeRO-Infinity config offloads to NVMe", "[launch][deepspeed]")
{
    const LaunchImport r = importDs("dse-zero-infinity.json", "llama-2-7b", 4);
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.training.micro_batch_size == 4);
    CHECK(c.globalBatch() == 16);
    CHECK(c.parallelism.zero_stage == 3);
    CHECK(c.strategy.optimizer_offload == OffloadTarget::NVMe);
    CHECK(c.strategy.param_offload == OffloadTarget::NVMe);
    CHECK(c.strategy.ddp_bucket_size == 90000000);
    CHECK(c.training.params_dtype == Dtype::FP16);
    CHECK(noted(r, "optimizer"));
    // The file's misspelt key is named, not dropped.
    REQUIRE(unused(r, "zero_optimization.stage3_param_persitence_threshold"));
    CHECK_FALSE(unused(r, "zero_optimization.stage3_param_persitence_threshold")->noMemoryEffect);
    CHECK(unused(r, "aio.queue_depth"));
    CHECK(unused(r, "zero_optimization.offload_optimizer.nvme_path"));
}

TEST_CASE("DeepSpeed configs: bad types and contradictions are refused naming the key", "[launch][deepspeed]")
{
    const auto refused = [](const std::string &text, const std::string &key, std::optional<std::int64_t> gpus = 8) {
        CAPTURE(text);
        const LaunchImport r = importDsText(text, gpus);
        CHECK_FALSE(r.config);
        CHECK(names(r.problems, key));
    };
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": "two"}})",
            "zero_optimization.stage");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 4}})", "zero_optimization.stage");
    refused(R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2})",
            "train_batch_size");
    refused(R"({"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2})",
            "train_batch_size", std::nullopt);
    refused(R"({"train_micro_batch_size_per_gpu": 1.5})", "train_micro_batch_size_per_gpu");
    refused(R"({"gradient_accumulation_steps": 2})", "train_batch_size");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "fp16": {"enabled": true}})",
            "fp16.enabled");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": "yes"}})", "bf16.enabled");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"offload_optimizer": {"device": "gpu"}}})",
            "zero_optimization.offload_optimizer.device");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"contiguous_gradients": 1}})",
            "zero_optimization.contiguous_gradients");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "memledger": {"unexpressed": 3}})", "memledger.unexpressed");
    refused(R"([1, 2])", "ds_config");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": "auto"}})",
            "zero_optimization.stage");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": true})", "zero_optimization");
    refused(R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"offload_param": "cpu"}})",
            "zero_optimization.offload_param");
    const LaunchImport noModel = importDsText(R"({"train_micro_batch_size_per_gpu": 1})", 8, "");
    CHECK_FALSE(noModel.config);
    CHECK(names(noModel.problems, "--model"));
    const LaunchImport badModel = importDsText(R"({"train_micro_batch_size_per_gpu": 1})", 8, "no-such-model");
    CHECK_FALSE(badModel.config);
    CHECK(names(badModel.problems, "--model"));
}

TEST_CASE("export --to deepspeed and import give every shipped scenario back", "[launch][deepspeed][roundtrip]")
{
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const LoadResult loaded = presetFromText(findBuiltin("scenarios", name)->text, name);
        REQUIRE(loaded.config);
        const LaunchExport exported = exportLaunch(*loaded.config, LaunchFormat::DeepSpeed);
        CHECK(exported.problems.empty());
        CAPTURE(exported.text);
        REQUIRE(nlohmann::json::accept(exported.text));
        LaunchImport back = importDeepSpeedConfig(exported.text, {});
        finishLaunchImport(back, {});
        REQUIRE(back.config);
        CHECK(canonicalPlan(*back.config) == canonicalPlan(*loaded.config));
    }
}

TEST_CASE("The memledger key carries the model and the model parallelism, and --model replaces its model",
          "[launch][deepspeed]")
{
    const std::string text = R"({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2,
        "gradient_accumulation_steps": 4, "zero_optimization": {"stage": 1},
        "memledger": {"unexpressed": {"model": "llama-3-70b", "parallelism.tensor_model_parallel_size": 8,
                                      "training.seq_length": 4096},
                      "why": {"model": "the model: not part of a DeepSpeed config"}}})";
    // 64 = 2 × 4 × d: d = 8, on 8 · 8 GPUs.
    const LaunchImport own = importDsText(text, std::nullopt, "");
    REQUIRE(own.config);
    CHECK(own.config->model.num_layers == 80); // presets/models/llama-3-70b.json
    CHECK(own.config->parallelism.tensor_model_parallel_size == 8);
    CHECK(own.config->parallelism.data_parallel_size == 8);
    CHECK(own.config->training.seq_length == 4096);
    // --gpus 64 over t = 8 gives the same d; --gpus 32 gives 4, which the batch triple refuses.
    CHECK(importDsText(text, 64, "").config);
    CHECK(names(importDsText(text, 32, "").problems, "train_batch_size"));
    const LaunchImport replaced = importDsText(text, std::nullopt, "llama-3.1-8b");
    REQUIRE(replaced.config);
    CHECK(replaced.config->model.num_layers == 32); // presets/models/llama-3.1-8b.json
    const LaunchImport unknown = importDsText(R"({"train_micro_batch_size_per_gpu": 1, "memledger": {"notes": 1}})");
    CHECK_FALSE(unknown.config);
    CHECK(names(unknown.problems, "memledger.notes"));
}

TEST_CASE("export --to deepspeed writes the ZeRO plan as DeepSpeed keys", "[launch][deepspeed][roundtrip]")
{
    const LoadResult loaded
        = presetFromText(findBuiltin("scenarios", "zero-7.5b-64gpus-stage-2")->text, "zero-7.5b-64gpus-stage-2");
    REQUIRE(loaded.config);
    const LaunchExport exported = exportLaunch(*loaded.config, LaunchFormat::DeepSpeed);
    const nlohmann::json doc = nlohmann::json::parse(exported.text);
    const Config &c = *loaded.config;
    CHECK(doc["zero_optimization"]["stage"] == 2);
    CHECK(doc["train_micro_batch_size_per_gpu"] == c.training.micro_batch_size);
    CHECK(doc["train_batch_size"].get<std::int64_t>()
          == doc["train_micro_batch_size_per_gpu"].get<std::int64_t>()
                 * doc["gradient_accumulation_steps"].get<std::int64_t>() * c.parallelism.data_parallel_size);
    // What DeepSpeed has no key for rides in "memledger", each entry with why.
    REQUIRE(doc.contains("memledger"));
    for (const auto &[key, value] : doc["memledger"]["unexpressed"].items())
        CHECK(doc["memledger"]["why"].contains(key));
}

// What the GUI's launch import starts from (issue 33): the current plan's world
// size and model where the file does not give them, pasted text with no file
// name, and which dropped .json is a DeepSpeed config.
namespace {

const std::string kDefaultsArgs = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 "
                                  "--max-position-embeddings 2048 --vocab-size 32000 --micro-batch-size 1 "
                                  "--tensor-model-parallel-size 2";

} // namespace

TEST_CASE("Launch defaults: the default world size applies only where the file gives none", "[launch][defaults]")
{
    LaunchOptions options;
    options.defaultGpus = 16;
    LaunchImport pasted = importLaunchText(kDefaultsArgs, "", options, {});
    REQUIRE(pasted.config);
    CHECK(pasted.config->parallelism.gpus() == 16);
    CHECK(std::any_of(pasted.notes.begin(), pasted.notes.end(),
                      [](const std::string &n) { return n.find("current plan's 16 GPUs") != std::string::npos; }));

    LaunchImport given
        = importLaunchText("torchrun --nproc_per_node 4 pretrain_gpt.py " + kDefaultsArgs, "", options, {});
    REQUIRE(given.config);
    CHECK(given.config->parallelism.gpus() == 4);
}

TEST_CASE("Launch defaults: DeepSpeed takes the default model when neither --model nor the file names one",
          "[launch][defaults]")
{
    const BuiltinPreset *builtin = findBuiltin("models", builtinNames("models").front());
    REQUIRE(builtin);
    const ModelConfig model = presetFromText(builtin->text, builtin->name).config->model;
    LaunchOptions options;
    options.defaultModel = model;
    options.defaultGpus = 8;
    const LaunchImport r = importLaunchText(R"({"train_micro_batch_size_per_gpu": 1})", "", options, {});
    REQUIRE(r.config);
    CHECK(r.config->model == model);
    CHECK(r.config->parallelism.data_parallel_size == 8);
}

TEST_CASE("Launch defaults: a DeepSpeed config is told from a preset and a trace", "[launch][defaults]")
{
    CHECK(isDeepSpeedConfigText(R"({"train_batch_size": 16, "zero_optimization": {"stage": 2}})"));
    CHECK_FALSE(isDeepSpeedConfigText(R"({"format": "memledger-preset", "fp16": {}})"));
    CHECK_FALSE(isDeepSpeedConfigText(R"({"traceEvents": [], "fp16": {}})"));
    CHECK_FALSE(isDeepSpeedConfigText("not json"));
}
