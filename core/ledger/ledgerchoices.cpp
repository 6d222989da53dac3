// SPDX-License-Identifier: MIT
#include "core/ledger/ledgerchoices.h"

#include "core/base/textcat.h"
#include "core/base/units.h"
#include "core/config/framework.h"
#include "core/model/activations.h"
#include "core/model/fp8.h"
#include "core/model/muon.h"

namespace memledger {

namespace {

// strategy.tensor_policies in words: the rules and what they do to one layer.
std::string tensorPolicyChoice(const Config &config, const LayerActivations &la)
{
    const StrategyConfig &st = config.strategy;
    if (st.recompute_granularity == RecomputeGranularity::Full)
        return "Tensor policies: not applied under full recompute, which keeps only each group's input.";
    std::string rules;
    for (const TensorPolicy &p : st.tensor_policies)
        append(rules, rules.empty() ? "" : ", ", p.pattern, " → ", tensorFateName(p.fate));
    std::string out = cat("Tensor policies (", rules, ") over ", granularityName(st.recompute_granularity),
                          " recompute: per layer ", formatGB(double(la.kept)), " kept of ", formatGB(double(la.total)),
                          ", ", formatGB(double(la.recomputed)), " recomputed, ", formatGB(double(la.offloaded)),
                          " offloaded to the host");
    if (la.quantizedFrom > 0)
        append(out, "; ", formatGB(double(la.quantizedFrom)), " quantised to ", formatGB(double(la.quantized)),
               " (fp8 e4m3, one ", quantScaleName(st.activation_quant_scale_dtype), " scale per ",
               formatThousands(st.activation_quant_block_size),
               " elements, dequantised in the backward; 1-byte masks and fp32 statistics unchanged)");
    out += '.';
    return out;
}

// What the schedule means for memory, in the ledger's explanation.
std::string_view scheduleNote(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::OneFOneB:
        return "; rank r holds min(p − r, m) of them.";
    case PipelineSchedule::ZbH1:
        return "; each backward split into B (input gradients) and W (weight gradients), rank r deferring r of its "
               "Ws to the cool-down (Qi et al. 2023, ZB-H1): 1F1B's peak, W's operands held from B to W.";
    case PipelineSchedule::ZbH2:
        return "; B and W split, the warm-up filled with 2(p − r) − 1 forwards (Qi et al. 2023, ZB-H2): no bubble "
               "for (2p − 1)/p of 1F1B's first-rank activations.";
    case PipelineSchedule::ZbV:
        return "; two chunks per rank in a V (rank r holds stages r and 2p − 1 − r), B and W split and W filling "
               "the bubbles under 1F1B's first-rank memory (Qi et al. 2024, ZB-V); counted along the op order.";
    case PipelineSchedule::DualPipe:
        return "; two pipelines in opposite directions, each with half the micro-batches: every rank holds its "
               "stage of each, two copies of the model's parameters, and up to p + 1 stage-micro-batches "
               "(DeepSeek-V3 report, deepseek-ai/DualPipe).";
    case PipelineSchedule::DualPipeV:
        return "; DualPipe cut in half: a V of 2p stages over p ranks, one copy of the parameters, up to 2p + 1 "
               "chunk-micro-batches (deepseek-ai/DualPipe).";
    default:
        return ".";
    }
}

// What is saved and how: element sizes, norm statistics, attention, sequence
// parallelism, recompute and the tensor policies.
void addActivationChoices(std::vector<std::string> &out, const Config &config, const LayerActivations &denseLayer)
{
    const StrategyConfig &st = config.strategy;
    const ParallelismConfig &par = config.parallelism;
    const std::string A = std::to_string(activationBytes(config));
    out.push_back(
        st.dropout_mask_dtype == DropoutMaskDtype::Bool
            ? cat("Activations are ", A,
                  "-byte elements; dropout masks are 1-byte bool (dropout_mask_dtype = bool, as fused dropout kernels "
                  "save).")
            : cat("Activations are ", A, "-byte elements; dropout masks are ", A,
                  "-byte (dropout_mask_dtype = activation, as PyTorch's unfused dropout saves)."));
    if (autocastOverFp32(config))
        out.push_back(cat("torch.autocast over fp32 weights (training.fp32_params below ZeRO-3, as Hugging Face's "
                          "Trainer(bf16=True) runs): the residual stream and the layers' inputs stay fp32, an eager "
                          "RMSNorm keeps its fp32 normalised output, and every linear layer saves its own ",
                          dtypeName(config.training.params_dtype),
                          " cast of its input (autocast caches the casts of weights, not of activations)",
                          config.strategy.framework != Framework::Megatron && !config.strategy.torch_compile
                              ? ": q, k and v projections three, gate and up two."
                              : "."));
    out.push_back(
        st.norm_stats_dtype == NormStatsDtype::None
            ? std::string("Norm statistics: not counted (norm_stats_dtype = none, as Korthikanti et al.'s formulas).")
            : cat("Norm statistics: ", st.norm_stats_dtype == NormStatsDtype::FP32 ? "fp32" : "activation-dtype",
                  config.model.normalization == Normalization::LayerNorm ? " mean and rstd" : " rstd",
                  " per token (norm_stats_dtype = ", normStatsName(st.norm_stats_dtype), ")."));
    out.push_back(
        st.flash_attention
            ? std::string("Attention: FlashAttention; the s×s scores are never stored, only an fp32 log-sum-exp per "
                          "row.")
            : cat("Attention: unfused; softmax output",
                  config.model.attention_dropout > 0 ? ", dropout mask and dropout output" : "",
                  " are stored per head (the 5as²b term)."));
    if (par.sequence_parallel && par.tensor_model_parallel_size > 1)
        out.push_back(
            st.sp_linear_saves == SpLinearSaves::Shard
                ? "Sequence parallel: linears save their sequence-sharded input and all-gather it again in backward "
                  "(sp_linear_saves = shard, as Megatron)."
                : "Sequence parallel: linears save their all-gathered input (sp_linear_saves = gathered).");
    out.push_back(st.recompute_granularity == RecomputeGranularity::Full
                      ? cat("Recompute: ", granularityName(st.recompute_granularity), " (",
                            methodName(st.recompute_method), ", ",
                            CountText(double(st.recompute_num_layers), "layer", "layers"), ").")
                      : cat("Recompute: ", granularityName(st.recompute_granularity), "."));
    if (st.torch_compile)
        out.push_back("torch.compile (strategy.torch_compile): inductor fuses each norm's and SwiGLU's elementwise "
                      "chain and its min-cut partitioner recomputes them in the backward, so a norm keeps its input "
                      "and rstd, SwiGLU its gate and up, an fp32 softmax its fp32 output only; matmul inputs, "
                      "attention outputs and the loss (not compiled by torchtitan) are as in eager mode. Its speed-up "
                      "is not in the step time.");
    if (st.torch_compile && st.recompute_granularity == RecomputeGranularity::SelectiveOp)
        out.push_back("Per-op checkpointing compiled: MUST_SAVE only bans a node from recomputation and the "
                      "partitioner saves what the backward reads, so w2's output (and its reduce-scatter under "
                      "tensor parallelism), which only the residual add uses, is not kept; eager, the checkpoint's "
                      "dispatch mode stores every MUST_SAVE output for the recomputation to replay.");
    if (st.recompute_granularity == RecomputeGranularity::SelectiveOp && config.training.fp8_recipe != Fp8Recipe::None)
        out.push_back("Per-op checkpointing with Float8: torchao's Float8 linears multiply with aten.mm on Float8 "
                      "tensors, which the policy sees before the subclass calls _scaled_mm, so every other linear's "
                      "16-bit output is kept as without Float8; the aten.abs outputs of its scales are not read by "
                      "the backward and, compiled, not kept.");
    if (!st.tensor_policies.empty())
        out.push_back(tensorPolicyChoice(config, denseLayer));
}

// The schedule over the stages, and where the stages' layers come from.
void addPipelineChoices(std::vector<std::string> &out, const Config &config)
{
    const ParallelismConfig &par = config.parallelism;
    out.push_back(cat("Pipeline: ", scheduleName(par.schedule()), " over ",
                      CountText(double(par.pipeline_model_parallel_size), "stage", "stages"), " with ",
                      formatThousands(config.microBatches()), " micro-batches per iteration",
                      scheduleNote(par.schedule())));
    if (!par.pipeline_layout.empty()) {
        std::string counts;
        for (std::size_t s = 0; s < par.pipeline_layout.size(); ++s)
            counts += (s ? "," : "") + formatThousands(par.pipeline_layout[s]);
        out.push_back("Stages: layers per virtual stage from pipeline_layout [" + counts
                      + "] (stage k·p + r is chunk k of rank r), not num_layers / (p·v).");
    }
}

// How the framework holds gradients, the loss's softmax and the optimizer
// step's temporaries: the behaviours a measured run must name
// (docs/measured-runs.md).
void addFrameworkChoices(std::vector<std::string> &out, const Config &config, const StateBytes &sb)
{
    const StrategyConfig &st = config.strategy;
    std::string framework = cat("Framework: ", frameworkName(st.framework), " (strategy.framework). ");
    for (const std::string &knob : frameworkChoices(config))
        framework += knob + "; ";
    framework.replace(framework.size() - 2, 2, ".");
    out.push_back(std::move(framework));
    if (fsdpPerBlock(config)) {
        const ParallelismConfig &par = config.parallelism;
        out.push_back(cat(
            "FSDP (PyTorch fully_shard per transformer block): parameters sharded over ",
            formatThousands(par.dataParallelShard() * par.context_parallel_size),
            par.dataParallelShard() < par.data_parallel_size
                ? cat(" ranks and replicated over ", formatThousands(par.data_parallel_size / par.dataParallelShard()),
                      " groups (HSDP)")
                : std::string(" ranks"),
            "; ",
            fsdpKeepsGathered(config)
                ? (par.pipeline_model_parallel_size > 1
                       ? "under pipeline parallelism every block stays gathered and its gradients unsharded until the "
                         "last micro-batch's backward"
                       : "every block stays gathered from its forward to its backward (fsdp_reshard_after_forward "
                         "false)")
                : "one block gathered with the next prefetched, resharded after forward and gathered again for "
                  "backward",
            "; each block's gradients reduce-scattered as its backward ends",
            st.fsdp_root_unit && st.framework == Framework::Torchtitan
                ? "; the embedding, final norm and output layer form the root unit (fsdp_root_unit: torchtitan's "
                  "wrapping before July 2025), gathered from the forward's start to the end of the backward."
                : "."));
    }
    out.push_back(cat("Gradients: ", sb.gradWhy, " per parameter; optimizer: ", sb.optWhy, "."));
    out.push_back(
        st.grad_buffer == GradBuffer::Contiguous
            ? "Gradient memory: one contiguous buffer for the whole iteration (Megatron's DDP grad buffer)."
            : "Gradient memory: created layer by layer in the first backward and freed after the optimizer step "
              "(PyTorch's .grad with zero_grad(set_to_none=True)).");
    const bool lossParallel
        = st.cross_entropy == CrossEntropy::LossParallel && config.parallelism.tensor_model_parallel_size > 1;
    out.push_back(st.cross_entropy == CrossEntropy::VocabParallel
                      ? "Loss: Megatron's vocab-parallel cross entropy saves an fp32 softmax and turns it into the "
                        "gradient in place."
                  : lossParallel
                      ? "Loss: F.cross_entropy on fp32 logits under PyTorch's loss_parallel() (vocabulary-sharded "
                        "DTensor): its decomposed log-softmax keeps x - max beside exp and the result, and its "
                        "backward, (grad_input + exp(x)) * grad_output, holds three fp32 vocabulary-sized temporaries "
                        "beside the saved log-softmax."
                      : "Loss: PyTorch's F.cross_entropy on fp32 logits saves the log-softmax; its backward holds two "
                        "fp32 vocabulary-sized gradients at once.");
    if (config.training.optimizer == Optimizer::Adam || config.training.optimizer == Optimizer::AdamW)
        out.push_back(
            st.optimizer_kernel == OptimizerKernel::Fused ? "Optimizer step: a fused Adam kernel (Apex or Transformer "
                                                            "Engine FusedAdam, torch fused=True) updates in place."
            : st.optimizer_kernel == OptimizerKernel::Foreach
                ? "Optimizer step: torch.optim's foreach Adam allocates sqrt(exp_avg_sq) for the whole shard at once."
                : "Optimizer step: torch.optim's single-tensor Adam allocates two temporaries of one parameter tensor "
                  "at a time.");
}

// The strategies that change what is counted: FP8 training, Muon, gradient
// offload and MoE routing.
void addStrategyChoices(std::vector<std::string> &out, const Config &config, const StateBytes &sb)
{
    const StrategyConfig &st = config.strategy;
    if (const std::string fp8 = fp8Choice(config); !fp8.empty())
        out.push_back(fp8);
    if (sb.muon)
        out.push_back(
            "Optimizer: Muon on the layers' 2-D matrices (one momentum buffer each), AdamW on embeddings, output "
            "layer, norms and biases (Moonlight); Newton–Schulz runs "
            + std::to_string(kNewtonSchulzSteps)
            + " bf16 iterations per matrix, each gathered whole on demand under TP or ZeRO; every rank "
            + (config.training.muon_newton_schulz == MuonNewtonSchulz::Redundant
                   ? "computes all its matrices whole (muon_newton_schulz = redundant, as Moonlight's Distributed "
                     "Muon)."
                   : "iterates on 1/(d·c) of the matrices (muon_newton_schulz = layer_wise, as Megatron-LM's "
                     "LayerWiseDistributedOptimizer)."));
    if (st.grad_offload != OffloadTarget::None)
        out.push_back(
            "Gradient offload: gradients stream to the host during backward through a device double buffer of two "
            "ddp_bucket_size buckets; the optimizer step runs on the CPU and the updated weights come back "
            "(ZeRO-Offload).");
    if (config.model.isMoe()) {
        const std::string probs
            = st.moe_apply_probs == MoeProbs::Activation
                  ? "routing probabilities applied in the experts' activation (moe_apply_probs = activation, "
                    "Megatron-LM's weighted SwiGLU): no expert output saved"
                  : std::string("routing probabilities applied to the expert outputs (moe_apply_probs = ")
                        + std::string(moeProbsName(st.moe_apply_probs)) + "), which are saved"
                        + (st.moe_apply_probs == MoeProbs::OutputFp32 ? " in fp32" : "");
        const std::string buffers
            = st.moe_token_dispatcher == MoeDispatcher::DeepEP
                  ? "DeepEP's dispatch (moe_token_dispatcher = deepep): each token sent once to each rank, its "
                    "receive tensors at the balanced counts, and DeepEP's own NVLink and RDMA buffers."
                  : std::string("all-to-all buffers sized for ")
                        + (st.moe_expert_capacity_factor > 0 ? "the capacity factor." : "the worst case (dropless).");
        out.push_back("MoE: expert activations assume balanced routing (top-"
                      + formatThousands(config.model.moe_router_topk) + " copies per token); " + probs + "; "
                      + buffers);
    }
}

// The architecture's variants that change what is counted, or that a reader
// might expect to: the MLP's activation, the norms' variants, ALiBi.
void addModelChoices(std::vector<std::string> &out, const Config &config)
{
    const ModelConfig &m = config.model;
    if (m.squared_relu)
        out.push_back("MLP: squared ReLU (squared_relu, Megatron's torch.pow(F.relu(x), 2)); relu's output is saved "
                      "once for relu's and pow's backward (mlp.fc1.relu_output), as many bytes as GeLU's input.");
    if (m.apply_layernorm_1p)
        out.push_back("Norms: LayerNorm1p (apply_layernorm_1p): a zero-centred weight with 1 added in the forward, "
                      "the same parameters and saved tensors as LayerNorm.");
    if (m.qk_layernorm && !m.multi_latent_attention)
        out.push_back(cat("QK norm (qk_layernorm): a ", normalizationName(m.normalization), " of ",
                          formatThousands(m.headDim()),
                          " channels on every query and key head, replicated over t; it saves the projection's "
                          "query and key outputs (attention.q_layernorm, attention.k_layernorm) beside the rotated q "
                          "and k."));
    if (m.position_embedding_type == PositionEmbedding::Alibi)
        out.push_back(config.strategy.flash_attention
                          ? std::string("Positions: ALiBi, no position parameters; FlashAttention adds the bias "
                                        "from a slope per head and saves nothing more.")
                          : std::string("Positions: ALiBi, no position parameters; the bias is the scores' initial "
                                        "value (Megatron-DeepSpeed's baddbmm), so nothing more is saved. Its per-layer "
                                        "b·a/t·s buffer is not counted."));
    if (m.embed_layernorm)
        out.push_back("Embedding LayerNorm (embed_layernorm, Megatron-DeepSpeed): 2h parameters on the first stage "
                      "(not on the tied copy), and its input and statistics saved per micro-batch in flight.");
    if (m.mtp_num_layers > 0)
        out.push_back(cat("Multi-token prediction (mtp_num_layers = ", formatThousands(m.mtp_num_layers),
                          "): on the last stage, each module's transformer layer (built as the last layer) among its "
                          "layers, its eh_proj (2h × h) and three norms in the output layer's row, with a copy of "
                          "the word embedding unless the rank holds the first stage too (DualPipe); per micro-batch "
                          "its norms' inputs, eh_proj's 2h input, a second output-layer input and loss softmax "
                          "(Megatron-LM's MultiTokenPredictionLayer, DeepSeek-V3 §2.2). Its time counts its layer, not "
                          "the projection nor the second output layer."));
}

} // namespace

std::vector<std::string> ledgerChoices(const Config &config, const StateBytes &sb, const LayerActivations &denseLayer)
{
    // Built with cat (one allocation each): these are rebuilt on every evaluation.
    std::vector<std::string> out;
    out.reserve(16);
    addModelChoices(out, config);
    addActivationChoices(out, config, denseLayer);
    addPipelineChoices(out, config);
    addFrameworkChoices(out, config, sb);
    addStrategyChoices(out, config, sb);
    return out;
}

} // namespace memledger
