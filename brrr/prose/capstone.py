"""Chapter 8 in claims: each ``claims_of`` turns a run into claims for ``brrr.claims.say``; each worked answer
(``*_answer``) fills a template from :mod:`brrr.experiments.capstone_worked`, and its check is a ``claims_of``."""
from __future__ import annotations

from ..anchors import peaks
from ..claims import UNEXPLAINED_REGIME, Bound, Cause, Compare, Missing, Noisy, Regime, Share, Value, fill, quantity
from ..roofline import Roofline
from ..experiments.capstone import (STEP_KEYS, by_step, measured, mfu, mfu_peak, not_recorded, overall, previous,
                                    profiled, regime_moves)

LAUNCHES = ("Replaying the pass as one graph removes the host's cost of launching each kernel, so those "
            "launches were not what set this pass's time.")
COSTS = {"matmul": "the matmuls", "loss": "the loss", "norm": "LayerNorm", "optimizer": "the optimizer's update",
         "other": "other kernels"}


def _v(value, unit=""):
    return Value(value, unit)


def _lacks(run, key, field=None, what="so nothing here is measured"):
    """The Missing claim of step ``key`` (or its ``field``) where ``run`` lacks it or it did not run, or None."""
    r = by_step(run).get(key, {}) if run is not None else None
    why = ("" if run is None else "a step that joined the chapter after this run was recorded, " if not r else
           f"because the step did not run here ({r['skipped']}), " if r.get("skipped") else
           "a part of its profile records kept only later, " if field and not r.get(field) else None)
    if why is not None:
        return Missing("capstone_steps" + (f": {key}" if run is not None else "") + (
            f"'s {field}" if why.startswith("a part") else ""), why + what)


def _shares(r):
    """Each regime's share of a step's own profile, largest first (unsized where the record lacks its sum)."""
    if not profiled(r):
        return None
    whole = r.get("profile_seconds") or 1.0
    parts = {f"operators {k}" if k == UNEXPLAINED_REGIME else f"{k} operators": v * whole
             for k, v in sorted(r["regime_shares"].items(), key=lambda kv: -kv[1]) if v}
    return Share(whole, parts, ("" if r.get("profile_seconds") else "time ") + "its profile's operators took, "
                 + ("uncompiled and " if r.get("compile") else "") + "replayed one by one",   # the profiler replays
                 unit="s" if r.get("profile_seconds") else "%", name="regimes")                # eager operators


def _own_peak(run, r):
    """A float32 step on a GPU against its own dtype's peak (FP32, or TF32), where that is not the run's one."""
    device = run.meta.get("device") or {}
    own = device.get("peak_flops_float32_tensor" if r.get("tf32") else "peak_flops_float32")
    if r.get("dtype") != "float32" or device.get("backend") != "cuda" or not own or own == mfu_peak(run)["flops"] \
            or not r.get("flops_per_second") or r["step"] in ("compile", "graphs"):
        return None
    return Bound("it", r["flops_per_second"], own, f"the {'TF32 tensor-core' if r.get('tf32') else 'float32'} "
                 "peak", unit="FLOP/s", name="own peak")


def _mfu(run, r, subject):     # None where the step has no MFU
    if mfu(run, r) is not None and r.get("flops_per_second"):
        return Bound(subject, r["flops_per_second"], mfu_peak(run)["flops"], mfu_peak(run)["name"], unit="FLOP/s",
                     mfu=True, measured_roof=r.get("backend") == "cpu", name="mfu")


def step(key: str):
    """``claims_of`` step ``key``: per token against the configuration it changed, MFU, own peak, regimes, compiling."""
    def claims_of(run):
        r = by_step(run).get(key)
        if r is None or r.get("skipped"):
            return [_lacks(run, key)] if not run.meta.get("reference") else []
        before, who = previous(run, key), f"per token, **{r['label']}** ({r['tokens']:,} tokens per call)"
        change = (Value(r["seconds_per_token"], "s", who, name="time") if before is None else
                  Compare(who, r["seconds_per_token"], f"{before['label']}, the configuration it changed",
                          before["seconds_per_token"], name="change"))
        compiled = Value(r["compile_seconds"], "s", f'compiling it with `torch.compile(mode="{r["compile"]}")`',
                         name="compile") if r.get("compile_seconds") else None
        graphs = Cause(LAUNCHES, change, when=("same", "longer")) if key == "graphs" and before else None
        return [change, _mfu(run, r, "it"), _own_peak(run, r), _shares(r), compiled, graphs,
                Noisy(r["label"], r.get("iqr_seconds", 0.0), r["seconds"])]
    return claims_of


def recorded(run):
    """How many of the chapter's steps this run ran, skipped, or lacks (its record predates them), and which."""
    ran, lacks = measured(run), not_recorded(run)
    parts = {"ran": len(ran), "did not run here (skipped)": len(run.records) - len(ran),
             "joined the chapter after this run was recorded": len(lacks)}
    return [Share(len(STEP_KEYS), {k: v for k, v in parts.items() if v}, "steps of the chapter", unit="count",
                  verb="of them", name="steps"),
            Missing(f"capstone_steps: {', '.join(s.key for s in lacks)}", "so the table lists them as not in this "
                    "record, and their sections say so") if lacks and not run.meta.get("reference") else None,
            _unjudged(run, ran)]


def _unjudged(run, ran):
    """The Missing claim of the record a step's regime shares lacked to be judged as chapter 7 judges, or None."""
    unjudged = [r for r in ran if profiled(r) and not r.get("judged")]
    if not unjudged or run.meta.get("reference"):
        return None
    lacks = ("capstone_steps: rows", "its steps' profile rows, which only later records keep, ") \
        if any(not r.get("rows") for r in unjudged) else ("capstone_call_cost", "")
    return Missing(lacks[0], lacks[1] + "so each step's regime shares judge its operators by their least times "
                   "alone, without chapter 7's check of their replayed time")


def summary(run):
    """The first step against the one kept at the end, its MFU, the changes kept and the regime path."""
    o, steps = overall(run), by_step(run)
    first, final, moves = steps[o["first"]], steps[o["last"]], regime_moves(run)
    done = {"kept their change": len(o["kept"]), "had it undone": len(o["undone"])}
    words = {"moved": f"moved the dominant regime ({'; '.join(moves['moved'])})", "stayed": "left it where it was",
             "no one regime": "had no one dominant regime, or none before them"}
    return [Compare(f"per token, the configuration kept at the end ({final['label']}, {final['tokens']:,} tokens per "
                    "call)", final["seconds_per_token"], f"{first['label']} ({first['tokens']:,} tokens per call)",
                    first["seconds_per_token"], name="outcome"),
            _mfu(run, final, "the configuration kept at the end"),
            Share(sum(done.values()), {k: v for k, v in done.items() if v}, "steps that ran after the first",
                  unit="count", verb="of them", name="kept") if sum(done.values()) else None,
            Share(sum(map(len, moves.values())), {words[k]: len(v) for k, v in moves.items() if v}, "steps after the "
                  "first with a profile of their own", unit="count", verb="of them", name="regime path")
            if any(moves.values()) else None]


CALL = ("Per token, each block's four weight matrices do 24·d² = {weights} FLOPs, attention 4·T·d = {attention} at "
        "T = {seq}, and the head 2·d·V = {head}: with {layers} blocks, **{per_token} FLOPs per token**, {ratio} the "
        "{params} parameters (each weight does one multiply-add per token; the position table does none), where "
        "GPT-2 small, the model this chapter runs on a GPU, does {gpt2}. A call on {batch} × {seq} = {tokens} tokens "
        "does {flops}, must read every weight once, {params} × 4 bytes = {nbytes}, and is {calls} operator calls, "
        "each paying {fixed}. {regime} So one call takes at least **{least}**, {least_token} per token.\n\n{reference}")
RIDGE = ("The math time grows with the tokens, n × {per_token} FLOPs / peak, while the time to read the weights, "
         "{nbytes} / bandwidth, does not: they are equal at n = weight bytes × ridge / FLOPs per token, and as each "
         "weight does 2 FLOPs per token and takes 4 bytes, n ≈ 2 × ridge. Here the ridge is {ridge}, so about {approx} "
         "tokens; the exact count (the head, attention, the position table) gives **n = {n_star} tokens**, and the "
         "smallest whole number of sequences of {seq} tokens that reaches it, at least two, is **{batch}**: {tokens} "
         "tokens, {flops}. By the roofline alone a call on them takes at least **{least}**, {growth} the least time of "
         "a call on one sequence, for {batch} times the tokens. {regime}\n\nOn the reference {ref} in FP32 (ridge "
         "{ref_ridge}) the same model needs {ref_n} tokens, in bfloat16 on its tensor cores (ridge {bf16_ridge}, 2 "
         "bytes per weight) {bf16_n}.")


def _regime(n, subject, seconds=None):
    return Regime(subject, n["flops"], n["nbytes"], n["here"], call_cost=n["fixed"], seconds=seconds, name="regime")


def call_answer(n, source=None):
    """Worked problem 1 from :func:`~brrr.experiments.capstone_worked.one_call` (``source``: its fixed cost's record)."""
    regime, ref = _regime(n, f"one call on {n['tokens']:,} tokens"), n["ref"]
    least = max(regime.bounds().values())
    fixed = ("a fixed cost this run has no record of (`capstone_call_cost`), so the roofline alone answers below"
             if n["call_cost"] is None else f"a fixed cost of {quantity(n['call_cost'], 's')}" + (
                 "" if source == "capstone_call_cost" else ", measured with this run's profile of step 2 "
                 "(`capstone_profile_batch`), as it has no `capstone_call_cost`"))
    return fill(CALL, weights=_v(n["weights_part"], "count"), attention=_v(n["attention_part"], "count"),
                seq=n["seq"], head=_v(n["head_part"], "count"), layers=n["n_layer"], per_token=_v(n["per_token"], "count"),
                ratio=_v(n["per_token"] / n["params"], "x"), params=_v(n["params"], "count"),
                gpt2=_v(n["gpt2_per_token"], "count"), batch=n["batch"], tokens=_v(n["tokens"], "count"),
                flops=_v(n["flops"], "FLOP"), nbytes=_v(n["nbytes"], "B"), calls=_v(n["calls"], "count"), fixed=fixed,
                regime=regime, least=_v(least, "s"), least_token=_v(least / n["tokens"], "s"),
                reference=Regime(f"on the reference {ref.name} (FP32 peak {quantity(ref.peak_flops, 'FLOP/s')}, "
                                 f"{quantity(ref.peak_bandwidth, 'B/s')}), the same call", n["flops"], n["nbytes"], ref))


def call_check(n):
    """``claims_of`` one eager call's measured seconds: against Worked problem 1's bound, and its regime."""
    def claims_of(seconds):
        return [Bound(f"one eager call on {n['tokens']:,} tokens", seconds, max(_regime(n, "it").bounds().values()),
                      "Worked problem 1's bound", nbytes=n["nbytes"], cache_bytes=n["cache"], measured_roof=n["cpu"],
                      name="bound"), _regime(n, "the call", seconds)]
    return claims_of


def ridge_answer(n):
    """Worked problem 2 from :func:`~brrr.experiments.capstone_worked.ridge_call`."""
    return fill(RIDGE, per_token=_v(n["per_token"], "count"), nbytes=_v(n["nbytes"], "B"),
                ridge=_v(n["ridge"], "FLOP/byte"), approx=_v(2 * n["ridge"]), n_star=_v(n["n_star"]), seq=n["seq"],
                batch=n["batch"], tokens=_v(n["tokens"], "count"), flops=_v(n["flops"], "FLOP"),
                least=_v(n["least"], "s"), growth=_v(n["least"] / n["few_least"], "x"), ref=n["ref"].name,
                regime=_regime(n, f"counting its {n['calls']} operator calls too, the call" if n["fixed"] else "the call"),
                ref_ridge=_v(n["ref_ridge"]), ref_n=_v(n["ref_n"]), bf16_ridge=_v(n["bf16_ridge"]), bf16_n=_v(n["bf16_n"]))


def ridge_check(n, few=None):
    """``claims_of`` the call at the ridge's seconds: against ``few`` (one sequence's), per token, and its regime."""
    def claims_of(seconds):
        one = f"the call on {n['seq']} tokens (Worked problem 1)"
        return [Compare(f"the call on {n['tokens']:,} tokens", seconds, one, few, name="growth") if few else None,
                Compare("per token, it", seconds / n["tokens"], "that call", few / n["seq"], name="per token")
                if few else None, _regime(n, f"the call on {n['tokens']:,} tokens", seconds)]
    return claims_of


TF32 = ("TF32 changes only the matmuls, which get at most r = TF32 peak / FP32 peak times faster: if they take a share "
        "f of step 2's time and the rest keeps its time, step 3 is at most 1 / ((1 − f) + f / r) times as fast as "
        "step 2 (Amdahl's law). {peaks} {bound}")
CAST = ("Autocast reads each of the {weights} weights and biases that enter a matmul (every parameter but the position "
        "table and the LayerNorms') in float32 and writes a 16-bit copy on every call, 6 bytes each: **{nbytes} per "
        "call**. At this device's {bandwidth} that takes {floor} if they come from DRAM (in float32 they are {float32}, "
        "against a {cache} last-level cache: where they fit, back-to-back calls find them there and take less). "
        "It also casts each activation that enters a matmul, and step 5 has no casts: if the casts take a share c of "
        "step 4's time and the rest kept its time, step 5 would be 1 / (1 − c) times as fast. {share} Step 5 changes "
        "more than the casts (LayerNorm, softmax and the residual additions read and write 16-bit values too), so "
        "the measurement can differ either way.")
VOCAB = ("Padding GPT-2's vocabulary from {vocab} to {wide} adds {added} outputs to the head, {more} more of its FLOPs, "
         "and changes nothing else: at the same rate the pass would be a little slower, so it pays only if the "
         "head's matmul runs faster at the padded width. If the head takes a share h of the time, even a padded "
         "head that took no time would make the pass at most 1 / (1 − h) times as fast. {share}")
SHARE = {"tf32": ("Step 2's profile on {where} gives the matmuls f = {f} of its operators' time, so step 3 can be at most "
                  "**{bound} as fast**, and no more than {limit} even if the matmuls took no time."),
         "cast": ("Step 4's profile has {casts} casts (`aten::_to_copy`) taking {cast} of its operators' {total}: "
                  "c = {c}, so from the casts alone step 5 would be **{speedup} as fast**."),
         "vocab": ("The profile of {base}, the configuration step 7 changed here, gives the head {head} of {total}: "
                   "h = {h}, so step 7 can be at most **{bound} as fast**{at_peak}.")}


def tf32_answer(n):
    """Worked problem 3 from :func:`~brrr.experiments.capstone_worked.tf32_gain`."""
    if n["where"] is None:
        return fill(TF32, bound="", peaks=Missing("capstone_profile_batch", "of a GPU with TF32 tensor cores, so r "
                                                  "and f are unknown here"))
    none = "" if n["where"] == "this device" else ", since this device has no TF32 tensor cores and step 3 does not run here"
    return fill(TF32, peaks=f"On {n['where']}, r = {quantity(n['tf32'], 'FLOP/s')} / {quantity(n['fp32'], 'FLOP/s')} = "
                f"{quantity(n['r'], '')}{none}.", bound=Missing("capstone_profile_batch", "so f is unknown") if "bound" not in n
                else fill(SHARE["tf32"], where=n["where"], f=_v(n["f"], "%"), bound=_v(n["bound"], "x"), limit=_v(n["limit"], "x")))


def cast_answer(n, steps):
    """Worked problem 4 from :func:`~brrr.experiments.capstone_worked.cast_saving` (``steps``: the page's run)."""
    share = _lacks(steps, "autocast", "cast_seconds", "so c is unknown") or fill(
        SHARE["cast"], casts=n["casts"], cast=_v(n["cast_seconds"], "s"), total=_v(n["profile_seconds"], "s"),
        c=_v(n["c"], "%"), speedup=_v(n["speedup"], "x"))
    return fill(CAST, weights=_v(n["weights"], "count"), nbytes=_v(n["nbytes"], "B"), bandwidth=_v(n["bandwidth"], "B/s"),
                floor=_v(n["floor"], "s"), float32=_v(n["float32_bytes"], "B"), cache=_v(n["cache"], "B"), share=share)


def vocab_answer(n, steps):
    """Worked problem 6 from :func:`~brrr.experiments.capstone_worked.vocab_gain` (``steps``: the page's run)."""
    share = _lacks(steps, "vocab", what="so h is unknown") or (None if "h" in n else Missing(
        f"capstone_steps: {n['base']['step']}'s head_seconds", "a part of its profile records kept only later, so h "
        "is unknown"))
    at_peak = "" if "at_peak" not in n else fill(", and with the padded head at {peak} ({least}) at most **{b}**",
                                                  peak=n["peak_name"], least=_v(n["least"], "s"), b=_v(n["at_peak"], "x"))
    share = share or fill(SHARE["vocab"], base=n["base"]["label"], head=_v(n["base"]["head_seconds"], "s"),
                          total=_v(n["base"]["profile_seconds"], "s"), h=_v(n["h"], "%"), bound=_v(n["bound"], "x"),
                          at_peak=str(at_peak))
    return fill(VOCAB, vocab=_v(n["vocab"], "count"), wide=_v(n["wide"], "count"), added=n["added"],
                more=_v(n["more"], "%"), share=share)


def gain_check(key: str, n):
    """``claims_of`` step ``key`` (tf32, cast, vocab) against the configuration it changed, the bound ``n``, the profiles."""
    def claims_of(run):
        lacks = _lacks(run, key, what="so the bound goes unchecked")
        if lacks:
            return [lacks] if not run.meta.get("reference") else []
        r, before = by_step(run)[key], previous(run, key)
        base = by_step(run).get({"tf32": "batch", "cast": "autocast"}.get(key)) or before   # what the bound is over
        bound = n.get("speedup" if key == "cast" else "bound") if n.get("where", "this device") == "this device" else None
        claims = [Compare(f"per token, step {STEP_KEYS.index(key) + 1} ({r['label']})", r["seconds_per_token"],
                          f"{before['label']}, the configuration it changed", before["seconds_per_token"], name="gain"),
                  Compare(f"its speed-up over {base['label']}", base["seconds_per_token"] / r["seconds_per_token"],
                          "the bound", bound, unit="x", name="against the bound") if bound and base.get("seconds") else None]
        if key == "vocab" and r.get("head_seconds") and base.get("head_seconds"):
            claims.append(Compare("in the profiles, the padded head's matmul", r["head_seconds"], "the unpadded one",
                                  base["head_seconds"], name="head"))
        if key == "cast" and r.get("category_seconds") and base.get("category_seconds"):
            mm, was = r["category_seconds"].get("matmul", 0.0), base["category_seconds"].get("matmul", 0.0)
            claims += [Compare("in the profiles, its matmuls", mm, f"those of {base['label']}", was, name="matmuls"),
                       Compare("everything else in it (the casts included)", r["profile_seconds"] - mm,
                               f"in {base['label']}", base["profile_seconds"] - was, name="the rest")]
        return claims
    return claims_of


ATTENTION = ("Per token and block, attention does 4·T·d FLOPs and the weight matrices 24·d², so attention's share of a "
             "block is T / (6d + T): it passes half at **T = 6d**, {crossover} tokens for this model (d = {d}; its "
             "context is {context}), {gpt2_crossover} for GPT-2 small. At T = {seq} it is {block} of each block and, "
             "with the head, **{share} of the pass's FLOPs**; GPT-2 small at 1,024 tokens: {gpt2_block} of each block, "
             "{gpt2_share} of the pass.\n\nTime is another matter: the scale, the mask and softmax each read and write "
             "the {n_head} × {seq} × {seq} scores of every sequence for a few FLOPs an element (softmax {softmax}/8 "
             "FLOP/byte, against a ridge of {ridge}), and the attention matmuls are only {head_dim} wide (the head "
             "dimension). Counting those operators and the four copies that split and join the heads against the "
             "weight matrices and the head (not the LayerNorms, GELU and adds), each at its least time, the roofline "
             "gives attention **{time_share} of the time**. On the reference {ref} in FP32 this model at {batch} × "
             "{seq} tokens gets {ref_same} of it, GPT-2 small at 1,024 tokens {ref_gpt2}: the time FlashAttention "
             "goes after, never writing the scores to memory (Dao et al., 2022).")
DECODE = ("Apart from the position table, of which a step reads one row, the model has {weights} weights; in {dtype}, "
          "{itemsize} bytes each, that is {nbytes}, and reading them at this device's {bandwidth} ({whence}) takes "
          "**{floor} per step**, whatever the batch: at most {rate} tokens per second at batch 1. A batch of {batch} "
          "reads the weights once for {batch} tokens and its key/value cache besides, {cache} at the sweep's {length} "
          "positions: at least {batch_floor} per step, at most {batch_rate} tokens per second. On the reference {ref} "
          "({ref_bandwidth}), in bfloat16: {ref_floor} per step at batch 1.")
TRAIN = ("A step does the forward pass once and the backward pass, two matmuls for each of the forward's, so three "
         "times its FLOPs: 6 per token for each of the {weights} weights the matmuls use, plus attention's, "
         "**{flops}** for {tokens} tokens. At {peak}, {rate}, that takes at least **{least}**, at most {tps} tokens "
         "per second; that peak bounds {dtypes} arithmetic only (Chapter 1), so the bound holds for those "
         "configurations alone. {reference}")


def attention_answer(n):
    """Worked problem 5 from :func:`~brrr.experiments.capstone_worked.attention_share`."""
    pct = {k: _v(n[k], "%") for k in ("block", "share", "gpt2_block", "gpt2_share", "time_share", "ref_same", "ref_gpt2")}
    return fill(ATTENTION, **pct, **{k: n[k] for k in ("d", "seq", "batch", "n_head", "head_dim", "softmax")},
                crossover=_v(n["crossover"], "count"), gpt2_crossover=_v(n["gpt2_crossover"], "count"),
                context=_v(n["context"], "count"), ridge=_v(n["ridge"]), ref=n["ref"].name)


def attention_check(n):
    """``claims_of`` attention's shares measured in a profile (:func:`~brrr.experiments.capstone_worked.attention_measured`)."""
    def claims_of(m):
        return [Compare("the profiler's count of attention's share of the FLOPs", m["flop_share"], "the formula's",
                        n["share"], unit="%", name="flops"),
                Compare("its share of the replayed time (against the weight matmuls and the head)", m["time_share"],
                        "the roofline's", n["time_share"], unit="%", name="time"),
                Bound("attention's operators", m["core_seconds"], m["core_least"], "their roofline", name="core"),
                Bound("the weight matmuls and the head", m["mats_seconds"], m["mats_least"], "their roofline", name="mats"),
                Share(m["lost_total"], m["lost"], "attention's operators took beyond their roofline times", name="lost")
                if m["lost"] else None]
    return claims_of


def decode_answer(n, whence):
    """Worked problem 7 from :func:`~brrr.experiments.capstone_worked.decode_floor` (``whence``: the peaks' source)."""
    return fill(DECODE, weights=_v(n["weights"], "count"), dtype=n["dtype"], itemsize=n["itemsize"], whence=whence,
                nbytes=_v(n["weight_bytes"], "B"), bandwidth=_v(n["bandwidth"], "B/s"), floor=_v(n["floor"], "s"),
                rate=_v(1 / n["floor"], "count"), batch=n["batch"], cache=_v(n["cache_bytes"], "B"), length=n["length"],
                batch_floor=_v(n["batch_floor"], "s"), batch_rate=_v(n["batch"] / n["batch_floor"], "count"),
                ref=n["ref"].name, ref_bandwidth=_v(n["ref"].peak_bandwidth, "B/s"), ref_floor=_v(n["ref_floor"], "s"))


def decode_check(run):
    """The decode sweep: its floor, and each decode step's regime by the book's rule, or that none explains it."""
    steps = [r for r in run.records if r["mode"] != "prefill" and not r.get("skipped")]
    roof = Roofline.from_dict(run.meta["roofline"])
    return [Value(steps[0]["weight_seconds"], "s", "reading every weight once at the DRAM bandwidth, a decode step's "
                  "floor,", "takes", name="floor") if steps else None] + [
        Regime(f"at batch {r['batch']}, one {'eager decode step' if r['mode'] == 'eager' else 'decode step as a CUDA graph'}",
               r["flops"], r["nbytes"], roof, call_cost=r["overhead_seconds"], seconds=r["seconds"],
               name=f"{r['mode']}, batch {r['batch']}") for r in steps[:4]]


def train_answer(n, model):
    """Worked problem 8 from :func:`~brrr.experiments.capstone_worked.train_floor` (``model``: the page's, named)."""
    return fill(TRAIN, weights=_v(n["weights"], "count"), flops=_v(n["flops"], "FLOP"), tokens=_v(n["tokens"], "count"),
                peak=n["peak"]["name"], rate=_v(n["peak"]["flops"], "FLOP/s"), least=_v(n["least"], "s"),
                tps=_v(n["tokens_per_second"], "count"), dtypes=" and ".join(n["peak"]["dtypes"]),
                reference=Compare(f"GPT-2 small on 8 × 1,024 tokens at the reference {n['ref_name']}'s bfloat16 "
                                  f"tensor-core peak ({quantity(n['ref_peak'], 'FLOP/s')})", n["ref_least"],
                                  f"this bound for {n['tokens']:,} tokens of {model}", n["least"], name="reference"))


def training(n):
    """``claims_of`` training: the fastest against the first, its MFU, the floor ``n``, its traced time, its noise."""
    def claims_of(run):
        runs = measured(run)
        if not runs:
            return [Missing("capstone_train: every configuration", "so nothing here is measured")]
        best, first = min(runs, key=lambda r: r["seconds"]), runs[0]
        bounded = [r for r in runs if r["dtype"] in n["peak"]["dtypes"]] if not run.meta.get("reference") else []
        fast, costs = min(bounded, key=lambda r: r["seconds"]) if bounded else None, best.get("costs") or {}
        who = f"per step, **{best['label']}** ({best['tokens']:,} tokens)"
        top = dict(sorted(costs.items(), key=lambda kv: -kv[1])[:3])
        return [Value(best["seconds"], "s", who, name="best") if best is first else
                Compare(who, best["seconds"], first["label"], first["seconds"], name="best"), _mfu(run, best, "it"),
                Bound(f"the fastest step Worked problem 8's bound holds for ({fast['label']})", fast["seconds"],
                      n["least"], "that bound", measured_roof=fast["backend"] == "cpu", name="floor") if fast else None,
                Share(sum(costs.values()), {COSTS.get(k, k): v for k, v in top.items()}, "of its step that `torch.profiler` "
                      "traced", name="costs") if sum(costs.values()) > 0 else None,
                Noisy(best["label"], best.get("iqr_seconds", 0.0), best["seconds"])]
    return claims_of


def anchors(run):
    """The bfloat16 tensor-core peak of each anchor's GPU against the one peak of this page's run."""
    peak, device = mfu_peak(run), (run.meta.get("device") or {}).get("name", "this device")
    return [Compare(f"the bfloat16 tensor-core peak of the {model}s {names} used", bf16, f"this page's one peak "
                    f"({peak['name']}, {device})", peak["flops"], unit="FLOP/s", name=model)
            for model, names, bf16 in peaks()] if peak.get("flops") else []
