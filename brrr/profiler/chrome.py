"""Reading the Chrome trace JSON that ``torch.profiler`` exports into plain records.

One record per complete event: its lane (a host thread, or a GPU and stream), what it is
(operator, GPU kernel, the runtime call that launched one, other runtime call, annotation),
its start and duration in seconds from the first event, its nesting depth on its lane, and the
correlation id that ties a launch on the host to the work it started on the GPU.

Chrome traces differ between PyTorch versions (``cpu_op`` / ``Operator``, ``kernel`` /
``Kernel``, a bare list or ``{"traceEvents": [...]}``, correlation ids in ``args`` or only in
flow events, GPU streams as ``7`` or ``"stream 7"``): :func:`events_from_chrome` reads them all.
"""
from __future__ import annotations

import json
import os

# Chrome-trace categories (lower case), by what they are.
_OPERATOR = {"cpu_op", "operator"}
_GPU = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
_RUNTIME = {"cuda_runtime", "cuda_driver", "runtime", "driver"}
_ANNOTATION = {"user_annotation", "gpu_user_annotation", "python_function", "python"}
HOST_WORK = ("operator", "launch", "runtime")   # categories that count as the host being busy
STEP = "ProfilerStep#"                           # the name of the annotation around each profiled step


def _events_of(data) -> list:
    """The event list of a Chrome trace: a dict with ``traceEvents``, a bare list, JSON text or a path."""
    if isinstance(data, (str, os.PathLike)) and not str(data).lstrip().startswith(("{", "[")):
        with open(data, encoding="utf-8") as f:
            data = f.read()
    if isinstance(data, (str, bytes)):
        data = json.loads(data)
    if isinstance(data, dict):
        data = data.get("traceEvents")
    if not isinstance(data, list):
        raise ValueError("not a Chrome trace: expected a list of events or an object with 'traceEvents'")
    return [e for e in data if isinstance(e, dict)]


def _category(cat: str) -> str:
    cat = (cat or "").lower()
    if cat in _OPERATOR:
        return "operator"
    if cat in _GPU:
        return "kernel"
    if cat in _RUNTIME:
        return "runtime"      # 'launch' once a GPU event with its correlation id is found
    if cat in _ANNOTATION:
        return "annotation"
    return "other"


def _gpu_lane(e: dict) -> str:
    args = e.get("args") or {}
    dev = args.get("device", e.get("pid"))
    stream = args.get("stream", e.get("tid"))
    stream = str(stream).replace("stream", "").strip()
    return f"GPU {dev}, stream {stream}"


def _correlation(e: dict):
    args = e.get("args") or {}
    for key in ("correlation", "correlation id", "Correlation ID"):
        if args.get(key) is not None:
            try:
                return int(args[key])
            except (TypeError, ValueError):
                return str(args[key])
    return None


def _flow_links(raw: list, events: list) -> None:
    """Correlation ids from flow events ('s' on the host, 'f' on the GPU), for traces whose
    events do not carry them in ``args``: each flow end is matched to the event it points into."""
    def holder(e_flow, side):
        best = None
        for ev in events:
            if ev["_where"] == (e_flow.get("pid"), e_flow.get("tid")) and ev["side"] == side \
                    and ev["_ts"] - 1e-3 <= float(e_flow["ts"]) <= ev["_ts"] + ev["_dur"] + 1e-3:
                if best is None or ev["_dur"] < best["_dur"]:   # the innermost event holding it
                    best = ev
        return best
    for e in raw:
        if e.get("ph") not in ("s", "f") or "id" not in e or "ts" not in e or e.get("cat") == "fwdbwd":
            continue   # (forward-to-backward flows join two operators, not a launch and its kernel)
        ev = holder(e, "host" if e["ph"] == "s" else "gpu")
        if ev is not None and ev["correlation"] is None:
            ev["correlation"] = int(e["id"]) if str(e["id"]).isdigit() else e["id"]


def _depths(events: list) -> None:
    """Nesting depth of each event among the events of its lane and group (host work, or the rest)."""
    groups: dict = {}
    for e in events:
        groups.setdefault((e["lane"], e["category"] in HOST_WORK), []).append(e)
    for group in groups.values():
        group.sort(key=lambda e: (e["_ts"], -e["_dur"]))
        ends: list = []
        for e in group:
            while ends and ends[-1] <= e["_ts"] + 1e-3:   # times in µs: within a nanosecond
                ends.pop()
            e["depth"] = len(ends)
            ends.append(e["_ts"] + e["_dur"])


def events_from_chrome(data) -> list:
    """One record per complete ('X') event of a Chrome trace, sorted by start: ``lane``, ``side``
    ('host' or 'gpu'), ``name``, ``category`` ('operator', 'kernel' (GPU work, copies too),
    'launch' (a runtime call that started GPU work), 'runtime', 'annotation' or 'other'),
    ``start_seconds`` (from the first event), ``seconds`` (duration), ``depth`` (nesting on its lane)
    and ``correlation`` (the id shared by a launch and its GPU event, else None)."""
    raw = _events_of(data)
    events = []
    for e in raw:
        if e.get("ph") != "X" or "ts" not in e or str(e.get("cat", "")).lower() == "trace":
            continue
        name = str(e.get("name", ""))
        # PyTorch 1.x recorded its step markers as operators: they are annotations whatever their category.
        cat = "annotation" if name.startswith(STEP) else _category(str(e.get("cat", "")))
        side = "gpu" if cat == "kernel" or str(e.get("cat", "")).lower() == "gpu_user_annotation" else "host"
        lane = _gpu_lane(e) if side == "gpu" else f"host thread {e.get('tid')}"
        events.append({"lane": lane, "side": side, "name": name, "category": cat,
                       "correlation": _correlation(e), "_ts": float(e["ts"]), "_dur": float(e.get("dur", 0.0)),
                       "_where": (e.get("pid"), e.get("tid"))})
    if not events:
        return []
    if not any(ev["correlation"] is not None for ev in events if ev["category"] == "kernel"):
        _flow_links(raw, events)
    gpu_ids = {ev["correlation"] for ev in events if ev["category"] == "kernel" and ev["correlation"] is not None}
    for ev in events:
        if ev["category"] == "runtime" and ev["correlation"] in gpu_ids:
            ev["category"] = "launch"
        elif ev["side"] == "host" and ev["category"] != "runtime":
            ev["correlation"] = None   # operators carry no launch id of their own
    _depths(events)
    t0 = min(ev["_ts"] for ev in events)
    out = []
    for ev in sorted(events, key=lambda e: (e["_ts"], -e["_dur"])):
        out.append({"lane": ev["lane"], "side": ev["side"], "name": ev["name"], "category": ev["category"],
                    "start_seconds": (ev["_ts"] - t0) * 1e-6, "seconds": ev["_dur"] * 1e-6,
                    "depth": ev["depth"], "correlation": ev["correlation"]})
    return out
