"""Chapter 8, step 8: the tokens per call at which every weight matmul of a GPT reaches the roofline's ridge."""
from __future__ import annotations

import math

LINEAR_SHAPES = ((1, 3), (1, 1), (1, 4), (4, 1))
"""Each block's weight matmuls as (inputs, outputs) in multiples of the width d: Q/K/V, the
attention's output projection, and the feed-forward block's two."""


def ridge_tokens(cfg, ridge: float, itemsize: int) -> float:
    """Tokens per call at which every weight matmul of ``cfg`` (each block's four and the head)
    reaches ``ridge`` FLOP/byte: a matmul of T tokens by a (k, n) weight does 2·T·k·n FLOPs and
    moves at least itemsize·(k·n + T·k + T·n) bytes (weight, input, output once each), so it
    reaches the ridge R at T = R·s·k·n / (2·k·n − R·s·(k + n)). ``inf`` where one never does
    (its intensity tops out below the ridge however many tokens)."""
    d = cfg.d_model
    shapes = [(a * d, b * d) for a, b in LINEAR_SHAPES] + [(d, cfg.vocab)]
    most = 0.0
    for k, n in shapes:
        room = 2 * k * n - ridge * itemsize * (k + n)
        if room <= 0:
            return math.inf
        most = max(most, ridge * itemsize * k * n / room)
    return most


def ridge_batch(cfg, seq: int, roof, itemsize: int, tokens_now: int) -> tuple:
    """(batch, reason): the power-of-two number of sequences of ``seq`` tokens that puts every weight
    matmul at or past ``roof``'s ridge (:func:`ridge_tokens`), and None; or (None, why not) where
    ``tokens_now`` tokens already do or no batch can."""
    need = ridge_tokens(cfg, roof.ridge, itemsize)
    if not math.isfinite(need):
        return None, (f"no batch puts every weight matmul past the ridge of {roof.ridge:.3g} FLOP/byte: the "
                      "intensity of the smallest tops out below it")
    if need <= tokens_now:
        return None, (f"the roofline says {tokens_now:,} tokens per call already put every weight matmul past "
                      f"the ridge of {roof.ridge:.3g} FLOP/byte (it needs {math.ceil(need):,})")
    return 2 ** math.ceil(math.log2(math.ceil(need / seq))), None
