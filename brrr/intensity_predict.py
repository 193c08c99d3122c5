"""What DI and AI_c predict against what the device measures, per network and per kind of layer.

Jha, Mittal & Avancha (2020) place whole networks on a roofline at their AI_c (their Fig. 3a,b)
and at their DI (Fig. 3c,d), and test DI against measured *energy*. This module sets *time*, the
quantity a roofline predicts, beside the byte counts on the live device:

* :func:`measure_networks` times each network's forward pass (:func:`brrr.bench`, batch 1)
  and sets beside it the roofline's predictions from counted bytes: the network as one kernel
  at AI_c, the sum of its Conv and FC layers each on the roofline, and the sum over every
  counted layer (BatchNorm, ReLU, pooling, concatenation and additions too, which do no MACs
  but move activations); :func:`least_seconds` is its least time. Counts are
  :func:`brrr.intensity.model_intensity`'s (blobs). DI is not a count of elements moved (M_c/DI
  can exceed the whole footprint W + A, or fall below the weights alone), so no time is made of it.
* :func:`measure_layer_kinds` profiles one network operator by operator
  (:func:`brrr.profiler.profile`) and sums the measured and the roofline time per kind of
  layer (standard, pointwise, group, depthwise convolution, FC, and layers without MACs).

Conversions as in :func:`brrr.intensity.roofline_points`: FLOPs = 2 x MACs, bytes =
elements x bytes per element, so an intensity of I MACs per element is 2 I / 4 FLOP per
byte in float32. The network-level predictions treat the network as if it were one kernel,
which is what putting it on a roofline at one intensity means.
"""
from __future__ import annotations

import math

from .intensity_paper import PAPER_NAMES, PAPER_NAMES_ADDED
from .results import needs_measurements

#: Networks timed by default: the chapter's eight, and in quick mode four small ones.
FULL_NETWORKS = ("alexnet", "vgg16", "nin", "resnet50", "mobilenet_v1", "mobilenet_v2",
                 "squeezenet1_0", "squeezenet1_1")
QUICK_NETWORKS = ("alexnet", "mobilenet_v1", "mobilenet_v2", "squeezenet1_1")
PREDICTIONS = {"ai_c_seconds": "one kernel at AIc", "conv_fc_seconds": "Conv and FC layers, each on the roof",
               "all_layers_seconds": "every layer, each on the roof"}
KIND_ORDER = ("standard", "pointwise", "group", "depthwise", "fc", "no MACs")


def _paper_name(key: str) -> str:
    return {**PAPER_NAMES, **PAPER_NAMES_ADDED}.get(key, key)


def predict(layers, macs: int, weights: int, activations: int, roof, itemsize: int = 4) -> dict:
    """The roofline's predictions (seconds) for one network from its counts: ``layers`` is
    a :class:`ModelIntensity`'s per-operator table (columns macs, weights, in_elements,
    out_elements, blobs; the blob count's ``input`` row is not a layer and is left out),
    ``roof`` a :class:`brrr.Roofline`."""
    flops = 2 * macs
    per_layer = [float(roof.time(2 * r.macs, itemsize * (r.weights + r.in_elements + r.out_elements)))
                 for r in layers.itertuples() if r.blobs and getattr(r, "category", "") != "input"]
    conv_fc = [float(roof.time(2 * r.macs, itemsize * (r.weights + r.in_elements + r.out_elements)))
               for r in layers.itertuples() if r.macs > 0]
    return {"compute_seconds": float(roof.t_math(flops)),
            "ai_c_seconds": float(roof.time(flops, itemsize * (weights + activations))),
            "conv_fc_seconds": sum(conv_fc), "all_layers_seconds": sum(per_layer)}


def least_bytes(record: dict, itemsize: int = 4) -> float:
    """The bytes one forward pass of a :func:`measure_network` record must read at least: every
    weight once. The caches are flushed before each sample, so no weight can come from cache;
    the activations can stay in it between layers, so they are not counted."""
    return float(itemsize * record["weights"])


def least_seconds(record: dict, roof, itemsize: int = 4) -> float:
    """The least time of one forward pass of a :func:`measure_network` record against ``roof``:
    its FLOPs at the peak or :func:`least_bytes` at the bandwidth, whichever is longer. A lower
    bound wherever the roof is right; the other predictions charge activations to DRAM too."""
    return float(roof.time(record["flops"], least_bytes(record, itemsize)))


def measure_network(key: str, roof, batch: int = 1, budget: float = 0.3) -> dict:
    """Count network ``key`` of :mod:`brrr.models` (on 'meta'), then time its float32 forward
    pass at ``batch`` on the live device with :func:`brrr.bench` (random weights and input,
    no grad, caches flushed before each sample). One record: the counts, AI_c and DI (MACs
    per element), the measured times, achieved FLOP/s and the predictions of :func:`predict`."""
    import torch
    from . import models, tf32
    from .device import device as live
    from .intensity_networks import model_intensity
    from .timing import bench
    shape = (batch, *models.INPUT_SHAPES[key][1:])
    with torch.device("meta"):
        counted = model_intensity(models.get(key), shape, name=_paper_name(key))
    dev = live()
    net = models.get(key).to(dev.torch_device).eval()
    x = torch.randn(shape, device=dev.torch_device)
    flops, nbytes = 2 * counted.macs, 4 * (counted.weights + counted.activations)

    def forward():
        with torch.no_grad():
            return net(x)

    with tf32.setting(torch, "conv", False):   # float32 on general math, as the float32 roof it is judged by
        t = bench(forward, flops=flops, nbytes=nbytes, budget=budget, label=f"{counted.name} forward")
    record = {"network": counted.name, "key": key, "batch": batch, "operators": count_operators(forward),
              "macs": counted.macs,
              "weights": counted.weights, "activations": counted.activations, "ai_c": counted.ai_c,
              "di": counted.di, "flops": float(flops), "nbytes": float(nbytes), **t.record_fields(),
              "achieved_flops": flops / t.median, "warnings": list(t.warnings),
              **predict(counted.layers, counted.macs, counted.weights, counted.activations, roof)}
    return record


def count_operators(fn) -> int:
    """How many ATen operators one call of ``fn()`` dispatches (each a kernel launch or a view):
    the calls whose fixed cost (Chapter 3) a forward pass pays in eager mode."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        calls = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.calls += 1
            return func(*args, **(kwargs or {}))

    with Count():
        fn()
    return Count.calls



def measure_networks(names=None, batch: int = 1, budget: float = 0.3, progress: bool = True):
    """:func:`measure_network` for each of ``names`` (default: :data:`FULL_NETWORKS`, or
    :data:`QUICK_NETWORKS` in quick mode); a :class:`brrr.Result` whose meta holds the roof
    the predictions use (the device's, :func:`brrr.intensity.device_roof`)."""
    from .config import quick_mode
    from .experiments.common import run_sweep
    from .intensity_measure import device_roof
    from . import models
    names = list(names or (QUICK_NETWORKS if quick_mode() else FULL_NETWORKS))
    unknown = [n for n in names if n not in models.MODELS]
    if unknown:
        raise ValueError(f"names must be networks of brrr.models ({sorted(models.MODELS)}), got {unknown}")
    from .profiler.regimes import dispatch_overhead
    roof = device_roof("float32")
    return run_sweep("network predictions", names, lambda key: measure_network(key, roof, batch, budget),
                     command=f"brrr.intensity_predict.measure_networks({names!r}, batch={batch})",
                     progress=progress, roof=roof.to_dict(), call_seconds=dispatch_overhead())


def _kind_of(op: str, shapes) -> str:
    """The kind of one profiled operator (see :data:`KIND_ORDER`) from its name and input shapes."""
    if op.startswith("convolution") or op.startswith("_convolution"):
        x, w = shapes[0], shapes[1]
        groups = x[1] // w[1] if w[1] else 1
        if groups == 1:
            return "pointwise" if math.prod(w[2:]) == 1 else "standard"
        return "depthwise" if groups == x[1] == w[0] else "group"
    if op.split(".")[0] in ("addmm", "mm", "linear", "matmul"):
        return "fc"
    return "no MACs"


def kinds_table(profile_table) -> list:
    """Records per kind of layer from a :func:`brrr.profiler.profile` table: operators,
    FLOPs, bytes, measured seconds (summed over calls) and roofline seconds."""
    frame = profile_table.assign(kind=[_kind_of(op, s) for op, s in
                                       zip(profile_table["op"], profile_table["input_shapes"])])
    out = []
    for kind in KIND_ORDER:
        part = frame[frame["kind"] == kind]
        if len(part):
            out.append({"kind": kind, "operators": int(part["calls"].sum()), "flops": float(part["flops"].sum()),
                        "nbytes": float(part["nbytes"].sum()), "seconds": float(part["seconds"].sum()),
                        "roofline_seconds": float(part["roofline_seconds"].sum())})
    return out


def measure_layer_kinds(names=("mobilenet_v2",), budget: float = 0.05, progress: bool = True):
    """Profile each network of ``names`` at batch 1 (:func:`brrr.profiler.profile`: every
    operator replayed on its own with :func:`brrr.bench`, caches flushed) and return a
    :class:`brrr.Result` with one record per (network, kind of layer); ``meta['model_seconds']``
    holds each whole forward pass as the profiler timed it."""
    import torch
    from . import models, tf32
    from .device import device as live
    from .experiments.common import run_sweep
    from .profiler import profile
    dev = live()
    whole = {}

    def one(key):
        net = models.get(key).to(dev.torch_device).eval()
        x = torch.randn(models.INPUT_SHAPES[key], device=dev.torch_device)
        with tf32.setting(torch, "conv", False):   # float32 convolutions on general math, like measure_network's
            table = profile(net, x, budget=budget)
        whole[_paper_name(key)] = float(table.attrs["model_seconds"])
        return [{"network": _paper_name(key), **r} for r in kinds_table(table)]

    result = run_sweep("layer kinds", list(names), one, progress=progress,
                       command=f"brrr.intensity_predict.measure_layer_kinds({tuple(names)!r})")
    result.meta["model_seconds"] = whole
    return result


@needs_measurements
def prediction_table(result):
    """:func:`measure_networks`' records for the page: per network its AI_c and DI (MACs per
    element), measured time (the median) and fastest sample, its least time
    (:func:`least_seconds`), and measured / predicted for the least time and each prediction
    (1 = the roofline was exact; above 1 = slower than predicted)."""
    import pandas as pd
    from .roofline import Roofline
    frame = result.to_frame()
    roof = Roofline.from_dict(result.meta["roof"])
    least = [least_seconds(r, roof) for r in result.records]
    out = pd.DataFrame({"network": frame["network"], "AIc": frame["ai_c"], "DI": frame["di"],
                        "GMACs": frame["macs"] / 1e9, "time per call": frame["seconds"],
                        "fastest sample": frame["min_seconds"], "least time": least,
                        "measured / least time": frame["seconds"] / least})
    for col, words in PREDICTIONS.items():
        out[f"measured / {words}"] = frame["seconds"] / frame[col]
    return out


@needs_measurements
def kinds_view(result):
    """:func:`measure_layer_kinds`' records for the page: per network and kind, operators,
    share of the network's FLOPs and of its measured time, and measured / roofline time."""
    import pandas as pd
    frame = result.to_frame()
    total_t = frame.groupby("network")["seconds"].transform("sum")
    total_f = frame.groupby("network")["flops"].transform("sum")
    return pd.DataFrame({"network": frame["network"], "kind": frame["kind"], "operators": frame["operators"],
                         "share of FLOPs": frame["flops"] / total_f, "share of time": frame["seconds"] / total_t,
                         "measured / roofline": frame["seconds"] / frame["roofline_seconds"]})


def correlations(result) -> dict:
    """Pearson r, over the measured networks, between achieved FLOP/s and AI_c, and between
    achieved FLOP/s and DI (the paper's Table VI does this with energy efficiency), with the
    95% interval of :func:`brrr.intensity_energy.fisher_interval` where there are 4 or more; where
    the records count operators, ``per_operator``: r between achieved FLOP/s and MACs per operator."""
    import numpy as np
    from .intensity_energy import fisher_interval
    frame = result.to_frame()
    out = {"n": len(frame)}
    if "operators" in frame and frame["operators"].notna().all() and len(frame) > 2:
        per_op = frame["macs"] / frame["operators"]   # the work each dispatched operator carries
        out["per_operator"] = float(np.corrcoef(per_op, frame["achieved_flops"])[0, 1])
    for metric in ("ai_c", "di"):
        r = float(np.corrcoef(frame[metric], frame["achieved_flops"])[0, 1]) if len(frame) > 2 else math.nan
        out[metric] = r
        ok = len(frame) >= 4 and math.isfinite(r) and abs(r) < 1
        out[f"{metric}_interval"] = fisher_interval(r, len(frame)) if ok else (math.nan, math.nan)
    return out


def alpha_sweep(result, step: float = 0.05):
    """The paper's Fig. 4 with time in place of energy: for alpha from 0 to 1 in ``step``s,
    Pearson r over the measured networks between DI(alpha) (from their M_c, W and A) and
    the achieved FLOP/s. A pandas DataFrame with columns alpha and r."""
    import numpy as np
    import pandas as pd
    frame = result.to_frame()
    alphas = np.round(np.arange(0, 1 + step / 2, step), 10)
    wr, ar = frame["macs"] / frame["weights"], frame["macs"] / frame["activations"]
    rs = [float(np.corrcoef(0.25 * (a * ar + (1 - a) * wr), frame["achieved_flops"])[0, 1])
          if len(frame) > 2 else math.nan for a in alphas]
    return pd.DataFrame({"alpha": alphas, "r": rs})

