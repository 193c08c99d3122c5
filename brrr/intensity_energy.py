"""The DI paper's energy side: its metrics (Eq. 1, 2), its GPUs (Table IV) and its statistics
(Table VI, Table IX, Eq. 6), recomputed from what it prints.

Jha, Mittal & Avancha (2020), Data-type Aware Arithmetic Intensity for Deep Neural Networks.
The paper measures energy, not time: average power from ``nvidia-smi`` times inference time,
on a Tesla P100 and a Quadro P4000, for 25 networks at batch 4. Its argument rests on one
premise it cites rather than measures (Sec. I and II-B, its reference [8], Pedram et al.,
2017): energy is dominated by data movement rather than by arithmetic, so a network that
reuses each fetched number more spends fewer joules per MAC. The paper prints no energy per
access or per operation; nothing here supplies one.

Every number in this module is the paper's (see :mod:`brrr.intensity_paper` for the tables
as data); the functions recompute what the paper derived from them, so that a reader can
check its arithmetic.
"""
from __future__ import annotations

import math
import numbers

from .intensity_paper import (PAPER_EQ6, PAPER_FIG3_CALLS, PAPER_SAMPLE, PAPER_TABLE_IV, PAPER_TABLE_IX,
                              PAPER_TABLE_VI, PAPER_TABLE_VIII, TABLE_VIII_COLUMNS, PAPER_Z)


def _positive(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0 \
            or not math.isfinite(value):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def energy_per_pixel(average_watts: float, seconds: float, pixels: int) -> float:
    """EPP = average power x inference time / pixels of the input frame, in joules (Eq. 1).

    The paper divides by pixels so that networks fed 299x299 images (Inception-V3/V4,
    Xception) compare fairly with those fed 224x224."""
    return _positive("average_watts", average_watts) * _positive("seconds", seconds) / _positive("pixels", pixels)


def energy_efficiency(batch: int, macs: float, average_watts: float, seconds: float) -> float:
    """MACs per joule = batch x MACs per image / (average power x inference time) (Eq. 2)."""
    return _positive("batch", batch) * _positive("macs", macs) / (
        _positive("average_watts", average_watts) * _positive("seconds", seconds))


def table_iv_view():
    """Table IV as printed, with the compute-to-memory ratio recomputed as peak FLOP/s over
    peak bandwidth (the roofline's ridge, FLOP/byte) beside the printed CMR."""
    import pandas as pd
    rows = []
    for gpu, spec in PAPER_TABLE_IV.items():
        rows.append({"GPU": gpu, "CUDA cores": spec["cores"], "L2 (MiB)": spec["l2_bytes"] / 2**20,
                     "peak bandwidth (GB/s)": spec["bandwidth"] / 1e9,
                     "peak float32 (TFLOP/s)": spec["peak_flops"] / 1e12,
                     "CMR (paper, FLOP/byte)": spec["cmr"],
                     "CMR recomputed (FLOP/byte)": spec["peak_flops"] / spec["bandwidth"]})
    return pd.DataFrame(rows)


def fisher_interval(r: float, n: int, z: float = 1.96) -> tuple:
    """Confidence interval (L, U) for a population correlation from a sample r over n items,
    as Sec. VII does it: Fisher's z = atanh(r), standard error 1/sqrt(n - 3), z-window
    atanh(r) -/+ z x SE, mapped back with tanh."""
    if isinstance(r, bool) or not isinstance(r, numbers.Real) or not -1 < r < 1:
        raise ValueError(f"r must be a correlation strictly between -1 and 1, got {r!r}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 4:
        raise ValueError(f"n must be an integer of at least 4 (the standard error is 1/sqrt(n - 3)), got {n!r}")
    z = _positive("z", z)
    centre, half = math.atanh(r), z / math.sqrt(n - 3)
    return math.tanh(centre - half), math.tanh(centre + half)


def z_window(n: int, z: float = 1.96) -> float:
    """Width of the interval in Fisher's z, 2 z / sqrt(n - 3): independent of r (Sec. VII)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 4:
        raise ValueError(f"n must be an integer of at least 4, got {n!r}")
    return 2 * _positive("z", z) / math.sqrt(n - 3)


def minimum_sample(width: float = 1.0, z: float = 1.96) -> tuple:
    """Eq. 6: the least n with a z-window at most ``width`` wide: (the bound on n, the
    least whole n). The paper's 95% window of 1 gives n >= 18.37, so 19 networks."""
    bound = 3 + (2 * _positive("z", z) / _positive("width", width)) ** 2
    return bound, math.ceil(bound)


def table_ix_recomputed(n: int = PAPER_SAMPLE):
    """Table IX recomputed from Table VI's r (Fisher's z over ``n`` networks, the paper's 25),
    beside the printed L and U, rounded to the paper's two decimals; plus the window
    Delta = U - L of the rounded limits, as the paper prints it. One row per (GPU, metric, confidence)."""
    import pandas as pd
    rows = []
    for (gpu, metric), r in PAPER_TABLE_VI.items():
        for level, z in PAPER_Z.items():
            lo, hi = fisher_interval(r, n, z)
            p_lo, p_hi = PAPER_TABLE_IX[(gpu, metric)][level]
            lo, hi = round(lo, 2), round(hi, 2)
            rows.append({"GPU": gpu, "metric": metric, "r (Table VI)": r, "confidence (%)": level,
                         "L": lo, "L (paper)": p_lo, "U": hi, "U (paper)": p_hi,
                         "window": round(hi - lo, 2), "window (paper)": round(p_hi - p_lo, 2)})
    return pd.DataFrame(rows)


def eq6_recomputed() -> dict:
    """Eq. 6 recomputed beside the paper's printed values: the bound on n and the least n for a
    95% z-window of 1, and the window at the paper's 25 networks."""
    bound, least = minimum_sample(1.0, PAPER_Z[95])
    return {"phi_bound": bound, "phi_bound (paper)": PAPER_EQ6["phi_bound"],
            "minimum": least, "minimum (paper)": PAPER_EQ6["minimum"],
            "window_at_25": z_window(PAPER_SAMPLE, PAPER_Z[95]), "window_at_25 (paper)": PAPER_EQ6["window_at_25"]}


def fig3_calls(itemsize: int = 4):
    """The paper's memory-/compute-bound calls (Fig. 3, as its text states them) beside two
    readings of its roofline: AI_c or DI from Table VIII (MACs per element) compared directly
    with Table IV's CMR (FLOP/byte), and in consistent units, where the ridge in MACs per
    element is CMR x ``itemsize`` / 2 (2 FLOPs per MAC; 4 bytes per float32 element).
    One row per (metric, network, GPU)."""
    import pandas as pd
    rows = []
    for metric, calls in PAPER_FIG3_CALLS.items():
        for name, call in calls.items():
            value = dict(zip(TABLE_VIII_COLUMNS, PAPER_TABLE_VIII[name]))[metric]
            for gpu, spec in PAPER_TABLE_IV.items():
                ridge = spec["cmr"] * itemsize / 2
                rows.append({"metric": metric, "network": name, "GPU": gpu, "value (MACs per element)": value,
                             "paper's call": call,
                             "read against CMR": "memory" if value < spec["cmr"] else "compute",
                             "ridge in MACs per element": ridge,
                             "in consistent units": "memory" if value < ridge else "compute"})
    return pd.DataFrame(rows)
