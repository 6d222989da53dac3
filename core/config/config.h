// SPDX-License-Identifier: MIT
#pragma once

#include "core/base/units.h"
#include "core/config/efficiency.h"
#include "core/config/inferenceconfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memledger {

// The configuration is plain values. Field names follow Megatron-LM's
// arguments (the preset format of presets/README.md); every default is documented in
// presets/README.md and set here, in one place.

enum class Normalization { LayerNorm, RMSNorm };
// Alibi: Press et al. 2022's linear biases on the attention scores, no
// position parameters (BLOOM; Megatron-DeepSpeed's --position-embedding-type alibi).
enum class PositionEmbedding { LearnedAbsolute, Rope, None, Alibi };

struct ModelConfig
{
    std::int64_t num_layers = 32;
    std::int64_t hidden_size = 4096;
    std::int64_t num_attention_heads = 32;
    std::int64_t num_query_groups = 0; // 0: same as heads (multi-head attention)
    std::int64_t kv_channels = 0; // 0: hidden_size / num_attention_heads
    std::int64_t ffn_hidden_size = 0; // 0: 4 * hidden_size (Megatron's default)
    std::int64_t vocab_size = 32000;
    std::int64_t make_vocab_size_divisible_by = 128; // padded to a multiple of this * t
    bool swiglu = false;
    // Megatron's --squared-relu: an ungated MLP with relu(x)² (Primer, So et
    // al. 2021; Nemotron-4). Same shapes as GeLU's MLP.
    bool squared_relu = false;
    Normalization normalization = Normalization::LayerNorm;
    // Megatron's --apply-layernorm-1p: the norm's weight is stored centred on
    // zero and 1 is added in the forward (Nemotron-4). Same bytes.
    bool apply_layernorm_1p = false;
    // Megatron's --qk-layernorm: a norm of head width on each query and key
    // head before the rotary embedding (Qwen3, OLMo 2).
    bool qk_layernorm = false;
    // Megatron-DeepSpeed's --embed-layernorm: a LayerNorm after the word
    // embeddings (BLOOM, on the first stage).
    bool embed_layernorm = false;
    bool add_bias_linear = true;
    bool add_qkv_bias = false; // Qwen2: QKV biases without other linear biases
    PositionEmbedding position_embedding_type = PositionEmbedding::LearnedAbsolute;
    std::int64_t max_position_embeddings = 0; // 0: seq_length
    bool untie_embeddings_and_output_weights = false;
    double attention_dropout = 0.1;
    double hidden_dropout = 0.1;

    // Mixture of experts (num_experts = 0: dense).
    std::int64_t num_experts = 0;
    std::int64_t moe_router_topk = 2;
    std::int64_t moe_ffn_hidden_size = 0; // 0: ffn_hidden_size
    std::int64_t moe_shared_expert_intermediate_size = 0; // 0: no shared expert
    std::vector<int> moe_layer_pattern; // from moe_layer_freq (list form); empty: use freq
    std::int64_t moe_layer_freq = 1; // every k-th layer is MoE
    std::int64_t first_k_dense_replace = 0; // DeepSeek: the first k layers stay dense
    // Multi-token prediction (DeepSeek-V3 §2.2, Megatron-LM's --mtp-num-layers):
    // each module normalises the next token's embedding and the hidden state
    // (enorm, hnorm), projects their concatenation (eh_proj, 2h → h), runs one
    // transformer layer built as the decoder's last and a final norm, and
    // shares the embedding and the output layer with the main model. It runs
    // on the last pipeline stage.
    std::int64_t mtp_num_layers = 0;

    // Multi-latent attention (DeepSeek-V2/V3).
    bool multi_latent_attention = false;
    std::int64_t q_lora_rank = 0; // 0: queries projected directly
    std::int64_t kv_lora_rank = 512;
    std::int64_t qk_head_dim = 128; // the "nope" part of a query/key head
    std::int64_t qk_pos_emb_head_dim = 64; // the rotary part
    std::int64_t v_head_dim = 128;

    // Sliding-window attention (Mistral 7B; Hugging Face's `sliding_window`):
    // each token attends to the last this many; 0: full attention. Only the
    // inference KV cache reads it.
    std::int64_t sliding_window = 0;

    // Resolved helpers (defaults applied).
    std::int64_t queryGroups() const { return num_query_groups > 0 ? num_query_groups : num_attention_heads; }
    std::int64_t headDim() const
    {
        return kv_channels > 0 ? kv_channels : (num_attention_heads > 0 ? hidden_size / num_attention_heads : 0);
    }
    std::int64_t ffn() const { return ffn_hidden_size > 0 ? ffn_hidden_size : 4 * hidden_size; }
    std::int64_t moeFfn() const { return moe_ffn_hidden_size > 0 ? moe_ffn_hidden_size : ffn(); }
    bool isMoe() const { return num_experts > 0; }
    bool isMoeLayer(std::int64_t layer) const; // 0-based global layer index
    bool operator==(const ModelConfig &) const = default;
};

enum class Optimizer { Adam, AdamW, SGD, Adafactor, Adam8bit, Muon };
// Who runs Muon's Newton–Schulz on a matrix: every rank holding a shard, on
// the whole gathered matrix (Moonlight's Distributed Muon), or one rank of the
// data-parallel group per matrix (Megatron-LM's LayerWiseDistributedOptimizer).
enum class MuonNewtonSchulz { Redundant, LayerWise };

// FP8 training as Transformer Engine runs it (Megatron's --fp8-recipe): the
// GEMMs of the transformer layers' linear layers take FP8 operands, the bf16
// (or fp16) weights and fp32 master weights stay. Delayed and tensorwise
// (TE's Float8CurrentScaling) keep one fp32 scale per tensor, delayed with an
// amax history; mxfp8 one E8M0 byte per 32 elements (Blackwell); blockwise
// (DeepSeek-V3's scheme) fp32 scales per 1×128 activation tile and per
// 128×128 weight block. core/model/fp8.h holds the formats' figures.
enum class Fp8Recipe { None, Delayed, Tensorwise, MXFP8, Blockwise };

struct TrainingConfig
{
    std::int64_t seq_length = 2048;
    std::int64_t micro_batch_size = 1;
    std::int64_t global_batch_size = 0; // 0: micro_batch_size * d * p (fills the pipeline once)
    Dtype params_dtype = Dtype::BF16;
    bool main_params_fp32 = true; // preset: main_params_dtype "fp32" | "none"
    Dtype main_grads_dtype = Dtype::FP32; // Megatron accumulates bf16 grads in fp32 main_grad
    Optimizer optimizer = Optimizer::Adam;
    std::optional<Dtype> exp_avg_dtype; // unset: fp32, or int8 for adam8bit
    std::optional<Dtype> exp_avg_sq_dtype;
    Fp8Recipe fp8_recipe = Fp8Recipe::None;
    std::int64_t fp8_amax_history_len = 1024; // delayed scaling: TE's DelayedScaling default (Megatron's flag: 1)
    MuonNewtonSchulz muon_newton_schulz = MuonNewtonSchulz::Redundant;
    // The parameters are stored in fp32 and are themselves the optimizer's
    // master weights; params_dtype is then only what they are cast to for
    // compute: PyTorch FSDP's MixedPrecisionPolicy (the sharded fp32
    // parameter is cast to bf16 as it is all-gathered) and torch.autocast
    // under Hugging Face's Trainer (an fp32 model, bf16 copies of the weights
    // made as each layer runs). false: a params_dtype copy beside an fp32
    // master (main_params_dtype), as Megatron and DeepSpeed keep them.
    bool fp32_params = false;
    bool operator==(const TrainingConfig &) const = default;
};

// The zero-bubble schedules split each backward into B (input gradients,
// which the previous stage waits for) and W (weight gradients, which nothing
// waits for) and move W into bubbles (Qi et al. 2023, "Zero Bubble Pipeline
// Parallelism"; ZB-V: Qi et al. 2024). DualPipe runs two pipelines in opposite
// directions over the same ranks (DeepSeek-AI 2024, DeepSeek-V3 report §3.2.1);
// DualPipeV is its V-shaped half (deepseek-ai/DualPipe).
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved, ZbH1, ZbH2, ZbV, DualPipe, DualPipeV };

struct ParallelismConfig
{
    std::int64_t tensor_model_parallel_size = 1;
    std::int64_t pipeline_model_parallel_size = 1;
    std::int64_t virtual_pipeline_model_parallel_size = 1; // chunks per rank; 1: none
    std::int64_t data_parallel_size = 1;
    std::int64_t context_parallel_size = 1;
    std::int64_t expert_model_parallel_size = 1;
    std::int64_t expert_tensor_parallel_size = 0; // 0: same as t
    bool sequence_parallel = false;
    int zero_stage = 0;
    // HSDP: ZeRO shards over groups of this many data-parallel ranks and
    // replicates across the d / this groups (torchtitan's
    // data_parallel_shard_degree inside data_parallel_replicate_degree;
    // DeepSpeed's ZeRO++ hpZ plays a similar part). 0: all d ranks (FSDP).
    std::int64_t data_parallel_shard_size = 0;
    std::optional<PipelineSchedule> pipeline_schedule; // unset: interleaved if v > 1 else 1f1b
    // Transformer layers of each virtual pipeline stage (stage k·p + r is
    // chunk k of rank r), as Megatron's --pipeline-model-parallel-layout and
    // --decoder-first/last-pipeline-num-layers give them; empty: num_layers /
    // (p·v) each. A stage may hold none (only the embedding or the loss).
    std::vector<std::int64_t> pipeline_layout;

    PipelineSchedule schedule() const;
    // Stages along one pipeline direction: p·v, but p for DualPipe, whose
    // two chunks per rank are one stage of each direction (two copies of the model).
    std::int64_t pipelineStages() const;
    std::int64_t dataParallelShard() const
    {
        return data_parallel_shard_size > 0 ? data_parallel_shard_size : data_parallel_size;
    }
    std::int64_t expertTensorParallel() const
    {
        return expert_tensor_parallel_size > 0 ? expert_tensor_parallel_size : tensor_model_parallel_size;
    }
    std::int64_t gpus() const
    {
        return tensor_model_parallel_size * pipeline_model_parallel_size * data_parallel_size * context_parallel_size;
    }
    bool operator==(const ParallelismConfig &) const = default;
};

// SelectiveOp: torchtitan's per-op selective activation checkpointing (its
// SAC policy: the outputs of matmuls, attention kernels and reduce-scatters
// kept, every second matmul and everything else recomputed).
enum class RecomputeGranularity { None, Selective, Full, SelectiveOp };
enum class RecomputeMethod { Uniform, Block };
enum class DropoutMaskDtype { Bool, Activation };
enum class NormStatsDtype { FP32, Activation, None };
enum class SpLinearSaves { Shard, Gathered };
// Grouped-query attention under a fused attention kernel: the kernel reads
// the key/value groups itself (Transformer Engine, flash-attn's GQA), or K
// and V are first copied to every head (repeat_kv, as torchtitan's and
// transformers' Llama do before scaled_dot_product_attention) and the kernel
// saves the copies for its backward.
enum class GqaKv { Grouped, Repeated };
// Where an MoE layer multiplies each expert's output by its routing
// probability: inside the expert's activation (Megatron-LM since core 0.13,
// "Memory efficient token permutation": weighted_bias_swiglu saves the fc1
// output it saves anyway and the fp32 probabilities, and the unpermute saves
// nothing), or on the expert outputs as they are combined (the token
// permutation of earlier Megatron-LM, torchtitan's token dispatcher,
// DeepSpeed's combine einsum, transformers' MoE blocks), whose backward keeps
// every expert output; torchtitan's combine casts the outputs to fp32 first,
// and its product keeps the fp32 copy.
enum class MoeProbs { Activation, Output, OutputFp32 };
// How an MoE layer's tokens reach their experts' ranks: all-to-alls whose
// receive tensors PyTorch allocates (Megatron's alltoall dispatcher), or
// DeepEP's kernels (Megatron's flex dispatcher, DeepSeek-V3), which send a
// token once to each rank it goes to through NVLink and RDMA buffers DeepEP
// allocates itself, outside PyTorch's caching allocator.
enum class MoeDispatcher { AllToAll, DeepEP };
// What a deferred weight pass (zero-bubble schedules, DualPipe) keeps of each
// linear layer's output gradient under FP8 training: the gradient as the
// input-gradient pass had it, 16-bit (Transformer Engine's delayed wgrad
// keeps its quantised grad_output with both the rowwise and the columnwise
// usage, about as large: module/linear.py wgrad_store.put), or only the FP8
// copy the weight-gradient GEMM reads, one byte and its block scales
// (DeepSeek-V3's FP8 framework, whose Wgrad GEMM takes FP8 operands, §3.3 Figure 6).
enum class DeferredWgradGrad { Activation, FP8 };
// How RMSNorm, SwiGLU and an unfused attention's softmax are computed, which
// decides what autograd saves: Megatron's fused kernels (Apex / Transformer
// Engine RMSNorm saves its input and fp32 rstd; bias_swiglu saves gate and
// up; the fused scale-mask-softmax saves its 16-bit output) or eager PyTorch
// ops as Hugging Face's and torchtitan's Llama write them (an RMSNorm upcast
// to fp32: the fp32 copy, rstd and the normalised 16-bit x; F.silu's output
// beside gate and up; softmax(dtype=float32) keeps its fp32 output and the
// matmul with V the 16-bit cast).
enum class NormKernel { Fused, Eager };
enum class SwigluKernel { Fused, Eager };
enum class SoftmaxDtype { Activation, FP32 };
// How context parallelism exchanges keys and values (Megatron's --cp-comm-type,
// torchtitan's context_parallel_rotate_method): a ring of point-to-point sends,
// each rank holding the chunk in use and the next (Transformer Engine's
// AttnFuncWithCPAndKVP2P); an all-gather of the whole sequence's K and V
// (PyTorch's context_parallel with its "allgather" rotater, Llama 3's CP); or
// DeepSpeed-Ulysses' all-to-alls, which give each rank all tokens of 1/c of the heads.
enum class CpCommType { P2P, AllGather, A2A };
enum class OffloadTarget { None, CPU, NVMe };
enum class GradBuffer { Contiguous, OnDemand };
// The loss: Megatron's fused vocab-parallel kernel; PyTorch's F.cross_entropy
// (log_softmax + nll_loss kernels); or F.cross_entropy under PyTorch's
// loss_parallel() on vocabulary-sharded DTensor logits (torchtitan under TP),
// whose decomposed log-softmax and fused nll/log-softmax backward allocate
// more fp32 vocabulary-sized temporaries. Without TP it is plain F.cross_entropy.
enum class CrossEntropy { VocabParallel, Unfused, LossParallel };
enum class OptimizerKernel { Fused, Foreach, SingleTensor };
// Who runs the FP8 GEMMs: Transformer Engine caches the FP8 weights for the
// iteration and saves FP8 linear inputs; torchao's Float8Linear (torchtitan)
// saves the high-precision input and weight and casts them again in backward.
enum class Fp8Implementation { TransformerEngine, Torchao };

// What becomes of one saved tensor between its layer's forward and backward
// (strategy.tensor_policies; the seeds' "storage policy" per tensor, as
// unified activation managers bind one to each tensor). Quantised tensors
// are fp8 e4m3 with block scales, dequantised in the backward; quantize_e5m6
// keeps 12-bit E5M6 elements with block scales, the format DeepSeek-V3 caches
// the attention output projection's input in (report §3.3.3), packed.
enum class TensorFate { Store, Recompute, Offload, QuantizeFp8, QuantizeFp8Offload, QuantizeE5M6 };
// A rule of strategy.tensor_policies: a saved tensor's name as the per-layer
// table writes it ("mlp.fc1.output") or a glob ("attention.*", "*").
struct TensorPolicy
{
    std::string pattern;
    TensorFate fate = TensorFate::Store;
    bool operator==(const TensorPolicy &) const = default;
};
// The scale of each block of a quantised activation: fp32 (DeepSeek-V3's
// 1×128 tiles, Transformer Engine's blockwise recipe) or a power-of-two E8M0
// byte (the OCP microscaling formats).
enum class QuantScale { FP32, E8M0 };
enum class ActivationBalance { None, Auto };

// Which training framework the plan runs under: it sets the defaults of the
// knobs frameworks disagree on (core/config/framework.h names each default
// and the framework behaviour it follows); a knob written in a preset wins.
enum class Framework { Megatron, Torchtitan, DeepSpeed, HF };

// PyTorch's CUDA caching allocator, as PYTORCH_CUDA_ALLOC_CONF (or
// PYTORCH_ALLOC_CONF) sets it: what core/allocator/ simulates over a rank's
// allocations to predict reserved memory. Defaults are PyTorch's.
struct AllocatorConfig
{
    // expandable_segments:True: one segment per stream and pool that grows by
    // mapping pages (2 MiB small, 20 MiB large) instead of one cudaMalloc per segment.
    bool expandable_segments = false;
    // max_split_size_mb: cached blocks of at least this size are never split
    // (absent: any block may be split). PyTorch refuses values under 20.
    std::optional<std::int64_t> max_split_size_mb;
    // garbage_collection_threshold: with a per-process memory fraction, the
    // share of it above which cached blocks are released before cudaMalloc
    // (PyTorch acts on it only when a fraction is set).
    std::optional<double> garbage_collection_threshold;
    // torch.cuda.set_per_process_memory_fraction: the share of the device's
    // memory the allocator may reserve (absent: all that is free).
    std::optional<double> per_process_memory_fraction;
    bool operator==(const AllocatorConfig &) const = default;
};

struct StrategyConfig
{
    Framework framework = Framework::Megatron;
    RecomputeGranularity recompute_granularity = RecomputeGranularity::None;
    RecomputeMethod recompute_method = RecomputeMethod::Uniform;
    std::int64_t recompute_num_layers = 1;
    bool flash_attention = true;
    // torch.compile of the transformer blocks: inductor fuses each norm's and
    // SwiGLU's elementwise chain, and its min-cut partitioner
    // (torch/_functorch/partitioners.py) recomputes those pointwise ops in the
    // backward instead of saving their outputs, so the eager kernels' extra
    // saves go; reductions (rstd) and matmul inputs stay saved.
    bool torch_compile = false;
    DropoutMaskDtype dropout_mask_dtype = DropoutMaskDtype::Bool;
    NormStatsDtype norm_stats_dtype = NormStatsDtype::FP32;
    SpLinearSaves sp_linear_saves = SpLinearSaves::Shard;
    GqaKv gqa_kv = GqaKv::Grouped;
    MoeProbs moe_apply_probs = MoeProbs::Activation;
    MoeDispatcher moe_token_dispatcher = MoeDispatcher::AllToAll;
    DeferredWgradGrad deferred_wgrad_grad = DeferredWgradGrad::Activation; // only with training.fp8_recipe
    NormKernel norm_kernel = NormKernel::Fused; // RMSNorm only: nn.LayerNorm is one ATen kernel either way
    SwigluKernel swiglu_kernel = SwigluKernel::Fused;
    SoftmaxDtype softmax_dtype = SoftmaxDtype::Activation; // without FlashAttention
    CpCommType cp_comm_type = CpCommType::P2P; // only with parallelism.context_parallel_size > 1
    OffloadTarget optimizer_offload = OffloadTarget::None;
    OffloadTarget param_offload = OffloadTarget::None;
    OffloadTarget activation_offload
        = OffloadTarget::None; // saved activations to the host between forward and backward
    std::int64_t activation_offload_buffers = 2; // staging buffers on the copy stream
    GradBuffer grad_buffer
        = GradBuffer::Contiguous; // Megatron's contiguous buffer, or PyTorch's .grad at first backward
    CrossEntropy cross_entropy = CrossEntropy::VocabParallel; // Megatron's fused loss (backward in place), or PyTorch's
    bool gradient_accumulation_fusion = true; // Megatron: weight gradients GEMM'd straight into main_grad
    OptimizerKernel optimizer_kernel
        = OptimizerKernel::Fused; // what the Adam step allocates: fused none, foreach, for-loop
    double moe_expert_capacity_factor = 0.0; // 0: dropless, all-to-all buffers sized for the worst case
    std::int64_t ddp_bucket_size = 40000000; // elements per gradient-reduction bucket (Megatron)
    // ZeRO-Offload's gradient offload (DeepSpeed offload_optimizer): gradients
    // stream to the host as backward produces them through a double buffer of
    // two ddp_bucket_size buckets; needs optimizer_offload (core/model/gradoffload.h).
    OffloadTarget grad_offload = OffloadTarget::None;
    // Time model only. Megatron's --overlap-grad-reduce (off by default): the
    // data-parallel reduction runs bucket by bucket under the last backward.
    bool overlap_grad_reduce = false;
    // Time model only. Megatron's --overlap-param-gather (off by default; needs
    // the distributed optimizer and overlap_grad_reduce): ZeRO's all-gather of
    // the updated weights runs bucket by bucket under the next iteration's first
    // forward instead of after the optimizer step.
    bool overlap_param_gather = false;
    // Time model only. Megatron-LM's overlap_p2p_comm (on unless
    // --no-overlap-p2p-communication; the argument parser turns it off without
    // the interleaved schedule): the interleaved schedule's pipeline sends and
    // receives run asynchronously under the next chunk's compute, so only the
    // fill and drain chains of sends (and what outlasts a chunk) are exposed.
    bool overlap_p2p_comm = true;
    // Time model only. Megatron's --fp8-param-gather (Transformer Engine's FP8
    // primary weights; torchtitan's enable_fsdp_float8_all_gather), off by
    // default: with training.fp8_recipe and ZeRO ≥ 1 the all-gathers of the
    // weights move 1-byte FP8 values (plus their scales) instead of 16-bit ones.
    bool fp8_param_gather = false;
    // Megatron's --tp-comm-overlap (Transformer Engine userbuffers, off by
    // default): tensor-parallel collectives hide behind the GEMMs they feed.
    bool tp_comm_overlap = false;
    // Pipeline sends of a tensor-parallel stage without sequence parallelism:
    // each rank sends 1/t and the receiver all-gathers over NVLink (Narayanan
    // et al. 2021 §4.1, Megatron's default then), or every rank sends it all.
    bool scatter_gather_tensors_in_pipeline = true;
    // Per saved tensor, in the order the preset lists them; refines
    // recompute_granularity (none or selective) tensor by tensor.
    std::vector<TensorPolicy> tensor_policies;
    std::int64_t activation_quant_block_size = 128; // elements per scale of a quantize_fp8 tensor
    QuantScale activation_quant_scale_dtype = QuantScale::FP32;
    Fp8Implementation fp8_implementation = Fp8Implementation::TransformerEngine; // only with training.fp8_recipe
    // Park part of the first pipeline ranks' saved activations in the later
    // ranks' memory over NVLink or the network, so that the device totals even
    // out (core/ledger/balance.h).
    ActivationBalance pipeline_activation_balance = ActivationBalance::None;
    AllocatorConfig allocator;
    // FSDP's reshard_after_forward: a layer's gathered parameters are freed
    // after its forward and gathered again for its backward (true), or kept
    // from forward to backward (false). Unset: the framework's default
    // (torchtitan: false under pipeline parallelism, true otherwise).
    std::optional<bool> fsdp_reshard_after_forward;
    // torchtitan's FSDP2 wrapping before July 2025 (#1094): each block, then
    // the whole model (fully_shard(model)), so the embedding, final norm and
    // output layer form the root unit, which FSDP2 never reshards after
    // forward: gathered from the forward's start to the end of the backward.
    // false: torchtitan since, the embedding and [norm, output] their own units.
    bool fsdp_root_unit = false;
    // DeepSpeed ZeRO-3 (stage3_prefetch_bucket_size, stage3_max_live_parameters):
    // it gathers each module's parameters as the module runs and prefetches up
    // to this many elements of the modules after it, holding at most the live
    // count. Unset: two whole layers gathered (current and next), as Megatron's
    // and PyTorch's per-layer sharding do.
    std::optional<std::int64_t> zero3_prefetch_bucket_size;
    std::optional<std::int64_t> zero3_max_live_parameters;
    bool operator==(const StrategyConfig &) const = default;
};

// The runtime reserve: one figure (runtime_reserve_bytes), or its parts
// modelled from the plan (core/model/runtimereserve.h: the CUDA context, the
// cuBLAS workspace, each NCCL communicator's buffers).
enum class RuntimeReserveMode { Bytes, Modelled };

// Defaults: the H100-SXM-80GB built-in (presets/hardware/H100-SXM-80GB.json).
struct HardwareConfig
{
    std::string name = "H100-SXM-80GB";
    Bytes hbm_bytes = 85899345920; // 80 GiB
    Bytes runtime_reserve_bytes = 2000000000; // the reserve under runtime_reserve "bytes"
    RuntimeReserveMode runtime_reserve = RuntimeReserveMode::Bytes;
    // The parts under runtime_reserve "modelled" (docs/accounting.md, "Runtime"):
    // the CUDA context with every kernel PyTorch's libraries load (PyTorch PR
    // #86509: 666,632,192 B eager less its one 20 MiB allocator segment), the
    // cuBLAS workspace PyTorch keeps per handle and stream (CUBLAS_WORKSPACE_CONFIG
    // ":4096:8", Hopper and later), and the channels NCCL opens per communicator.
    Bytes cuda_context_bytes = 645660672;
    Bytes cublas_workspace_bytes = 33554432;
    std::int64_t nccl_channels = 16;
    Bytes host_bytes = 274877906944; // 256 GiB per GPU
    Bytes nvme_bytes = 3840000000000;
    double hbm_bytes_per_s = 3.35e12;
    double host_link_bytes_per_s = 50e9; // per direction, PCIe 5.0 x16 effective
    double nvlink_bytes_per_s = 450e9; // per direction
    double network_bytes_per_s = 50e9; // per direction
    double nvme_bytes_per_s = 3.5e9;
    double peak_bf16_flops = 989e12; // dense
    double peak_fp8_flops = 1979e12; // dense; 0: no FP8 tensor cores (A100)
    // Blackwell-class tensor cores: MX block-scaled FP8 GEMMs, and FP8
    // operands read column-wise without a transposed copy (TE docs).
    bool mx_tensor_cores = false;
    // Achieved fractions of the peaks above, by operation size (core/config/efficiency.h);
    // the time model's calibration, documented per preset in presets/README.md.
    EfficiencyTable gemm_efficiency = {{1e9, 0.32}, {1e10, 0.50}, {1e11, 0.58}, {1e12, 0.60}}; // by GEMM FLOPs
    EfficiencyTable hbm_efficiency = {{1e5, 0.20}, {1e6, 0.50}, {1e7, 0.75}, {1e8, 0.85}}; // by bytes one kernel moves
    EfficiencyTable nvlink_efficiency
        = {{1e5, 0.05}, {1e6, 0.30}, {1e7, 0.65}, {1e8, 0.78}}; // bus bandwidth by message
    EfficiencyTable network_efficiency = {{1e5, 0.10}, {1e6, 0.40}, {1e7, 0.75}, {1e8, 0.90}};
    double collective_latency_s = 10e-6; // added to every collective and pipeline send
    double kernel_launch_s = 4e-6; // per kernel: what small micro-batches cannot hide
    // GPUs of one NVLink domain (a node): ranks closer than this in Megatron's
    // order talk over NVLink, others over the network.
    std::int64_t gpus_per_node = 8;
    // Offloaded optimizer step on the host: ZeRO-Offload's CPU-Adam, 0.25 s per
    // billion parameters (Ren et al. 2021, Table 4).
    double cpu_adam_params_per_s = 4e9;
    bool operator==(const HardwareConfig &) const = default;
};

struct Config
{
    std::string name = "untitled";
    std::string description;
    ModelConfig model;
    TrainingConfig training;
    ParallelismConfig parallelism;
    StrategyConfig strategy;
    HardwareConfig hardware;
    std::optional<InferenceConfig> inference; // absent: not written back; serving uses the defaults

    std::int64_t globalBatch() const;
    std::int64_t microBatches() const; // per iteration, per data-parallel rank
    bool operator==(const Config &) const = default;
};

// The inference section with its defaults applied (context_length: training.seq_length).
InferenceConfig resolvedInference(const Config &config);

// The layers of one virtual pipeline stage: [first, first + count)
// (stageLayers in core/schedule/stagelayers.h lays them out).
struct StageLayers
{
    std::int64_t first = 0;
    std::int64_t count = 0;
};

// Names used in the preset format, both ways.
std::string_view normalizationName(Normalization);
std::string_view positionEmbeddingName(PositionEmbedding);
std::string_view optimizerName(Optimizer);
std::string_view muonNewtonSchulzName(MuonNewtonSchulz);
std::string_view scheduleName(PipelineSchedule);
std::string_view granularityName(RecomputeGranularity);
std::string_view methodName(RecomputeMethod);
std::string_view dropoutMaskName(DropoutMaskDtype);
std::string_view normStatsName(NormStatsDtype);
std::string_view spLinearSavesName(SpLinearSaves);
std::string_view gqaKvName(GqaKv);
std::string_view moeProbsName(MoeProbs);
std::string_view moeDispatcherName(MoeDispatcher);
std::string_view deferredWgradGradName(DeferredWgradGrad);
std::string_view offloadName(OffloadTarget);
std::string_view gradBufferName(GradBuffer);
std::string_view crossEntropyName(CrossEntropy);
std::string_view optimizerKernelName(OptimizerKernel);
std::string_view tensorFateName(TensorFate);
std::string_view quantScaleName(QuantScale);
std::string_view fp8RecipeName(Fp8Recipe);
std::string_view fp8ImplementationName(Fp8Implementation);
std::string_view activationBalanceName(ActivationBalance);
std::string_view runtimeReserveModeName(RuntimeReserveMode); // "bytes", "modelled"
std::string_view frameworkName(Framework);
std::string_view normKernelName(NormKernel);
std::string_view swigluKernelName(SwigluKernel);
std::string_view softmaxDtypeName(SoftmaxDtype);
std::string_view cpCommTypeName(CpCommType);

} // namespace memledger
