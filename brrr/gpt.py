"""A GPT-2-style decoder, small and readable, with random weights (nothing is downloaded).

The model of the last chapter: token and position embeddings, ``n_layer`` pre-LayerNorm
blocks (causal self-attention, then a GELU feed-forward block four times as wide), a final
LayerNorm and a language-model head that shares its weight with the token embedding, as in
GPT-2 (Radford et al., 2019) and Karpathy's nanoGPT. With :data:`GPT2_SMALL`'s sizes it has
GPT-2 small's 124 million parameters (:meth:`GPTConfig.n_params`).

Attention is written out by hand (matmul, scale, causal mask, softmax, matmul), so a
profiler sees every operator; :meth:`GPT.use_sdpa` switches every block to PyTorch's fused
``scaled_dot_product_attention`` (FlashAttention where the GPU and the build have it).

    cfg = brrr.gpt.GPTConfig(n_layer=4, n_head=4, d_model=256, vocab=8192, context=256)
    model = brrr.gpt.GPT(cfg).eval()
    idx = brrr.gpt.tokens(cfg, batch=8, seq=128)      # random token ids, shape (8, 128)
    logits = model(idx)                               # shape (8, 128, 8192)

:func:`forward_flops` counts one forward pass's FLOPs; :func:`sizes` holds the model and
batch sizes the capstone chapter runs (GPT-2 small on a GPU, a reduced shape on a CPU).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from . import config


@dataclass(frozen=True)
class GPTConfig:
    """A decoder's shape. The defaults are GPT-2 small's (Radford et al., 2019)."""
    n_layer: int = 12       # transformer blocks
    n_head: int = 12        # attention heads; d_model must be a multiple of n_head
    d_model: int = 768      # width of the residual stream
    vocab: int = 50257      # tokens in the vocabulary (GPT-2's byte-pair encoding)
    context: int = 1024     # longest sequence (positions learned)

    def __post_init__(self):
        for name in ("n_layer", "n_head", "d_model", "vocab", "context"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_head ({self.n_head})")

    def n_params(self) -> int:
        """Parameters of :class:`GPT` with this shape, by formula: embeddings V·d + C·d, per
        block 12·d² + 13·d (the four weight matrices, their biases and two LayerNorms), and a
        final LayerNorm 2·d; the head shares the token embedding's weight."""
        d = self.d_model
        return self.vocab * d + self.context * d + self.n_layer * (12 * d * d + 13 * d) + 2 * d


GPT2_SMALL = GPTConfig()


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention: one fused Q/K/V projection, attention by hand (or by
    ``scaled_dot_product_attention`` when ``sdpa`` is True), then the output projection."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head, self.head_dim = cfg.n_head, cfg.d_model // cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.sdpa = False
        causal = torch.tril(torch.ones(cfg.context, cfg.context, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, 1, cfg.context, cfg.context), persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        # (batch, seq, d_model) -> (batch, heads, seq, head_dim): views, no copies
        q, k, v = (z.view(b, t, self.n_head, self.head_dim).transpose(1, 2) for z in (q, k, v))
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))   # (b, h, t, t)
            scores = scores.masked_fill(~self.causal[:, :, :t, :t], float("-inf"))  # no peeking ahead
            y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(b, t, d)    # heads back together: a copy
        return self.proj(y)


class Block(nn.Module):
    """One pre-LayerNorm block: x + attention(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.gelu = nn.GELU(approximate="tanh")           # GPT-2's GELU
        self.out = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(self.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    """A GPT-2-style decoder: token ids of shape (batch, seq) in, logits (batch, seq, vocab) out."""

    def __init__(self, cfg: Optional[GPTConfig] = None, seed: int = 0, n_init: bool = True, **shape):
        super().__init__()
        cfg = cfg or GPTConfig(**shape)
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab, cfg.d_model)
        self.wpe = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        self.head.weight = self.wte.weight                  # tied, as in GPT-2
        if not n_init:                                      # shapes only (operator_calls)
            return
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():                               # GPT-2's init: N(0, 0.02), zero biases
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif p.dim() >= 2:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.02)

    def use_sdpa(self, on: bool = True) -> "GPT":
        """Switch every block's attention to ``scaled_dot_product_attention`` (``on=False``:
        back to the hand-written one). Returns the model."""
        if not isinstance(on, bool):
            raise TypeError(f"on must be True or False, got {on!r}")
        for block in self.blocks:
            block.attn.sdpa = on
        return self

    def forward(self, idx):
        if idx.dim() != 2:
            raise ValueError(f"GPT expects token ids of shape (batch, seq), got {tuple(idx.shape)}")
        t = idx.shape[1]
        if t > self.cfg.context:
            raise ValueError(f"sequence of {t} tokens is longer than the context ({self.cfg.context})")
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def tokens(cfg: GPTConfig, batch: int, seq: int, device=None, seed: int = 0) -> torch.Tensor:
    """Random token ids of shape (batch, seq), integers in [0, vocab)."""
    for name, value in (("batch", batch), ("seq", seq)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if seq > cfg.context:
        raise ValueError(f"seq ({seq}) must be at most the context ({cfg.context})")
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(cfg.vocab, (batch, seq), generator=gen).to(device)


def operator_calls(cfg: GPTConfig, batch: int = 1, seq: int = 16) -> int:
    """ATen operators one eager forward pass of :class:`GPT` (hand-written attention: the meta device
    would count the math fallback of ``scaled_dot_product_attention``, not the GPU's fused kernel)
    on ``batch`` x ``seq`` tokens issues
    (views left out: they do no work), the calls that each pay a fixed cost. Counted on PyTorch's
    ``meta`` device (shapes only, no arithmetic) for one and two blocks of ``cfg``'s widths (with a
    small vocabulary: the head is one call whatever its size), and extended to ``cfg.n_layer``."""
    def count(layers: int) -> int:
        small = replace(cfg, n_layer=layers, vocab=16, context=max(seq, 1))
        model = GPT(small, n_init=False).eval().to("meta")
        idx = torch.zeros((batch, seq), dtype=torch.long, device="meta")
        with torch.no_grad():
            return count_operators(lambda: model(idx))
    one, two = count(1), count(2)
    return one + (cfg.n_layer - 1) * (two - one)


def count_operators(fn) -> int:
    """ATen operators one call of ``fn`` issues, views left out (they do no work): the calls that
    each pay a fixed cost."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.n += not (func.is_view or "view" in str(func))     # _unsafe_view: a view in all but name
            return func(*args, **(kwargs or {}))

    with Count() as counter:
        fn()
    return counter.n


def forward_flops(cfg: GPTConfig, batch: int, seq: int) -> dict:
    """FLOPs of one forward pass over ``batch`` sequences of ``seq`` tokens (2 per multiply-add),
    matmuls only, as the hand-written attention computes them:

    * ``linear``: the four weight matrices of every block, 24·d² per token per block;
    * ``attention``: Q·Kᵀ and scores·V over the whole seq × seq square (the masked half is
      computed too), 4·seq·d per token per block;
    * ``head``: the logits, 2·d·V per token.

    ``total`` is their sum. LayerNorm, softmax, GELU and the adds are a fraction of a percent
    more, and are left out, as is usual for MFU (Chowdhery et al., 2022)."""
    tokens_ = batch * seq
    d = cfg.d_model
    out = {"linear": 24 * cfg.n_layer * d * d * tokens_,
           "attention": 4 * cfg.n_layer * seq * d * tokens_,
           "head": 2 * d * cfg.vocab * tokens_}
    out["total"] = sum(out.values())
    return out


def train_flops(cfg: GPTConfig, batch: int, seq: int) -> dict:
    """FLOPs of one training step over ``batch`` sequences of ``seq`` tokens, matmuls only:
    the forward pass (:func:`forward_flops`) and a backward pass that does two matmuls for each
    of the forward's (the gradient of the input and of the weight, or of both operands of an
    attention matmul), so three times each of its parts. Per token this is 6·N for the N
    weights the matmuls use (12·d² per block and the d·V head: biases, LayerNorms and position
    embeddings are left out) plus 12·seq·d per block for attention (Kaplan et al., 2020;
    Chowdhery et al., 2022). The optimizer's update, a few FLOPs per weight, is left out too.

    Keys: ``forward``, ``backward`` and ``total``, and the parts of ``total``: ``linear``,
    ``attention`` and ``head``."""
    fwd = forward_flops(cfg, batch, seq)
    out = {part: 3 * fwd[part] for part in ("linear", "attention", "head")}
    out.update(forward=fwd["total"], backward=2 * fwd["total"], total=3 * fwd["total"])
    return out


def padded_vocab(vocab: int, multiple: int = 64) -> int:
    """``vocab`` rounded up to a multiple of ``multiple`` (GPT-2's 50,257 -> 50,304)."""
    if isinstance(multiple, bool) or not isinstance(multiple, int) or multiple < 1:
        raise ValueError(f"multiple must be a positive integer, got {multiple!r}")
    return -(-vocab // multiple) * multiple


def padded(cfg: GPTConfig, multiple: int = 64) -> GPTConfig:
    """``cfg`` with its vocabulary rounded up to a multiple of ``multiple`` (:func:`padded_vocab`), so that
    every dimension of the head's matmul is a multiple of 16 bytes, which NVIDIA's matmul kernels run best
    at; the extra rows are never a target (Karpathy's nanoGPT does the same)."""
    return replace(cfg, vocab=padded_vocab(cfg.vocab, multiple))


def sizes(quick: Optional[bool] = None, gpu: Optional[bool] = None) -> dict:
    """The capstone's model and batches: ``config`` (a :class:`GPTConfig`), ``small``, ``large`` and
    ``train`` (each ``(batch, seq)``: sequences per call and tokens per sequence; ``train`` for the
    training step, at GPT-2's full context on a GPU), and ``name``.

    On a GPU (``gpu`` defaults to whether one is live): GPT-2 small itself, at a large batch of
    8 sequences of 512 tokens (a profile keeps every operator's tensors alive, and at GPT-2's full
    1,024 tokens the float32 attention scores alone would take four times the memory). On a CPU: a
    reduced shape (4 blocks, width 256, a vocabulary of 8,192) so that the chapter runs in
    about two minutes on two cores. Quick mode: a tiny shape on either.
    """
    quick = config.quick_mode() if quick is None else quick
    if gpu is None:
        from .device import device
        gpu = device().on_gpu
    if quick:
        cfg = GPTConfig(n_layer=2, n_head=2, d_model=64, vocab=512, context=64)
        return {"name": "tiny GPT (quick mode)", "config": cfg, "small": (1, 16), "large": (4, 64),
                "train": (4, 64)}
    if gpu:
        return {"name": "GPT-2 small", "config": GPT2_SMALL, "small": (1, 16), "large": (8, 512),
                "train": (8, 1024)}
    cfg = replace(GPT2_SMALL, n_layer=4, n_head=4, d_model=256, vocab=8192, context=256)
    return {"name": "GPT-2 shape reduced for a CPU", "config": cfg, "small": (1, 8), "large": (4, 128),
            "train": (4, 128)}
