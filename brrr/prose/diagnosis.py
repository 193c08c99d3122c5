"""Chapter 7 in claims: what each profile or remedy shows, every row judged with the page's one fixed cost of a call."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..claims import UNEXPLAINED_REGIME, Bound, Compare, Missing, Noisy, Regime, Share, Value, fill, say
from ..experiments import diagnosis_records as d
from ..experiments.diagnosis_records import judged  # noqa: F401 (chapter 7 reads it here)
from ..profiler import PER_ELEMENT_FLOPS, phase_totals
from ..results import Result
from ..roofline import worked_roofs
from ..specs import GPU_SPECS

CLOCK = "the whole run timed back to back on the host's clock, so the page compares none of its whole-run times"
SPREAD = "the spread of its whole-run times, so the page compares none of them"


def row_regime(t, row, call_cost) -> Regime:
    """A profile row's regime by the roofline's rule, with its replayed time less the table's replay floor."""
    roof = d.row_roofline(t.attrs["summary"], row.flops, row.nbytes, row.roofline_seconds)
    claim = Regime(d.row_name(row), row.flops, row.nbytes, roof, call_cost, d.beyond_floor(t, row),
                   device_time=t.attrs.get("backend") == "cuda")      # a GPU's clock holds no cost of issuing
    claim.subject += " (its time less the replay floor)" if claim.outcome == UNEXPLAINED_REGIME else ""
    return claim


def _labels(t, call_cost, of: str, run=None) -> tuple:
    """Each row's Regime (a reference ``run``'s by its own profile's fixed cost), and how many each label took."""
    rows = [row_regime(t, r, d.frame(run).attrs.get("overhead_seconds") if isinstance(run, Result) else call_cost)
            for r in t.itertuples()]
    return rows, Share(len(rows), Counter(r.outcome for r in rows).most_common(), of, unit="count", verb="labelled")


def _floor_share(seconds, rows: int, t, of: str, part: str = "the replay floor, paid once by each row"):
    return Share(seconds, {part: min(rows * d.floor_seconds(t), seconds)}, of) if d.floor_seconds(t) else None


def _whole(subject, run, base_name, base, backend) -> list:
    """Two whole runs' (seconds, IQR, clock) compared where both can be read and neither is noisy; else why not."""
    lacks = d.unreadable(run, base, backend)
    if lacks:
        return [Missing(lacks, CLOCK if lacks == "model_clock" else SPREAD)]
    noisy = [n for n in (Noisy(subject, run[1], run[0]), Noisy(base_name, base[1], base[0])) if n.outcome == "noisy"]
    return noisy or [Compare(subject, run[0], base_name, base[0])]


CALL_COST = ("The fixed cost of a call on this page is {median}: the median of {n} measurements of `torch.add` on "
             "one-element tensors ({how}), from {low} to {high}. {noisy}")


def call_cost(costs):
    """The page's one fixed cost of a call (:func:`brrr.experiments.diagnosis.page_call_cost`), range and spread."""
    if costs is None:
        return say(list, None, record="call_costs")
    (s, median, iqr), old = d.spread(costs), costs.meta.get("from_profiles")
    return fill(CALL_COST, median=Value(median, "s"), n=str(len(s)), low=Value(s[0], "s"), high=Value(s[-1], "s"),
                how="one by each of this run's profiles, since the run predates the page's own measurement" if old
                else "in a row", noisy=Noisy("the fixed cost", iqr, median))


def regimes(table, references=(), call_cost=None):
    """The rows' labels, their share of the time, the longest row's regime, the floor, the row nearest its roof."""
    def claims_of(run):
        t, floor = d.frame(run), d.floor_seconds(d.frame(run))
        rows, labels = _labels(t, call_cost, "rows, judged with the fixed cost that profile measured"
                               if isinstance(run, Result) else "rows", run)
        times = {f"rows labelled {k}": sum(s for r, s in zip(rows, t.seconds) if r.outcome == k) for k in labels.parts}
        b = t.iloc[int(np.nanargmax((t.roofline_seconds / t.seconds).values))]
        return [labels, Share(float(t.seconds.sum()), times, "of summed replayed time"),
                rows[int(np.nanargmax(t.seconds.values))],
                Value(floor, "s", "A one-element add, replayed like the rows,") if floor else None,
                Bound(f"{d.row_name(b)}, the row nearest its roof,", b.seconds, b.roofline_seconds, "the roofline",
                      nbytes=b["nbytes"], cache_bytes=t.attrs["summary"].get("l2_bytes"),
                      measured_roof=t.attrs.get("backend") == "cpu")]
    return say(claims_of, table, references, record="profile_block")


def rows_vs_model(table):
    """The rows' summed replayed time against one run of the whole model, where that run's time can be read."""
    def claims_of(t):
        rows = float(t.seconds.sum())
        return [Value(rows, "s", "The rows' replayed times", "add up to"), *_whole("one run of the whole model",
                d.whole_run(t.attrs), "the rows together", (rows, 0.0, "host"), t.attrs["backend"])]
    return say(claims_of, table, record="profile_block")


def bert(table, references=()):
    """Ivanov et al.'s three classes: their time, the ridge against the V100's, each side's share of its roof."""
    def claims_of(run):
        t, (g, ridge) = d.frame(run), d.three_classes(d.frame(run))
        small, v100 = g.iloc[1:].sum(), GPU_SPECS["V100"].fp16_tensor / GPU_SPECS["V100"].bandwidth
        names = ("the matmuls", "the normalisations", "the elementwise operators")
        return [Share(float(g.seconds.sum()), dict(zip(names, g.seconds)), "of replayed time in the three classes"),
                Compare("the ridge of the V100's FP16 tensor cores", v100, "the ridge these matmuls ran against here",
                        ridge, unit="FLOP/byte"),
                Bound("the matmuls", g.seconds.iloc[0], g.roof.iloc[0], "the roofline"),
                Bound("the normalisation and elementwise operators", small.seconds, small.roof, "the roofline"),
                _floor_share(small.seconds, int(small.rows), t, "of their replayed time")]
    return say(claims_of, table, references, record="profile_bert")


def backward(table, references=()):
    """An old record's copies that watching made; then backward against forward: FLOPs, time, non-matmul share."""
    def claims_of(run):
        t, copies = d.frame(run), d.profiler_copies(d.frame(run))
        f, b = (r for _, r in phase_totals(t.drop(copies.index)).iterrows())
        back = ", without those copies" if len(copies) else ""
        return [Share(float(t[t.phase == "backward"].seconds.sum()), {f"its {len(copies)} `copy_` rows":
                      float(copies.seconds.sum())}, "of the backward's replayed time") if len(copies) else None,
                Compare("the backward pass's FLOP count", b.flops, "the forward pass's", f.flops, unit="FLOP"),
                Compare(f"the backward pass{back and back + ','}", b.seconds, "the forward pass", f.seconds),
                *(Share(x.seconds, {"the operators that are not matmuls": x.seconds * (1 - x.matmul_time_share)},
                        f"of the {name}'s replayed time") for name, x in (("forward", f), (f"backward{back}", b)))]
    return say(claims_of, table, references, record="profile_train")


def resnet(table, references=(), call_cost=None):
    """The convolutions' FLOPs, share of their roof, labels and longest row's regime; the floor in the rest."""
    def claims_of(run):
        t = d.frame(run)
        conv, rest = t[t.op == "convolution"], t[t.op != "convolution"]
        rows, labels = _labels(conv, call_cost, "convolution rows", run)
        flops = {"the convolutions": float(conv.flops.sum()), "the other operators": float(rest.flops.sum())}
        return [Share(float(t.flops.sum()), flops, "counted", unit="FLOP"), Bound(
                    "the convolutions", float(conv.seconds.sum()), float(conv.roofline_seconds.sum()), "the roofline"),
                labels, rows[int(np.nanargmax(conv.seconds.values))],
                _floor_share(float(rest.seconds.sum()), len(rest), t, "of the other operators' replayed time")]
    return say(claims_of, table, references, record="profile_resnet18")


def compile_outcome(compiled, eval_table, references=(), call_cost=None):
    """The compiled block against eager, where both times can be read; the labels of the rows fusion could merge."""
    def claims_of(run):
        got = {r["variant"]: {**r, "clock": run.meta.get("clock")} for r in run.records}
        out = ([Missing("torch.compile", f"which failed here ({run.meta.get('error') or 'no reason recorded'})")]
               if "torch.compile" not in got else _whole("the compiled block", d.whole_run(got["torch.compile"]),
                                                         "the eager block", d.whole_run(got["eager"]), d.backend(run)))
        fusable = eval_table[eval_table.category != "matmul"] if run is compiled and eval_table is not None else None
        return out + [_labels(fusable, call_cost, "rows that are not matmuls")[1] if fusable is not None else None]
    return say(claims_of, compiled, references, record="compile_block")


def batch_remedy(batches, first_tokens: int, references=(), call_cost=None):
    """The larger batch's tokens against the first profile's, matmul FLOP/byte, time per token and rows' labels."""
    def claims_of(run):
        recs = sorted(run.records, key=lambda r: r["batch"])
        one, big, rows = recs[0], recs[-1], d.batch_profiles(run)[-1] if run is batches else None
        return [Compare("the larger batch's token count", big["tokens"], "the first profile's", first_tokens,
                        unit="count") if run is batches else None,
                Compare("the matmuls' FLOPs per byte at the larger batch", big["matmul_intensity"],
                        "those at one sequence", one["matmul_intensity"], unit="FLOP/byte"),
                *_whole("the time per token at the larger batch", d.whole_run(big, big["tokens"]), "at one sequence",
                        d.whole_run(one, one["tokens"]), d.backend(run)),
                _labels(rows, call_cost, f"rows at {big['batch']} sequences")[1] if rows is not None else None]
    return say(claims_of, batches, references, record="profile_batches")


def precision(result, eval_table, references=(), call_cost=None):
    """Low precision's matmul time, bytes and whole run against float32's, and its largest matmul's regime."""
    def claims_of(run):
        (a, z), low = (run.records[0], run.records[-1]), run.records[-1]["dtype"]
        row, roof = d.low_precision_matmul(eval_table, run) if run is result else (None, None)
        return [Compare(f"the set of {low} matmuls", z["matmul_seconds"], "the float32 set", a["matmul_seconds"]),
                Compare(f"the {low} block's traffic", z["nbytes"], "the float32 block's", a["nbytes"], unit="B"),
                Regime(f"{d.row_name(row)} in {low}", row.flops, row["nbytes"], roof, call_cost) if roof else None,
                *_whole(f"the whole {low} block", d.whole_run(z), "the float32 one", d.whole_run(a), d.backend(run))]
    return say(claims_of, result, references, record="profile_precision")


LINEAR = ("`Linear(768, 3072)` on {tokens} tokens does 2 × {tokens} × 768 × 3072 = {flops} and moves its input, "
          "weights, bias and output once: {nbytes}, {intensity} (this device's ridge: {ridge}). {regime}\n\n{h100}")
ONE_TOKEN = "On one token the layer does {flops} on {nbytes}, {intensity}. {one}\n\n{many} {per}"
SOFTMAX = ("The scores are {batch} × {heads} × {seq} × {seq} = {elements} elements. The softmax reads each once and "
           "writes each once, {nbytes}, and brrr counts {per} FLOPs per element (the maximum, a subtraction, an "
           "exponential, the sum, a division): {flops}, {intensity}. {regime} {best} Its bytes grow with the square "
           "of the sequence: twice the tokens, four times the bytes.\n\n{h100} {h100_best}")


def linear_answer(tokens: int, dev, call_cost=None):
    """Worked problem 1: the layer's FLOPs, bytes and regime here (with the page's fixed cost) and on an H100."""
    (here, h100), (f, b) = worked_roofs(dev), d.linear_counts(tokens)
    return fill(LINEAR, tokens=f"{tokens:,}", ridge=Value(here.ridge, "FLOP/byte"), flops=Value(f, "FLOP"),
                nbytes=Value(b, "B"), intensity=Value(f / b, "FLOP/byte"), regime=Regime("the layer here", f, b, here,
                call_cost), h100=Regime(f"the layer on an {h100.name}", f, b, h100))


def linear_check(measured, tokens: int, dev, record: str = "worked_linear"):
    """Worked problem 1 measured: its Timing, or (``record='profile_bert'``) that profile's row of the layer."""
    (here, _), (f, b) = worked_roofs(dev), d.linear_counts(tokens)
    own = record == "worked_linear"
    seconds, subject = ((getattr(measured, "median", None), f"the layer on {tokens:,} tokens") if own else
                        (getattr(d.linear_row(measured, tokens), "seconds", None),
                         f"the profile's row of this layer on {tokens:,} tokens, replayed,"))
    return say(lambda s: [Bound(subject, s, float(here.time(f, b)), "the roofline", nbytes=b, cache_bytes=dev.l2_bytes,
                                measured_roof=not dev.on_gpu)], seconds, record=record)


def one_token_answer(tokens: int, dev, call_cost=None):
    """Worked problem 2: the layer's regime on one token and on ``tokens``, and their least times per token."""
    (here, _), (f, b) = worked_roofs(dev), d.linear_counts(1)
    one, many = (Regime(f"the layer on {n}", *d.linear_counts(k), here, call_cost) for n, k in
                 (("one token", 1), (f"{tokens:,} tokens", tokens)))
    return fill(ONE_TOKEN, flops=Value(f, "FLOP"), nbytes=Value(b, "B"), intensity=Value(f / b, "FLOP/byte"), one=one,
                many=many, per=Compare("per token, the least time on one token", max(one.bounds().values()),
                                       f"that on {tokens:,} tokens", max(many.bounds().values()) / tokens))


def one_token_check(one, many, tokens: int, dev, call_cost=None):
    """Worked problem 2 measured: one token's regime with its time, and its time against ``many`` tokens' per token."""
    (here, _), (f, b) = worked_roofs(dev), d.linear_counts(1)
    return say(lambda t: [Regime("the layer on one token", f, b, here, call_cost, t.median),
                          Compare("per token, one token", t.median, f"{tokens:,} tokens", many.median / tokens)
                          if many is not None else None], one, record="worked_linear_one_token")


def softmax_answer(batch: int, heads: int, seq: int, dev, call_cost=None):
    """Worked problem 3: the softmax's regime (with the page's fixed cost) and best FLOP/s, here and on an H100."""
    (here, h100), (f, b) = worked_roofs(dev), d.softmax_counts(batch, heads, seq)
    best, h100_best = (Compare("its FLOP/s at best (its intensity times the bandwidth)", float(r.attainable(f / b)),
                               "the float32 peak", r.peak_flops, unit="FLOP/s") for r in (here, h100))
    return fill(SOFTMAX, batch=str(batch), heads=str(heads), seq=str(seq), elements=Value(b / 8, "count"),
                per=str(PER_ELEMENT_FLOPS["_softmax"]), flops=Value(f, "FLOP"), nbytes=Value(b, "B"),
                intensity=Value(f / b, "FLOP/byte"), best=best, h100_best=h100_best,
                regime=Regime("the softmax here", f, b, here, call_cost), h100=Regime(f"the softmax on an {h100.name}",
                                                                                    f, b, h100))


def softmax_check(bert_table, shape: dict, dev):
    """Worked problem 3 measured: the profile's softmax row against its least time, and the replay floor's part."""
    (here, _), (f, b) = worked_roofs(dev), d.softmax_counts(shape["batch"], shape["heads"], shape["seq"])
    row = None if bert_table is None else bert_table[bert_table.op == "_softmax"].iloc[0]
    return say(lambda r: [Bound("the softmax row", r.seconds, float(here.time(f, b)), "the roofline"),
                          _floor_share(float(r.seconds), 1, bert_table, "of its replayed time", "the replay floor")],
               row, record="profile_bert")
