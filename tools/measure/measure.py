#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Train small Megatron-style GPT and framework-style Llama models on the CPU and
record their memory.

For each run this writes, under tests/data/measured/<run>/:

  snapshot.pickle.gz  the allocator stream in the layout of
                      torch.cuda.memory._snapshot() (PyTorch 2.x)
  trace.json.gz       the same allocations as a Kineto Chrome trace
                      (torch.profiler ... export_chrome_trace())
  preset.json         a MemLedger preset describing the same training
  measured.json       figures replayed here, independently of MemLedger

Debian's python3-torch (1.13) has no Kineto and no CUDA, so neither file can
be written by PyTorch itself. The allocations are real: they come from the
CPU allocator as torch.autograd.profiler.profile(profile_memory=True) sees
them (every allocation and free with its address, size and op), and this
script lays them out the way PyTorch 2.x and Kineto would. See README.md.

Run with /usr/bin/python3 (Debian's interpreter, which has torch):

    /usr/bin/python3 tools/measure/measure.py [--out DIR] [--only RUN ...]
"""

import argparse
import gzip
import json
import math
import os
import pickle
import subprocess
import sys
import time
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
from torch.autograd.profiler import profile, record_function
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

SCRIPT = os.path.basename(__file__)
MAX_FRAMES = 8

# ---------------------------------------------------------------------------
# The model: Megatron-LM's GPT layer, unfused, in Megatron's [s, b, h] layout
# (megatron/model/transformer.py ParallelTransformerLayer, ParallelAttention,
# CoreAttention, ParallelMLP; megatron/model/language_model.py Embedding).
# ---------------------------------------------------------------------------


class CoreAttention(nn.Module):
    """Scores, softmax, attention dropout and context: what Megatron's
    selective recompute checkpoints (CoreAttention under
    _checkpointed_attention_forward)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.dropout = nn.Dropout(cfg["attention_dropout"])

    def forward(self, q, k, v, mask):
        s, b, a, d = q.shape
        # [s, b, a, d] -> [b*a, s, d] as views, as Megatron's CoreAttention does.
        q = q.reshape(s, b * a, d).transpose(0, 1)
        k = k.reshape(s, b * a, d).transpose(0, 1)
        # Megatron calls baddbmm with beta=0 on an uninitialised buffer (older
        # versions torch.empty'd it per call, as here).
        buf = torch.empty(b * a, s, s, dtype=q.dtype)
        scores = torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0, alpha=1.0 / math.sqrt(d))
        scores = scores.view(b, a, s, s)
        # attention_mask_func: masked_fill_ in place (megatron/model/utils.py).
        scores.masked_fill_(mask, -10000.0)
        probs = F.softmax(scores, dim=-1)
        probs = self.dropout(probs)
        v = v.reshape(s, b * a, d).transpose(0, 1)
        context = torch.bmm(probs.view(b * a, s, s), v)
        context = context.view(b, a, s, d).permute(2, 0, 1, 3).contiguous()
        return context.view(s, b, a * d)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["h"]
        self.cfg = cfg
        self.query_key_value = nn.Linear(h, 3 * h)
        self.core = CoreAttention(cfg)
        self.dense = nn.Linear(h, h)

    def forward(self, x, mask):
        s, b, h = x.shape
        a = self.cfg["a"]
        d = h // a
        mixed = self.query_key_value(x).view(s, b, a, 3 * d)
        q, k, v = torch.split(mixed, d, dim=-1)
        if self.cfg["recompute"] == "selective":
            context = torch.utils.checkpoint.checkpoint(self.core, q, k, v, mask)
        else:
            context = self.core(q, k, v, mask)
        return self.dense(context)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["h"]
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["h"]
        self.input_layernorm = nn.LayerNorm(h)
        self.attention = Attention(cfg)
        self.hidden_dropout = nn.Dropout(cfg["hidden_dropout"])
        self.post_attention_layernorm = nn.LayerNorm(h)
        self.mlp = MLP(cfg)

    def forward(self, x, mask):
        # LayerNorm -> attention -> dropout -> residual; LayerNorm -> MLP ->
        # dropout -> residual (bias_dropout_add, unfused).
        x = x + self.hidden_dropout(self.attention(self.input_layernorm(x), mask))
        return x + self.hidden_dropout(self.mlp(self.post_attention_layernorm(x)))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, V, s = cfg["h"], cfg["V"], cfg["s"]
        self.cfg = cfg
        self.word_embeddings = nn.Embedding(V, h)
        self.position_embeddings = nn.Embedding(s, h)
        self.embedding_dropout = nn.Dropout(cfg["hidden_dropout"])
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg["L"])])
        self.final_layernorm = nn.LayerNorm(h)

    def forward(self, tokens, position_ids, labels, mask):
        # Embedding: word + position, to [s, b, h], dropout (language_model.py).
        x = self.word_embeddings(tokens) + self.position_embeddings(position_ids)
        x = x.transpose(0, 1).contiguous()
        x = self.embedding_dropout(x)
        for layer in self.layers:
            if self.cfg["recompute"] == "op":
                # torchtitan's per-op selective checkpointing of every block.
                x = selective_checkpoint(layer, x, rope)
            elif self.cfg["recompute"] == "full":
                # recompute_method 'uniform', recompute_num_layers 1: each layer
                # keeps its input only (Megatron's CheckpointFunction).
                x = torch.utils.checkpoint.checkpoint(layer, x, mask)
            else:
                x = layer(x, mask)
        x = self.final_layernorm(x)
        # Output layer tied to the word embedding (parallel_lm_logits), logits
        # cast to fp32 before the cross entropy (post_language_model_processing).
        logits = F.linear(x, self.word_embeddings.weight)
        losses = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.transpose(0, 1).reshape(-1),
                                 reduction="none")
        return losses.view(labels.shape[1], labels.shape[0]).transpose(0, 1).contiguous().mean()


# ---------------------------------------------------------------------------
# Llama-style models as the frameworks write them, in [b, s, h] layout.
# "titan": torchtitan's models/llama/model.py at 9dec370 (the commit of its
# published H100 benchmark): RMSNorm in PyTorch ops on x.float(), RoPE through
# view_as_complex, K and V repeated to every head (repeat_kv) before
# F.scaled_dot_product_attention, SwiGLU as w2(F.silu(w1(x)) * w3(x)).
# "hf": transformers' LlamaDecoderLayer with attn_implementation="eager":
# LlamaRMSNorm, rotate_half RoPE, repeat_kv, softmax(dtype=float32).to(dtype),
# LlamaMLP. torch 1.13 has no scaled_dot_product_attention: FlashSDPA below
# stands in for it with what the flash kernel saves (q, k, v, the output and
# an fp32 log-sum-exp per row) and recomputes the scores in its backward.
# ---------------------------------------------------------------------------


class FlashSDPA(torch.autograd.Function):
    """Causal attention with FlashAttention-2's memory (flash-attn's
    flash_api.cpp, mha_fwd / mha_bwd, which PyTorch's flash SDPA runs): the
    forward returns the output and an fp32 log-sum-exp per row and saves
    q, k, v, out and lse; the backward allocates dq, dk, dv, an fp32 dq
    accumulator and an fp32 row statistic (softmax_d). Scores exist one head
    at a time, as a tile would (the kernel never materialises them)."""

    @staticmethod
    def forward(ctx, q, k, v, stored, report):
        # stored: (out, lse) a selective checkpoint kept from the forward; the
        # recomputation saves them instead of running the kernel. report: a
        # list the forward appends (out, lse) to, for the checkpoint to keep.
        scale = 1.0 / math.sqrt(q.shape[-1])
        ctx.scale = scale
        if stored is not None:
            ctx.save_for_backward(q, k, v, *stored)
            return stored[0]
        b, a, s, _ = q.shape
        out = torch.empty_like(q)
        lse = torch.empty(b, a, s, dtype=torch.float32)
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        for i in range(b):
            for j in range(a):
                scores = torch.matmul(q[i, j].float(), k[i, j].float().t()) * scale
                scores.masked_fill_(mask, float("-inf"))
                lse[i, j] = torch.logsumexp(scores, dim=-1)
                probs = torch.exp(scores - lse[i, j].unsqueeze(-1))
                out[i, j] = torch.matmul(probs, v[i, j].float())
        ctx.save_for_backward(q, k, v, out, lse)
        if report is not None:
            report.append((out.detach(), lse))
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        b, a, s, d = q.shape
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        dq_accum = torch.zeros(b, a, s, d, dtype=torch.float32)
        softmax_d = torch.empty(b, a, s, dtype=torch.float32)
        dk, dv = torch.empty_like(k), torch.empty_like(v)
        for i in range(b):
            for j in range(a):
                softmax_d[i, j] = (dout[i, j].float() * out[i, j].float()).sum(-1)
                scores = torch.matmul(q[i, j].float(), k[i, j].float().t()) * ctx.scale
                scores.masked_fill_(mask, float("-inf"))
                probs = torch.exp(scores - lse[i, j].unsqueeze(-1))
                dv[i, j] = torch.matmul(probs.t(), dout[i, j].float())
                dprobs = torch.matmul(dout[i, j].float(), v[i, j].float().t())
                dscores = probs * (dprobs - softmax_d[i, j].unsqueeze(-1)) * ctx.scale
                dq_accum[i, j] = torch.matmul(dscores, k[i, j].float())
                dk[i, j] = torch.matmul(dscores.t(), q[i, j].float())
        return dq_accum.to(q.dtype), dk, dv, None, None


# ---------------------------------------------------------------------------
# torchtitan's per-op selective activation checkpointing (mode = "selective",
# selective_ac_option = "op"; torchtitan/parallelisms/parallelize_llama.py at
# 9dec370) as PyTorch 2.x runs it: torch.utils.checkpoint's non-reentrant
# checkpoint with create_selective_checkpoint_contexts(policy). torch 1.13 has
# neither the policy API nor 2.x's checkpoint frames; SelectiveCheckpoint
# below does what 2.x's torch/utils/checkpoint.py does, with the pieces 1.13
# has (saved_tensors_hooks, TorchDispatchMode):
# - forward: every tensor autograd saves is packed into an empty holder
#   (_checkpoint_without_reentrant's pack_hook); a dispatch mode
#   (_CachingTorchDispatchMode) stores the outputs of the ops the policy
#   marks MUST_SAVE, detached;
# - backward, at the first unpack: the block runs again under enable_grad
#   (_recomputation_hook); the dispatch mode (_CachedTorchDispatchMode) hands
#   back each stored output in order instead of running the op, every other
#   op runs again, each saved tensor goes to the holder of the same index,
#   and the recomputation stops once the last holder is filled (2.x's
#   early stop, on by default); an unpack hands its tensor over and drops it
#   from the frame.
# The policy is torchtitan's _custom_policy: save the outputs of aten.mm, the
# flash attention op, reduce-scatters, aten.abs and aten.max, except every
# second mm, counted separately in the forward and in the recomputation.
# FlashSDPA stands for aten._scaled_dot_product_flash_attention: one op to
# the policy, whose stored outputs are the attention output and log-sum-exp.
# ---------------------------------------------------------------------------

SAC_SAVE_LIST = {torch.ops.aten.mm.default, "flash_attention", torch.ops.aten.abs.default,
                 torch.ops.aten.max.default}


class _Holder:
    pass


class _StopRecompute(Exception):
    pass


class SelectiveCheckpoint(TorchDispatchMode):
    """One checkpointed call of a block: its frame and its dispatch mode."""

    active = None  # the frame whose forward or recomputation is running

    def __init__(self, fn, args):
        super().__init__()
        self.fn, self.args = fn, args
        self.storage = {}  # op -> outputs stored in the forward, in order
        self.holders = []  # weak references to the forward's holders, in order
        self.recomputed = weakref.WeakKeyDictionary()  # holder -> tensor
        self.recomputing = False
        self.done = False
        self.mm_count = {False: 0, True: 0}
        self.inside_kernel = False

    def keeps(self, op):
        if op == torch.ops.aten.mm.default:
            self.mm_count[self.recomputing] += 1
            return self.mm_count[self.recomputing] % 2 == 1
        return op in SAC_SAVE_LIST

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.inside_kernel or not self.keeps(func):
            return func(*args, **kwargs)
        if self.recomputing:
            return self.storage[func].pop(0)
        out = func(*args, **kwargs)
        self.storage.setdefault(func, []).append(tree_map(lambda t: t.detach() if torch.is_tensor(t) else t, out))
        return out

    def run(self):
        def pack(t):
            holder = _Holder()
            self.holders.append(weakref.ref(holder))
            return holder

        previous, SelectiveCheckpoint.active = SelectiveCheckpoint.active, self
        try:
            with torch.autograd.graph.saved_tensors_hooks(pack, self.unpack), self:
                return self.fn(*self.args)
        finally:
            SelectiveCheckpoint.active = previous

    def recompute(self):
        index = 0

        def pack(t):
            nonlocal index
            holder = self.holders[index]()
            index += 1
            if holder is not None:
                self.recomputed[holder] = t
            if index == len(self.holders):
                raise _StopRecompute()
            return None

        def unpack(_):
            raise RuntimeError("a recomputed tensor is unpacked only through its forward holder")

        args = [a.detach().requires_grad_(a.requires_grad) if torch.is_tensor(a) else a for a in self.args]
        self.recomputing = True
        previous, SelectiveCheckpoint.active = SelectiveCheckpoint.active, self
        try:
            with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, unpack), self:
                self.fn(*args)
        except RuntimeError as e:  # the hook's exception, wrapped where it crossed into C++
            if "_StopRecompute" not in str(e):
                raise
        finally:
            SelectiveCheckpoint.active = previous
        self.done = True

    def unpack(self, holder):
        if not self.done:
            self.recompute()
        return self.recomputed.pop(holder)


def selective_checkpoint(fn, *args):
    return SelectiveCheckpoint(fn, args).run()


def flash_sdpa(q, k, v):
    """F.scaled_dot_product_attention(q, k, v, is_causal=True) on the flash
    backend, one op to a selective checkpoint's policy: its stored outputs are
    the attention output and the log-sum-exp, and the recomputation builds the
    op's backward node from them instead of running the kernel again."""
    frame = SelectiveCheckpoint.active
    if frame is None or not frame.keeps("flash_attention"):
        return FlashSDPA.apply(q, k, v, None, None)
    if frame.recomputing:
        return FlashSDPA.apply(q, k, v, frame.storage["flash_attention"].pop(0), None)
    stored = []
    frame.inside_kernel = True  # the kernel's own ops are not ops to the policy
    try:
        out = FlashSDPA.apply(q, k, v, None, stored)
    finally:
        frame.inside_kernel = False
    frame.storage.setdefault("flash_attention", []).append(stored[0])
    return out


def repeat_kv(x, n_rep):
    bs, slen, n_kv, d = x.shape
    if n_rep == 1:
        return x
    return x.unsqueeze(3).expand(bs, slen, n_kv, n_rep, d).reshape(bs, slen, n_kv * n_rep, d)


def mean_last(x):
    """x.mean(-1, keepdim=True) as PyTorch 2.x differentiates it: its
    backward needs only the sizes (mean_backward on self.sym_numel()), where
    torch 1.13's MeanBackward1 saves its input; sum / n saves nothing."""
    return x.sum(-1, keepdim=True) / x.shape[-1]


class TitanRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(mean_last(x.pow(2)) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


class HFRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = mean_last(hidden_states.pow(2))
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, a, g = cfg["h"], cfg["a"], cfg["g"]
        self.cfg, self.a, self.g, self.d = cfg, a, g, h // a
        self.wq = nn.Linear(h, a * self.d, bias=False)
        self.wk = nn.Linear(h, g * self.d, bias=False)
        self.wv = nn.Linear(h, g * self.d, bias=False)
        self.wo = nn.Linear(a * self.d, h, bias=False)

    def forward(self, x, rope):
        bs, s, _ = x.shape
        xq = self.wq(x).view(bs, s, self.a, self.d)
        xk = self.wk(x).view(bs, s, self.g, self.d)
        xv = self.wv(x).view(bs, s, self.g, self.d)
        if self.cfg["flavor"] == "titan":
            freqs = rope["freqs_cis"].view(1, s, 1, self.d // 2)
            xq_ = torch.view_as_complex(xq.float().reshape(bs, s, self.a, -1, 2))
            xk_ = torch.view_as_complex(xk.float().reshape(bs, s, self.g, -1, 2))
            xq = torch.view_as_real(xq_ * freqs).flatten(3).type_as(x)
            xk = torch.view_as_real(xk_ * freqs).flatten(3).type_as(x)
            keys, values = repeat_kv(xk, self.a // self.g), repeat_kv(xv, self.a // self.g)
            out = flash_sdpa(xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2))
            out = out.transpose(1, 2).contiguous().view(bs, s, -1)
            return self.wo(out)
        # transformers' eager_attention_forward, [b, heads, s, d].
        q, k, v = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        cos, sin = rope["cos"], rope["sin"]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k.transpose(1, 2), self.a // self.g).transpose(1, 2), \
            repeat_kv(v.transpose(1, 2), self.a // self.g).transpose(1, 2)
        w = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(self.d))
        w = w + rope["causal"]
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        w = F.dropout(w, p=0.0, training=self.training)
        out = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(bs, s, -1)
        return self.wo(out)


class LlamaMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, f = cfg["h"], cfg["f"]
        self.w1 = nn.Linear(h, f, bias=False)
        self.w2 = nn.Linear(f, h, bias=False)
        self.w3 = nn.Linear(h, f, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        norm = TitanRMSNorm if cfg["flavor"] == "titan" else HFRMSNorm
        self.attention_norm = norm(cfg["h"])
        self.attention = LlamaAttention(cfg)
        self.ffn_norm = norm(cfg["h"])
        self.feed_forward = LlamaMLP(cfg)

    def forward(self, x, rope):
        h = x + self.attention(self.attention_norm(x), rope)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, V = cfg["h"], cfg["V"]
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(V, h)
        self.layers = nn.ModuleList([LlamaBlock(cfg) for _ in range(cfg["L"])])
        self.norm = (TitanRMSNorm if cfg["flavor"] == "titan" else HFRMSNorm)(h)
        self.output = nn.Linear(h, V, bias=False)  # untied, as Llama 3

    def forward(self, tokens, position_ids, labels, rope):
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            if self.cfg["recompute"] == "op":
                # torchtitan's per-op selective checkpointing of every block.
                x = selective_checkpoint(layer, x, rope)
            elif self.cfg["recompute"] == "full":
                # torchtitan's "full" mode and the Trainer's
                # gradient_checkpointing: each block keeps its input only.
                x = torch.utils.checkpoint.checkpoint(layer, x, rope)
            else:
                x = layer(x, rope)
        logits = self.output(self.norm(x))
        # torchtitan's loss_fn and transformers' ForCausalLMLoss: the logits
        # cast to fp32, F.cross_entropy.
        return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))


def rope_tables(cfg, dtype):
    """The RoPE tables each flavor builds once per forward (shared by layers)."""
    s, d = cfg["s"], cfg["h"] // cfg["a"]
    inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2).float() / d))
    freqs = torch.outer(torch.arange(s).float(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    causal = torch.full((s, s), float("-inf")).triu(1).to(dtype)
    return {"freqs_cis": torch.polar(torch.ones_like(freqs), freqs), "cos": emb.cos().to(dtype),
            "sin": emb.sin().to(dtype), "causal": causal}


# ---------------------------------------------------------------------------
# The two ways of training.
# ---------------------------------------------------------------------------


class MegatronStyle:
    """bf16 params, a contiguous fp32 main-grad buffer filled by hooks on the
    grad accumulators (megatron/model/distributed.py DistributedDataParallel:
    param.main_grad.add_(param.grad.data); param.grad = None), fp32 master
    weights and Adam states (megatron/optimizer/optimizer.py
    Float16OptimizerWithFloat16Params: step on the fp32 copies, copy back)."""

    def __init__(self, model):
        self.model = model.to(torch.bfloat16)
        self.params = [p for p in model.parameters() if p.requires_grad]
        numel = sum(p.numel() for p in self.params)
        self.grad_buffer = torch.zeros(numel, dtype=torch.float32)
        offset = 0
        self.grad_accs = []
        for p in self.params:
            p.main_grad = self.grad_buffer[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
            grad_acc = p.expand_as(p).grad_fn.next_functions[0][0]
            grad_acc.register_hook(self._hook(p))
            self.grad_accs.append(grad_acc)
        self.main_params = [p.detach().clone().float() for p in self.params]
        self.optimizer = torch.optim.AdamW(self.main_params, lr=1e-4, weight_decay=0.01)

    @staticmethod
    def _hook(param):
        def hook(*unused):
            if param.grad is not None:
                param.main_grad.add_(param.grad.data)
                param.grad = None
        return hook

    def zero_grad(self):
        # train_step: model.zero_grad_buffer(); optimizer.zero_grad(set_to_none=True)
        self.grad_buffer.zero_()
        for mp in self.main_params:
            mp.grad = None

    def step(self):
        for p, mp in zip(self.params, self.main_params):
            mp.grad = p.main_grad.float()  # already fp32: the buffer itself
        self.optimizer.step()
        with torch.no_grad():
            for p, mp in zip(self.params, self.main_params):
                p.copy_(mp)

    def grad_blocks(self):
        return {self.grad_buffer.data_ptr()}


class PlainFp32:
    """fp32 params with .grad, torch.optim.AdamW, zero_grad(set_to_none=True)
    right after the step."""

    def __init__(self, model):
        self.model = model
        self.params = list(model.parameters())
        self.main_params = []
        self.optimizer = torch.optim.AdamW(self.params, lr=1e-4, weight_decay=0.01)

    def zero_grad(self):
        pass

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def grad_blocks(self):
        return {p.grad.data_ptr() for p in self.params if p.grad is not None}


class PureBf16(PlainFp32):
    """PlainFp32's training with the model in bf16: bf16 parameters and .grad,
    torch.optim.AdamW with bf16 states, no master copy."""

    def __init__(self, model):
        super().__init__(model.to(torch.bfloat16))


# ---------------------------------------------------------------------------
# Running and recording.
# ---------------------------------------------------------------------------

SIZES = {
    "small": dict(L=2, h=128, a=4, s=64, b=2, V=512),
    "medium": dict(L=4, h=256, a=8, s=128, b=2, V=1024),
}
MODES = ("megatron", "plain")
RECOMPUTE = ("none", "selective", "full")
# Llama-style runs: L 2, h 256, 8 heads in 2 key/value groups, SwiGLU 688
# wide, s 128, b 2, V 1024; pure bf16 training (PureBf16).
LLAMA = dict(L=2, h=256, a=8, g=2, f=688, s=128, b=2, V=1024)
FLAVORS = ("titan", "hf")
LLAMA_RECOMPUTE = ("none", "full")
STEPS = 3  # ProfilerStep#0 is the warm-up (it creates the Adam states)


def run_names():
    return ([f"{size}-{mode}-{rc}" for size in SIZES for mode in MODES for rc in RECOMPUTE]
            + [f"llama-{flavor}-{rc}" for flavor in FLAVORS for rc in LLAMA_RECOMPUTE] + ["llama-titan-op"])


def train(cfg, mode, steps):
    """Builds and trains inside the profiler; returns (prof, facts)."""
    torch.manual_seed(1234)
    facts = {"steps": [], "weights": set(), "master": set(), "states": set(), "grads": {}, "persistent_inputs": set()}
    with profile(profile_memory=True, with_stack=True) as prof:
        llama = "flavor" in cfg
        model = Llama(cfg) if llama else GPT(cfg)
        trainer = (PureBf16(model) if llama else MegatronStyle(model) if mode == "megatron" else PlainFp32(model))
        model.train()
        b, s, V = cfg["b"], cfg["s"], cfg["V"]
        gen = torch.Generator().manual_seed(42)
        data = [torch.randint(0, V, (b, s + 1), generator=gen) for _ in range(steps)]
        batches = [(d[:, :-1].contiguous(), d[:, 1:].contiguous()) for d in data]
        mask = torch.triu(torch.ones(1, 1, s, s, dtype=torch.bool), diagonal=1)
        position_ids = torch.arange(s).unsqueeze(0).expand(b, s)
        if llama:
            mask = rope_tables(cfg, torch.bfloat16)
        for step in range(steps):
            tokens, labels = batches[step]
            t0 = time.perf_counter_ns()
            with record_function(f"ProfilerStep#{step}"):
                trainer.zero_grad()
                with record_function("forward"):
                    loss = model(tokens, position_ids, labels, mask)  # mask: the RoPE tables for Llama
                with record_function("backward"):
                    loss.backward()
                facts["grads"][step] = trainer.grad_blocks()
                with record_function("optimizer"):
                    trainer.step()
                del loss
            facts["steps"].append((time.perf_counter_ns() - t0) / 1e9)
        facts["weights"] = {p.data_ptr() for p in model.parameters()}
        facts["master"] = {p.data_ptr() for p in trainer.main_params}
        for st in trainer.optimizer.state.values():
            for v in st.values():
                if torch.is_tensor(v):
                    facts["states"].add(v.data_ptr())
        tables = list(mask.values()) if llama else [mask]
        facts["persistent_inputs"] = ({t.data_ptr() for pair in batches for t in pair} | {t.data_ptr() for t in tables}
                                      | {position_ids.data_ptr()})
    return prof, facts


def pyframe(node, child):
    """A snapshot frame {filename, line, name} for a Python call node; the line
    is where it was when it called `child` (the child's caller)."""
    cs = node.extra_fields.callsite
    line = cs.line_number
    if child is not None and hasattr(child.extra_fields, "caller"):
        line = child.extra_fields.caller.line_number
    return {"filename": cs.file_name, "line": int(line), "name": cs.function_name}


def collect(prof):
    """Every allocation node of the profiler's event tree, in time order, with
    its frames (innermost first) and the ranges of the record_functions."""
    events, ranges, ops = [], [], []

    def frames_of(node):
        frames, cpp_op, child = [], None, node
        p = node.parent
        while p is not None:
            kind = type(p.extra_fields).__name__
            if kind == "_ExtraFields_TorchOp":
                if cpp_op is None and p.name.startswith("aten::"):
                    cpp_op = p.name
                    frames.append({"filename": "??", "line": 0, "name": p.name})
                elif p.name.startswith("autograd::engine::evaluate_function"):
                    frames.append({"filename": "??", "line": 0, "name": p.name})
            elif kind == "_ExtraFields_PyCall" and not p.name.startswith("nn.Module:"):
                frames.append(pyframe(p, child))
            if kind in ("_ExtraFields_PyCall", "_ExtraFields_PyCCall"):
                child = p
            p = p.parent
        # Drop the driver frames below the training step (main, <module>, ...).
        keep = []
        for f in frames:
            keep.append(f)
            if f["filename"].endswith(SCRIPT) and f["name"] == "train":
                break
        return keep[:MAX_FRAMES], cpp_op

    def walk(node, depth_op):
        kind = type(node.extra_fields).__name__
        if kind == "_ExtraFields_Allocation":
            ef = node.extra_fields
            frames, op = frames_of(node)
            events.append(dict(t=node.start_time_ns, ptr=int(ef.ptr), size=int(ef.alloc_size),
                               total_allocated=int(ef.total_allocated), total_reserved=int(ef.total_reserved),
                               frames=frames, op=op or "python", tid=node.start_tid))
            return
        if kind == "_ExtraFields_TorchOp":
            if node.name.startswith("ProfilerStep#") or node.name in ("forward", "backward", "optimizer"):
                ranges.append(dict(name=node.name, start=node.start_time_ns, end=node.end_time_ns, tid=node.start_tid))
            elif not depth_op:
                ops.append(dict(name=node.name, start=node.start_time_ns, end=node.end_time_ns, tid=node.start_tid))
                depth_op = True
        for c in node.children:
            walk(c, depth_op)

    for root in prof.kineto_results.experimental_event_tree():
        walk(root, False)
    events.sort(key=lambda e: e["t"])
    ranges.sort(key=lambda r: r["start"])
    ops.sort(key=lambda r: r["start"])
    return events, ranges, ops


def classify(block, facts, phase_of, ranges_of_step):
    """What a block alive at the peak is: weights, master weights, optimizer
    states, gradients, saved activations (allocated in this step's forward),
    backward or optimizer temporaries, inputs, or other."""
    ptr = block["ptr"]
    if ptr in facts["weights"]:
        return "weights"
    if ptr in facts["master"]:
        return "master_weights"
    if ptr in facts["states"]:
        return "optimizer_states"
    if ptr in facts["persistent_inputs"]:
        return "inputs"
    all_grads = set().union(*facts["grads"].values()) if facts["grads"] else set()
    if block["t"] is None:
        return "gradients" if ptr in all_grads else "allocated_before_window"
    ph = phase_of(block["t"])
    if ph == "backward":
        # A .grad is allocated in backward and outlives it (addresses are
        # reused, so the address alone is not enough).
        step, bwd_end = ranges_of_step(block["t"])
        if ptr in facts["grads"].get(step, ()) and (block["free_t"] is None or block["free_t"] > bwd_end):
            return "gradients"
        return "backward_temporaries"
    if ph == "forward":
        return "saved_activations"
    if ph == "optimizer":
        return "optimizer_temporaries"
    return "other"


def replay(device_trace, segments):
    """MemoryViz.js process_alloc_data: alloc adds, free_completed removes,
    a free of an address never allocated in the window counts from the
    start, and so do segments' active_allocated blocks not allocated in the
    window. Returns (initial, curve[i] = allocated after event i)."""
    live = {}
    initial = 0
    for e in device_trace:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                del live[e["addr"]]
            else:
                initial += e["size"]
    for seg in segments:
        for blk in seg["blocks"]:
            if blk["state"] == "active_allocated" and blk["address"] not in live:
                initial += blk["requested_size"]
    total, curve = initial, []
    for e in device_trace:
        if e["action"] == "alloc":
            total += e["size"]
        elif e["action"] == "free_completed":
            total -= e["size"]
        curve.append(total)
    return initial, curve


def build(run, cfg, mode, outdir):
    t_start = time.perf_counter()
    prof, facts = train(cfg, mode, STEPS)
    events, ranges, ops = collect(prof)
    steps = [r for r in ranges if r["name"].startswith("ProfilerStep#")]
    win_start, win_end = steps[1]["start"], steps[-1]["end"]

    # State before the window, and the window's events.
    live_before = {}
    window = []
    for e in events:
        if e["t"] < win_start:
            if e["size"] > 0:
                live_before[e["ptr"]] = e
            else:
                live_before.pop(e["ptr"], None)
        elif e["t"] <= win_end:
            window.append(e)
    live_end = dict(live_before)
    for e in window:
        if e["size"] > 0:
            live_end[e["ptr"]] = e
        else:
            live_end.pop(e["ptr"], None)

    # --- snapshot.pickle.gz, as torch/csrc/cuda/memory_snapshot.cpp lays it out.
    frame_cache = {}

    def frames_obj(frames):
        # One shared list per distinct stack: pickle memoises it, as PyTorch's
        # symbolizer deduplicates tracebacks.
        key = tuple((f["filename"], f["line"], f["name"]) for f in frames)
        if key not in frame_cache:
            frame_cache[key] = [dict(filename=a, line=b, name=c) for a, b, c in key]
        return frame_cache[key]

    t0_us = win_start / 1e3

    def time_us(t_ns):
        # PyTorch writes microseconds since the epoch; a fixed origin at the
        # window's start keeps regenerated fixtures comparable.
        return int(round(t_ns / 1e3 - t0_us + 1.7e15))
    trace = []
    for e in window:
        trace.append({
            "action": "alloc" if e["size"] > 0 else "free_completed",
            "addr": e["ptr"],
            "size": abs(e["size"]),
            "stream": 0,
            "time_us": time_us(e["t"]),
            "frames": frames_obj(e["frames"]),
        })
    # The CPU allocator has no caching: each block is its own segment.
    segments = []
    for ptr, e in sorted(live_end.items()):
        blk = {"address": ptr, "size": e["size"], "requested_size": e["size"], "state": "active_allocated",
               "frames": frames_obj(e["frames"])}
        segments.append({
            "device": 0, "address": ptr, "total_size": e["size"], "allocated_size": e["size"],
            "active_size": e["size"], "requested_size": e["size"], "stream": 0,
            "segment_type": "large" if e["size"] > 1 << 20 else "small", "segment_pool_id": (0, 0),
            "is_expandable": False, "frames": frames_obj(e["frames"]), "blocks": [blk],
        })
    annotations = []
    for r in ranges:
        if win_start <= r["start"] <= win_end:
            annotations.append({"name": r["name"], "stage": "START", "device": 0, "time_us": time_us(r["start"])})
            annotations.append({"name": r["name"], "stage": "END", "device": 0, "time_us": time_us(r["end"])})
    annotations.sort(key=lambda a: a["time_us"])
    snapshot = {
        "segments": segments,
        "device_traces": [trace],
        "allocator_settings": {
            "PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
            "expandable_segments": False, "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
            "pinned_use_cuda_host_register": False, "roundup_power2_divisions": {},
        },
        "external_annotations": annotations,
    }
    os.makedirs(outdir, exist_ok=True)
    with gzip.GzipFile(os.path.join(outdir, "snapshot.pickle.gz"), "wb", mtime=0) as f:
        pickle.dump(snapshot, f, protocol=2)

    # --- trace.json.gz, as libkineto/src/output_json.cpp writes it.
    pid = 1000  # a fixed process id keeps fixtures comparable
    tid = 1001

    def ts(t_ns):
        rel = t_ns - win_start
        return f"{rel // 1000}.{rel % 1000:03d}"

    parts = []
    parts.append('{"name": "process_name", "ph": "M", "ts": 0.000, "pid": %d, "tid": 0, "args": {"name": "python3"}}'
                 % pid)
    parts.append('{"name": "thread_name", "ph": "M", "ts": 0.000, "pid": %d, "tid": %d, "args": {"name": "thread %d '
                 '(python3)"}}' % (pid, tid, tid))
    timeline = []
    for r in ranges:
        if win_start <= r["start"] <= win_end:
            timeline.append((r["start"], 0, '{"ph": "X", "cat": "user_annotation", "name": %s, "pid": %d, "tid": %d, '
                             '"ts": %s, "dur": %s}' % (json.dumps(r["name"]), pid, tid, ts(r["start"]),
                                                       ts(win_start + r["end"] - r["start"]))))
    ext = 1
    for o in ops:
        if win_start <= o["start"] <= win_end:
            timeline.append((o["start"], 1, '{"ph": "X", "cat": "cpu_op", "name": %s, "pid": %d, "tid": %d, '
                             '"ts": %s, "dur": %s, "args": {"External id": %d}}'
                             % (json.dumps(o["name"]), pid, tid, ts(o["start"]), ts(win_start + o["end"] - o["start"]),
                                ext)))
            ext += 1
    for e in window:
        timeline.append((e["t"], 2, '{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", '
                         '"pid": %d, "tid": %d, "ts": %s, "args": {"Total Reserved": %d, "Total Allocated": %d, '
                         '"Bytes": %d, "Addr": %d, "Device Id": -1, "Device Type": 0}}'
                         % (pid, tid, ts(e["t"]), e["total_reserved"], e["total_allocated"], e["size"], e["ptr"])))
    timeline.sort(key=lambda x: (x[0], x[1]))
    parts.extend(t[2] for t in timeline)
    parts.append('{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": %s}' % ts(win_end))
    body = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [],\n  "displayTimeUnit": "ms",\n'
            '  "baseTimeNanoseconds": 1700000000000000000,\n  "traceEvents": [\n  ' + ",\n  ".join(parts)
            + '\n  ],\n  "traceName": "%s"\n}\n' % ("tests/data/measured/%s/trace.json" % run))
    with gzip.GzipFile(os.path.join(outdir, "trace.json.gz"), "wb", mtime=0) as f:
        f.write(body.encode())

    # --- measured.json: this script's own replay of the snapshot.
    initial, curve = replay(trace, segments)
    peak_i = max(range(len(curve)), key=lambda i: curve[i]) if curve else -1
    peak = max([initial] + curve)
    win_ranges = [r for r in ranges if win_start <= r["start"] <= win_end]

    def phase_of(t_ns):
        for r in win_ranges:
            if r["name"] in ("forward", "backward", "optimizer") and r["start"] <= t_ns <= r["end"]:
                return r["name"]
        return "outside"

    def step_of(t_ns):
        for r in win_ranges:
            if r["name"].startswith("ProfilerStep#") and r["start"] <= t_ns <= r["end"]:
                return int(r["name"].split("#")[1])
        return None

    phase_peaks = {}
    for i, e in enumerate(window):
        ph = phase_of(e["t"])
        phase_peaks[ph] = max(phase_peaks.get(ph, 0), curve[i])
    # Steady state: allocated just before each measured iteration starts and
    # after the last one ends.
    steady = []
    for r in win_ranges:
        if r["name"].startswith("ProfilerStep#"):
            before = [i for i, e in enumerate(window) if e["t"] < r["start"]]
            steady.append(curve[before[-1]] if before else initial)
    steady.append(curve[-1] if curve else initial)

    # What is alive at the peak.
    alive = dict((ptr, dict(ptr=ptr, size=e["size"], t=None, frames=e["frames"], op=e["op"]))
                 for ptr, e in live_before.items())
    for i, e in enumerate(window[:peak_i + 1]):
        if e["size"] > 0:
            alive[e["ptr"]] = dict(ptr=e["ptr"], size=e["size"], t=e["t"], frames=e["frames"], op=e["op"])
        else:
            alive.pop(e["ptr"], None)
    peak_step = step_of(window[peak_i]["t"]) if peak_i >= 0 else None
    for e in window[peak_i + 1:]:
        if e["size"] < 0 and e["ptr"] in alive and "free_t" not in alive[e["ptr"]]:
            alive[e["ptr"]]["free_t"] = e["t"]
    for blk in alive.values():
        blk.setdefault("free_t", None)

    def ranges_of_step(t_ns):
        step = step_of(t_ns)
        bwd = [r for r in win_ranges if r["name"] == "backward" and r["start"] <= t_ns <= r["end"]]
        return step, bwd[0]["end"] if bwd else t_ns

    by_kind, groups = {}, {}
    for blk in alive.values():
        kind = classify(blk, facts, phase_of, ranges_of_step)
        by_kind[kind] = by_kind.get(kind, 0) + blk["size"]
        where = next((f"{os.path.basename(f['filename'])}:{f['line']} {f['name']}" for f in blk["frames"]
                      if f["filename"] != "??"), "")
        key = (kind, blk["op"], where)
        g = groups.setdefault(key, {"kind": kind, "op": blk["op"], "where": where, "count": 0, "bytes": 0})
        g["count"] += 1
        g["bytes"] += blk["size"]
    assert sum(by_kind.values()) == peak, (sum(by_kind.values()), peak)
    # The profiler's own running total ("Total Allocated") against this
    # replay: equal when every live block was seen (a fresh process per run).
    total_mismatch = sum(1 for i, e in enumerate(window) if e["total_allocated"] != curve[i])
    # The profiler trace alone: it has no segments, so the blocks alive through
    # the whole window (weights, optimizer states, ...) are not in its replay.
    trace_initial, trace_curve = replay(trace, [])

    measured = {
        "run": run,
        "model": cfg,
        "mode": mode,
        "recompute": cfg["recompute"],
        "torch_version": torch.__version__,
        "steps": STEPS,
        "measured_steps": STEPS - 1,
        "events": len(trace),
        "alloc_events": sum(1 for e in trace if e["action"] == "alloc"),
        "free_events": sum(1 for e in trace if e["action"] == "free_completed"),
        "initial_allocated_bytes": initial,
        "peak_allocated_bytes": peak,
        "peak_event": peak_i,
        "peak_phase": phase_of(window[peak_i]["t"]) if peak_i >= 0 else "outside",
        "peak_step": peak_step,
        # Between the two last iterations: what outlives an iteration.
        "steady_allocated_bytes": steady[-2],
        "steady_allocated_bytes_each": steady,
        "phase_peaks": phase_peaks,
        "iteration_s": sum(facts["steps"][1:]) / (STEPS - 1),
        "iteration_s_each": facts["steps"][1:],
        "iteration_s_note": "wall time of the measured steps under the profiler (with_stack), CPU, 1 thread",
        "ranges": [r["name"] for r in win_ranges],
        "trace": {
            "memory_events": len(window),
            "alloc_events": sum(1 for e in window if e["size"] > 0),
            "free_events": sum(1 for e in window if e["size"] < 0),
            "alloc_bytes": sum(e["size"] for e in window if e["size"] > 0),
            "free_bytes": -sum(e["size"] for e in window if e["size"] < 0),
            "first_addr": window[0]["ptr"] if window else 0,
            "first_bytes": window[0]["size"] if window else 0,
            "last_total_allocated": window[-1]["total_allocated"] if window else 0,
            "ranges": len(win_ranges),
            "profiler_steps": sum(1 for r in win_ranges if r["name"].startswith("ProfilerStep#")),
            "devices": [-1],
            "total_allocated_mismatches": total_mismatch,
            "replay_initial_bytes": trace_initial,
            "replay_peak_allocated_bytes": max([trace_initial] + trace_curve),
            "alive_throughout_bytes": initial - trace_initial,
            "max_total_allocated": max((e["total_allocated"] for e in window), default=0),
        },
        "alive_at_peak_by_kind": dict(sorted(by_kind.items(), key=lambda kv: -kv[1])),
        "alive_at_peak": sorted(groups.values(), key=lambda g: -g["bytes"])[:40],
    }
    with open(os.path.join(outdir, "measured.json"), "w") as f:
        json.dump(measured, f, indent=1)
        f.write("\n")

    # --- preset.json
    with open(os.path.join(outdir, "preset.json"), "w") as f:
        json.dump(preset(run, cfg, mode), f, indent=2)
        f.write("\n")
    return measured, time.perf_counter() - t_start


def llama_preset(run, cfg):
    titan = cfg["flavor"] == "titan"
    what = ("torchtitan's Llama block (eager RMSNorm on x.float(), complex RoPE, repeat_kv before a FlashAttention-like "
            "SDPA, eager SwiGLU)" if titan else "transformers' eager LlamaDecoderLayer (LlamaRMSNorm, rotate_half "
            "RoPE, repeat_kv, softmax in fp32 cast back, LlamaMLP)")
    recompute = ("per-op selective checkpointing of every block (torchtitan's policy, emulated as PyTorch 2.x "
                 "runs it)" if cfg["recompute"] == "op" else cfg["recompute"])
    return {
        "format": "memledger-preset",
        "version": 1,
        "name": f"measured-{run}",
        "description": (f"tools/measure/measure.py run '{run}': a {cfg['L']}-layer Llama-style model (h {cfg['h']}, "
                        f"a {cfg['a']}, {cfg['g']} key/value groups, SwiGLU {cfg['f']}, s {cfg['s']}, b {cfg['b']}, "
                        f"V {cfg['V']}, untied output layer) written as {what}, trained in pure bf16 on the CPU with "
                        f"PyTorch {torch.__version__} (bf16 .grad, torch.optim.AdamW with bf16 states, "
                        f"zero_grad(set_to_none=True)); recompute {recompute}. Measured figures: "
                        "measured.json next to this file."),
        "model": {
            "num_layers": cfg["L"], "hidden_size": cfg["h"], "num_attention_heads": cfg["a"],
            "num_query_groups": cfg["g"], "ffn_hidden_size": cfg["f"], "vocab_size": cfg["V"],
            "make_vocab_size_divisible_by": 128, "swiglu": True, "normalization": "RMSNorm",
            "add_bias_linear": False, "position_embedding_type": "rope", "max_position_embeddings": cfg["s"],
            "untie_embeddings_and_output_weights": True, "attention_dropout": 0.0, "hidden_dropout": 0.0,
        },
        "training": {
            "seq_length": cfg["s"], "micro_batch_size": cfg["b"], "global_batch_size": cfg["b"],
            "params_dtype": "bf16", "main_params_dtype": "none", "main_grads_dtype": "bf16", "fp32_params": False,
            "optimizer": "adamw", "exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16",
        },
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "data_parallel_size": 1},
        "strategy": {
            "framework": "torchtitan" if titan else "hf",
            "recompute_granularity": "selective_op" if cfg["recompute"] == "op" else cfg["recompute"],
            "recompute_method": "uniform", "recompute_num_layers": 1,
            "flash_attention": titan, "grad_buffer": "on_demand", "optimizer_kernel": "single_tensor",
        },
        "hardware": {
            "name": "CPU (measured with tools/measure)", "hbm_bytes": 1 << 40, "runtime_reserve_bytes": 0,
        },
    }


def preset(run, cfg, mode):
    if "flavor" in cfg:
        return llama_preset(run, cfg)
    megatron = mode == "megatron"
    what = ("Megatron-style: bf16 weights, contiguous fp32 main-grad buffer, fp32 master weights, fp32 AdamW states"
            if megatron else "plain PyTorch fp32: .grad created in backward, zero_grad(set_to_none=True) after "
            "the step, torch.optim.AdamW")
    return {
        "format": "memledger-preset",
        "version": 1,
        "name": f"measured-{run}",
        "description": (f"tools/measure/measure.py run '{run}': a {cfg['L']}-layer GPT (h {cfg['h']}, a {cfg['a']}, "
                        f"s {cfg['s']}, b {cfg['b']}, V {cfg['V']}, tied output layer) trained on the CPU with "
                        f"PyTorch {torch.__version__}; {what}; recompute {cfg['recompute']}. Unfused attention "
                        "and dropout (the CPU dropout saves its mask in the activation dtype), fp32 cross entropy (F.cross_entropy), "
                        "torch.optim.AdamW's single-tensor step. Measured figures: measured.json next to this file."),
        "model": {
            "num_layers": cfg["L"], "hidden_size": cfg["h"], "num_attention_heads": cfg["a"],
            "ffn_hidden_size": 4 * cfg["h"], "vocab_size": cfg["V"], "make_vocab_size_divisible_by": 128,
            "swiglu": False, "normalization": "LayerNorm", "add_bias_linear": True,
            "position_embedding_type": "learned_absolute", "max_position_embeddings": cfg["s"],
            "untie_embeddings_and_output_weights": False,
            "attention_dropout": cfg["attention_dropout"], "hidden_dropout": cfg["hidden_dropout"],
        },
        "training": {
            "seq_length": cfg["s"], "micro_batch_size": cfg["b"], "global_batch_size": cfg["b"],
            "params_dtype": "bf16" if megatron else "fp32",
            "main_params_dtype": "fp32" if megatron else "none",
            "main_grads_dtype": "fp32", "optimizer": "adamw", "exp_avg_dtype": "fp32", "exp_avg_sq_dtype": "fp32",
        },
        "parallelism": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "data_parallel_size": 1},
        "strategy": {
            "recompute_granularity": cfg["recompute"], "recompute_method": "uniform", "recompute_num_layers": 1,
            "flash_attention": False, "dropout_mask_dtype": "activation", "norm_stats_dtype": "activation",
            "grad_buffer": "contiguous" if megatron else "on_demand",
            # F.cross_entropy, torch.optim.AdamW's for-loop (its CPU default),
            # and the hook adding each bf16 .grad to main_grad (no fused wgrad).
            "cross_entropy": "unfused", "optimizer_kernel": "single_tensor",
            "gradient_accumulation_fusion": False,
        },
        "hardware": {
            "name": "CPU (measured with tools/measure)", "hbm_bytes": 1 << 40, "runtime_reserve_bytes": 0,
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "data", "measured"))
    ap.add_argument("--only", nargs="*", help="runs to make (default: all): " + " ".join(run_names()))
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(1)  # deterministic allocation order, no intra-op threads
    if args.one:
        size, mode, rc = args.one.split("-")
        if size == "llama":
            cfg = dict(LLAMA, flavor=mode, recompute=rc)
        else:
            cfg = dict(SIZES[size], recompute=rc, attention_dropout=0.1, hidden_dropout=0.1)
        m, secs = build(args.one, cfg, mode, os.path.join(args.out, args.one))
        print(f"{args.one:28s} peak {m['peak_allocated_bytes']:>11,d} ({m['peak_phase']:9s}) steady "
              f"{m['steady_allocated_bytes']:>11,d} events {m['events']:6d}  {secs:5.1f} s", flush=True)
        return 0
    # One process per run: the CPU allocator's running total ("Total
    # Allocated") is process-wide, and a fresh process sees every block.
    for run in run_names():
        if args.only and run not in args.only:
            continue
        subprocess.run([sys.executable, os.path.abspath(__file__), "--out", args.out, "--one", run], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
