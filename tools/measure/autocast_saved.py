#!/usr/bin/python3
"""What autograd saves in one Hugging Face Llama decoder layer under
torch.autocast(bfloat16) over fp32 parameters, as Trainer(bf16=True) runs it
without FSDP: every tensor a backward keeps, found with
torch.autograd.graph.saved_tensors_hooks, one line per storage, in bytes per
token. The layer is measure.py's `hf` flavor with transformers' sdpa path
(repeat_kv, then scaled_dot_product_attention, which CUDA's autocast runs in
bf16: its fp32 inputs are cast, as here before measure.py's FlashSDPA);
the RoPE tables are fp32, the residual stream's dtype (LlamaRotaryEmbedding
returns cos and sin in x.dtype). Runs on Debian's CPU torch 1.13 in a second:

    /usr/bin/python3 tools/measure/autocast_saved.py

tests/core/test_framework.cpp holds the ledger to its totals."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure as M  # noqa: E402

CFG = dict(L=1, h=256, a=8, g=2, f=688, s=96, b=2, V=1024, flavor="hf", recompute="none")


class SdpaAttention(M.LlamaAttention):
    def forward(self, x, rope):
        bs, s, _ = x.shape
        q = self.wq(x).view(bs, s, self.a, self.d).transpose(1, 2)
        k = self.wk(x).view(bs, s, self.g, self.d).transpose(1, 2)
        v = self.wv(x).view(bs, s, self.g, self.d).transpose(1, 2)
        q = q * rope["cos"] + M.rotate_half(q) * rope["sin"]
        k = k * rope["cos"] + M.rotate_half(k) * rope["sin"]
        k = M.repeat_kv(k.transpose(1, 2), self.a // self.g).transpose(1, 2)
        v = M.repeat_kv(v.transpose(1, 2), self.a // self.g).transpose(1, 2)
        low = lambda t: t.to(torch.bfloat16) if t.dtype == torch.float32 else t  # noqa: E731
        out = M.FlashSDPA.apply(low(q), low(k), low(v))
        return self.wo(out.transpose(1, 2).reshape(bs, s, -1))


def main():
    torch.manual_seed(0)
    h, d, s, b = CFG["h"], CFG["h"] // CFG["a"], CFG["s"], CFG["b"]
    block = M.LlamaBlock(CFG)
    block.attention = SdpaAttention(CFG)
    x = torch.randn(b, s, h, requires_grad=True)  # the fp32 residual stream
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    emb = torch.cat([torch.outer(torch.arange(s, dtype=torch.float32), inv)] * 2, dim=-1)
    rope = {"cos": emb.cos()[None, None], "sin": emb.sin()[None, None]}
    params = {p.data_ptr() for p in block.parameters()}
    seen = {}

    def pack(t):
        seen.setdefault(t.data_ptr(), t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            block(x, rope)
    tokens = b * s
    total = 0
    for t in seen.values():
        # Skipped: the parameters, their bf16 casts (the ledger's "Weights
        # cast for compute" row) and the shared RoPE tables.
        if t.dim() == 0 or t.data_ptr() in params or t.dim() == 2 and t.shape[0] != tokens or t.shape[:2] == (1, 1):
            continue
        nbytes = t.numel() * t.element_size()
        total += nbytes
        print(f"{str(t.dtype)[6:]:9s} {str(tuple(t.shape)):18s} {nbytes / tokens:6.0f} B/token")
    print(f"activations: {total / tokens:.0f} B per token (h = {h}, f = {CFG['f']})")


if __name__ == "__main__":
    main()
