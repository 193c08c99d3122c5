"""Chapter 4, fusion: what the bytes model predicts, and the words the other fusion modules share.
A measured speed-up over the predicted one is the fused kernel's efficiency (roofline time /
measured time) over the unfused chain's, so the text can say which side moved.
"""
from __future__ import annotations

from . import Prose
from . import words as w

CLOSE = 0.20        # a measured speed-up within 20% of the prediction is "close to" it
FLOOR = 1.5         # a fused time 1.5x its one-op time has "left its floor"
BUSY = 0.25         # a fused kernel at >= 25% of the peak FLOP/s is spending real time on arithmetic
OP_WORDS = {"mul": ("multiplication", "multiplications"), "add": ("addition", "additions"),
            "fma": ("multiply-add", "multiply-adds"), "cos": ("cosine", "cosines")}


def _ops(op: str, k: int = 2) -> str:
    one, many = OP_WORDS.get(op, (op, op + "s"))
    return one if k == 1 else many


def _roof_of(run):
    from ..roofline import Roofline
    roof = (getattr(run, "meta", {}) or {}).get("roof")
    return Roofline.from_dict(roof) if roof else None


def _spec(run_or_summary) -> bool:
    from ..roofline import has_spec_sheet
    summary = run_or_summary if isinstance(run_or_summary, dict) else \
        (getattr(run_or_summary, "meta", {}) or {}).get("device", {})
    return has_spec_sheet(summary or {})


def _roof_kind(run) -> str:
    return "spec-sheet" if _spec(run) else "measured"


def _relation(s: float, p: float) -> str:
    """'close to', 'above' or 'short of': a measured speed-up ``s`` against a predicted ``p``."""
    return "close to" if abs(s / p - 1) <= CLOSE else "above" if s > p else "short of"


def _faster_than_roof(run, c: dict) -> str:
    """What the page knows of a kernel that beat the roofline: its arrays' size against the cache."""
    dev = (getattr(run, "meta", {}) or {}).get("device") or {}
    llc = dev.get("l2_bytes") or 0
    working = 2 * (c.get("n") or 0) * (8 if c.get("dtype") == "float64" else 4)
    if llc and working < 4 * llc:
        return (f"source and result together are {w.size(working)}, less than four times the {w.size(llc)} "
                "last-level cache, so part of the traffic can come from the cache, faster than DRAM.")
    return (f"its arrays ({w.size(working)} together) are far larger than any cache, so the {_roof_kind(run)} roof "
            "is below the bandwidth this kernel reached.")


def prediction(roof, ks, device=None, op: str = "mul", dtype: str = "float32") -> Prose:
    """What the roofline predicts for fusing chains of ``ks`` ops on this device: the ridge,
    the chain length where the fused kernel reaches it, and the speed-up's cap."""
    from ..experiments.fusion import crossover_k, predicted_speedup
    from ..device import device as live
    dev = device or live()
    summary = dev.summary() if hasattr(dev, "summary") else dict(dev)
    spec = _spec(summary)
    ks = sorted(int(k) for k in ks)
    cross = crossover_k(roof, op, dtype)
    where = (f"is the spec sheet of {summary.get('name', 'this GPU')}" if spec else
             f"was measured by `brrr` on {summary.get('name', 'this machine')}, from its best copy bandwidth and "
             "its best matmul (a measured roof, not a hardware peak)")
    text = (f"The roof used here {where}: {w.rate(roof.peak_bandwidth, 'B/s')} and {w.rate(roof.peak_flops)}, "
            f"a ridge at {w.number(roof.ridge)} FLOP/byte. A fused chain of {dtype} {_ops(op)} reaches that "
            f"intensity at k = {w.number(cross)}.")
    past = [k for k in ks if k > cross]
    if not past:
        text += (f" Every chain length in the table is shorter, so the model predicts a fused kernel that stays "
                 f"memory-bound and a speed-up equal to k all the way to the longest chain, {w.integer(ks[-1])}.")
        outcome = "all memory-bound"
    else:
        cap = predicted_speedup(roof, 10 ** 9, op=op, dtype=dtype)
        listed = w.listing(w.integer(k) for k in past)
        text += (f" Below that, the predicted speed-up is k; above it the fused kernel is compute-bound and the "
                 f"speed-up levels off at about {w.number(cap)}. In the table that cap applies to the longest "
                 f"chain{'s' if len(past) > 1 else ''}, {listed}.")
        outcome = "some compute-bound"
    return Prose(text, {"outcome": outcome, "ridge": roof.ridge, "crossover_k": cross, "spec": spec,
                        "past_crossover": past})
