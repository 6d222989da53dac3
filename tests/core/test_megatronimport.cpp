// SPDX-License-Identifier: MIT
// Megatron-LM launches in (issue 33): the shell words of a launch script, the
// real example scripts of NVIDIA/Megatron-LM (tests/data/launch/, each citing
// its source) checked argument by argument against the numbers the script
// writes, refusals that name the argument, and the export's round trip over
// every shipped scenario.
#include "core/formats/builtins.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"
#include "core/formats/megatronargs.h"
#include "core/formats/preset.h"
#include "core/formats/shellwords.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace memledger;

namespace {

std::vector<std::string> wordsOf(const ShellCommand &c)
{
    std::vector<std::string> out;
    for (const ShellWord &w : c.words)
        out.push_back(w.text);
    return out;
}

LaunchImport importData(const std::string &name, std::optional<std::int64_t> gpus = std::nullopt)
{
    LaunchOptions options;
    options.gpus = gpus;
    return importLaunchFile(std::string(MEMLEDGER_TEST_DATA) + "/launch/" + name, options, {});
}

LaunchImport importText(const std::string &text, std::optional<std::int64_t> gpus = 8)
{
    LaunchOptions options;
    options.gpus = gpus;
    LaunchImport r = importMegatronLaunch(text, options);
    finishLaunchImport(r, {});
    return r;
}

bool names(const Problems &problems, const std::string &path)
{
    return std::any_of(problems.begin(), problems.end(),
                       [&](const Problem &p) { return p.isError() && p.path.find(path) != std::string::npos; });
}

bool listedUnused(const LaunchImport &r, const std::string &name)
{
    return std::any_of(r.unused.begin(), r.unused.end(), [&](const UnusedSetting &u) { return u.name == name; });
}

const char *const kSmall = "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --max-position-embeddings 512 "
                           "--seq-length 512 --micro-batch-size 1 --vocab-size 1000 ";

} // namespace

TEST_CASE("Shell words: quoting, continuations, comments and variables as bash reads them", "[launch][shell]")
{
    const ShellScript s = readShellScript("A=4 # four\n"
                                          "B=${UNSET:-\"x y\"}\n"
                                          "C=$(($A*3))\n"
                                          "run --a $A \\\n"
                                          "    --b \"$B\" --c '$A' --d $C\\ z\n");
    REQUIRE(s.commands.size() == 1);
    CHECK(wordsOf(s.commands[0])
          == std::vector<std::string>{"run", "--a", "4", "--b", "x y", "--c", "$A", "--d", "12 z"});
    CHECK(s.commands[0].line == 4);
    CHECK(s.variables.at("C") == std::vector<std::string>{"12"});
}

TEST_CASE("Shell words: arithmetic bash refuses is left as written, never a crash", "[launch][shell]")
{
    // A variable naming itself recurses until bash gives up ("expression
    // recursion level exceeded"; fuzz_launchimport found the stack overflow
    // it was here); a literal or a product past 64 bits, a division by zero:
    // each stays the text it was, as a command substitution does.
    const std::string deep = "D=$((" + std::string(200, '(') + "1" + std::string(200, ')') + "))\n";
    const ShellScript s = readShellScript("A=A\nB=$((A + 1))\nC=$((99999999999999999999))\n"
                                          "E=$((4611686018427387904 * 4))\nF=$((1 / 0))\nG=$((-(2 * 3)))\n"
                                          + deep);
    CHECK(s.variables.at("B") == std::vector<std::string>{"$((A + 1))"});
    CHECK(s.variables.at("C") == std::vector<std::string>{"$((99999999999999999999))"});
    CHECK(s.variables.at("E") == std::vector<std::string>{"$((4611686018427387904 * 4))"});
    CHECK(s.variables.at("F") == std::vector<std::string>{"$((1 / 0))"});
    CHECK(s.variables.at("G") == std::vector<std::string>{"-6"});
    CHECK(s.variables.at("D").front().rfind("$((", 0) == 0);
}

TEST_CASE("Shell words: bash arrays, appends and word splitting of their elements", "[launch][shell]")
{
    const ShellScript s
        = readShellScript("ARGS=(\n  --x 1 # one\n  \"--y 2\"\n)\nARGS+=(--z)\nMORE=(\"${ARGS[@]}\" --w)\n"
                          "run ${MORE[@]} \"${ARGS[@]}\"\n");
    REQUIRE(s.commands.size() == 1);
    // Unquoted, "--y 2" splits into two words; quoted, it stays one.
    CHECK(wordsOf(s.commands[0])
          == std::vector<std::string>{"run", "--x", "1", "--y", "2", "--z", "--w", "--x", "1", "--y 2", "--z"});
}

TEST_CASE("Shell words: if blocks are decided where they can be, and named where they cannot", "[launch][shell]")
{
    const ShellScript s
        = readShellScript("T=${3:-\"MOCK\"}\n"
                          "if [[ \"$T\" == \"MOCK\" ]] || [[ -z \"$T\" ]]; then\n  X=mock\nelse\n  X=real\nfi\n"
                          "if [ -n \"${KEY}\" ]; then Y=1; fi\n"
                          "if [ ! -f \"$T\" ]; then\n  Z=1\nfi\n"
                          "run $X ${Y:-none} ${Z:-none}\n");
    REQUIRE(s.commands.size() == 1);
    CHECK(wordsOf(s.commands[0]) == std::vector<std::string>{"run", "mock", "none", "none"});
    REQUIRE(s.problems.size() == 1);
    CHECK(s.problems[0].path == "line 8");
    CHECK(!s.problems[0].isError());
}

TEST_CASE("Shell words: a backslash-newline inside double quotes continues the line", "[launch][shell]")
{
    // Bash's manual, Double Quotes: inside "...", a backslash before a newline
    // is removed with it. BLOOM's launch (tr11-176B-ml.slurm) writes its
    // arguments as GPT_ARGS=" \ --num-layers $NLAYERS \ ... ".
    const ShellScript s
        = readShellScript("NLAYERS=70\nARGS=\" \\\n    --num-layers $NLAYERS \\\n    --bf16 \\\n    \"\n"
                          "run $ARGS\n");
    REQUIRE(s.commands.size() == 1);
    std::vector<std::string> words;
    for (const auto &w : s.commands[0].words)
        words.push_back(w.text);
    CHECK(words == std::vector<std::string>{"run", "--num-layers", "70", "--bf16"});
}

TEST_CASE("Shell words: an unset variable is named on the word that expected it", "[launch][shell]")
{
    const ShellScript s = readShellScript("run --num-layers $NUM_LAYERS --hidden-size 8\n");
    REQUIRE(s.commands.size() == 1);
    REQUIRE(s.commands[0].words.size() == 4);
    CHECK(s.commands[0].words[1].text == "--num-layers");
    CHECK(s.commands[0].words[1].unset == std::vector<std::string>{"NUM_LAYERS"});
}

TEST_CASE("The Megatron-LM GPT-3 175B example imports to its arguments", "[launch][megatron]")
{
    // tests/data/launch/megatron-gpt3-175b.sh: 8 GPUs cannot hold TP 8 × PP 16, so the world size is given.
    const LaunchImport r = importData("megatron-gpt3-175b.sh", 128);
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.model.num_layers == 96);
    CHECK(c.model.hidden_size == 12288);
    CHECK(c.model.num_attention_heads == 96);
    CHECK(c.model.queryGroups() == 96);
    CHECK(c.model.ffn() == 4 * 12288); // no --swiglu, no --ffn-hidden-size: 4h
    CHECK(c.model.headDim() == 128);
    CHECK(c.model.vocab_size == 50257); // GPT-2's BPE files
    CHECK(c.model.max_position_embeddings == 2048);
    CHECK(c.model.normalization == Normalization::LayerNorm);
    CHECK(c.model.position_embedding_type == PositionEmbedding::LearnedAbsolute);
    CHECK(c.model.add_bias_linear);
    CHECK_FALSE(c.model.untie_embeddings_and_output_weights);
    CHECK(c.model.attention_dropout == 0.1);
    CHECK(c.training.seq_length == 2048);
    CHECK(c.training.micro_batch_size == 1);
    CHECK(c.training.global_batch_size == 1536);
    CHECK(c.training.params_dtype == Dtype::FP16);
    CHECK(c.training.main_grads_dtype == Dtype::FP16); // fp16 without --accumulate-allreduce-grads-in-fp32
    CHECK(c.parallelism.tensor_model_parallel_size == 8);
    CHECK(c.parallelism.pipeline_model_parallel_size == 16);
    CHECK(c.parallelism.data_parallel_size == 1);
    CHECK(c.parallelism.zero_stage == 0);
    CHECK(c.strategy.recompute_granularity == RecomputeGranularity::None);
    CHECK(listedUnused(r, "--lr"));
    CHECK(listedUnused(r, "--step-batch-size-schedule"));
    CHECK(listedUnused(r, "torchrun --master_port"));
}

TEST_CASE("The Megatron-LM GPT-3 175B example on the 8 GPUs it launches is refused naming the split",
          "[launch][megatron]")
{
    const LaunchImport r = importData("megatron-gpt3-175b.sh");
    CHECK_FALSE(r.config);
    CHECK(names(r.problems, "world size"));
    const auto it = std::find_if(r.problems.begin(), r.problems.end(), [](const Problem &p) { return p.isError(); });
    REQUIRE(it != r.problems.end());
    CHECK(it->message.find("--pipeline-model-parallel-size 16") != std::string::npos);
}

TEST_CASE("The Megatron-LM Llama 3 8B FP8 example imports with its arrays and if blocks", "[launch][megatron]")
{
    const LaunchImport r = importData("megatron-llama3-8b-fp8.sh");
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.model.num_layers == 32);
    CHECK(c.model.hidden_size == 4096);
    CHECK(c.model.ffn() == 14336);
    CHECK(c.model.num_attention_heads == 32);
    CHECK(c.model.queryGroups() == 8);
    CHECK(c.model.headDim() == 128);
    CHECK(c.model.vocab_size == 128256); // the MOCK branch's --vocab-size
    CHECK(c.model.max_position_embeddings == 8192);
    CHECK(c.model.position_embedding_type == PositionEmbedding::Rope);
    CHECK(c.model.normalization == Normalization::RMSNorm);
    CHECK(c.model.swiglu);
    CHECK_FALSE(c.model.add_bias_linear);
    CHECK(c.model.untie_embeddings_and_output_weights);
    CHECK(c.model.attention_dropout == 0.0);
    CHECK(c.model.hidden_dropout == 0.0);
    CHECK(c.training.seq_length == 8192);
    CHECK(c.training.micro_batch_size == 1);
    CHECK(c.training.global_batch_size == 128);
    CHECK(c.training.params_dtype == Dtype::BF16);
    CHECK(c.training.main_grads_dtype == Dtype::BF16); // --grad-reduce-in-bf16
    CHECK(c.training.fp8_recipe == Fp8Recipe::Delayed); // --fp8-format hybrid, Megatron's default recipe
    CHECK(c.training.fp8_amax_history_len == 1024);
    CHECK(c.strategy.fp8_param_gather);
    CHECK(c.parallelism.tensor_model_parallel_size == 1);
    CHECK(c.parallelism.data_parallel_size == 8); // --nproc_per_node 8 --nnodes 1
    CHECK_FALSE(c.parallelism.sequence_parallel); // off without TP, as validate_args turns it off
    CHECK(c.parallelism.zero_stage == 1);
    CHECK(c.strategy.overlap_grad_reduce);
    CHECK(c.strategy.overlap_param_gather);
    CHECK(c.strategy.flash_attention); // --attention-backend fused
    CHECK(listedUnused(r, "--empty-unused-memory-level"));
    CHECK(listedUnused(r, "--fp8-amax-compute-algo"));
}

TEST_CASE("The Megatron-LM Mixtral 8x7B example imports its experts on the GPUs it needs", "[launch][megatron]")
{
    const LaunchImport one = importData("megatron-mixtral-8x7b.sh");
    CHECK_FALSE(one.config); // one node: EP 8 does not tile d = 2
    CHECK(names(one.problems, "--expert-model-parallel-size"));
    const LaunchImport r = importData("megatron-mixtral-8x7b.sh", 32);
    REQUIRE(r.config);
    const Config &c = *r.config;
    CHECK(c.model.num_layers == 32);
    CHECK(c.model.hidden_size == 4096);
    CHECK(c.model.ffn() == 14336);
    CHECK(c.model.queryGroups() == 8);
    CHECK(c.model.num_experts == 8);
    CHECK(c.model.moe_router_topk == 2);
    CHECK(c.model.moeFfn() == 14336);
    CHECK(c.model.vocab_size == 32000); // Llama2Tokenizer
    CHECK(c.model.max_position_embeddings == 32768);
    CHECK(c.model.position_embedding_type == PositionEmbedding::Rope);
    CHECK(c.training.seq_length == 4096);
    CHECK(c.training.global_batch_size == 256);
    CHECK(c.training.params_dtype == Dtype::BF16);
    CHECK(c.training.main_grads_dtype == Dtype::FP32);
    CHECK(c.parallelism.pipeline_model_parallel_size == 4);
    CHECK(c.parallelism.expert_model_parallel_size == 8);
    CHECK(c.parallelism.data_parallel_size == 8);
    CHECK(c.parallelism.zero_stage == 1);
    CHECK(listedUnused(r, "--moe-aux-loss-coeff"));
}

TEST_CASE("Megatron-LM arguments: the defaults validate_args derives", "[launch][megatron]")
{
    // --swiglu without --ffn-hidden-size: int(4h · 2/3 / 64) · 64 = int(682.67 / 64) · 64 = 640 for h = 256.
    const LaunchImport swiglu = importText(std::string(kSmall) + "--swiglu");
    REQUIRE(swiglu.config);
    CHECK(swiglu.config->model.ffn() == 640);
    // No --global-batch-size: micro-batch × d = 2 × 8.
    const LaunchImport batch = importText(std::string(kSmall) + "--micro-batch-size 2");
    REQUIRE(batch.config);
    CHECK(batch.config->training.global_batch_size == 16);
    CHECK(batch.config->training.params_dtype == Dtype::FP32); // no --bf16 or --fp16
    // --num-query-groups without --group-query-attention does nothing, and says so.
    const LaunchImport groups = importText(std::string(kSmall) + "--num-query-groups 2");
    REQUIRE(groups.config);
    CHECK(groups.config->model.queryGroups() == 8);
    CHECK(listedUnused(groups, "--num-query-groups"));
    // MLA's parser defaults: kv_lora_rank 32, no query compression.
    const LaunchImport mla = importText(std::string(kSmall) + "--multi-latent-attention");
    REQUIRE(mla.config);
    CHECK(mla.config->model.kv_lora_rank == 32);
    CHECK(mla.config->model.q_lora_rank == 0);
}

TEST_CASE("Megatron-LM arguments: layouts and uneven splits as the pipeline stages list them", "[launch][megatron]")
{
    // DeepSeek-V3's 61 layers over 16 stages × 4 chunks: "E|(t|)*61m|L" unrolls to E, t × 61, m, L (64
    // stages; PipelineParallelLayerLayout.parse_str_to_list), one layer in each of stages 1 to 61.
    const LaunchImport r = importText("--num-layers 61 --hidden-size 256 --num-attention-heads 8 "
                                      "--max-position-embeddings 512 --seq-length 512 --micro-batch-size 1 "
                                      "--global-batch-size 64 --vocab-size 1000 --pipeline-model-parallel-size 16 "
                                      "--pipeline-model-parallel-layout 'E|(t|)*61m|L'",
                                      16);
    REQUIRE(r.config);
    const ParallelismConfig &p = r.config->parallelism;
    CHECK(p.virtual_pipeline_model_parallel_size == 4);
    REQUIRE(p.pipeline_layout.size() == 64);
    CHECK(p.pipeline_layout[0] == 0);
    CHECK(p.pipeline_layout[1] == 1);
    CHECK(p.pipeline_layout[61] == 1);
    CHECK(p.pipeline_layout[62] == 0);
    CHECK(p.pipeline_layout[63] == 0);
    // Llama 3 405B's 126 layers on 16 stages with the embedding and loss counted: 7, 8 × 14, 7.
    const LaunchImport l = importText("--num-layers 126 --hidden-size 256 --num-attention-heads 8 "
                                      "--max-position-embeddings 512 --seq-length 512 --micro-batch-size 1 "
                                      "--global-batch-size 16 --vocab-size 1000 --pipeline-model-parallel-size 16 "
                                      "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
                                      16);
    REQUIRE(l.config);
    const std::vector<std::int64_t> expected = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
    CHECK(l.config->parallelism.pipeline_layout == expected);
}

TEST_CASE("Megatron-LM arguments: bad values and contradictions are refused naming the argument",
          "[launch][megatron][input]")
{
    const auto refused = [](const std::string &args, const std::string &argument) {
        CAPTURE(args);
        const LaunchImport r = importText(args);
        CHECK_FALSE(r.config);
        CHECK(names(r.problems, argument));
    };
    // 8 heads over TP 3: validate's problem, named by the argument that set t.
    {
        LaunchOptions options;
        options.gpus = 24;
        LaunchImport r = importMegatronLaunch(std::string(kSmall) + "--tensor-model-parallel-size 3", options);
        finishLaunchImport(r, {});
        CHECK_FALSE(r.config);
        CHECK(names(r.problems, "--tensor-model-parallel-size (parallelism.tensor_model_parallel_size)"));
    }
    refused(std::string(kSmall) + "--normalization BatchNorm", "--normalization");
    refused(std::string(kSmall) + "--fp16 --bf16", "--fp16");
    refused(std::string(kSmall) + "--hidden-size 25x", "--hidden-size");
    refused(std::string(kSmall) + "--recompute-granularity full", "--recompute-method");
    refused("--hidden-size 256 --num-attention-heads 8 --max-position-embeddings 512 --seq-length 512 "
            "--micro-batch-size 1 --vocab-size 1000",
            "--num-layers");
    refused("--num-layers 4 --hidden-size 256 --num-attention-heads 8 --max-position-embeddings 512 --seq-length 512 "
            "--micro-batch-size 1 --tokenizer-type HuggingFaceTokenizer",
            "--vocab-size");
    refused(std::string(kSmall) + "--moe-layer-freq 2 --num-experts 4 --moe-layer-freq '[1,0]'", "--moe-layer-freq");
    const LaunchImport noWorld = importText(kSmall, std::nullopt);
    CHECK_FALSE(noWorld.config);
    CHECK(names(noWorld.problems, "world size"));
}

TEST_CASE("export --to megatron and import give every shipped scenario back", "[launch][megatron][roundtrip]")
{
    for (const std::string &name : builtinNames("scenarios")) {
        CAPTURE(name);
        const LoadResult loaded = presetFromText(findBuiltin("scenarios", name)->text, name);
        REQUIRE(loaded.config);
        const LaunchExport exported = exportLaunch(*loaded.config, LaunchFormat::Megatron);
        CHECK(exported.problems.empty());
        LaunchImport back = importMegatronLaunch(exported.text, {});
        finishLaunchImport(back, {});
        REQUIRE(back.config);
        CHECK(canonicalPlan(*back.config) == canonicalPlan(*loaded.config));
    }
}

TEST_CASE("export --to megatron writes what Megatron can say as arguments", "[launch][megatron][roundtrip]")
{
    const LoadResult loaded
        = presetFromText(findBuiltin("scenarios", "llama-3-70b-128xh100")->text, "llama-3-70b-128xh100");
    REQUIRE(loaded.config);
    const std::string text = exportLaunch(*loaded.config, LaunchFormat::Megatron).text;
    // The scenario's numbers (presets/scenarios/llama-3-70b-128xh100.json, presets/models/llama-3-70b.json).
    for (const char *arg :
         {"--nproc_per_node 8 --nnodes 16", "--num-layers 80", "--hidden-size 8192", "--group-query-attention",
          "--num-query-groups 8", "--ffn-hidden-size 28672", "--tensor-model-parallel-size 8",
          "--pipeline-model-parallel-size 4", "--sequence-parallel", "--use-distributed-optimizer",
          "--recompute-granularity selective", "--seq-length 8192", "--global-batch-size 512", "--bf16"})
        CHECK(text.find(arg) != std::string::npos);
    // Megatron has arguments for all of this plan: no "# memledger:" line is needed.
    CHECK(text.find("\n# memledger: ") == std::string::npos);
}
