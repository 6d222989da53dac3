// SPDX-License-Identifier: MIT
// The architecture options of Nemotron-4 (squared ReLU, LayerNorm1p), BLOOM
// (ALiBi, the embedding LayerNorm) and Qwen3 (QK-norm, head_dim apart from
// h / a): parameter counts against the published figures and saved bytes
// against hand-worked arithmetic, written out beside each check.
#include "core/check/validate.h"
#include "core/formats/hfimport.h"
#include "core/formats/launchexport.h"
#include "core/formats/launchimport.h"
#include "core/formats/megatronargs.h"
#include "core/formats/preset.h"
#include "core/model/activations.h"
#include "core/model/parameters.h"
#include "testutil.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace memledger;
using namespace memledger::test;

namespace {

Config optionModel(const std::string &model, const std::vector<std::string> &sets = {})
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = model;
    return configFrom(doc, sets);
}

Bytes savedBytes(const std::vector<SavedTensor> &tensors, const std::string &name)
{
    for (const SavedTensor &s : tensors)
        if (s.name == name)
            return s.bytes;
    return -1;
}

bool savedHas(const std::vector<SavedTensor> &tensors, const std::string &name)
{
    return savedBytes(tensors, name) >= 0;
}

std::vector<SavedTensor> optionLayerTensors(const Config &c)
{
    return layerActivations(c, false, TensorList::WithFormulas).tensors;
}

} // namespace

TEST_CASE("Nemotron-4 340B has the parameters its shapes give", "[parameters][modeloptions][reference]")
{
    // Nemotron-4 340B Technical Report (arXiv 2406.11704), Table 1, and the
    // architecture of Nemotron-4 15B (arXiv 2402.16819): h = 18432, 96 heads
    // of 192 with 8 KV groups, ffn 73728 (squared ReLU, no gate), no biases,
    // LayerNorm(1p) with weight and bias, untied embeddings, V = 256000.
    // One layer:
    //   two LayerNorms                 4h            =          73,728
    //   QKV  h × (96 + 2·8)·192 = h × 21504          =     396,361,728
    //   proj 96·192 × h         = 18432 × 18432      =     339,738,624
    //   fc1 + fc2   2 × h × 73728                    =   2,717,908,992
    //                                          sum   =   3,454,083,072
    // 96 layers = 331,591,974,912; embeddings 2 × 256000 × 18432 =
    // 9,437,184,000; final norm 2h = 36,864; total 341,029,195,776, which
    // the report rounds to "340B".
    const Config c = optionModel("nemotron-4-340b");
    CHECK(layerParams(c.model, false, 1, 1, 1).dense.params == 3454083072);
    CHECK(totalParameters(c) == 341029195776);
    // LayerNorm1p stores the same weight and bias as LayerNorm.
    const Config plain = optionModel("nemotron-4-340b", {"model.apply_layernorm_1p=false"});
    CHECK(totalParameters(plain) == totalParameters(c));
}

TEST_CASE("BLOOM 176B has the model card parameter count exactly", "[parameters][modeloptions][reference]")
{
    // BigScience's model card (huggingface.co/bigscience/bloom): 176,247,271,424
    // parameters. By hand, h = 14336, V = 250880 (--pad-vocab-size-to):
    //   one layer: 12h² + 13h = 2,466,250,752 + 186,368 = 2,466,437,120
    //   70 layers                                        = 172,650,598,400
    //   word embeddings V·h (tied to the output layer)   =   3,596,615,680
    //   embedding LayerNorm 2h + final LayerNorm 2h      =          57,344
    //   total                                            = 176,247,271,424
    // ALiBi adds no position table.
    const Config c = optionModel("bloom-176b");
    CHECK(layerParams(c.model, false, 1, 1, 1).dense.params == 2466437120);
    CHECK(totalParameters(c) == 176247271424);
    // The embedding LayerNorm lives on the first stage only: with p > 1 the
    // last stage's tied copy is the V/t × h matrix alone (mpu/layers.py).
    const EmbeddingParams e = embeddingParams(c.model, 2048, 4, 12);
    CHECK(e.word.params == 250880 / 4 * 14336 + 2 * 14336);
    CHECK(e.output.params == 250880 / 4 * 14336);
    CHECK(e.position.params == 0);
}

TEST_CASE("Qwen3 has the parameters of its Hugging Face configs", "[parameters][modeloptions][reference]")
{
    // Qwen3 Technical Report (arXiv 2505.09388), Table 1, and the config.json of
    // Qwen/Qwen3-8B and Qwen/Qwen3-32B; head_dim 128 whatever h / a is.
    // Qwen3-8B, h = 4096, 32 heads, 8 KV heads, ffn 12288, one layer:
    //   q 4096 × 4096 + k, v 2 × 4096 × 1024 + o 4096 × 4096 = 41,943,040
    //   SwiGLU 3 × 4096 × 12288                              = 150,994,944
    //   two RMSNorms 2 × 4096 + q_norm, k_norm 2 × 128       =       8,448
    //                                                   sum  = 192,946,432
    //   36 layers 6,946,071,552 + embeddings 2 × 151936 × 4096 = 1,244,659,712
    //   + final norm 4096 = 8,190,735,360 (the report's 8.2 B, 6.95 B without embeddings).
    // Qwen3-32B, h = 5120, 64 heads of 128 (not 5120 / 64 = 80), ffn 25600:
    //   q 5120 × 8192 + k, v 2 × 5120 × 1024 + o 8192 × 5120 = 94,371,840
    //   SwiGLU 3 × 5120 × 25600 = 393,216,000; norms 10,240 + 256; sum 487,598,336
    //   64 layers 31,206,293,504 + embeddings 2 × 151936 × 5120 = 1,555,824,640
    //   + 5120 = 32,762,123,264 (the report's 32.8 B, 31.2 B without embeddings).
    const Config q8 = optionModel("qwen3-8b");
    CHECK(layerParams(q8.model, false, 1, 1, 1).dense.params == 192946432);
    CHECK(totalParameters(q8) == 8190735360);
    const Config q32 = optionModel("qwen3-32b");
    CHECK(q32.model.headDim() == 128);
    CHECK(layerParams(q32.model, false, 1, 1, 1).dense.params == 487598336);
    CHECK(totalParameters(q32) == 32762123264);
    // The QK norms are replicated over t: 2 × 128 on every rank.
    const Config noQk = optionModel("qwen3-32b", {"model.qk_layernorm=false"});
    CHECK(layerParams(q32.model, false, 8, 1, 1).dense.params
          == layerParams(noQk.model, false, 8, 1, 1).dense.params + 2 * 128);
}

TEST_CASE("Squared ReLU saves relu output once, as many bytes as the GeLU input", "[activations][modeloptions]")
{
    // Megatron's squared_relu is torch.pow(F.relu(x), 2): relu's backward keeps
    // its result and pow's backward its input, which is that same tensor. On
    // the Nemotron-4 340B plan (s = 4096, b = 1, t = 8 with sequence
    // parallelism, FlashAttention, no dropout, bf16) one layer saves, in bytes:
    //   input norm input + 2 stats    2·s·h/8 + 4·s/8          = 18,874,368 + 2,048
    //   QKV input (sequence shard)    2·s·h/8                  = 18,874,368
    //   q  2·s·96·192/8 = 18,874,368; k, v 2·s·8·192/8 each    =  1,572,864 each
    //   log-sum-exp 4·s·96/8                                   =    196,608
    //   proj input 2·s·96·192/8                                = 18,874,368
    //   pre-MLP norm input + stats                             = 18,874,368 + 2,048
    //   fc1 input (sequence shard)                             = 18,874,368
    //   relu output 2·s·73728/8 and fc2 input, the same size   = 75,497,472 each
    //   total                                                  = 267,591,680
    const Config c = scenario("nemotron-4-340b-6144xh100");
    const LayerActivations la = layerActivations(c, false, TensorList::WithFormulas);
    CHECK(savedBytes(la.tensors, "mlp.fc1.relu_output") == 75497472);
    CHECK(savedBytes(la.tensors, "mlp.fc2.input") == 75497472);
    CHECK_FALSE(savedHas(la.tensors, "mlp.fc1.output"));
    CHECK(la.total == 267591680);
    // The same layer with GeLU saves fc1's output instead: the same total.
    const Config gelu = scenario("nemotron-4-340b-6144xh100", {"model.squared_relu=false"});
    const LayerActivations lg = layerActivations(gelu, false, TensorList::WithFormulas);
    CHECK(savedBytes(lg.tensors, "mlp.fc1.output") == 75497472);
    CHECK(lg.total == la.total);
}

TEST_CASE("ALiBi adds no saved tensor: BLOOM layer is Korthikanti", "[activations][modeloptions][reference]")
{
    // Megatron-DeepSpeed (bigscience-workshop, megatron/model/transformer.py)
    // starts the scores from the ALiBi bias, baddbmm(alibi, q, kᵀ, beta=1):
    // baddbmm saves q and k only, so the layer saves what a GPT layer without
    // FlashAttention saves. Korthikanti et al. 2022, Table 2, tensor parallel
    // without sequence parallelism: sbh(10 + 24/t + 5as/(ht)). BLOOM's plan,
    // s = 2048, b = 2, h = 14336, a = 112, t = 4: 5as/(ht) = 5·112·2048/(14336·4)
    // = 20, so 36 sbh = 36 × 58,720,256 = 2,113,929,216 bytes, with the norms'
    // statistics left out as the paper does.
    const Config k = scenario("bloom-176b-384xa100", {"strategy.norm_stats_dtype=none"});
    CHECK(layerActivations(k, false, false).total == 2113929216);
    const Config absolute
        = scenario("bloom-176b-384xa100", {"strategy.norm_stats_dtype=none", "model.position_embedding_type=rope"});
    CHECK(layerActivations(absolute, false, false).total == 2113929216);
    // With the fp32 statistics the default keeps: two LayerNorms × (mean, rstd)
    // × 4 bytes × s·b = 16 × 4096 = 65,536 more.
    const Config c = scenario("bloom-176b-384xa100");
    CHECK(layerActivations(c, false, false).total == 2113929216 + 65536);
}

TEST_CASE("The embedding LayerNorm saves its input and statistics on the first stage", "[activations][modeloptions]")
{
    // mpu/layers.py (Megatron-DeepSpeed): VocabParallelEmbedding.forward runs
    // self.norm on the all-reduced embedding output, the whole sequence on
    // every tensor-parallel rank. BLOOM's plan (s = 2048, b = 2, h = 14336):
    //   input 2·s·b·h = 117,440,512; mean and rstd 2 × 4·s·b = 32,768;
    //   then the embedding dropout's 1-byte mask s·b·h = 58,720,256.
    const StageActivations sa = stageActivations(scenario("bloom-176b-384xa100"));
    CHECK(savedBytes(sa.first, "embedding_norm.input") == 117440512);
    CHECK(savedBytes(sa.first, "embedding_norm.stats") == 32768);
    CHECK(savedBytes(sa.first, "embedding.dropout_mask") == 58720256);
    const StageActivations none = stageActivations(scenario("bloom-176b-384xa100", {"model.embed_layernorm=false"}));
    CHECK_FALSE(savedHas(none.first, "embedding_norm.input"));
}

TEST_CASE("QK norm saves the projection outputs per head, fused or eager", "[activations][modeloptions]")
{
    // Qwen3-8B, s = 4096, b = 1, t = 1, bf16. The norms run over head_dim = 128
    // on 32 query and 8 key heads (transformers' Qwen3Attention; Megatron-Core's
    // q_layernorm and k_layernorm).
    // Fused RMSNorm (Transformer Engine): its input and one fp32 rstd per head row:
    //   q: 2·s·32·128 = 33,554,432 and 4·s·32 = 524,288
    //   k: 2·s·8·128  =  8,388,608 and 4·s·8  = 131,072
    const std::vector<std::string> plan = {"training.seq_length=4096"};
    const Config fused = optionModel("qwen3-8b", plan);
    const std::vector<SavedTensor> f = optionLayerTensors(fused);
    CHECK(savedBytes(f, "attention.q_layernorm.input") == 33554432);
    CHECK(savedBytes(f, "attention.q_layernorm.stats") == 524288);
    CHECK(savedBytes(f, "attention.k_layernorm.input") == 8388608);
    CHECK(savedBytes(f, "attention.k_layernorm.stats") == 131072);
    std::vector<std::string> off = plan;
    off.push_back("model.qk_layernorm=false");
    CHECK(layerActivations(fused, false, false).total
              - layerActivations(optionModel("qwen3-8b", off), false, false).total
          == 33554432 + 524288 + 8388608 + 131072);
    // Eager (Qwen3RMSNorm, the ops of LlamaRMSNorm): the fp32 copy of the
    // input, rsqrt's fp32 output per row and the normalised x cast back:
    //   q: 4·s·32·128 = 67,108,864, 524,288, 33,554,432
    //   k: 4·s·8·128  = 16,777,216, 131,072,  8,388,608
    std::vector<std::string> eagerSets = plan;
    eagerSets.push_back("strategy.norm_kernel=eager");
    const std::vector<SavedTensor> e = optionLayerTensors(optionModel("qwen3-8b", eagerSets));
    CHECK(savedBytes(e, "attention.q_layernorm.input_fp32") == 67108864);
    CHECK(savedBytes(e, "attention.q_layernorm.stats") == 524288);
    CHECK(savedBytes(e, "attention.q_layernorm.normalized") == 33554432);
    CHECK(savedBytes(e, "attention.k_layernorm.input_fp32") == 16777216);
    CHECK(savedBytes(e, "attention.k_layernorm.normalized") == 8388608);
    // Split over t with the heads, not along the sequence: t = 8 and sequence
    // parallelism give an eighth of the fused q input (4 heads of 128).
    std::vector<std::string> tp = plan;
    tp.insert(tp.end(), {"parallelism.tensor_model_parallel_size=8", "parallelism.sequence_parallel=true"});
    CHECK(savedBytes(optionLayerTensors(optionModel("qwen3-8b", tp)), "attention.q_layernorm.input") == 33554432 / 8);
}

TEST_CASE("Squared ReLU with SwiGLU is refused naming the field", "[validate][modeloptions]")
{
    nlohmann::json doc = emptyDoc();
    doc["model"] = {{"squared_relu", true}, {"swiglu", true}};
    const LoadResult r = presetFromJson(doc);
    REQUIRE(r.config.has_value());
    const Problems p = validate(*r.config);
    CHECK(std::any_of(p.begin(), p.end(),
                      [](const Problem &x) { return x.isError() && x.path == "model.squared_relu"; }));
}

TEST_CASE("The new model fields are written only when set and read back", "[preset][modeloptions]")
{
    const Config plain = optionModel("llama-2-7b");
    const std::string text = presetToText(plain);
    for (const char *field : {"squared_relu", "apply_layernorm_1p", "qk_layernorm", "embed_layernorm", "alibi"})
        CHECK(text.find(field) == std::string::npos);
    for (const char *name : {"nemotron-4-340b", "bloom-176b", "qwen3-32b"}) {
        CAPTURE(name);
        const Config c = optionModel(name);
        const LoadResult back = presetFromText(presetToText(c), "round trip");
        REQUIRE(back.config.has_value());
        CHECK(back.config->model == c.model);
    }
}

TEST_CASE("Megatron-LM arguments carry the new options both ways", "[launch][modeloptions]")
{
    // Megatron-LM's arguments.py: --squared-relu, --apply-layernorm-1p,
    // --qk-layernorm; Megatron-DeepSpeed's --embed-layernorm and
    // --position-embedding-type alibi (BLOOM's launch, tr11-176B-ml.slurm).
    const std::string text = "pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 "
                             "--seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
                             "--vocab-size 32000 --squared-relu --apply-layernorm-1p --qk-layernorm "
                             "--embed-layernorm --position-embedding-type alibi --tensor-model-parallel-size 2";
    LaunchOptions options;
    options.gpus = 2;
    LaunchImport r = importMegatronLaunch(text, options);
    finishLaunchImport(r, {});
    for (const Problem &p : r.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(r.config.has_value());
    const ModelConfig &m = r.config->model;
    CHECK(m.squared_relu);
    CHECK(m.apply_layernorm_1p);
    CHECK(m.qk_layernorm);
    CHECK(m.embed_layernorm);
    CHECK(m.position_embedding_type == PositionEmbedding::Alibi);
    for (const UnusedSetting &u : r.unused)
        for (const char *used : {"--squared-relu", "--apply-layernorm-1p", "--qk-layernorm", "--embed-layernorm"})
            CHECK(u.name != used);
    // The export speaks Megatron-LM: its own flags as arguments, Megatron-DeepSpeed's
    // two as "# memledger:" lines, and the import of the export is the same model.
    const LaunchExport exported = exportLaunch(*r.config, LaunchFormat::Megatron);
    CHECK(exported.problems.empty());
    for (const char *want :
         {"--squared-relu", "--apply-layernorm-1p", "--qk-layernorm", "--position-embedding-type none",
          "# memledger: model.embed_layernorm=true", "# memledger: model.position_embedding_type=\"alibi\""})
        CHECK(exported.text.find(want) != std::string::npos);
    CHECK(exported.text.find("\n    --embed-layernorm") == std::string::npos); // only named in its line
    LaunchImport back = importMegatronLaunch(exported.text, {});
    finishLaunchImport(back, {});
    REQUIRE(back.config.has_value());
    CHECK(back.config->model == r.config->model);
}

TEST_CASE("Hugging Face configs of Qwen3 and BLOOM import with their options", "[hfimport][modeloptions][reference]")
{
    // tests/data/hf: the published config.json of Qwen/Qwen3-8B, Qwen/Qwen3-32B
    // and bigscience/bloom.
    const std::string dir = std::string(MEMLEDGER_TEST_DATA) + "/hf/";
    for (const auto &[file, preset] :
         std::vector<std::pair<std::string, std::string>>{{"Qwen3-8B", "qwen3-8b"}, {"Qwen3-32B", "qwen3-32b"}}) {
        CAPTURE(file);
        const ImportResult r = importHfConfigFile(dir + file + ".json");
        for (const Problem &p : r.problems)
            UNSCOPED_INFO(p.toString());
        REQUIRE(r.config.has_value());
        CHECK(r.problems.empty());
        CHECK(r.config->model == optionModel(preset).model);
    }
    // BLOOM: the published config is the inference one (dropout 0); the
    // shapes, and so the 176,247,271,424 parameters, are the training model's.
    const ImportResult b = importHfConfigFile(dir + "bloom.json");
    for (const Problem &p : b.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(b.config.has_value());
    CHECK(b.problems.empty());
    const ModelConfig &m = b.config->model;
    CHECK(m.position_embedding_type == PositionEmbedding::Alibi);
    CHECK(m.embed_layernorm);
    CHECK_FALSE(m.untie_embeddings_and_output_weights);
    CHECK(m.hidden_dropout == 0.0);
    CHECK(totalParameters(*b.config) == 176247271424);
}

TEST_CASE("Nemotron Hugging Face config imports relu2 and LayerNorm1p", "[hfimport][modeloptions]")
{
    // transformers' NemotronConfig (model_type "nemotron"): hidden_act "relu2",
    // NemotronLayerNorm1P, an MLP of up_proj and down_proj. The 340B shapes.
    const nlohmann::json hf = {{"architectures", {"NemotronForCausalLM"}},
                               {"model_type", "nemotron"},
                               {"hidden_act", "relu2"},
                               {"hidden_size", 18432},
                               {"intermediate_size", 73728},
                               {"num_attention_heads", 96},
                               {"num_key_value_heads", 8},
                               {"num_hidden_layers", 96},
                               {"vocab_size", 256000},
                               {"max_position_embeddings", 4096},
                               {"norm_eps", 1e-5},
                               {"partial_rotary_factor", 0.5},
                               {"tie_word_embeddings", false},
                               {"attention_bias", false},
                               {"mlp_bias", false}};
    const ImportResult r = importHfConfig(hf);
    for (const Problem &p : r.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(r.config.has_value());
    CHECK(r.problems.empty());
    const ModelConfig &m = r.config->model;
    CHECK(m.squared_relu);
    CHECK_FALSE(m.swiglu);
    CHECK(m.apply_layernorm_1p);
    CHECK(m.normalization == Normalization::LayerNorm);
    CHECK(totalParameters(*r.config) == 341029195776);
}

TEST_CASE("The ledger names each architecture option it follows", "[ledger][modeloptions]")
{
    const auto said = [](const Config &c, const std::string &what) {
        const Ledger l = computeLedger(c);
        return std::any_of(l.choices.begin(), l.choices.end(),
                           [&](const std::string &s) { return s.find(what) != std::string::npos; });
    };
    const Config nemotron = scenario("nemotron-4-340b-6144xh100");
    CHECK(said(nemotron, "squared_relu"));
    CHECK(said(nemotron, "apply_layernorm_1p"));
    const Config bloom = scenario("bloom-176b-384xa100");
    CHECK(said(bloom, "ALiBi"));
    CHECK(said(bloom, "embed_layernorm"));
    CHECK(said(optionModel("qwen3-8b"), "qk_layernorm"));
}

TEST_CASE("BLOOM launch arguments import to its model and recompute", "[launch][modeloptions][reference]")
{
    // The arguments of bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm
    // (Megatron-DeepSpeed): --pad-vocab-size-to pads to exactly 250880, and
    // --checkpoint-activations is full recompute of every layer (--checkpoint-num-layers
    // defaults to 1). DeepSpeed's 'type:transformer|embedding' partition is not read:
    // the import names the layout it suggests, which the scenario writes.
    const std::string text = "torchrun --nproc_per_node 8 --nnodes 48 pretrain_gpt.py "
                             "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 12 "
                             "--num-layers 70 --hidden-size 14336 --num-attention-heads 112 --seq-length 2048 "
                             "--max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 2048 "
                             "--tokenizer-type PretrainedFromHF --embed-layernorm --bf16 "
                             "--position-embedding-type alibi --checkpoint-activations --pad-vocab-size-to 250880";
    LaunchImport r = importMegatronLaunch(text, {});
    finishLaunchImport(r, {"parallelism.pipeline_layout=[5,6,6,6,6,6,6,6,6,6,6,5]"});
    for (const Problem &p : r.problems)
        UNSCOPED_INFO(p.toString());
    REQUIRE(r.config.has_value());
    const Config &c = *r.config;
    CHECK(c.model.vocab_size == 250880);
    CHECK(totalParameters(c) == 176247271424);
    CHECK(c.parallelism.data_parallel_size == 8);
    CHECK(c.strategy.recompute_granularity == RecomputeGranularity::Full);
    CHECK(c.strategy.recompute_method == RecomputeMethod::Uniform);
    CHECK(c.strategy.recompute_num_layers == 1);
    // Megatron-LM's --attention-backend defaults to auto (flash); Megatron-DeepSpeed of 2022
    // had no FlashAttention, which the scenario says with flash_attention false.
    CHECK(c.strategy.flash_attention);
    const Config bloom = scenario("bloom-176b-384xa100", {"strategy.flash_attention=true"});
    CHECK(layerActivations(c, false, false).total == layerActivations(bloom, false, false).total);
}
