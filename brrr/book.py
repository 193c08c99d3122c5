"""How a chapter presents itself: the opening note on what was measured, and readable tables.

A chapter opens with :func:`intro`: which device measured the page, where its
roofs come from, which reference GPUs are drawn beside it, and, in a quick
build, a warning that the numbers are a smoke test. Tables go through
:func:`table`: units in the headers, numbers with sensible digits, a dash for
a missing value, no index column. A worked problem's answer goes through :func:`answer`: collapsed
until the reader opens it, in the built book and on Colab alike.
"""
from __future__ import annotations

import html
import math
import re

from . import config
from .claims import Said
from .units import format_bytes, format_number, format_seconds

QUICK_BANNER = (
    "> **Quick build: do not read the numbers on this page.** It ran with `BRRR_QUICK=1`, which "
    "shrinks arrays (small enough to stay in the caches), shortens sweeps and takes few samples, "
    "so that the whole book builds in minutes. The figures show that the code runs, not what this "
    "machine can do: bandwidths above a roof, flat curves, speed-ups and percentages of a peak "
    "here are artefacts of the small sizes. Run the chapter without `BRRR_QUICK` (or build the "
    "book with `make book`) for real measurements. {extra}")

# What, in each chapter, a quick build distorts most (appended to the banner).
QUICK_CAVEATS = {
    1: "Here: small matmuls, few batch sizes and few samples, so the curves stop early and single points are noisy.",
    2: "Here: the arrays fit in the last-level cache, so bandwidths can exceed the DRAM roof.",
    3: ("Here: the sweeps stop early and each time is a few samples, so the linear parts are short and "
        "single points, fixed costs and verdicts are noisy."),
    4: "Here: the arrays sit partly in the cache and fewer chain lengths are timed, so speed-ups and bends are rough.",
    5: "Here: narrow blocks and a short chain, so the step times and their ratios are noise; the byte counts are exact at any size.",
    6: ("Here: the network counts are exact, but each convolution gets few samples and, on a CPU, a "
        "roof measured with a small matmul, so its share of the roof is rough."),
    7: "Here: short sequences, small images and few samples per operator, so the time shares and speed-ups are rough.",
    8: ("Here: a tiny GPT (two blocks, width 64) on short sequences with few samples, so the steps' times, "
        "speed-ups, MFU and regimes are rough; the FLOP counts are exact at any size."),
}


def _where(dev) -> str:
    from .roofline import has_spec_sheet
    summary = dev.summary()
    if dev.on_gpu and has_spec_sheet(summary):
        return ("a CUDA GPU. Its roofs come from its spec sheet (`brrr.specs`), and the experiments "
                "run with CuPy and PyTorch on it.")
    if dev.on_gpu:
        return ("a CUDA GPU that `brrr` has no spec sheet for: its roofs are derived from the clocks, "
                "memory bus and SM count it reports (not datasheet figures), and the chapters compare "
                "against the roofs `brrr` measures on it.")
    return ("the CPU: no CUDA GPU was found. Every experiment runs on the CPU (NumPy, Numba, "
            "PyTorch), and its roofs are measured on this CPU, not looked up.")


# The experiments each chapter draws beside a reference run: the names its
# ``brrr.reference.beside`` calls look up (tests/test_page_helpers.py checks them against the notebooks).
CHAPTER_EXPERIMENTS = {
    1: ("matmul_vs_size", "matmul_tensor_cores", "mfu_vs_batch", "elementwise_vs_matmul"),
    2: ("bandwidth_vs_size", "bandwidth_vs_parallelism", "measure_roofline", "dtype_roofline",
        "pointwise_repeat_sweep", "cos_fusion"),
    3: ("python_ops_per_second", "time_vs_size", "call_overhead", "async_demo", "profiler_trace",
        "reduce_overhead_demo", "double_the_batch"),
    4: ("fusion_kernels", "fusion_torch_compile", "fusion_cos_chain", "epilogue_fusion"),
    5: ("checkpoint_sweep", "compiled_recompute"),
    6: ("measure_convs", "network_predictions"),
    7: ("profile_block", "profile_bert", "profile_train", "profile_resnet18", "profile_eval",
        "compile_block", "profile_batches", "profile_precision"),
    8: ("capstone_steps", "capstone_profile_batch", "capstone_train"),
}


def _gpu_runs(experiments=None) -> dict:
    """``{GPU name: {experiment: date}}`` of the shipped reference GPU runs of ``experiments``
    (default: all of them)."""
    from .reference import is_replayed, record_sets, set_device
    gpus = {}
    for folder, runs in record_sets().items():
        if is_replayed(folder):
            continue    # a replayed page's own run is not a reference beside it
        dev = set_device(runs)
        chosen = {name: r.meta.get("date", "")[:10] for name, r in runs.items()
                  if experiments is None or name in experiments}
        if chosen and dev.get("backend") == "cuda":
            gpus[dev.get("name", "?")] = chosen
    return gpus


def _gpu_list(gpus: dict) -> str:
    """'NAME (measured DATE)' or 'NAME (measured DATE to DATE)' for each GPU, joined by commas."""
    parts = []
    for name, runs in gpus.items():
        d = sorted(runs.values())
        parts.append(f"{name} (measured {d[0]}" + (f" to {d[-1]}" if d[-1] != d[0] else "") + ")")
    return ", ".join(parts)


def _references_sentence(chapter: int = None) -> str:
    """Which of chapter ``chapter``'s experiments (:data:`CHAPTER_EXPERIMENTS`) are drawn beside
    a shipped reference GPU run; for a chapter not in that table, the book's reference GPUs."""
    everywhere = _gpu_runs()
    other = " other" if config.replay_set() else ""     # a replayed page is itself a GPU's run
    if not everywhere:
        return f"No{other} reference GPU runs ship with this copy of `brrr`, so every figure shows this run only."
    own = CHAPTER_EXPERIMENTS.get(chapter)
    if own is None:
        return ("Beside this run, figures draw in grey the same experiment measured on the reference "
                f"GPU{'s' if len(everywhere) > 1 else ''}: {_gpu_list(everywhere)}, where a reference run of "
                "that experiment ships; elsewhere the figure shows this run alone.")
    gpus = _gpu_runs(own)
    shipped = [name for name in own if any(name in runs for runs in gpus.values())]
    if not shipped:
        whose = "other GPU's run" if other else "reference GPU run"
        return (f"No {whose} of this chapter's experiments ships with this edition yet, so every "
                "figure shows this run alone. (The reference GPU runs that do ship, of other chapters' "
                "experiments, are listed in the appendix *Reference measurements*.)")
    plural = "s" if len(gpus) > 1 else ""
    if len(shipped) == len(own):
        return (f"Beside this run, each figure draws in grey the same experiment measured on the reference "
                f"GPU{plural}: {_gpu_list(gpus)}.")
    names = ", ".join(f"`{name}`" for name in shipped)
    return (f"Of this chapter's {len(own)} experiments, {len(shipped)} ({names}) "
            f"{'has' if len(shipped) == 1 else 'have'} a reference run on the GPU{plural} {_gpu_list(gpus)}, "
            f"drawn in grey beside this run; the other {len(own) - len(shipped)} show this run alone.")


def _replayed_sentence(dev) -> str:
    """The opening of a replayed page: which recorded run it shows, and how to measure one's own."""
    from .reference import replay_summary
    run = replay_summary()
    if str(run["device"].get("source", "")).startswith("synthetic"):
        return (f"**Not a measurement: {run['device']['source'].removeprefix('synthetic: ')}**, made to test "
                "that every sentence of the book holds on a device no one here has measured. Open this "
                "chapter in Colab (the launch button at the top of the page) to measure your own GPU.")
    versions = ", ".join(f"{k} {v}" for k, v in run["versions"].items()
                        if k in (("torch", "cupy") if dev.on_gpu else ("torch", "numpy")))
    roofs = (f"its roofs come from the {dev.name}'s spec sheet (`brrr.specs`)" if dev.on_gpu else
             "its roofs are the peaks that CPU measured")
    first = dev.name.split()[0] if dev.name else ""
    spoken_vowel = first[:1] in "AEIOU" or (first.isupper() and first[:1] in "FHLMNRSX")    # 'an NVIDIA', 'an H100'
    host = " (or its host CPU's, for what runs on the CPU: Python, NumPy)" if dev.on_gpu else ""
    return (f"**Measured on {'an' if spoken_vowel else 'a'} {dev.name} on {run['date']} and replayed "
            f"from that run** ({versions}): every measured figure, table and sentence on this page is that "
            f"{'GPU' if dev.on_gpu else 'CPU'}'s{host}, and {roofs}. Open this chapter in Colab (the launch button "
            "at the top of the page) to measure your own GPU.")


def _older_records(chapter: int) -> tuple:
    """(sentence, names) of the replayed run's records of ``chapter`` that predate their experiment's present form
    (:meth:`brrr.registry.Measurement.lacks`); ('', []) where none does."""
    from .reference import replay_runs
    from .registry import registry
    runs = replay_runs()
    older = [(m.name, m.lacks(runs[m.name])) for m in registry().values()
             if m.chapter == f"{chapter:02d}" and m.name in runs]
    older = [(name, fields) for name, fields in older if fields]
    if not older:
        return "", []
    listed = "; ".join(f"`{name}` lacks " + ", ".join(f"`{f.rsplit('.', 1)[-1]}`" for f in fields)
                       for name, fields in older)
    return (f"**{len(older)} of the records this page replays predate their experiment's present form** ({listed}). "
            "What this page says and draws follows those records, not today's experiments, and `brrr record` on "
            "that device measures them again."), [name for name, _ in older]


def intro(chapter: int, dev=None) -> Said:
    """The opening note of chapter ``chapter``: the live device, its roofs, the reference GPUs,
    and in quick mode a banner saying which numbers not to trust."""
    from .device import device
    from .hardware import cache_note
    dev = dev or device()
    quick = config.quick_mode()
    if dev.replayed:
        older, names = _older_records(chapter)
        text = _replayed_sentence(dev) + " " + _references_sentence(chapter) + (f"\n\n{older}" if older else "")
        return Said(text, facts={"device": dev.name, "backend": dev.backend, "quick": quick, "replayed": True,
                                 "older_records": names})
    text = f"**Measured on this page:** {dev.name}, {_where(dev)} " + _references_sentence(chapter)
    note = "" if dev.on_gpu else cache_note()
    if note:
        text += " " + note
    if quick:
        text = QUICK_BANNER.format(extra=QUICK_CAVEATS.get(chapter, "")).strip() + "\n\n" + text
    return Said(text, facts={"device": dev.name, "backend": dev.backend, "quick": quick})


# --- tables ---------------------------------------------------------------------------

FORMATS = {
    "time": format_seconds,
    "bytes": format_bytes,
    "number": format_number,
    "int": lambda v: f"{int(round(v)):,}",
    "percent": lambda v: f"{100 * v:.1f}%",
    "ratio": lambda v: f"{v:.2f}",
}


def table(frame, formats: dict = None, index: bool = False):
    """``frame`` (a DataFrame) styled for the page: each column formatted by ``formats``
    (column -> 'time', 'bytes', 'number', 'int', 'percent', 'ratio' or a format string
    such as '{:.1f}'; other numeric columns get three significant digits), missing
    values as '–', the index hidden unless ``index=True``."""
    import pandas as pd
    if frame is None:
        return None     # a table of a measurement a replayed build has no record of
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    formats = dict(formats or {})
    for col in formats:
        if col not in frame.columns:
            raise ValueError(f"formats names {col!r}, which is not a column: {list(frame.columns)}")
    funcs = {}
    for col in frame.columns:
        kind = formats.get(col)
        if kind is None and not pd.api.types.is_numeric_dtype(frame[col]):
            continue
        fn = FORMATS.get(kind, format_number) if kind is None or kind in FORMATS else kind.format
        funcs[col] = _skip_missing(fn)
    styled = frame.style.format(funcs, na_rep="–")
    if not index:
        styled = styled.hide(axis="index")
    return styled.set_table_styles([{"selector": "td, th", "props": "padding: 2px 6px; font-size: 0.8em;"}])


def _skip_missing(fn):
    def wrapped(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "–"
        return fn(v)
    return wrapped


# --- worked problems ------------------------------------------------------------------

class Answer:
    """A worked problem's answer, collapsed: an HTML ``<details>`` block that opens on a click, the same in
    the built book and in Jupyter or Colab (which render a cell's HTML output as it is)."""

    def __init__(self, markdown: str, summary: str = "Answer", facts: dict = None, claims: list = None):
        self.markdown, self.summary, self.facts = markdown, summary, dict(facts or {})
        self.claims = list(claims or [])

    def _repr_html_(self):
        """The HTML, and in the output's metadata the facts, the claims (checked by the tests) and
        the Markdown they were rendered into."""
        blocks = [b.strip() for b in re.split(r"\n\s*\n", self.markdown) if b.strip()]
        body = "\n".join(f"<p>{_inline(' '.join(b.split()))}</p>" for b in blocks)
        from .results import plain
        text = f'<details class="brrr-answer">\n<summary>{html.escape(self.summary)}</summary>\n{body}\n</details>'
        return text, {"brrr": {"facts": plain(self.facts), "claims": [plain(c.to_dict()) for c in self.claims],
                               "markdown": self.markdown}}

    def __repr__(self) -> str:   # what a plain-text front end shows
        return f"{self.summary}:\n{self.markdown}"


def _inline(text: str) -> str:
    """The inline Markdown the answers use (`code`, **bold**, *italic*) as HTML, everything else escaped."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = html.escape(part, quote=False)
        part = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"<strong>\1</strong>", part)
        out.append(re.sub(r"\*(?=\S)(.+?)(?<=\S)\*", r"<em>\1</em>", part))
    return "".join(out)


def answer(text, summary: str = "Answer"):
    """``text`` (a :class:`~brrr.claims.Said` or Markdown with paragraphs,
    `code`, **bold** and *italic*) as a collapsed answer: display it from a cell tagged ``remove-input``.
    None where there is no answer (it builds on a measurement a replayed build has no record of) shows
    nothing."""
    if text is None:
        return None
    if not str(text).strip():
        raise ValueError("an answer needs some text")
    return Answer(str(text), summary, getattr(text, "facts", None), getattr(text, "claims", None))
