// SPDX-License-Identifier: MIT
// torchtitan TOML job configs in and out (issue 33): the llama3 train_configs
// of pytorch/torchtitan at the commit its December 2024 benchmarks name
// (9dec370, benchmarks/llama3_h100_202412_torchtitan.md) and at the last
// commit with TOML configs (8a2686c4, September 2025), copied unchanged into
// tests/data/launch/ with .source files, checked field by field against what
// each file writes and torchtitan's defaults of its version; the pipeline
// splits torchtitan derives, worked by hand; refusals that name the key; and
// the export's round trip over every shipped scenario.
#include "core/formats/builtins.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"
#include "core/formats/preset.h"
#include "core/formats/tomltext.h"
#include "core/formats/torchtitanconfig.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

using namespace memledger;

namespace {

std::string fixturePath(const std::string &name)
{
    return std::string(MEMLEDGER_TEST_DATA) + "/launch/" + name;
}

std::string fixtureText(const std::string &name)
{
    std::ifstream in(fixturePath(name));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

LaunchImport importFile(const std::string &name, std::optional<std::int64_t> gpus)
{
    LaunchOptions options;
    options.gpus = gpus;
    return importLaunchFile(fixturePath(name), options, {});
}

LaunchImport importText(const std::string &text, std::optional<std::int64_t> gpus, std::vector<std::string> sets = {})
{
    LaunchOptions options;
    options.gpus = gpus;
    return importLaunchText(text, "plan.toml", options, sets);
}

// The fixture with `from` replaced by `to` (each must occur once).
std::string edited(std::string text, const std::vector<std::pair<std::string, std::string>> &edits)
{
    for (const auto &[from, to] : edits) {
        const std::size_t at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
    }
    return text;
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

ModelConfig builtinModel(const std::string &name)
{
    return presetFromText(findBuiltin("models", name)->text, name).config->model;
}

} // namespace

TEST_CASE("torchtitan December 2024 llama3_8b imports as FSDP over the world with per-op checkpointing",
          "[launch][torchtitan]")
{
    // The file's NOTE: a preset for 64 A100 GPUs.
    const LaunchImport r = importFile("torchtitan-202412-llama3_8b.toml", 64);
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.strategy.framework == Framework::Torchtitan);
    CHECK(c.model == builtinModel("llama-3.1-8b")); // flavor = "8B"
    // data_parallel_shard_degree = -1: 64 / (replicate 1 · tp 1 · pp 1 · cp 1) = 64, FSDP.
    CHECK(c.parallelism.data_parallel_size == 64);
    CHECK(c.parallelism.zero_stage == 3);
    CHECK(c.parallelism.data_parallel_shard_size == 0);
    CHECK(c.parallelism.tensor_model_parallel_size == 1);
    CHECK(c.parallelism.pipeline_model_parallel_size == 1);
    CHECK(c.parallelism.context_parallel_size == 1);
    // apply_fsdp at 9dec370 shards every block, then the model: the embedding,
    // final norm and output layer are the root unit.
    CHECK(c.strategy.fsdp_root_unit);
    // [training] batch_size = 1 per rank, seq_len = 8192; no accumulation in December 2024: 1 × 64.
    CHECK(c.training.micro_batch_size == 1);
    CHECK(c.training.global_batch_size == 64);
    CHECK(c.training.seq_length == 8192);
    // mode = 'selective', selective_ac_option = 'op'.
    CHECK(c.strategy.recompute_granularity == RecomputeGranularity::SelectiveOp);
    // [optimizer] name = "AdamW"; optimizer.fused absent: config_manager.py's store_true, foreach=True.
    CHECK(c.training.optimizer == Optimizer::AdamW);
    CHECK(c.strategy.optimizer_kernel == OptimizerKernel::Foreach);
    // mixed_precision_param's default bfloat16 under FSDP, fp32 sharded parameters.
    CHECK(c.training.params_dtype == Dtype::BF16);
    CHECK(c.training.fp32_params);
    CHECK(c.training.fp8_recipe == Fp8Recipe::None); // enable_float8_linear = false
    // Every key not used is named, the ones known not to matter as such.
    REQUIRE(unused(r, "optimizer.lr"));
    CHECK(unused(r, "optimizer.lr")->noMemoryEffect);
    CHECK(unused(r, "optimizer.lr")->line == 26);
    CHECK(unused(r, "job.dump_folder"));
    CHECK(unused(r, "checkpoint.async_mode"));
    CHECK(unused(r, "training.warmup_steps"));
    CHECK(unused(r, "model.tokenizer_path"));
    CHECK_FALSE(unused(r, "training.compile")); // false: nothing compiled
    CHECK_FALSE(unused(r, "model.norm_type")); // rmsnorm, what the model has
    CHECK_FALSE(unused(r, "experimental.pipeline_parallel_degree"));
}

TEST_CASE("torchtitan December 2024 llama3_70b and 405b: tensor parallel, full checkpointing, float8",
          "[launch][torchtitan]")
{
    const LaunchImport r70 = importFile("torchtitan-202412-llama3_70b.toml", 64);
    REQUIRE(r70.config);
    const Config &a = *r70.config;
    CHECK(a.model == builtinModel("llama-3.1-70b"));
    // tensor_parallel_degree = 8: the shard degree is 64 / 8 = 8; TP plans are sequence parallel.
    CHECK(a.parallelism.tensor_model_parallel_size == 8);
    CHECK(a.parallelism.sequence_parallel);
    CHECK(a.parallelism.data_parallel_size == 8);
    CHECK(a.parallelism.zero_stage == 3);
    CHECK(a.training.micro_batch_size == 8); // batch_size = 8
    CHECK(a.training.global_batch_size == 64); // 8 × 8
    CHECK(a.strategy.recompute_granularity == RecomputeGranularity::Full); // mode = 'full'
    CHECK(a.strategy.recompute_method == RecomputeMethod::Uniform);
    CHECK(a.strategy.recompute_num_layers == 1);
    // Under TP torchtitan's loss runs in loss_parallel() (the framework's default) unless disable_loss_parallel.
    CHECK(a.strategy.cross_entropy == CrossEntropy::LossParallel);
    const LaunchImport gathered = importText(
        edited(fixtureText("torchtitan-202412-llama3_70b.toml"),
               {{"tensor_parallel_degree = 8", "tensor_parallel_degree = 8\ndisable_loss_parallel = true"}}),
        64);
    REQUIRE(gathered.config);
    CHECK(gathered.config->strategy.cross_entropy == CrossEntropy::Unfused);

    // The NOTE: 128 H100 GPUs.
    const LaunchImport r405 = importFile("torchtitan-202412-llama3_405b.toml", 128);
    REQUIRE(r405.config);
    const Config &b = *r405.config;
    CHECK(b.model == builtinModel("llama-3.1-405b"));
    CHECK(b.parallelism.tensor_model_parallel_size == 8);
    CHECK(b.parallelism.data_parallel_size == 16); // 128 / 8
    CHECK(b.training.micro_batch_size == 2);
    CHECK(b.training.global_batch_size == 32); // 2 × 16
    CHECK(b.strategy.tp_comm_overlap); // enable_async_tensor_parallel = true
    // [float8] enable_float8_linear: torchao's Float8Linear, dynamic (tensorwise) scaling;
    // enable_fsdp_float8_all_gather: FSDP gathers the float8 weights.
    CHECK(b.training.fp8_recipe == Fp8Recipe::Tensorwise);
    CHECK(b.strategy.fp8_implementation == Fp8Implementation::Torchao);
    CHECK(b.strategy.fp8_param_gather);
    // compile = true: torchtitan compiles each block (strategy.torch_compile).
    CHECK(b.strategy.torch_compile);
    CHECK_FALSE(unused(r405, "training.compile"));
    REQUIRE(unused(r405, "float8.precompute_float8_dynamic_scale_for_fsdp"));
    CHECK(unused(r405, "float8.precompute_float8_dynamic_scale_for_fsdp")->noMemoryEffect);
}

TEST_CASE("torchtitan 2025 llama3 configs import with the 2025 keys and defaults", "[launch][torchtitan]")
{
    const LaunchImport r8 = importFile("torchtitan-202509-llama3_8b.toml", 64);
    REQUIRE(r8.config);
    const Config &a = *r8.config;
    CHECK(a.model == builtinModel("llama-3.1-8b"));
    CHECK(a.parallelism.data_parallel_size == 64);
    CHECK(a.parallelism.zero_stage == 3);
    CHECK(a.training.micro_batch_size == 1); // local_batch_size = 1
    CHECK(a.training.global_batch_size == 64); // global_batch_size's default -1: local × dp
    CHECK(a.training.seq_length == 8192);
    CHECK(a.strategy.recompute_granularity == RecomputeGranularity::SelectiveOp);
    CHECK_FALSE(a.strategy.fsdp_root_unit); // the embedding and [norm, output] are units of their own since #1094
    // optimizer.implementation's 2025 default "fused".
    CHECK(a.strategy.optimizer_kernel == OptimizerKernel::Fused);
    CHECK(a.training.fp8_recipe == Fp8Recipe::None); // converters commented out
    CHECK(unused(r8, "lr_scheduler.warmup_steps"));
    CHECK(unused(r8, "validation.freq"));
    CHECK(unused(r8, "model.hf_assets_path"));
    CHECK_FALSE(unused(r8, "compile.enable"));
    CHECK_FALSE(a.strategy.torch_compile); // enable=false
    CHECK_FALSE(unused(r8, "compile.components")); // nothing compiled
    CHECK_FALSE(unused(r8, "quantize.linear.float8.filter_fqns")); // ["output"], as MemLedger counts FP8

    const LaunchImport r405 = importFile("torchtitan-202509-llama3_405b.toml", 128);
    REQUIRE(r405.config);
    const Config &b = *r405.config;
    CHECK(b.model == builtinModel("llama-3.1-405b"));
    CHECK(b.parallelism.tensor_model_parallel_size == 8);
    CHECK(b.parallelism.data_parallel_size == 16);
    CHECK(b.training.micro_batch_size == 2);
    CHECK(b.strategy.tp_comm_overlap);
    CHECK(b.strategy.recompute_granularity == RecomputeGranularity::Full);
    // converters = ["float8"] with enable_fsdp_float8_all_gather = true; "float8" is the name
    // before the quantization refactor (8a2686c4 registers "quantize.linear.float8"): a note says so.
    CHECK(b.training.fp8_recipe == Fp8Recipe::Tensorwise);
    CHECK(b.strategy.fp8_param_gather);
    CHECK(std::any_of(r405.notes.begin(), r405.notes.end(),
                      [](const std::string &n) { return n.find("quantize.linear.float8") != std::string::npos; }));
    const LaunchImport renamed
        = importText(edited(fixtureText("torchtitan-202509-llama3_405b.toml"),
                            {{"converters = [\"float8\"]", "converters = [\"quantize.linear.float8\"]"}}),
                     128);
    REQUIRE(renamed.config);
    CHECK(renamed.config->training.fp8_recipe == Fp8Recipe::Tensorwise);
    CHECK(b.strategy.torch_compile); // enable=true, components = ["model", "loss"]
    CHECK_FALSE(unused(r405, "compile.enable"));

    const LaunchImport r70 = importFile("torchtitan-202509-llama3_70b.toml", 64);
    REQUIRE(r70.config);
    CHECK(r70.config->model == builtinModel("llama-3.1-70b"));
    CHECK(r70.config->training.micro_batch_size == 8);
}

TEST_CASE("torchtitan debugmodel: its shape per version and every N-th block checkpointed", "[launch][torchtitan]")
{
    // 2025: TransformerModelArgs(dim=256, n_layers=6, n_heads=16, vocab_size=2048);
    // FFN 4 · 256 · 2/3 = 682, up to multiple_of 256: 768.
    const LaunchImport now = importFile("torchtitan-202509-debug_model.toml", 8);
    REQUIRE(now.config);
    const ModelConfig &m = now.config->model;
    CHECK(m.num_layers == 6);
    CHECK(m.hidden_size == 256);
    CHECK(m.num_attention_heads == 16);
    CHECK(m.queryGroups() == 16);
    CHECK(m.ffn() == 768);
    CHECK(m.vocab_size == 2048);
    CHECK(m.swiglu);
    CHECK(now.config->training.micro_batch_size == 8); // local_batch_size = 8
    CHECK(now.config->training.seq_length == 2048);
    // selective_ac_option = '2': _apply_layer_sac wraps blocks 2, 4, 6 (count % 2 == 0): 3 of 6
    // blocks recomputed whole, the others keep everything: "block" with 6 / 2 = 3.
    CHECK(now.config->strategy.recompute_granularity == RecomputeGranularity::Full);
    CHECK(now.config->strategy.recompute_method == RecomputeMethod::Block);
    CHECK(now.config->strategy.recompute_num_layers == 3);
    CHECK_FALSE(now.config->strategy.fsdp_reshard_after_forward); // "default"
    CHECK(unused(now, "lr_scheduler.decay_ratio"));

    // December 2024: ModelArgs(dim=256, n_layers=8, n_heads=16), the vocabulary of
    // tests/assets/test_tiktoken.model: 2000 ranks + 256 special tokens.
    const LaunchImport old = importFile("torchtitan-202412-debug_model.toml", 8);
    REQUIRE(old.config);
    CHECK(old.config->model.num_layers == 8);
    CHECK(old.config->model.vocab_size == 2256);
    CHECK(old.config->strategy.recompute_num_layers == 4); // 8 / 2
    // With Llama 3's tokenizer (train.py: vocab_size = tokenizer.n_words): 128000 ranks + 256 special tokens.
    const LaunchImport llamaTokenizer = importText(
        edited(fixtureText("torchtitan-202412-debug_model.toml"),
               {{"./tests/assets/test_tiktoken.model", "./torchtitan/datasets/tokenizer/original/tokenizer.model"}}),
        8);
    REQUIRE(llamaTokenizer.config);
    CHECK(llamaTokenizer.config->model.vocab_size == 128256);
}

TEST_CASE("torchtitan pipelines: the split torchtitan derives, per version", "[launch][torchtitan][pipeline]")
{
    // Table 5 of benchmarks/llama3_h100_202412_torchtitan.md: 405B on 512 GPUs, FSDP 8, TP 8, PP 8,
    // Interleaved 1F1B, local batch 32, on the December 2024 config.
    const std::string table5
        = edited(fixtureText("torchtitan-202412-llama3_405b.toml"),
                 {{"batch_size = 2", "batch_size = 32"},
                  {"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 8"},
                  {"pipeline_parallel_degree = 1",
                   "pipeline_parallel_degree = 8\npipeline_parallel_schedule = \"Interleaved1F1B\""}});
    const LaunchImport r = importText(table5, std::nullopt);
    REQUIRE(r.config);
    const ParallelismConfig &par = r.config->parallelism;
    CHECK(par.gpus() == 512); // 8 · 8 · 8, no --gpus needed
    CHECK(par.pipeline_model_parallel_size == 8);
    CHECK(par.schedule() == PipelineSchedule::Interleaved);
    CHECK(par.virtual_pipeline_model_parallel_size == 2); // a multi-stage schedule: 2 stages per rank
    // generate_split_points: 16 stages of 126 layers, base 7, remainder 14: the first stage 7,
    // the 14 middle stages 8, the last 126 − 7 − 112 = 7.
    const std::vector<std::int64_t> layout = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
    CHECK(par.pipeline_layout == layout);
    // pipeline_parallel_microbatches' default, the pipeline degree: 32 / 8 = 4 per micro-batch.
    CHECK(r.config->training.micro_batch_size == 4);
    CHECK(r.config->training.global_batch_size == 256); // the table's global batch: 32 × 8

    // 2025: llama3_8b with pipeline_parallel_degree = 4 and 1F1B on 32 GPUs.
    const std::string pp4 = edited(fixtureText("torchtitan-202509-llama3_8b.toml"),
                                   {{"pipeline_parallel_degree = 1", "pipeline_parallel_degree = 4"},
                                    {"local_batch_size = 1", "local_batch_size = 8"}});
    const LaunchImport n = importText(pp4, 32);
    REQUIRE(n.config);
    const ParallelismConfig &q = n.config->parallelism;
    CHECK(q.data_parallel_size == 8); // 32 / 4
    CHECK(q.schedule() == PipelineSchedule::OneFOneB);
    CHECK(q.virtual_pipeline_model_parallel_size == 1);
    // generate_llm_fqn_per_model_part(4, 32, 1, 1): 34 effective layers, 8 each and 2 over:
    // 9 − 1 (the embedding), 9, 8, 8 − 1 (norm and output).
    CHECK(q.pipeline_layout == std::vector<std::int64_t>{8, 9, 8, 7});
    // pipeline_parallel_microbatch_size's default 1: 8 micro-batches of 1 per step.
    CHECK(n.config->training.micro_batch_size == 1);
    CHECK(n.config->training.global_batch_size == 64); // 8 × 8
}

TEST_CASE("torchtitan December 2024 context parallelism: Table 2 of its benchmarks", "[launch][torchtitan]")
{
    // benchmarks/llama3_h100_202412_torchtitan.md, Table 2: 8B on 8 GPUs, FSDP 4 and CP 2 at
    // sequence length 65536, local batch 1, full checkpointing, torch.compile and Float8.
    const std::string row = edited(fixtureText("torchtitan-202412-llama3_8b.toml"),
                                   {{"seq_len = 8192", "seq_len = 65536"},
                                    {"compile = false", "compile = true"},
                                    {"context_parallel_degree = 1", "context_parallel_degree = 2"},
                                    {"mode = 'selective'", "mode = 'full'"},
                                    {"enable_float8_linear = false", "enable_float8_linear = true"}});
    const LaunchImport r = importText(row, 8);
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.parallelism.context_parallel_size == 2);
    CHECK(c.parallelism.data_parallel_size == 4); // -1: 8 / cp 2
    CHECK(c.parallelism.zero_stage == 3);
    CHECK(c.strategy.cp_comm_type == CpCommType::AllGather); // context_parallel_rotate_method's default
    CHECK(c.training.seq_length == 65536);
    CHECK(c.training.micro_batch_size == 1);
    CHECK(c.strategy.recompute_granularity == RecomputeGranularity::Full);
    CHECK(c.training.fp8_recipe == Fp8Recipe::Tensorwise);
    CHECK_FALSE(c.strategy.fp8_param_gather); // enable_fsdp_float8_all_gather not set
    CHECK(c.strategy.torch_compile);
}

TEST_CASE("torchtitan data parallelism: HSDP, DDP and context parallel FSDP", "[launch][torchtitan]")
{
    const std::string base = fixtureText("torchtitan-202509-llama3_8b.toml");
    const LaunchImport hsdp
        = importText(edited(base, {{"data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2"}}), 16);
    REQUIRE(hsdp.config);
    CHECK(hsdp.config->parallelism.data_parallel_size == 16); // 2 · (16 / 2)
    CHECK(hsdp.config->parallelism.zero_stage == 3);
    CHECK(hsdp.config->parallelism.data_parallel_shard_size == 8);

    const LaunchImport ddp
        = importText(edited(base, {{"data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 8"},
                                   {"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1"}}),
                     std::nullopt);
    REQUIRE(ddp.config);
    CHECK(ddp.config->parallelism.data_parallel_size == 8);
    CHECK(ddp.config->parallelism.zero_stage == 0); // DDP: fsdp_enabled is dp_shard > 1 or cp > 1
    CHECK(ddp.config->training.params_dtype == Dtype::BF16); // autocast under DDP
    // December 2024 had no autocast: its mixed precision was FSDP's policy alone, DDP trained in fp32.
    const LaunchImport oldDdp
        = importText(edited(fixtureText("torchtitan-202412-llama3_8b.toml"),
                            {{"data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 8"},
                             {"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1"}}),
                     std::nullopt);
    REQUIRE(oldDdp.config);
    CHECK(oldDdp.config->parallelism.zero_stage == 0);
    CHECK(oldDdp.config->training.params_dtype == Dtype::FP32);

    // ParallelDims.fsdp_enabled with cp > 1 even when dp_shard = 1; the rotate method "alltoall" is a ring.
    const LaunchImport cp = importText(
        edited(base, {{"context_parallel_degree = 1", "context_parallel_degree = 8\ncontext_parallel_rotate_method = "
                                                      "\"alltoall\""},
                      {"seq_len = 8192", "seq_len = 65536"}}),
        8);
    REQUIRE(cp.config);
    CHECK(cp.config->parallelism.context_parallel_size == 8);
    CHECK(cp.config->parallelism.data_parallel_size == 1);
    CHECK(cp.config->parallelism.zero_stage == 3);
    CHECK(cp.config->strategy.cp_comm_type == CpCommType::P2P);

    // Pure TP without FSDP: maybe_enable_amp turns mixed precision off, fp32 training, with a warning.
    const LaunchImport tp
        = importText(edited(base, {{"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1"},
                                   {"tensor_parallel_degree = 1", "tensor_parallel_degree = 8"}}),
                     std::nullopt);
    REQUIRE(tp.config);
    CHECK(tp.config->training.params_dtype == Dtype::FP32);
    CHECK(std::any_of(tp.problems.begin(), tp.problems.end(),
                      [](const Problem &p) { return !p.isError() && p.path == "training.mixed_precision_param"; }));
}

TEST_CASE("torchtitan refusals name the key", "[launch][torchtitan]")
{
    const std::string base = fixtureText("torchtitan-202509-llama3_8b.toml");
    // data_parallel_shard_degree -1 needs the world size.
    const LaunchImport noWorld = importText(base, std::nullopt);
    CHECK_FALSE(noWorld.config);
    CHECK(names(noWorld.problems, "--gpus"));
    // The degrees must multiply to the world size (ParallelDims._validate).
    const LaunchImport product
        = importText(edited(base, {{"data_parallel_shard_degree = -1", "data_parallel_shard_degree = 4"}}), 8);
    CHECK_FALSE(product.config);
    CHECK(names(product.problems, "parallelism.data_parallel_shard_degree"));
    const LaunchImport schedule = importText(
        edited(base, {{"pipeline_parallel_degree = 1", "pipeline_parallel_degree = 2\npipeline_parallel_schedule = "
                                                       "\"LoopedBFS\""}}),
        8);
    CHECK_FALSE(schedule.config);
    CHECK(names(schedule.problems, "parallelism.pipeline_parallel_schedule"));
    // pipeline.py refuses a single-stage schedule with two stages per rank.
    const LaunchImport stages
        = importText(edited(base, {{"pipeline_parallel_degree = 1",
                                    "pipeline_parallel_degree = 2\npipeline_parallel_layers_per_stage "
                                    "= 8"}}),
                     8);
    CHECK_FALSE(stages.config); // (32 + 1 + 1) / 8 rounded up: 5 stages, not divisible by 2
    CHECK(names(stages.problems, "parallelism.pipeline_parallel_schedule"));
    const LaunchImport single
        = importText(edited(base, {{"pipeline_parallel_degree = 1",
                                    "pipeline_parallel_degree = 2\npipeline_parallel_layers_per_stage "
                                    "= 6"}}),
                     8);
    CHECK_FALSE(single.config); // (32 + 2) / 6 rounded up: 6 stages, 3 per rank, under 1F1B
    CHECK(names(single.problems, "parallelism.pipeline_parallel_schedule"));
    const LaunchImport mode = importText(edited(base, {{"mode = \"selective\"", "mode = \"partial\""}}), 8);
    CHECK_FALSE(mode.config);
    CHECK(names(mode.problems, "activation_checkpoint.mode"));
    const LaunchImport option
        = importText(edited(base, {{"selective_ac_option = \"op\"", "selective_ac_option = \"x\""}}), 8);
    CHECK(names(option.problems, "activation_checkpoint.selective_ac_option"));
    const LaunchImport flavor = importText(edited(base, {{"flavor = \"8B\"", "flavor = \"3B\""}}), 8);
    CHECK(names(flavor.problems, "model.flavor"));
    const LaunchImport type = importText(edited(base, {{"seq_len = 8192", "seq_len = \"long\""}}), 8);
    CHECK(names(type.problems, "training.seq_len"));
    const LaunchImport broken = importText("[training\nseq_len = 1", 8);
    CHECK_FALSE(broken.config);
    CHECK(names(broken.problems, "toml"));
    // A key no torchtitan version has is named, not dropped.
    const LaunchImport extra = importText(base + "\n[extras]\nfoo = 1\n", 64);
    REQUIRE(extra.config);
    REQUIRE(unused(extra, "extras.foo"));
    CHECK_FALSE(unused(extra, "extras.foo")->noMemoryEffect);
    // A validation problem names the key that set the field: 32 heads over tensor_parallel_degree 5.
    const LaunchImport heads
        = importText(edited(base, {{"tensor_parallel_degree = 1", "tensor_parallel_degree = 5"}}), 5);
    CHECK_FALSE(heads.config);
    CHECK(names(heads.problems, "parallelism.tensor_parallel_degree"));
}

TEST_CASE("torchtitan memledger lines, --model and --set apply in order", "[launch][torchtitan]")
{
    const std::string base = fixtureText("torchtitan-202509-llama3_8b.toml");
    const LaunchImport r
        = importText("# memledger: hardware=H200-141GB  # the device\n" + base, 64, {"training.seq_length=4096"});
    REQUIRE(r.config);
    CHECK(r.config->hardware.name == "H200-141GB");
    CHECK(r.config->training.seq_length == 4096);
    LaunchOptions options;
    options.gpus = 64;
    options.model = "llama-2-7b";
    const LaunchImport other = importLaunchText(base, "x.toml", options, {});
    REQUIRE(other.config);
    CHECK(other.config->model == builtinModel("llama-2-7b"));
}

TEST_CASE("torchtitan TOML is told from shell scripts and JSON", "[launch][torchtitan][defaults]")
{
    const std::string toml = fixtureText("torchtitan-202412-llama3_8b.toml");
    CHECK(isTorchtitanConfigText(toml));
    CHECK(detectLaunchFormat("", toml) == LaunchFormat::Torchtitan);
    CHECK(detectLaunchFormat("x.toml", "") == LaunchFormat::Torchtitan);
    CHECK_FALSE(isTorchtitanConfigText(fixtureText("megatron-llama3-8b-fp8.sh")));
    CHECK(detectLaunchFormat("", fixtureText("megatron-llama3-8b-fp8.sh")) == LaunchFormat::Megatron);
    CHECK_FALSE(isTorchtitanConfigText(R"({"train_batch_size": 8})"));
    CHECK_FALSE(isTorchtitanConfigText("[unrelated]\nx = 1\n"));
}

TEST_CASE("export --to torchtitan and import give every shipped scenario back", "[launch][torchtitan][roundtrip]")
{
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const LoadResult loaded = presetFromText(findBuiltin("scenarios", name)->text, name);
        REQUIRE(loaded.config);
        const LaunchExport exported = exportLaunch(*loaded.config, LaunchFormat::Torchtitan);
        for (const Problem &p : exported.problems)
            UNSCOPED_INFO(p.toString());
        CHECK(exported.problems.empty());
        CAPTURE(exported.text);
        REQUIRE(isTorchtitanConfigText(exported.text));
        LaunchImport back = importTorchtitanConfig(exported.text, {});
        finishLaunchImport(back, {});
        REQUIRE(back.config);
        CHECK(canonicalPlan(*back.config) == canonicalPlan(*loaded.config));
    }
}

TEST_CASE("export --to torchtitan writes a torchtitan plan as torchtitan keys", "[launch][torchtitan][roundtrip]")
{
    // The December 2024 405B config imported, exported: flavor, degrees and float8 as keys, no memledger line
    // but the device's.
    const LaunchImport r = importFile("torchtitan-202412-llama3_405b.toml", 128);
    REQUIRE(r.config);
    const LaunchExport exported = exportLaunch(*r.config, LaunchFormat::Torchtitan);
    CHECK(exported.problems.empty());
    const std::string &t = exported.text;
    CAPTURE(t);
    CHECK(t.find("flavor = \"405B\"") != std::string::npos);
    CHECK(t.find("data_parallel_shard_degree = 16") != std::string::npos);
    CHECK(t.find("tensor_parallel_degree = 8") != std::string::npos);
    CHECK(t.find("enable_async_tensor_parallel = true") != std::string::npos);
    // The converter's name at 8a2686c4 (components/quantization/float8.py registers it).
    CHECK(t.find("converters = [\"quantize.linear.float8\"]") != std::string::npos);
    CHECK(t.find("enable_fsdp_float8_all_gather = true") != std::string::npos);
    CHECK(t.find("mode = \"full\"") != std::string::npos);
    CHECK(t.find("local_batch_size = 2") != std::string::npos);
    CHECK(t.find("global_batch_size = 32") != std::string::npos);
    // The same import's device is MemLedger's default, written as no line. One
    // line says what no key of the 2025 config it writes can: December 2024's
    // FSDP wrapping, the embedding, final norm and output layer as the root unit.
    std::size_t lines = 0;
    for (std::size_t at = t.find("\n# memledger:"); at != std::string::npos; at = t.find("\n# memledger:", at + 1))
        ++lines;
    CHECK(lines == 1);
    CHECK(t.find("# memledger: strategy.fsdp_root_unit=true") != std::string::npos);
}

TEST_CASE("TOML text toml++ 3.3 would read into undefined behaviour is made safe first", "[launch][torchtitan][fuzz]")
{
    // toml++ 3.3's whitespace test reaches an unreachable branch for some
    // code points from U+00A0 to U+2070 (marzer/tomlplusplus #190, #295):
    // after a multi-line string's line-ending backslash, or anywhere a key or
    // a bare token is read. They become U+FFFD, one code point for one.
    CHECK(tomlSafeText("a = \"\xC2\xA7\"") == "a = \"\xEF\xBF\xBD\""); // §, U+00A7
    CHECK(tomlSafeText("\xCC\xAA") == "\xEF\xBF\xBD"); // U+032A, issue #295's input
    CHECK(tomlSafeText("\xE2\x80\x80") == "\xE2\x80\x80"); // U+2000: whitespace to toml++, no hazard
    CHECK(tomlSafeText("\xE2\x80\x93") == "\xE2\x80\x93"); // U+2013: a case of toml++'s switch answers it
    CHECK(tomlSafeText("\xEF\xB7\xBF") == "\xEF\xBF\xBD"); // U+FDFF, the last slice (fuzz_launchimport)
    CHECK(tomlSafeText("\xE3\x80\x80") == "\xE3\x80\x80"); // U+3000: whitespace to toml++
    CHECK(tomlSafeText("\xE2\xB1\xA0") == "\xEF\xBF\xBD"); // U+2C60, slice 11
    CHECK(tomlSafeText("\xE4\xB8\xAD") == "\xE4\xB8\xAD"); // U+4E2D: outside the hazardous slices
    CHECK(tomlSafeText("x\xC2") == "x\xC2"); // a truncated sequence: left for toml++ to refuse
    // Issue #190's document reads; issue #295's is refused as TOML; neither
    // is undefined behaviour (the sanitizer build would stop here).
    CHECK(isTorchtitanConfigText("[job]\ns = \"\"\"\\\n\xC2\xA7\"\"\"\n"));
    CHECK_FALSE(isTorchtitanConfigText("\xCC\xAA"));
    const LaunchImport bad = importTorchtitanConfig("[job]\n\"\xC2\xA7\" = 1\n[model]\nname = \"\xC2\xA7\"\n", {});
    CHECK_FALSE(bad.config.has_value());
    // Every code point up to U+FFFF where toml++ asks whether it is
    // whitespace (a line's first character): read or refused, never the
    // unreachable branch, which the sanitizer build stops at.
    int refused = 0;
    for (char32_t c = 0x80; c <= 0xFFFF; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF)
            continue; // surrogates are no UTF-8
        std::string utf8;
        if (c < 0x800) {
            utf8 = {char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};
        } else {
            utf8 = {char(0xE0 | (c >> 12)), char(0x80 | ((c >> 6) & 0x3F)), char(0x80 | (c & 0x3F))};
        }
        refused += !isTorchtitanConfigText("[job]\n" + utf8 + "x = 1\n");
    }
    CHECK(refused > 60000); // none is a bare key's character
}
