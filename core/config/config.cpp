// SPDX-License-Identifier: MIT
#include "core/config/config.h"

#include <algorithm>

namespace memledger {

bool ModelConfig::isMoeLayer(std::int64_t layer) const
{
    if (num_experts <= 0)
        return false;
    // The multi-token prediction modules' layers follow the decoder's: each is
    // built from the last layer's spec (Megatron-LM's get_gpt_mtp_block_spec).
    if (layer >= num_layers && num_layers > 0)
        layer = num_layers - 1;
    if (!moe_layer_pattern.empty())
        return layer < static_cast<std::int64_t>(moe_layer_pattern.size()) && moe_layer_pattern[layer] != 0;
    if (layer < first_k_dense_replace)
        return false;
    const std::int64_t freq = moe_layer_freq > 0 ? moe_layer_freq : 1;
    return (layer - first_k_dense_replace) % freq == 0;
}

PipelineSchedule ParallelismConfig::schedule() const
{
    if (pipeline_schedule)
        return *pipeline_schedule;
    return virtual_pipeline_model_parallel_size > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB;
}

std::int64_t ParallelismConfig::pipelineStages() const
{
    const std::int64_t p = pipeline_model_parallel_size;
    return schedule() == PipelineSchedule::DualPipe ? p : p * virtual_pipeline_model_parallel_size;
}

InferenceConfig resolvedInference(const Config &config)
{
    InferenceConfig i = config.inference.value_or(InferenceConfig{});
    if (!i.context_length)
        i.context_length = config.training.seq_length;
    return i;
}

std::int64_t Config::globalBatch() const
{
    if (training.global_batch_size > 0)
        return training.global_batch_size;
    return training.micro_batch_size * parallelism.data_parallel_size * parallelism.pipeline_model_parallel_size;
}

std::int64_t Config::microBatches() const
{
    const std::int64_t per = training.micro_batch_size * parallelism.data_parallel_size;
    return per > 0 ? globalBatch() / per : 0;
}

std::string_view normalizationName(Normalization n)
{
    return n == Normalization::RMSNorm ? "RMSNorm" : "LayerNorm";
}

std::string_view positionEmbeddingName(PositionEmbedding p)
{
    switch (p) {
    case PositionEmbedding::LearnedAbsolute:
        return "learned_absolute";
    case PositionEmbedding::Rope:
        return "rope";
    case PositionEmbedding::None:
        return "none";
    case PositionEmbedding::Alibi:
        return "alibi";
    }
    return "rope";
}

std::string_view optimizerName(Optimizer o)
{
    switch (o) {
    case Optimizer::Adam:
        return "adam";
    case Optimizer::AdamW:
        return "adamw";
    case Optimizer::SGD:
        return "sgd";
    case Optimizer::Adafactor:
        return "adafactor";
    case Optimizer::Adam8bit:
        return "adam8bit";
    case Optimizer::Muon:
        return "muon";
    }
    return "adam";
}

std::string_view muonNewtonSchulzName(MuonNewtonSchulz m)
{
    return m == MuonNewtonSchulz::LayerWise ? "layer_wise" : "redundant";
}

std::string_view scheduleName(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::GPipe:
        return "gpipe";
    case PipelineSchedule::OneFOneB:
        return "1f1b";
    case PipelineSchedule::Interleaved:
        return "interleaved";
    case PipelineSchedule::ZbH1:
        return "zb-h1";
    case PipelineSchedule::ZbH2:
        return "zb-h2";
    case PipelineSchedule::ZbV:
        return "zb-v";
    case PipelineSchedule::DualPipe:
        return "dualpipe";
    case PipelineSchedule::DualPipeV:
        return "dualpipev";
    }
    return "1f1b";
}

std::string_view granularityName(RecomputeGranularity g)
{
    switch (g) {
    case RecomputeGranularity::None:
        return "none";
    case RecomputeGranularity::Selective:
        return "selective";
    case RecomputeGranularity::Full:
        return "full";
    case RecomputeGranularity::SelectiveOp:
        return "selective_op";
    }
    return "none";
}

std::string_view methodName(RecomputeMethod m)
{
    return m == RecomputeMethod::Block ? "block" : "uniform";
}

std::string_view dropoutMaskName(DropoutMaskDtype d)
{
    return d == DropoutMaskDtype::Activation ? "activation" : "bool";
}

std::string_view normStatsName(NormStatsDtype n)
{
    switch (n) {
    case NormStatsDtype::FP32:
        return "fp32";
    case NormStatsDtype::Activation:
        return "activation";
    case NormStatsDtype::None:
        return "none";
    }
    return "fp32";
}

std::string_view gqaKvName(GqaKv g)
{
    return g == GqaKv::Repeated ? "repeated" : "grouped";
}

std::string_view moeProbsName(MoeProbs m)
{
    switch (m) {
    case MoeProbs::Activation:
        return "activation";
    case MoeProbs::Output:
        return "output";
    case MoeProbs::OutputFp32:
        return "output_fp32";
    }
    return "activation";
}

std::string_view moeDispatcherName(MoeDispatcher d)
{
    return d == MoeDispatcher::DeepEP ? "deepep" : "alltoall";
}

std::string_view deferredWgradGradName(DeferredWgradGrad d)
{
    return d == DeferredWgradGrad::FP8 ? "fp8" : "activation";
}

std::string_view spLinearSavesName(SpLinearSaves s)
{
    return s == SpLinearSaves::Gathered ? "gathered" : "shard";
}

std::string_view offloadName(OffloadTarget o)
{
    switch (o) {
    case OffloadTarget::None:
        return "none";
    case OffloadTarget::CPU:
        return "cpu";
    case OffloadTarget::NVMe:
        return "nvme";
    }
    return "none";
}

std::string_view gradBufferName(GradBuffer g)
{
    return g == GradBuffer::OnDemand ? "on_demand" : "contiguous";
}

std::string_view crossEntropyName(CrossEntropy e)
{
    switch (e) {
    case CrossEntropy::Unfused:
        return "unfused";
    case CrossEntropy::LossParallel:
        return "loss_parallel";
    case CrossEntropy::VocabParallel:
        break;
    }
    return "vocab_parallel";
}

std::string_view optimizerKernelName(OptimizerKernel k)
{
    switch (k) {
    case OptimizerKernel::Fused:
        return "fused";
    case OptimizerKernel::Foreach:
        return "foreach";
    case OptimizerKernel::SingleTensor:
        return "single_tensor";
    }
    return "fused";
}

std::string_view tensorFateName(TensorFate f)
{
    switch (f) {
    case TensorFate::Store:
        return "store";
    case TensorFate::Recompute:
        return "recompute";
    case TensorFate::Offload:
        return "offload";
    case TensorFate::QuantizeFp8:
        return "quantize_fp8";
    case TensorFate::QuantizeFp8Offload:
        return "quantize_fp8+offload";
    case TensorFate::QuantizeE5M6:
        return "quantize_e5m6";
    }
    return "store";
}

std::string_view quantScaleName(QuantScale s)
{
    return s == QuantScale::E8M0 ? "e8m0" : "fp32";
}

std::string_view fp8RecipeName(Fp8Recipe r)
{
    switch (r) {
    case Fp8Recipe::None:
        return "none";
    case Fp8Recipe::Delayed:
        return "delayed";
    case Fp8Recipe::Tensorwise:
        return "tensorwise";
    case Fp8Recipe::MXFP8:
        return "mxfp8";
    case Fp8Recipe::Blockwise:
        return "blockwise";
    }
    return "none";
}

std::string_view fp8ImplementationName(Fp8Implementation i)
{
    return i == Fp8Implementation::Torchao ? "torchao" : "transformer_engine";
}

std::string_view activationBalanceName(ActivationBalance b)
{
    return b == ActivationBalance::Auto ? "auto" : "none";
}

std::string_view runtimeReserveModeName(RuntimeReserveMode m)
{
    return m == RuntimeReserveMode::Modelled ? "modelled" : "bytes";
}

std::string_view normKernelName(NormKernel k)
{
    return k == NormKernel::Eager ? "eager" : "fused";
}

std::string_view swigluKernelName(SwigluKernel k)
{
    return k == SwigluKernel::Eager ? "eager" : "fused";
}

std::string_view softmaxDtypeName(SoftmaxDtype d)
{
    return d == SoftmaxDtype::FP32 ? "fp32" : "activation";
}

std::string_view cpCommTypeName(CpCommType c)
{
    return c == CpCommType::AllGather ? "all_gather" : c == CpCommType::A2A ? "a2a" : "p2p";
}

std::string_view frameworkName(Framework f)
{
    switch (f) {
    case Framework::Megatron:
        return "megatron";
    case Framework::Torchtitan:
        return "torchtitan";
    case Framework::DeepSpeed:
        return "deepspeed";
    case Framework::HF:
        return "hf";
    }
    return "megatron";
}

} // namespace memledger
