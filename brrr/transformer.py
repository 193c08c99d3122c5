"""A BERT-like transformer encoder layer written out op by op (no weights downloaded).

Every step of the layer is a separate PyTorch call, as in BERT's reference code,
so a profiler sees each one: three linear projections (Q, K, V), a batched matmul
Q·Kᵀ, the 1/√d scale, softmax, dropout, a second batched matmul with V, the output
projection, dropout, a residual add and LayerNorm; then the feed-forward block
(linear, GELU, linear, dropout, residual add, LayerNorm).

    layer = brrr.transformer.EncoderLayer()          # BERT-base: hidden 768, 12 heads, FFN 3072
    x = brrr.transformer.encoder_input(layer, batch=8, seq=128)
    y = layer(x)                                      # shape (8, 128, 768)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from . import config


@dataclass
class EncoderConfig:
    """Sizes of one encoder layer; the defaults are BERT-base's (Devlin et al., 2019)."""
    hidden: int = 768       # model width d_model
    heads: int = 12         # attention heads; hidden must be a multiple of heads
    ffn: int = 3072         # width of the feed-forward block
    dropout: float = 0.1    # dropout probability (active in train mode only)
    eps: float = 1e-12      # LayerNorm epsilon, as in BERT

    def __post_init__(self):
        for name in ("hidden", "heads", "ffn"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")


class SelfAttention(nn.Module):
    """Multi-head self-attention with every op explicit (no fused attention kernel)."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.heads, self.head_dim = cfg.heads, cfg.hidden // cfg.heads
        self.query = nn.Linear(cfg.hidden, cfg.hidden)
        self.key = nn.Linear(cfg.hidden, cfg.hidden)
        self.value = nn.Linear(cfg.hidden, cfg.hidden)
        self.attn_dropout = nn.Dropout(cfg.dropout)
        self.output = nn.Linear(cfg.hidden, cfg.hidden)

    def _split(self, t):
        # (batch, seq, hidden) -> (batch, heads, seq, head_dim): a view, no copy
        b, s, _ = t.shape
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2))          # batched matmul
        scores = scores / math.sqrt(self.head_dim)             # scale: elementwise
        probs = torch.softmax(scores, dim=-1)                  # statistical normalisation
        probs = self.attn_dropout(probs)                       # elementwise
        context = torch.matmul(probs, v)                       # batched matmul
        context = context.transpose(1, 2).reshape(b, s, h)     # a copy: heads back together
        return self.output(context)


class EncoderLayer(nn.Module):
    """One post-LayerNorm encoder layer, as in BERT: attention, then a GELU feed-forward block."""

    def __init__(self, cfg: EncoderConfig | None = None, **sizes):
        super().__init__()
        cfg = cfg or EncoderConfig(**sizes)
        self.cfg = cfg
        self.attention = SelfAttention(cfg)
        self.attn_dropout = nn.Dropout(cfg.dropout)
        self.attn_norm = nn.LayerNorm(cfg.hidden, eps=cfg.eps)
        self.intermediate = nn.Linear(cfg.hidden, cfg.ffn)
        self.activation = nn.GELU()
        self.ffn_output = nn.Linear(cfg.ffn, cfg.hidden)
        self.ffn_dropout = nn.Dropout(cfg.dropout)
        self.ffn_norm = nn.LayerNorm(cfg.hidden, eps=cfg.eps)

    def forward(self, x):
        if x.dim() != 3 or x.shape[-1] != self.cfg.hidden:
            raise ValueError(f"EncoderLayer expects input of shape (batch, seq, {self.cfg.hidden}), "
                             f"got {tuple(x.shape)}")
        x = self.attn_norm(x + self.attn_dropout(self.attention(x)))        # residual add + LayerNorm
        y = self.ffn_output(self.activation(self.intermediate(x)))          # linear, GELU, linear
        return self.ffn_norm(x + self.ffn_dropout(y))                       # residual add + LayerNorm


def small_block(hidden: int = 256, heads: int = 4, ffn: int = 1024, dropout: float = 0.1) -> EncoderLayer:
    """A small transformer block (same ops as BERT's layer, a third of the width)."""
    return EncoderLayer(EncoderConfig(hidden=hidden, heads=heads, ffn=ffn, dropout=dropout))


def bert_sizes(quick: bool | None = None) -> dict:
    """Batch and sequence length for profiling a BERT-base layer: smaller in quick mode."""
    quick = config.quick_mode() if quick is None else quick
    return {"batch": 1, "seq": 128} if quick else {"batch": 8, "seq": 128}


def encoder_input(layer: EncoderLayer, batch: int = 8, seq: int = 128, dtype=torch.float32,
                  device=None, seed: int = 0) -> torch.Tensor:
    """Random activations of shape (batch, seq, hidden) for ``layer`` (float32 by default)."""
    if not isinstance(layer, EncoderLayer):
        raise TypeError(f"layer must be a brrr.transformer.EncoderLayer, got {type(layer).__name__}")
    for name, value in (("batch", batch), ("seq", seq)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, seq, layer.cfg.hidden, generator=gen, dtype=torch.float32)
    return x.to(dtype=dtype, device=device)
