// SPDX-License-Identifier: MIT
#include "core/config/framework.h"

#include <array>

namespace memledger {

namespace {

#define MEMLEDGER_KNOB(section, field)                                                                                 \
    FrameworkKnob                                                                                                      \
    {                                                                                                                  \
#section "." #field, [](Config &to, const Config &from) { to.section.field = from.section.field; },            \
            [](const Config &a, const Config &b) { return a.section.field == b.section.field; }       \
    }

// Each framework's values, read from its source (the sentences below cite it).
Config makeProfile(Framework framework)
{
    Config c; // Megatron-LM's: the defaults of config.h
    c.strategy.framework = framework;
    switch (framework) {
    case Framework::Megatron:
        break;
    case Framework::Torchtitan:
        c.training.fp32_params = true;
        c.strategy.norm_kernel = NormKernel::Eager;
        c.strategy.swiglu_kernel = SwigluKernel::Eager;
        c.strategy.cross_entropy = CrossEntropy::LossParallel;
        c.strategy.grad_buffer = GradBuffer::OnDemand;
        c.strategy.gradient_accumulation_fusion = false;
        c.strategy.optimizer_kernel = OptimizerKernel::Fused;
        c.strategy.cp_comm_type = CpCommType::AllGather;
        c.strategy.sp_linear_saves = SpLinearSaves::Gathered;
        c.strategy.gqa_kv = GqaKv::Repeated;
        c.strategy.moe_apply_probs = MoeProbs::OutputFp32;
        c.strategy.allocator.expandable_segments = true;
        c.strategy.fp8_implementation = Fp8Implementation::Torchao;
        break;
    case Framework::DeepSpeed:
        c.strategy.norm_kernel = NormKernel::Eager;
        c.strategy.swiglu_kernel = SwigluKernel::Eager;
        c.strategy.softmax_dtype = SoftmaxDtype::FP32;
        c.strategy.cp_comm_type = CpCommType::A2A;
        c.strategy.cross_entropy = CrossEntropy::Unfused;
        c.strategy.gradient_accumulation_fusion = false;
        c.strategy.optimizer_kernel = OptimizerKernel::Fused;
        c.strategy.ddp_bucket_size = 500000000;
        c.strategy.zero3_prefetch_bucket_size = 50000000; // deepspeed/runtime/zero/config.py defaults
        c.strategy.zero3_max_live_parameters = 1000000000;
        c.strategy.sp_linear_saves = SpLinearSaves::Gathered;
        c.strategy.gqa_kv = GqaKv::Repeated;
        c.strategy.moe_apply_probs = MoeProbs::Output;
        break;
    case Framework::HF:
        c.training.fp32_params = true;
        c.strategy.norm_kernel = NormKernel::Eager;
        c.strategy.swiglu_kernel = SwigluKernel::Eager;
        c.strategy.softmax_dtype = SoftmaxDtype::FP32;
        c.strategy.cp_comm_type = CpCommType::AllGather;
        c.strategy.cross_entropy = CrossEntropy::Unfused;
        c.strategy.grad_buffer = GradBuffer::OnDemand;
        c.strategy.gradient_accumulation_fusion = false;
        c.strategy.optimizer_kernel = OptimizerKernel::Foreach;
        c.strategy.ddp_bucket_size = 25 * 1024 * 1024 / 4; // DDP's bucket_cap_mb=25 of fp32 gradients
        c.strategy.sp_linear_saves = SpLinearSaves::Gathered;
        c.strategy.gqa_kv = GqaKv::Repeated;
        c.strategy.moe_apply_probs = MoeProbs::Output;
        break;
    }
    return c;
}

// What the framework's code does for knob `k` (an index of frameworkKnobs()).
std::string_view behaviour(Framework framework, std::size_t k)
{
    using Row = std::array<std::string_view, 17>;
    static constexpr Row kMegatron = {
        "a 16-bit copy of the weights beside the fp32 master weights of Megatron-LM's mixed-precision optimizer",
        "Megatron-LM's vocabulary-parallel cross entropy, whose backward reuses its softmax in place",
        "Megatron-LM's contiguous gradient buffer (DistributedDataParallel's param_and_grad_buffer)",
        "weight gradients accumulated by the GEMM straight into main_grad (--gradient-accumulation-fusion)",
        "Apex / Transformer Engine FusedAdam: the step allocates nothing",
        "Megatron-LM's gradient buckets of 40 M elements",
        "Apex / Transformer Engine fused RMSNorm: its input and an fp32 rstd per token",
        "Megatron-LM's fused bias_swiglu: gate and up, SiLU recomputed in the backward",
        "the fused scale-mask-softmax: its 16-bit output",
        "--cp-comm-type p2p (its default): Transformer Engine's ring of K and V chunks",
        "its sharded parameters gathered a layer at a time, the next prefetched",
        "no limit on live gathered parameters",
        "LinearWithGradAccumulationAndAsyncCommunication saves the sequence-sharded input and all-gathers it "
        "again in backward",
        "Transformer Engine's attention reads the key/value groups itself",
        "the routing probabilities applied in the experts' activation (weighted_bias_swiglu, since core 0.13's "
        "memory-efficient token permutation): the unpermute saves no expert output",
        "PyTorch's default caching allocator (its launch examples set no PYTORCH_CUDA_ALLOC_CONF)",
        "FP8 through Transformer Engine's modules (--fp8-format): FP8 linear inputs saved and each FP8 weight cached "
        "for the iteration"};
    static constexpr Row kTorchtitan = {
        "FSDP2's MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): the fp32 parameter is the master "
        "and is cast to bf16 as it is all-gathered (torchtitan distributed/fsdp.py)",
        "torchtitan's cross_entropy_loss: F.cross_entropy on the logits cast to fp32, under TP inside PyTorch's "
        "loss_parallel() (ParallelDims.loss_parallel_enabled: tp > 1 unless disable_loss_parallel)",
        "gradients made by autograd in backward, reduce-scattered by FSDP2 into sharded fp32 .grad, set to None "
        "by zero_grad",
        "autograd's weight gradients (no fused accumulation)",
        "torchtitan's optimizer implementation \"fused\" (torch.optim.AdamW(fused=True))",
        "FSDP2 reduce-scatters each block's gradients (no buckets)",
        "RMSNorm in PyTorch ops (torchtitan's RMSNorm of its 2024 benchmarks, x.float() * rsqrt(...)): the fp32 copy, "
        "rstd and the normalised bf16 x",
        "w2(F.silu(w1(x)) * w3(x)) in eager ops: F.silu's output kept beside gate and up",
        "SDPA only; an unfused softmax stays in the activation dtype",
        "context_parallel_rotate_method \"allgather\" (its default): PyTorch's context_parallel gathers the whole "
        "sequence's K and V",
        "FSDP2 gathers a block at a time and prefetches the next",
        "no limit on live gathered parameters",
        "its TP plan's PrepareModuleInput(desired_input_layouts=Replicate()) all-gathers a block's attention and "
        "feed-forward inputs (and ColwiseParallel the output layer's) before nn.Linear, which saves the gathered "
        "input (torchtitan parallelize_llama.py)",
        "repeat_kv copies K and V to every head before F.scaled_dot_product_attention, which saves the copies "
        "(torchtitan models/llama/model.py)",
        "the token dispatcher's combine casts the expert outputs to fp32 and multiplies them by their scores, "
        "which saves every fp32 copy (torchtitan models/common/token_dispatcher.py)",
        "expandable segments: torchtitan's launcher (run_train.sh, run_llama_train.sh in 2024) sets "
        "PYTORCH_CUDA_ALLOC_CONF=\"expandable_segments:True\"",
        "Float8 through torchao's Float8Linear (torchtitan's float8 converter swaps every nn.Linear but the output "
        "layer): the high-precision input and weight saved and cast again in backward"};
    static constexpr Row kDeepSpeed
        = {"16-bit parameters with the fp32 master partition in DeepSpeed's ZeRO optimizer",
           "the Hugging Face model's loss on logits cast to fp32",
           "contiguous_gradients (DeepSpeed's default): gradients copied into one contiguous partition buffer",
           "autograd's weight gradients (no fused accumulation)",
           "DeepSpeed's FusedAdam (multi-tensor apply: the step allocates nothing)",
           "reduce_bucket_size's default of 5e8 elements",
           "the Hugging Face model's LlamaRMSNorm in PyTorch ops: the fp32 copy, rstd and the normalised 16-bit x",
           "the Hugging Face model's LlamaMLP: act_fn(gate_proj(x)) * up_proj(x), SiLU's output kept",
           "eager attention's softmax(dtype=torch.float32).to(dtype): both outputs kept",
           "DeepSpeed-Ulysses sequence parallelism: all-to-alls of q, k, v and the output",
           "stage3_prefetch_bucket_size's default of 5e7 elements prefetched beside the module running",
           "stage3_max_live_parameters' default of 1e9 gathered elements at most",
           "DeepSpeed's AutoTP has no sequence-parallel linears: a sequence-split input is gathered before a plain "
           "nn.Linear, which saves it whole",
           "the Hugging Face model's repeat_kv copies K and V to every head before the attention",
           "DeepSpeed MoE's combine einsum of the combine weights and the expert outputs, which saves every expert "
           "output (deepspeed/moe/sharded_moe.py)",
           "PyTorch's default caching allocator (the deepspeed launcher sets no PYTORCH_CUDA_ALLOC_CONF)",
           "FP8 through Transformer Engine's modules, which DeepSpeed runs FP8 with"};
    static constexpr Row kHF = {
        "Trainer(bf16=True): an fp32 model run under torch.autocast, which casts bf16 copies of the weights as "
        "each layer runs",
        "transformers' ForCausalLMLoss: F.cross_entropy on the logits upcast to fp32",
        "autograd's .grad, allocated at the first backward and set to None by zero_grad",
        "autograd's weight gradients (no fused accumulation)",
        "Trainer's default optim \"adamw_torch\": torch.optim.AdamW, foreach on CUDA",
        "PyTorch DDP's bucket_cap_mb=25 (6,553,600 fp32 gradients)",
        "LlamaRMSNorm in PyTorch ops (hidden_states.to(torch.float32), variance, rsqrt): the fp32 copy, rstd and the "
        "normalised 16-bit x",
        "LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)), SiLU's output kept beside gate and up",
        "eager_attention_forward's softmax(dtype=torch.float32).to(query.dtype): the fp32 softmax and its 16-bit cast "
        "kept",
        "accelerate's context parallelism: PyTorch's context_parallel, which gathers the whole sequence's K and V",
        "accelerate's FSDP gathers a decoder layer at a time and prefetches the next",
        "no limit on live gathered parameters",
        "transformers' tensor-parallel plans are DTensor's ColwiseParallel / SequenceParallel styles: the input is "
        "gathered before nn.Linear, which saves it whole",
        "repeat_kv copies K and V to every head before the attention (sdpa and eager alike)",
        "the MoE block's expert_layer(x) * routing_weights, which saves every expert output (transformers' "
        "Mixtral and DeepSeek-V3 modeling)",
        "PyTorch's default caching allocator (Trainer and accelerate launch set no PYTORCH_CUDA_ALLOC_CONF)",
        "accelerate's FP8 through Transformer Engine (its backend \"te\"; unasked, accelerate prefers MS-AMP when "
        "installed, which is not modelled)"};
    switch (framework) {
    case Framework::Megatron:
        return kMegatron[k];
    case Framework::Torchtitan:
        return kTorchtitan[k];
    case Framework::DeepSpeed:
        return kDeepSpeed[k];
    case Framework::HF:
        return kHF[k];
    }
    return {};
}

// The four profiles, built once: the ledger's choices read them on every evaluation.
const Config &profile(Framework framework)
{
    static const std::array<Config, 4> kProfiles
        = {makeProfile(Framework::Megatron), makeProfile(Framework::Torchtitan), makeProfile(Framework::DeepSpeed),
           makeProfile(Framework::HF)};
    return kProfiles[static_cast<std::size_t>(framework)];
}

std::string_view frameworkTitle(Framework framework)
{
    switch (framework) {
    case Framework::Megatron:
        return "Megatron-LM";
    case Framework::Torchtitan:
        return "torchtitan";
    case Framework::DeepSpeed:
        return "DeepSpeed";
    case Framework::HF:
        return "Hugging Face";
    }
    return {};
}

} // namespace

const std::vector<FrameworkKnob> &frameworkKnobs()
{
    // The order of the sentences in behaviour().
    static const std::vector<FrameworkKnob> kKnobs = {
        MEMLEDGER_KNOB(training, fp32_params),
        MEMLEDGER_KNOB(strategy, cross_entropy),
        MEMLEDGER_KNOB(strategy, grad_buffer),
        MEMLEDGER_KNOB(strategy, gradient_accumulation_fusion),
        MEMLEDGER_KNOB(strategy, optimizer_kernel),
        MEMLEDGER_KNOB(strategy, ddp_bucket_size),
        MEMLEDGER_KNOB(strategy, norm_kernel),
        MEMLEDGER_KNOB(strategy, swiglu_kernel),
        MEMLEDGER_KNOB(strategy, softmax_dtype),
        MEMLEDGER_KNOB(strategy, cp_comm_type),
        MEMLEDGER_KNOB(strategy, zero3_prefetch_bucket_size),
        MEMLEDGER_KNOB(strategy, zero3_max_live_parameters),
        MEMLEDGER_KNOB(strategy, sp_linear_saves),
        MEMLEDGER_KNOB(strategy, gqa_kv),
        MEMLEDGER_KNOB(strategy, moe_apply_probs),
        MEMLEDGER_KNOB(strategy, allocator.expandable_segments),
        MEMLEDGER_KNOB(strategy, fp8_implementation),
    };
    return kKnobs;
}

#undef MEMLEDGER_KNOB

Config withFrameworkDefaults(Config config, Framework framework)
{
    const Config &p = profile(framework);
    for (const FrameworkKnob &k : frameworkKnobs())
        k.copy(config, p);
    config.strategy.framework = framework;
    return config;
}

std::vector<std::string> frameworkChoices(const Config &config)
{
    const Framework f = config.strategy.framework;
    const Config &p = profile(f);
    std::vector<std::string> out;
    const std::vector<FrameworkKnob> &knobs = frameworkKnobs();
    for (std::size_t k = 0; k < knobs.size(); ++k) {
        if (knobs[k].same(config, p)) {
            out.push_back(std::string(knobs[k].name) + ": " + std::string(behaviour(f, k)) + " ("
                          + std::string(frameworkTitle(f)) + "'s default)");
            continue;
        }
        // Set by the preset: say whose behaviour the value is, where a framework's default it is.
        std::string whose;
        for (Framework other : {Framework::Megatron, Framework::Torchtitan, Framework::DeepSpeed, Framework::HF})
            if (other != f && knobs[k].same(config, profile(other))) {
                whose = ", as " + std::string(frameworkTitle(other)) + ": " + std::string(behaviour(other, k));
                break;
            }
        out.push_back(std::string(knobs[k].name) + ": set by the plan, not " + std::string(frameworkTitle(f))
                      + "'s default" + whose);
    }
    return out;
}

bool fsdpFramework(Framework framework)
{
    return framework == Framework::Torchtitan || framework == Framework::HF;
}

bool fsdpPerBlock(const Config &config)
{
    return config.parallelism.zero_stage >= 3 && fsdpFramework(config.strategy.framework);
}

bool fsdpReshardAfterForward(const Config &config)
{
    if (config.strategy.fsdp_reshard_after_forward)
        return *config.strategy.fsdp_reshard_after_forward;
    return !(config.strategy.framework == Framework::Torchtitan && config.parallelism.pipeline_model_parallel_size > 1);
}

bool fsdpKeepsGathered(const Config &config)
{
    return fsdpPerBlock(config)
           && (!fsdpReshardAfterForward(config) || config.parallelism.pipeline_model_parallel_size > 1);
}

} // namespace memledger
