"""Generating with a :class:`brrr.gpt.GPT`: a key/value cache, a prefill, then one token per step.

A decoder generates one token per step, and each step needs the keys and values of every
earlier position. Kept in a cache, they are computed once: the *prefill* runs the prompt
through the model once and fills the cache; each *decode step* then runs one new token per
sequence and appends its keys and values.

The cache here is static: preallocated for ``length`` positions, written in place at the
position a step is given (a 0-dimensional tensor), and read whole with the positions not yet
written masked out. Every step then has the same shapes and the same addresses, so a CUDA graph
can capture one step and replay it (:func:`brrr.bench` with ``cuda_graph=True``), as gpt-fast
does with ``torch.compile``.

    cache = KVCache(model.cfg, batch=1, length=64)
    logits = forward_cached(model, prompt, cache, torch.tensor(0))           # prefill
    token = logits.argmax(-1, keepdim=True)
    logits = forward_cached(model, token, cache, torch.tensor(prompt.shape[1]))   # one step

:func:`call_counts` gives a call's FLOPs and bytes for the roofline.
"""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from .gpt import GPT, GPTConfig


class KVCache:
    """Keys and values of every block for ``length`` positions of ``batch`` sequences, zeros
    until written: two tensors of shape (n_layer, batch, n_head, length, head_dim)."""

    def __init__(self, cfg: GPTConfig, batch: int, length: int, device=None, dtype=torch.float32):
        for name, value in (("batch", batch), ("length", length)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if length > cfg.context:
            raise ValueError(f"length ({length}) must be at most the context ({cfg.context})")
        shape = (cfg.n_layer, batch, cfg.n_head, length, cfg.d_model // cfg.n_head)
        self.keys = torch.zeros(shape, device=device, dtype=dtype)
        self.values = torch.zeros(shape, device=device, dtype=dtype)
        self.length = length

    @property
    def nbytes(self) -> int:
        """Bytes of keys and values together."""
        return 2 * self.keys.numel() * self.keys.element_size()


def _attend(attn, x, cache: KVCache, layer: int, positions):
    """Causal self-attention of the new tokens ``x`` (at ``positions``) over the cache."""
    b, t, d = x.shape
    h, hd = attn.n_head, attn.head_dim
    q, k, v = attn.qkv(x).split(d, dim=2)
    q, k, v = (z.view(b, t, h, hd).transpose(1, 2) for z in (q, k, v))
    cache.keys[layer].index_copy_(2, positions, k.to(cache.keys.dtype))
    cache.values[layer].index_copy_(2, positions, v.to(cache.values.dtype))
    keys, values = cache.keys[layer], cache.values[layer]                  # (b, h, length, hd)
    visible = torch.arange(cache.length, device=x.device) <= positions[:, None]     # (t, length)
    if attn.sdpa:
        y = F.scaled_dot_product_attention(q, keys.to(q.dtype), values.to(q.dtype), attn_mask=visible)
    else:
        scores = (q @ keys.to(q.dtype).transpose(-2, -1)) * (1.0 / math.sqrt(hd))   # (b, h, t, length)
        y = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1) @ values.to(q.dtype)
    return attn.proj(y.transpose(1, 2).contiguous().view(b, t, d))


def forward_cached(model: GPT, idx, cache: KVCache, start):
    """Logits of the last of the tokens ``idx`` (shape (batch, t)) placed at positions ``start``,
    ``start + 1``, ... (``start``: a 0-dimensional integer tensor on the model's device), their
    keys and values written into ``cache``. Shape (batch, vocab)."""
    if idx.dim() != 2:
        raise ValueError(f"idx must be token ids of shape (batch, t), got {tuple(idx.shape)}")
    if idx.shape[0] != cache.keys.shape[1]:
        raise ValueError(f"idx has {idx.shape[0]} sequences but the cache holds {cache.keys.shape[1]}")
    positions = start + torch.arange(idx.shape[1], device=idx.device)
    x = model.wte(idx) + model.wpe(positions)
    for layer, block in enumerate(model.blocks):
        x = x + _attend(block.attn, block.ln1(x), cache, layer, positions)
        x = x + block.out(block.gelu(block.fc(block.ln2(x))))
    return model.head(model.ln_f(x[:, -1]))


def call_counts(cfg: GPTConfig, batch: int, new: int, length: int, itemsize: int) -> dict:
    """FLOPs and least bytes of one :func:`forward_cached` call on ``new`` tokens of each of
    ``batch`` sequences over a cache of ``length`` positions (``new = 1``: a decode step; the
    prompt's length: a prefill), weights and cache in ``itemsize``-byte numbers.

    FLOPs: 2 per weight of the blocks per token, attention's 4·length·d per block per token
    (the whole static cache is read), and the head's 2·d·vocab for the last token of each
    sequence. Bytes: every weight once (the tied embedding once, as the head) and the whole
    cache (``weight_bytes`` and ``cache_bytes`` also separately)."""
    d, layers = cfg.d_model, cfg.n_layer
    per_token = 24 * layers * d * d + 4 * layers * length * d
    flops = batch * (new * per_token + 2 * d * cfg.vocab)
    weight_bytes = (cfg.n_params() - cfg.context * d) * itemsize   # the position table: one row a token
    cache_bytes = 2 * layers * batch * length * d * itemsize
    return {"flops": flops, "weight_bytes": weight_bytes, "cache_bytes": cache_bytes,
            "nbytes": weight_bytes + cache_bytes}
