"""The roofline model (Williams, Waterman & Patterson, 2009).

A kernel that does ``flops`` FLOPs and moves ``nbytes`` bytes cannot finish
faster than ``max(flops / peak_flops, nbytes / peak_bandwidth)`` seconds. Its
arithmetic intensity ``flops / nbytes`` (FLOP/byte) says which term wins: below
the ridge point ``peak_flops / peak_bandwidth`` it is memory-bound, above it
compute-bound. A call so small that a fixed cost per call (launch, dispatch,
Python) exceeds both terms is overhead-bound.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .checks import positive as _positive

COMPUTE, MEMORY, OVERHEAD = "compute-bound", "memory-bound", "overhead-bound"
UNEXPLAINED = 2.0    # a time over twice its largest bound is explained by none of them
UNEXPLAINED_REGIME = "explained by no bound"


def has_spec_sheet(summary: dict) -> bool:
    """Whether a device (its ``Device.summary()`` dict) takes its peaks from a spec sheet:
    a GPU that :mod:`brrr.specs` knows. A CPU's peaks are measured; an unknown GPU's are derived
    from its properties (clocks, bus width, SM count), which is no spec sheet either."""
    return summary.get("backend") == "cuda" and not summary.get("source", "").startswith("unknown GPU")


def _non_negative(name, value):
    try:
        if isinstance(value, (bool, str, bytes)):
            raise TypeError
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number or array of numbers, got {value!r}") from None
    if np.any(arr < 0) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return arr if arr.ndim else float(arr)


def arithmetic_intensity(flops, nbytes):
    """FLOPs per byte moved (FLOP/byte)."""
    flops = _non_negative("flops", flops)
    nbytes = _non_negative("nbytes", nbytes)
    if np.any(np.asarray(nbytes) == 0):
        raise ValueError("nbytes must be > 0 to form an intensity")
    return flops / nbytes


@dataclass
class Roofline:
    """A device's roofline: peak FLOP/s and bytes/s, plus optional extra ceilings.

    ``compute_ceilings`` / ``memory_ceilings`` map a label to FLOP/s or bytes/s
    (tensor cores vs general math, FP16 vs FP32, L2 vs DRAM, spec vs measured).
    ``overhead`` is a fixed cost per call in seconds (e.g. a measured launch or
    timer floor); with it, :meth:`regime` can say "overhead-bound".
    """
    peak_flops: float
    peak_bandwidth: float
    compute_ceilings: dict = field(default_factory=dict)
    memory_ceilings: dict = field(default_factory=dict)
    overhead: Optional[float] = None
    name: str = ""

    def __post_init__(self):
        self.peak_flops = _positive("peak_flops", self.peak_flops)
        self.peak_bandwidth = _positive("peak_bandwidth", self.peak_bandwidth)
        for label, value in {**self.compute_ceilings, **self.memory_ceilings}.items():
            _positive(f"ceiling {label!r}", value)
        if self.overhead is not None:
            _non_negative("overhead", self.overhead)

    @property
    def ridge(self) -> float:
        """Ridge point in FLOP/byte: the intensity where memory and math take equally long."""
        return self.peak_flops / self.peak_bandwidth

    def attainable(self, ai):
        """Best FLOP/s at arithmetic intensity ``ai`` (FLOP/byte): min(peak, ai x bandwidth)."""
        ai = _non_negative("ai", ai)
        return np.minimum(self.peak_flops, np.asarray(ai) * self.peak_bandwidth) if isinstance(ai, np.ndarray) \
            else min(self.peak_flops, ai * self.peak_bandwidth)

    def t_math(self, flops):
        """Seconds the FLOPs take at peak FLOP/s."""
        return _non_negative("flops", flops) / self.peak_flops

    def t_mem(self, nbytes):
        """Seconds the bytes take at peak bandwidth."""
        return _non_negative("nbytes", nbytes) / self.peak_bandwidth

    def time(self, flops, nbytes):
        """Roofline time in seconds: max(t_math, t_mem) (plus nothing for overhead)."""
        return np.maximum(self.t_math(flops), self.t_mem(nbytes))

    def efficiency(self, flops, nbytes, seconds):
        """Roofline time / measured time: 1 means at the roof, 0.1 means 10x slower."""
        seconds = _non_negative("seconds", seconds)
        return self.time(flops, nbytes) / seconds

    def regime(self, flops, nbytes, seconds=None) -> str:
        """'compute-bound', 'memory-bound' or 'overhead-bound': which lower bound on the time
        of a call is the largest.

        ``t_math = flops / peak_flops`` (compute-bound), ``t_mem = nbytes / peak_bandwidth``
        (memory-bound) and, when ``overhead`` is known, the fixed cost of one call (Chapter
        3: the flat part of time against size). A call is overhead-bound when that fixed cost
        is at least its roofline time ``max(t_math, t_mem)``: left of the size where the work
        catches up with the cost of issuing it. A measured time (``seconds``, checked to be
        positive) does not change the regime; it says how close to its bound the call ran
        (:meth:`efficiency`).
        """
        t_math, t_mem = float(self.t_math(flops)), float(self.t_mem(nbytes))
        if seconds is not None:
            _positive("seconds", seconds)
        if self.overhead is not None and self.overhead >= max(t_math, t_mem):
            return OVERHEAD
        return COMPUTE if t_math >= t_mem else MEMORY

    def judge(self, flops, nbytes, seconds=None, device_time: bool = False) -> str:
        """The book's one rule with a measured time: :meth:`regime`, or UNEXPLAINED_REGIME where ``seconds`` are
        over UNEXPLAINED times the largest bound. ``device_time``: the seconds are the GPU's own (a replayed row),
        which hold no cost of issuing the call; one busy for longer than ``overhead`` hides it, so only the
        arithmetic and the memory traffic can explain its time."""
        work = {COMPUTE: float(self.t_math(flops)), MEMORY: float(self.t_mem(nbytes))}
        hides = device_time and None not in (seconds, self.overhead) and seconds > self.overhead
        if self.overhead is not None and not hides:
            work[OVERHEAD] = self.overhead
        if seconds is not None and seconds > UNEXPLAINED * max(work.values()):
            return UNEXPLAINED_REGIME
        return max(work, key=work.get) if hides else self.regime(flops, nbytes)

    def with_ceilings(self, **kwargs) -> "Roofline":
        """A copy with some fields replaced (``Roofline`` is plain data)."""
        data = dict(peak_flops=self.peak_flops, peak_bandwidth=self.peak_bandwidth,
                    compute_ceilings=dict(self.compute_ceilings), memory_ceilings=dict(self.memory_ceilings),
                    overhead=self.overhead, name=self.name)
        data.update(kwargs)
        return Roofline(**data)

    def to_dict(self) -> dict:
        return {"peak_flops": self.peak_flops, "peak_bandwidth": self.peak_bandwidth,
                "compute_ceilings": self.compute_ceilings, "memory_ceilings": self.memory_ceilings,
                "overhead": self.overhead, "name": self.name}

    @classmethod
    def from_dict(cls, data: dict) -> "Roofline":
        return cls(**data)

    @classmethod
    def from_device(cls, dev=None, dtype="float32", tensor_cores=False) -> "Roofline":
        """The spec (GPU) or measured (CPU) roofline of a device, with its other ceilings.

        The main roof is ``dtype`` (with or without tensor cores); the ceilings hold
        every other figure the device knows (FP32, TF32/FP16/BF16 tensor, FP64).
        """
        from .device import device as live
        dev = dev or live()
        compute = {}
        for dt, tc, label in (("float64", False, "FP64"), ("float32", False, "FP32"),
                              ("float32", True, "TF32 tensor"), ("float16", True, "FP16 tensor"),
                              ("bfloat16", True, "BF16 tensor")):
            if tc and not dev.has_tensor_cores(dt):
                continue
            compute[label] = dev.peak_flops(dt, tc)
        memory = {"DRAM": dev.peak_bandwidth}
        return cls(peak_flops=dev.peak_flops(dtype, tensor_cores), peak_bandwidth=dev.peak_bandwidth,
                   compute_ceilings=compute, memory_ceilings=memory, name=dev.name)

    @classmethod
    def from_summary(cls, summary: dict) -> "Roofline":
        """The roofline of a device described by ``Device.summary()`` (as saved in a result's
        ``meta['device']``): its FP32 roof, with the tensor-core rates as ceilings."""
        if not isinstance(summary, dict) or not {"peak_flops_float32", "peak_bandwidth"} <= set(summary):
            raise ValueError("summary must be a Device.summary() dict with peak_flops_float32 and peak_bandwidth")
        compute = {"FP32": summary["peak_flops_float32"]}
        for key, label in (("peak_flops_float32_tensor", "TF32 tensor"), ("peak_flops_float16_tensor", "FP16 tensor")):
            if summary.get(key) and summary[key] != summary["peak_flops_float32"]:
                compute[label] = summary[key]
        return cls(peak_flops=summary["peak_flops_float32"], peak_bandwidth=summary["peak_bandwidth"],
                   compute_ceilings=compute, memory_ceilings={"DRAM": summary["peak_bandwidth"]},
                   name=summary.get("name", ""))

    @classmethod
    def from_measurements(cls, result) -> "Roofline":
        """The roof a :func:`brrr.experiments.measure_roofline` result measured: the best
        bandwidth and the best float32 general-math matmul, every other measured rate a
        ceiling. Named '<device> measured roof'. Works on a result loaded from JSON."""
        meta = getattr(result, "meta", None)
        if meta is None:
            raise TypeError(f"result must be a brrr.Result from measure_roofline, got {type(result).__name__}")
        for key in ("peak_flops", "peak_bandwidth"):
            if not meta.get(key):
                raise ValueError(f"result has no {key.replace('_', ' ')} measurement: was it cut short? "
                                 f"(notes: {meta.get('notes', [])})")
        name = meta.get("device", {}).get("name", "")
        return cls(peak_flops=meta["peak_flops"], peak_bandwidth=meta["peak_bandwidth"],
                   compute_ceilings=dict(meta.get("compute_ceilings", {})),
                   memory_ceilings=dict(meta.get("memory_ceilings", {})),
                   name=f"{name} measured roof".strip())

    @classmethod
    def of_run(cls, result) -> "Roofline":
        """The one roof a run is judged against: its device's spec sheet where brrr has one
        (a known GPU), else the roof the run measured (a CPU, an unknown GPU).

        ``result`` is a :func:`measure_roofline` result, live or loaded from JSON.
        """
        summary = getattr(result, "meta", {}).get("device", {})
        if has_spec_sheet(summary):
            roof = cls.from_summary(summary)
            roof.name = f"{summary['name']} spec sheet"
            return roof
        return cls.from_measurements(result)

    def __repr__(self):
        return (f"Roofline({self.name + ': ' if self.name else ''}{self.peak_flops / 1e12:.3g} TFLOP/s, "
                f"{self.peak_bandwidth / 1e9:.4g} GB/s, ridge {self.ridge:.3g} FLOP/byte)")


REFERENCE_GPU = "H100-SXM"     # the worked problems' reference GPU, a key of brrr.specs.GPU_SPECS


def reference_roof() -> Roofline:
    """The reference GPU's float32 roof (:data:`REFERENCE_GPU`), from its spec sheet."""
    from .specs import GPU_SPECS
    spec = GPU_SPECS[REFERENCE_GPU]
    return Roofline(peak_flops=spec.fp32, peak_bandwidth=spec.bandwidth, name=spec.name)


def worked_roofs(dev) -> tuple:
    """The worked problems' two roofs: ``dev``'s float32 one (its spec sheet, or a CPU's measured peaks) and the
    reference GPU's (:func:`reference_roof`)."""
    return (Roofline(peak_flops=dev.peak_flops("float32"), peak_bandwidth=dev.peak_bandwidth, name=dev.name),
            reference_roof())
