"""Synthetic record sets for GPUs we have no run of (a T4, an L4, an A100), made from a real set by
rescaling each record to the device's spec sheet, so that every chapter's claims are checked on
devices no one here has measured. Not measurements: never shipped, never drawn as a reference.

Every record of the NVIDIA H200 set becomes the record the target would have made, by these rules
(H200 is the source, the target the spec sheet of :data:`DEVICES`; seconds, FLOP/s, bytes/s):

* **the device**: ``meta['device']`` is the target's summary, its source saying it is synthetic;
  ``meta['synthetic']`` is True; every peak, roof, ridge, cache size and SM count in meta and in
  the records is the target's. A path the target lacks (TF32 and BF16 tensor cores on a T4) is what
  brrr records there: a matmul sweep runs general math, with brrr's note, as fast as the float32
  sweep on general math; ``measure_roofline`` leaves the matmul out; chapter 8 autocasts to float16.
* **a timed call with costs** (FLOPs and/or bytes, and the peak its dtype and tensor-core flag name):
  its bound on each device is ``c + r``, a fixed cost per call ``c`` plus its roofline time
  ``r = max(FLOPs / peak, bytes / bandwidth)``; the time scales by ``(c + r_target) / (c + r_H200)``,
  but comes no closer to the target's roof than the record came to the H200's or, where it came
  closer, than the H200's best kernels did (its measured roofs, ``measure_roofline``); a record
  above the H200's roof scales by ``r_target / r_H200`` (the same factor). ``c`` is the fixed cost
  the set measured for that call: a profile's dispatch cost per operator; in a sweep that starts in
  the overhead regime (its fastest call took over ``brrr.claims.UNEXPLAINED`` times its roofline
  time), that fastest call's time; else the timer's floor (an empty call). So work-bound calls scale
  by the roofline ratio, overhead-bound ones keep the H200's time.
* **a whole model** (chapter 8's steps): each regime's share of its profiled time scales by that
  regime's ratio (compute, memory; overhead unchanged). Chapter 7's remedies follow the profile of
  the block they time.
* **no costs recorded**: host-side Python and dispatch costs, and the overhead-bound demos built to
  show them (call_overhead, python_ops_per_second, double_the_batch, reduce_overhead_demo,
  profiler_trace, profile_batches), keep their times; the checkpointed MLP's training step scales by
  the FP32 FLOP ratio (compute-bound), the saved-tensor chain by the bandwidth ratio (memory-bound).
* **cache and parallelism sweeps** (chapter 2) are redrawn at the target's points: a copy's
  bandwidth at a working set is the H200's at the same place relative to its L2, times the bandwidth
  ratio, and never more than the H200's at the same absolute size; a copy on ``p`` blocks keeps the
  H200's latency-bound bandwidth up to the H200's best fraction of the target's roof.
* **derived fields** follow their times and peaks: rates divide by the time factor; shares of a peak,
  MFU, efficiencies, roofline and predicted times, regimes, knees, crossovers, gaps and warnings are
  recomputed with brrr's own functions where the record has what they are made of.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
from pathlib import Path

import numpy as np

from brrr import specs
from brrr.device import Device, gpu_spec
from brrr.results import REFERENCE_DIR, Result
from brrr.roofline import Roofline

DEVICES = {"synthetic-tesla-t4": "T4", "synthetic-nvidia-l4": "L4", "synthetic-a100-sxm4-40gb": "A100-40GB"}
SOURCE_SET = REFERENCE_DIR / "nvidia-h200"
STAMP = "SOURCE"        # a set's stamp: the hash of what made it (no .json: not a record)
FLOAT_TYPES = ("float64", "float32", "float16", "bfloat16")
TIMES = ("seconds", "min_seconds", "iqr_seconds", "median_seconds", "max_seconds", "model_seconds",
         "model_iqr_seconds", "matmul_seconds", "seconds_per_token")
RATES = ("gbps", "gflops", "achieved_flops", "flops_per_second", "tokens_per_second")
NOT_A_SERIES = {"warnings", "label", "peak_source", "module", "regime", "predicted_regime", "skipped", "device"}


# --- the devices ------------------------------------------------------------------------------

def target(key: str) -> Device:
    """The replayed device of the spec ``key`` of :data:`brrr.specs.GPU_SPECS`, under the name CUDA
    reports for it (the spec's first alias, which :func:`brrr.device.gpu_spec` takes back)."""
    spec = specs.GPU_SPECS[key]
    return Device(name=spec.match[0], backend="cuda", array_library="cupy", l2_bytes=spec.l2_bytes,
                  spec=spec, sm_count=spec.sm_count, replayed=True)


def source(summary: dict) -> Device:
    """The device of a recorded summary (``meta['device']``), as :func:`brrr.device._replayed_device`
    builds it."""
    spec = gpu_spec(summary["name"], {"multiProcessorCount": summary.get("sm_count")})
    return Device(name=summary["name"], backend="cuda", array_library=summary.get("array_library", "cupy"),
                  l2_bytes=int(summary.get("l2_bytes") or spec.l2_bytes), spec=spec,
                  sm_count=summary.get("sm_count"), replayed=True)


class Pair:
    """The measured device ``src`` and the target ``dst`` of one rescaling, and the target's
    summary (``line``: its plainly synthetic source); ``cache``: a folder for what no device enters."""

    def __init__(self, src: Device, dst: Device, date: str, cache: Path = Path(".")):
        self.src, self.dst, self.cache = src, dst, cache
        self.line = (f"synthetic: the {src.name} run of {date} rescaled to the {dst.spec.name} spec sheet; "
                     "not a measurement")
        self.summary = {**dst.summary(), "source": self.line}

    def peak(self, dev: Device, dtype: str, tensor: bool) -> float:
        """FLOP/s of ``dtype`` on ``dev``, on tensor cores where asked and present (else general math);
        int8 scales as FP16 tensor cores (brrr.specs holds no int8 figures), other types as FP32."""
        if dtype == "int8":
            return dev.peak_flops("float16", True)
        return dev.peak_flops(dtype if dtype in FLOAT_TYPES else "float32", tensor)

    def bound(self, dev: Device, flops, nbytes, dtype="float32", tensor=False) -> float:
        """Roofline seconds of ``flops`` and ``nbytes`` on ``dev``: max(FLOPs / peak, bytes / bandwidth)."""
        return max((flops or 0) / self.peak(dev, dtype, tensor), (nbytes or 0) / dev.peak_bandwidth)

    def roof(self, dtype="float32", tensor=False, name=None) -> Roofline:
        """The target's :class:`brrr.Roofline` for ``dtype`` (``name``: default the device's)."""
        roof = Roofline.from_device(self.dst, dtype if dtype in FLOAT_TYPES else "float32", tensor)
        return roof.with_ceilings(name=name or self.dst.name)

    def ceiling(self, flops, nbytes, dtype="float32", tensor=False) -> float:
        """The share of the target's binding roof for these costs that the H200's best kernels reached
        on the H200's (its measure_roofline: best STREAM over DRAM, best matmul of that path over its peak)."""
        from brrr.experiments.roofline import _ceiling_label
        measured = source_runs()["measure_roofline"].meta
        if (nbytes or 0) / self.dst.peak_bandwidth >= (flops or 0) / self.peak(self.dst, dtype, tensor):
            return measured["peak_bandwidth"] / self.src.peak_bandwidth
        dtype = dtype if dtype in FLOAT_TYPES[1:] else "float16" if dtype == "int8" else "float32"
        tensor = tensor and self.dst.has_tensor_cores(dtype)
        label = _ceiling_label({"kind": "compute", "dtype": dtype, "tensor_cores": tensor})
        return measured["compute_ceilings"].get(label, measured["peak_flops"]) / self.peak(self.src, dtype, tensor)

    def rename(self, text: str) -> str:
        return text.replace(self.src.name, self.dst.name) if isinstance(text, str) else text

    def same_peak(self, value):
        """The target's figure for the source's spec-sheet peak ``value`` (FLOP/s or bytes/s), found by
        what it is; None where ``value`` is none of them (a measured rate)."""
        if value == self.src.peak_bandwidth:
            return self.dst.peak_bandwidth
        for dtype, tensor in (("float32", False), ("float16", True), ("float32", True), ("float64", False)):
            if value == self.src.peak_flops(dtype, tensor):
                return self.dst.peak_flops(dtype, tensor)
        return None


def factor(seconds: float, r_src: float, r_dst: float, fixed: float = 0.0, ceiling: float = 1.0) -> float:
    """Target seconds per H200 second of a call that took ``seconds`` with roofline time ``r_src``
    (``r_dst`` on the target) and a fixed cost ``fixed``: ``(fixed + r_dst) / (fixed + r_src)``, but
    no closer to the target's roof than the H200's own record or, where that was closer, than the
    ``ceiling`` (the share of that roof the H200's best kernels reached); a call above its roof
    scales by ``r_dst / r_src``."""
    if not r_src:
        return 1.0
    if seconds < r_src:
        return r_dst / r_src
    return max((fixed + r_dst) / (fixed + r_src), min(r_dst / r_src, r_dst / ceiling / seconds))


# --- records ----------------------------------------------------------------------------------

def retime(rec: dict, k: float) -> dict:
    """``rec`` with its times multiplied by ``k`` and its rates divided by it (the floor is fixed)."""
    for key in TIMES:
        if isinstance(rec.get(key), (int, float)):
            rec[key] = rec[key] * k
    for key in RATES:
        if isinstance(rec.get(key), (int, float)):
            rec[key] = rec[key] / k
    if "round_seconds" in rec:
        rec["round_seconds"] = [s * k for s in rec["round_seconds"]]
    return rec


def path(rec: dict, pair: Pair) -> tuple:
    """(dtype, tensor cores) of the peak that bounds ``rec`` on the H200: its ``tensor_cores`` flag,
    else a peak above general math, else the one that gives its recorded roofline time."""
    dtype = rec.get("dtype") or "float32"
    if "tensor_cores" in rec:
        return dtype, bool(rec["tensor_cores"])
    if rec.get("peak_flops"):
        return dtype, rec["peak_flops"] > pair.src.peak_flops("float32")
    if rec.get("roofline_seconds"):
        miss = {tc: abs(pair.bound(pair.src, rec["flops"], rec["nbytes"], dtype, tc) - rec["roofline_seconds"])
                for tc in (False, True)}
        return dtype, miss[True] < miss[False]
    return dtype, False


def series(rec: dict) -> tuple:
    """What makes records one sweep: their words and flags (the sizes differ)."""
    return tuple(sorted((k, v) for k, v in rec.items() if isinstance(v, (str, bool)) and k not in NOT_A_SERIES))


def fixed_costs(records: list, bounds: list) -> list:
    """Each record's fixed cost per call (seconds): in a sweep (three or more records of one series)
    whose fastest call took over :data:`brrr.claims.UNEXPLAINED` times its roofline time (no roofline
    bound explains it: the sweep starts in the overhead regime), that call's time; else the record's
    timer floor (0 without one)."""
    from brrr.claims import UNEXPLAINED
    groups: dict = {}
    for rec, r_src in zip(records, bounds):
        groups.setdefault(series(rec), []).append((rec.get("seconds") or math.inf, r_src))
    flat = {}
    for key, calls in groups.items():
        seconds, r_src = min(calls)
        flat[key] = seconds if len(calls) >= 3 and seconds > UNEXPLAINED * r_src else None
    return [flat[series(rec)] if flat[series(rec)] is not None else rec.get("floor_seconds") or 0.0
            for rec in records]


def warnings(rec: dict, pair: Pair):
    """The record's timer warnings on the target: noisy and few-sample ones kept, the overhead,
    cache and spec ones judged again (:func:`brrr.timing._judge`); a list of messages stays a list,
    a string of their names (cache-resident left out, as records write it) stays a string."""
    from brrr.timing import Timing, _judge
    old = rec.get("warnings")
    t = Timing([rec["seconds"]], rec.get("floor_seconds") or 0.0, "cuda", "hot" if rec.get("cache") == "hot" else
               "flush", nbytes=rec.get("nbytes") or None, flops=rec.get("flops") or None)
    new = _judge(t, pair.dst.l2_bytes, pair.dst, 1, 1.0)
    if isinstance(old, list):
        keep = [w for w in old if w.startswith(("noisy", "few samples"))]
        return keep + new
    keep = [w for w in (old or "").split(", ") if w in ("noisy", "few samples")]
    return ", ".join(keep + [w.split(":")[0] for w in new if not w.startswith("cache-resident")])


def derive(rec: dict, pair: Pair, dtype: str, tensor: bool, r_dst: float, overhead=None) -> dict:
    """``rec``'s derived fields recomputed from its (new) time and the target's peaks."""
    from brrr.profiler.regimes import regime_of
    peak, bw, t = pair.peak(pair.dst, dtype, tensor), pair.dst.peak_bandwidth, rec.get("seconds")
    flops, nbytes = rec.get("flops") or 0, rec.get("nbytes") or 0
    roof = pair.roof(dtype, tensor)
    if "peak_flops" in rec and rec["peak_flops"] is not None:
        rec["peak_flops"] = peak
    for key in ("roofline_seconds", "predicted_seconds"):
        if key in rec:
            rec[key] = r_dst
    updates = {"gbps": lambda: nbytes / t / 1e9, "gflops": lambda: flops / t / 1e9,
               "achieved_flops": lambda: flops / t, "intensity": lambda: flops / nbytes if nbytes else rec["intensity"],
               "fraction_of_peak": lambda: flops / t / peak, "mfu": lambda: flops / t / peak,
               "fraction_of_roof": lambda: nbytes / t / bw, "efficiency": lambda: r_dst / t,
               "attainable_flops": lambda: roof.attainable(rec["intensity"]),
               "regime": lambda: regime_of(roof, flops, nbytes, overhead),
               "predicted_regime": lambda: roof.regime(flops, nbytes)}
    for key, value in updates.items():
        if key in rec and t:
            rec[key] = value()
    if isinstance(rec.get("peak_source"), str):
        rec["peak_source"] = pair.line + _source_suffix(rec["peak_source"], pair, dtype, tensor)
    if "warnings" in rec and t:
        rec["warnings"] = warnings(rec, pair)
    if "device" in rec:
        rec["device"] = pair.rename(rec["device"])
    return rec


def _source_suffix(text: str, pair: Pair, dtype: str, tensor: bool) -> str:
    """The '(general math)' kind of suffix a peak's source had, for the target's path."""
    if not text.endswith(")") or text == pair.src.source:
        return ""
    from brrr.experiments.dtypes import TENSOR_NAME
    on_tensor = tensor and dtype in TENSOR_NAME and pair.dst.has_tensor_cores(dtype)
    return f" ({TENSOR_NAME[dtype]} tensor cores)" if on_tensor else " (general math)"


def demote(rec: dict, pair: Pair, notes: list) -> None:
    """A record on tensor cores the target lacks ran general math there, as brrr records it."""
    dtype = rec.get("dtype")
    if rec.get("tensor_cores") and not pair.dst.has_tensor_cores(dtype):
        rec["tensor_cores"] = False
        note = f"no tensor cores for {dtype} on {pair.dst.name}: ran general math"
        if note not in notes:
            notes.append(note)


def rescale_records(records: list, pair: Pair, notes: list, fixed=None, bound=None, general=None) -> None:
    """Every record with costs retimed and re-derived (see the module's rules); records that ran on
    the CPU (host-side) or have no costs keep their times. ``notes``: the result's, for a path the
    target lacks; ``fixed``: one fixed cost for every record (default :func:`fixed_costs`);
    ``bound(device, rec, dtype, tensor)``: roofline seconds (default :meth:`Pair.bound`);
    ``general(rec)``: the target's record of the same call on general math, whose time a record on
    tensor cores the target lacks takes."""
    bound = bound or (lambda dev, rec, dt, tc: pair.bound(dev, rec.get("flops"), rec.get("nbytes"), dt, tc))
    paths = [path(rec, pair) for rec in records]
    timed = [rec.get("backend") != "cpu" and rec.get("seconds") is not None for rec in records]
    bounds = [bound(pair.src, rec, dt, tc) if ok else 0.0 for rec, (dt, tc), ok in zip(records, paths, timed)]
    costs = [fixed] * len(records) if fixed is not None else fixed_costs(records, bounds)
    for rec, (dt, tc), r_src, c, ok in zip(records, paths, bounds, costs, timed):
        if not ok:
            continue
        demote(rec, pair, notes)
        r_dst = bound(pair.dst, rec, dt, rec.get("tensor_cores", tc))
        k = factor(rec["seconds"], r_src, r_dst, c,
                   pair.ceiling(rec.get("flops"), rec.get("nbytes"), dt, rec.get("tensor_cores", tc)))
        same = general(rec) if general and tc and not pair.dst.has_tensor_cores(dt) else None
        if same is not None:
            k = same["seconds"] / rec["seconds"]
        retime(rec, k)
        derive(rec, pair, dt, rec.get("tensor_cores", tc), r_dst, fixed)


# --- meta -------------------------------------------------------------------------------------

def rescale_meta(meta: dict, pair: Pair) -> dict:
    """``meta`` with the target's device, peaks, roofs and caches, marked synthetic."""
    meta = {**meta, "device": dict(pair.summary), "synthetic": True}
    l2 = pair.dst.l2_bytes
    for key, value in list(meta.items()):
        if key == "roof" and isinstance(value, dict):
            dtype = "float32" if value["peak_flops"] == pair.src.peak_flops("float32") else "float16"
            meta[key] = pair.roof(dtype, dtype != "float32", pair.rename(value["name"])).to_dict()
            if "ridge" in meta:
                meta["ridge"] = pair.roof(dtype, dtype != "float32").ridge
        elif key in ("peak_flops", "peak_bandwidth", "roof_bandwidth") and pair.same_peak(value):
            meta[key] = pair.same_peak(value)
        elif key in ("llc_bytes", "cache_bytes"):
            meta[key] = l2
        elif key == "caches":
            meta[key] = {"L2": l2}
        elif key == "bandwidth_source":
            meta[key] = pair.line
        elif key == "sm_count" and value:
            meta[key] = pair.dst.sm_count
    return meta


def notes(result: Result) -> list:
    """The result's notes (a list to drop where it keeps none)."""
    return result.meta["notes"] if isinstance(result.meta.get("notes"), list) else []


def rescale(result: Result, pair: Pair, done: dict) -> Result:
    """The target's version of one H200 record (``done``: the target's records made so far)."""
    out = Result(result.name, copy.deepcopy(result.records), rescale_meta(copy.deepcopy(result.meta), pair))
    hook = HOOKS.get(result.name)
    if hook is not None:
        hook(out, pair, done)
    else:       # records without costs (host-side, overhead-bound demos) keep their times
        rescale_records(out.records, pair, notes(out))
    return out


# --- the experiments that need more than the generic rule -------------------------------------

def _fp32_matmul(done):
    """``general(rec)`` for :func:`rescale_records`: the target's float32 matmul of the same side on
    general math (matmul_vs_size), or None."""
    sides = {r["n"]: r for r in done.get("matmul_vs_size", Result("none")).records}
    return lambda rec: sides.get(rec.get("n", rec.get("size")))


def _matmul_sweep(result, pair, done):
    """matmul_vs_size and matmul_tensor_cores: a sweep on tensor cores the target lacks ran general
    math, noted, as fast as the float32 sweep on general math; meta's peaks per dtype are the records'."""
    rescale_records(result.records, pair, notes(result), general=_fp32_matmul(done))
    peaks = {r["dtype"]: r["peak_flops"] for r in result.records}
    if "peaks" in result.meta:
        result.meta["peaks"] = {d: peaks[d] for d in result.meta["peaks"]}
    if "tensor_cores" in result.meta:
        result.meta["tensor_cores"] = any(r["tensor_cores"] for r in result.records)


def _measure_roofline(result, pair, done):
    """Matmuls on tensor cores the target lacks are not measured there; the roofs are the best rates."""
    from brrr.experiments.roofline import _roofs
    result.records = [r for r in result.records if not r["tensor_cores"] or pair.dst.has_tensor_cores(r["dtype"])]
    rescale_records(result.records, pair, notes(result))
    result.meta.update(_roofs(result.records))


def _dtype_roofline(result, pair, done):
    """The pointwise op has at least twice the target's L2 in elements (:func:`brrr.experiments.dtypes.sizes`);
    a 16-bit matmul the target has no tensor cores for runs as fast as float32 on general math."""
    from brrr.experiments.dtypes import pointwise_counts, sizes
    elements = sizes(pair.dst, quick=bool(result.meta.get("quick")))["elements"]
    src = copy.deepcopy(result.records)
    for rec in result.records:
        if rec["op"] == "pointwise":
            rec["size"] = elements
            rec["flops"], rec["nbytes"] = pointwise_counts(elements, rec["dtype"])
    result.meta["elements"] = elements

    def bound(dev, rec, dtype, tensor):       # the H200's call at its own size
        rec = src[result.records.index(rec)] if dev is pair.src else rec
        return pair.bound(dev, rec["flops"], rec["nbytes"], dtype, tensor)
    rescale_records(result.records, pair, notes(result), bound=bound, general=_fp32_matmul(done))


def _fusion(result, pair, done):
    """The fusion sweeps: predicted times and regimes on the target's roof, its crossover chain."""
    from brrr.experiments.fusion_model import crossover_k
    rescale_records(result.records, pair, notes(result))
    result.meta["crossover_k"] = crossover_k(Roofline.from_dict(result.meta["roof"]), result.meta["op"],
                                             result.meta["dtype"])


def _epilogue(result, pair, done):
    """Eager mode's bound is its three kernels' bounds added (:func:`epilogue_time`)."""
    from brrr.experiments.fusion_epilogue import epilogue_time

    def bound(dev, rec, dtype, tensor):
        roof = Roofline.from_device(dev, dtype)
        return epilogue_time(roof, rec["m"], rec["n"], rec["k"], rec["variant"] != "eager", dtype)
    rescale_records(result.records, pair, notes(result), bound=bound)


def _pointwise(result, pair, done):
    from brrr.experiments.pointwise import measured_knee, predicted_knee
    rescale_records(result.records, pair, notes(result))
    result.meta["predicted_knee"] = predicted_knee(Roofline.from_dict(result.meta["roof"]), result.meta["dtype"])
    result.meta["measured_knee"] = measured_knee(result.records, "fused")


def _elementwise(result, pair, done):
    """The gap: best matmul FLOP/s over best elementwise FLOP/s; the spec's FP16 tensor over FP32."""
    rescale_records(result.records, pair, notes(result))
    best = {}
    for rec in result.records:
        group = "matmul" if rec["kind"].startswith("matmul") else "elementwise"
        best[group] = max(best.get(group, 0.0), rec["gflops"])
    result.meta["gap"] = best["matmul"] / best["elementwise"]
    result.meta["spec_gap"] = pair.dst.peak_flops("float16", True) / pair.dst.peak_flops("float32")


def _time_vs_size(result, pair, done):
    """GPU calls back to back: the fixed cost is chapter 3's fit of the flat part, as brrr fits it."""
    from brrr.experiments.overhead import fit_overheads
    rescale_records(result.records, pair, notes(result))
    result.meta["fixed_cost"] = {lib: fit["overhead"] for lib, fit in fit_overheads(result).items()}


def _profile(result, pair, done):
    """A profile table: each row's fixed cost is the dispatch cost the table's regimes use; the whole
    model's time scales as its rows' sum."""
    attrs = result.meta["attrs"]
    before = sum(r["seconds"] for r in result.records)
    rescale_records(result.records, pair, notes(result), fixed=attrs["overhead_seconds"])
    k = sum(r["seconds"] for r in result.records) / before
    for key in ("model_seconds", "model_iqr_seconds"):
        if attrs.get(key) is not None:
            attrs[key] *= k
    attrs.update(device=pair.dst.name, summary=dict(pair.summary))


def _networks(result, pair, done):
    """Forward passes: each of the four predictions (:func:`brrr.intensity_predict.predict`, from each
    network's layers) scales by its ratio on the two roofs; the bound is the every-layer one."""
    from brrr.intensity_predict import PREDICTIONS, predict
    layers = network_layers(pair.cache)
    src_roof, dst_roof = Roofline.from_device(pair.src), pair.roof(name=f"{pair.dst.name} spec sheet")

    def ratios(rec):
        src, dst = (predict(layers[rec["key"]], rec["macs"], rec["weights"], rec["activations"], roof)
                    for roof in (src_roof, dst_roof))
        out = {key: dst[key] / src[key] for key in ("compute_seconds", *PREDICTIONS)}
        if "di_seconds" in rec:     # a record made when DI was turned into a time: scaled as AI_c's
            out["di_seconds"] = out["ai_c_seconds"]
        return out
    ratio = {rec["key"]: ratios(rec) for rec in result.records}

    def bound(dev, rec, dtype, tensor):
        scale = 1.0 if dev is pair.src else ratio[rec["key"]]["all_layers_seconds"]
        return rec["all_layers_seconds"] * scale
    rescale_records(result.records, pair, notes(result), bound=bound)
    for rec in result.records:
        rec.update({key: rec[key] * r for key, r in ratio[rec["key"]].items()})
    result.meta["roof"] = dst_roof.to_dict()


def _async(result, pair, done):
    """Calls returning is the host's; the work finishing is the matmuls', behind the host's issuing."""
    returned = next(r["seconds"] for r in result.records if r["stage"] == "returned")
    finished = [r for r in result.records if r["stage"] != "returned"]
    rescale_records(finished, pair, notes(result), fixed=returned)


def _steps(result, pair, done):
    """Chapter 8's steps: each regime's share of the step's profiled time scales by its ratio (a step
    whose profile the set holds, ``capstone_profile_<step>``, takes that rescaled table's shares and
    time factor); a 16-bit step runs the target's autocast type (float16 without BF16 tensor cores);
    kept or undone by time per token, as :func:`brrr.experiments.capstone.run_steps` decides."""
    from brrr.experiments.capstone import regime_shares
    from brrr.reference import as_frame
    low = "bfloat16" if pair.dst.has_tensor_cores("bfloat16") else "float16"
    src_low = result.meta["autocast_dtype"]
    result.meta["autocast_dtype"] = low
    kept = None
    for rec in result.records:
        if rec.get("skipped"):
            continue
        tensor = rec["dtype"] != "float32"
        ratios = {"compute-bound": pair.peak(pair.src, rec["dtype"], tensor) /
                  pair.peak(pair.dst, low if tensor else "float32", tensor),
                  "memory-bound": pair.src.peak_bandwidth / pair.dst.peak_bandwidth}
        grown = {r: v * ratios.get(r, 1.0) for r, v in rec["regime_shares"].items()}
        k, shares = sum(grown.values()) or 1.0, None
        table = done.get(f"capstone_profile_{rec['step']}")
        if table is not None:
            before = source_runs()[table.name].records
            k = sum(r["seconds"] for r in table.records) / sum(r["seconds"] for r in before)
            shares = regime_shares(as_frame(table))
        rec["dtype"] = low if rec["dtype"] == src_low else rec["dtype"]
        peak = pair.peak(pair.dst, rec["dtype"], tensor)
        retime(rec, max(k, rec["flops"] / peak / rec["seconds"]))
        rec.update(regime_shares=shares or {r: v / k for r, v in grown.items()}, peak_flops=peak,
                   mfu=rec["flops_per_second"] / peak, builds_on=kept["step"] if kept else None)
        rec["regime"] = max(rec["regime_shares"], key=rec["regime_shares"].get)
        rec["kept"] = kept is None or rec["seconds_per_token"] <= kept["seconds_per_token"]
        kept = rec if rec["kept"] else kept


def _follow(name):
    """A remedy timing the block that profile ``name`` profiled: its time scales as that model's."""
    def hook(result, pair, done):
        k = done[name].meta["attrs"]["model_seconds"] / source_runs()[name].meta["attrs"]["model_seconds"]
        for rec in result.records:
            retime(rec, k)
    return hook


def _precision(result, pair, done):
    """Chapter 7's precision remedy: float32 is profile_eval's table (its sums); the 16-bit record's
    totals scale as its rows would (dispatch cost per row plus roofline time, bytes halved)."""
    table = done["profile_eval"]
    src = source_runs()["profile_eval"]
    c = src.meta["attrs"]["overhead_seconds"]
    for rec in result.records:
        if rec["dtype"] == "float32":
            rows = table.records
            mm = [r for r in rows if r["category"] == "matmul"]
            rec.update(matmul_seconds=sum(r["seconds"] for r in mm), seconds=sum(r["seconds"] for r in rows),
                       matmul_roofline_seconds=sum(r["roofline_seconds"] for r in mm),
                       model_seconds=table.meta["attrs"]["model_seconds"])
            continue
        low = rec["dtype"]

        def total(dev, rows):
            return sum(pair.bound(dev, r["flops"], r["nbytes"] / 2, low, r["category"] == "matmul") for r in rows)

        def k(seconds, rows):
            ceiling = pair.ceiling(rec["flops"], rec["nbytes"], low, True)
            return factor(seconds, total(pair.src, rows), total(pair.dst, rows), c * len(rows), ceiling)
        mm = [r for r in src.records if r["category"] == "matmul"]
        k_mm, k_all = k(rec["matmul_seconds"], mm), k(rec["seconds"], src.records)
        rec.update(matmul_seconds=rec["matmul_seconds"] * k_mm, matmul_roofline_seconds=total(pair.dst, mm),
                   seconds=rec["seconds"] * k_all, model_seconds=rec["model_seconds"] * k_all)


def _ratio(kind):
    """A sweep without counted costs whose work is all one kind: 'compute' (FP32 general math) or
    'memory' (DRAM)."""
    def hook(result, pair, done):
        k = (pair.src.peak_flops("float32") / pair.dst.peak_flops("float32") if kind == "compute"
             else pair.src.peak_bandwidth / pair.dst.peak_bandwidth)
        for rec in result.records:
            retime(rec, k)
            if "device" in rec:
                rec["device"] = pair.rename(rec["device"])
    return hook


def _python_ops(result, pair, done):
    """Host Python: the ops' times stay; what the target's FP16 tensor cores do meanwhile follows."""
    peak = pair.dst.peak_flops("float16", True)
    for rec in result.records:
        rec["flops_meanwhile"] = rec["seconds_per_op"] * peak


def _interp(x, xs, ys) -> float:
    """``ys`` at ``x``, interpolated log-log between the points ``xs`` (sorted)."""
    return float(np.exp(np.interp(math.log(x), np.log(xs), np.log(ys))))


def _nearest(records: list, key: str, x) -> dict:
    return min(records, key=lambda r: abs(math.log(r[key] / x)))


def _like(rec: dict, seconds: float) -> dict:
    """A copy of ``rec`` taking ``seconds``, its spread in the same proportion and its rates following."""
    out = dict(rec)
    retime(out, seconds / rec["seconds"])
    return out


def _bandwidth_vs_size(result, pair, done):
    """A copy's bandwidth at each of the target's working sets (:func:`default_working_sets`): the
    H200's at the same place relative to its L2, times the bandwidth ratio; never faster than the
    H200's at the same absolute size (the launch and the latency)."""
    from brrr.experiments.bandwidth import default_working_sets
    src = sorted(source_runs()["bandwidth_vs_size"].records, key=lambda r: r["working_set"])
    sets, rates, times = ([r[k] for r in src] for k in ("working_set", "gbps", "seconds"))
    scale = pair.dst.l2_bytes and pair.src.l2_bytes / pair.dst.l2_bytes
    ratio = pair.dst.peak_bandwidth / pair.src.peak_bandwidth
    out = []
    for ws in default_working_sets(pair.dst, quick=bool(result.meta.get("quick"))):
        size = max(1, ws // (2 * 4))
        rate = _interp(ws * scale, sets, rates) * 1e9 * ratio
        seconds = max(_interp(ws, sets, times), 2 * size * 4 / rate)
        rec = _like(_nearest(src, "working_set", ws), seconds)
        rec.update(size=size, working_set=2 * size * 4, nbytes=float(2 * size * 4))
        out.append(derive(rec, pair, "float32", False, 0.0))
    result.records = out


def _bandwidth_vs_parallelism(result, pair, done):
    """The copy at each of the target's block counts (:func:`default_blocks`) on the target's array
    (:func:`default_elements`): the H200's bandwidth at that many blocks (latency-bound: each block's
    loads in flight, and the latency, taken as alike), at most its best fraction of the target's roof."""
    from brrr.experiments.latency import ARRAY_FACTOR, default_blocks, default_elements
    src = sorted(source_runs()["bandwidth_vs_parallelism"].records, key=lambda r: r["parallelism"])
    ps, rates = [r["parallelism"] for r in src], [r["gbps"] for r in src]
    ceiling = max(r["fraction_of_roof"] for r in src) * pair.dst.peak_bandwidth
    n = default_elements(pair.dst, quick=bool(result.meta.get("quick")))
    latency = result.meta["latency"]
    latency["buffer_bytes"] = max(ARRAY_FACTOR * pair.dst.l2_bytes, 64 * 2 ** 20)
    out = []
    for p in default_blocks(pair.dst.sm_count):
        rate = min(_interp(p, ps, rates) * 1e9, ceiling)
        rec = _like(_nearest(src, "parallelism", p), 2 * n * 4 / rate)
        rec.update(size=n, nbytes=float(2 * n * 4), parallelism=p, threads=p * result.meta["block"])
        derive(rec, pair, "float32", False, 0.0)
        rec["bytes_in_flight"] = rec["gbps"] * 1e9 * latency["seconds_per_load"]
        out.append(rec)
    result.records = out
    result.meta["n"] = n


HOOKS = {
    "matmul_vs_size": _matmul_sweep, "matmul_tensor_cores": _matmul_sweep, "measure_roofline": _measure_roofline,
    "dtype_roofline": _dtype_roofline, "cos_fusion": _fusion, "fusion_cos_chain": _fusion,
    "fusion_kernels": _fusion, "fusion_torch_compile": _fusion, "epilogue_fusion": _epilogue,
    "pointwise_repeat_sweep": _pointwise, "elementwise_vs_matmul": _elementwise, "time_vs_size": _time_vs_size,
    "profile_block": _profile, "profile_bert": _profile, "profile_train": _profile, "profile_eval": _profile,
    "profile_resnet18": _profile, "capstone_profile_batch": _profile, "network_predictions": _networks,
    "async_demo": _async, "capstone_steps": _steps, "compile_block": _follow("profile_eval"),
    "profile_precision": _precision, "checkpoint_sweep": _ratio("compute"), "compiled_recompute": _ratio("memory"),
    "python_ops_per_second": _python_ops, "bandwidth_vs_size": _bandwidth_vs_size,
    "bandwidth_vs_parallelism": _bandwidth_vs_parallelism,
}
FOLLOWERS = ("compile_block", "profile_precision", "matmul_tensor_cores", "dtype_roofline")   # made after
# the records they follow (profile_eval; matmul_vs_size)


# --- the sets ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def source_runs() -> dict:
    """{experiment: Result} of the H200 set (read once; never changed: :func:`rescale` copies)."""
    return {p.stem: Result.load(str(p)) for p in sorted(SOURCE_SET.glob("*.json"))}


LAYER_COLUMNS = ("macs", "weights", "in_elements", "out_elements", "blobs", "category")   # what predict() reads


def network_layers(out: Path) -> dict:
    """{network key: its layer table} (:func:`brrr.intensity_networks.model_intensity`, counted on
    'meta' once and kept in ``out/network-layers.txt``: counting takes seconds, and no device enters)."""
    import pandas as pd
    cache = Path(out) / "network-layers.txt"
    if not cache.exists():
        import torch
        from brrr import models
        from brrr.intensity_networks import model_intensity
        tables = {}
        for rec in source_runs()["network_predictions"].records:
            with torch.device("meta"):
                counted = model_intensity(models.get(rec["key"]), (1, *models.INPUT_SHAPES[rec["key"]][1:]))
            tables[rec["key"]] = counted.layers[list(LAYER_COLUMNS)].to_dict("list")
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(tables))
    return {key: pd.DataFrame(table) for key, table in json.loads(cache.read_text()).items()}


def make_set(label: str, folder: Path) -> Path:
    """Write the synthetic set ``label`` of :data:`DEVICES` into ``folder``."""
    runs = source_runs()
    first = next(iter(runs.values()))
    date = max(r.meta.get("date", "")[:10] for r in runs.values())
    pair = Pair(source(first.meta["device"]), target(DEVICES[label]), date, cache=folder.parent)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    done = {}
    for name in sorted(runs, key=lambda n: n in FOLLOWERS):
        done[name] = rescale(runs[name], pair, done)
        done[name].to_json(str(folder / f"{name}.json"))
    return folder


def _stamp() -> str:
    """A hash of this module and of the H200 set: what the synthetic sets are made from."""
    h = hashlib.sha256(Path(__file__).read_bytes())
    for p in sorted(SOURCE_SET.glob("*.json")):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


def make_all(out) -> dict:
    """{label: folder} of every synthetic set, written under ``out`` (each rewritten only where its
    stamp says it was made from something else)."""
    stamp, folders = _stamp(), {}
    for label in DEVICES:
        folder = Path(out) / label
        if not (folder / STAMP).exists() or (folder / STAMP).read_text() != stamp:
            make_set(label, folder)
            (folder / STAMP).write_text(stamp)
        folders[label] = folder
    return folders
