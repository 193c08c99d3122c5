"""Chapter 5, recomputation: what saved-tensor hooks count for a small layer and for one block."""
from __future__ import annotations

from . import Prose
from . import words as w


def _bytes(n: float) -> str:
    """'1,536 bytes' for small exact counts, '12 MiB' for large ones."""
    return f"{int(n):,} bytes" if n < 2 ** 14 else w.size(n)


def _rows(rows) -> list:
    return rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)


def _shape(shape) -> str:
    return " × ".join(str(d) for d in shape) or "scalar"


def small_layer(rows, by_hand: int) -> Prose:
    """The hooks' count of a layer's saved activations against the count ``by_hand`` (bytes)."""
    rows = _rows(rows)
    acts = [r for r in rows if r["kind"] == "activation"]
    params = [r for r in rows if r["kind"] == "parameter"]
    measured = sum(r["nbytes"] for r in acts)
    listed = (f"{w.spelled(len(acts))} saved activation{'s' if len(acts) != 1 else ''}, "
              f"{' and '.join(_shape(r['shape']) for r in acts)} ({', '.join(sorted({r['dtype'] for r in acts}))})"
              if acts else "no saved activation")
    if measured == by_hand:
        outcome = "agree"
        text = f"The hooks saw {listed}: {_bytes(measured)}, exactly the {_bytes(by_hand)} counted by hand."
    else:
        outcome = "more" if measured > by_hand else "fewer"
        text = (f"The hooks saw {listed}: {_bytes(measured)}, {_bytes(abs(measured - by_hand))} "
                f"{outcome} than the {_bytes(by_hand)} counted by hand: the hooks see what this version of "
                "PyTorch keeps.")
    if params:
        many = len(params) > 1
        text += (f" They also saw {w.spelled(len(params))} weight{'s' if many else ''} "
                 f"({_bytes(sum(r['nbytes'] for r in params))}), listed as {'parameters' if many else 'a parameter'} "
                 "and not counted: weights are in memory anyway.")
    else:
        text += " No weight was saved."
    return Prose(text, {"outcome": outcome, "measured": measured, "by_hand": by_hand, "parameters": len(params)})


def block(rows, input_bytes: int, layers: int) -> Prose:
    """What one block saves, as a multiple of its input, and what ``layers`` blocks keep."""
    rows = _rows(rows)
    acts = [r for r in rows if r["kind"] == "activation"]
    total = sum(r["nbytes"] for r in acts)
    ratio = total / input_bytes
    same = [r for r in acts if r["nbytes"] == input_bytes]
    big = [r for r in acts if r["nbytes"] > input_bytes]
    small = [r for r in acts if r["nbytes"] < input_bytes]
    parts = []
    if same:
        parts.append(f"{w.spelled(len(same))} of the input's size ({_shape(same[0]['shape'])})")
    if big:
        sizes = sorted({r["nbytes"] / input_bytes for r in big})
        times = " or ".join(w.number(s) for s in sizes)
        shapes = ", ".join(dict.fromkeys(_shape(r["shape"]) for r in big))
        parts.append(f"{w.spelled(len(big))} {times} times larger ({shapes})")
    if small:
        parts.append(f"{w.spelled(len(small))} small one{'s' if len(small) > 1 else ''} "
                     f"({_bytes(sum(r['nbytes'] for r in small))} in all)")
    listing = (", ".join(parts[:-1]) + " and " + parts[-1]) if len(parts) > 1 else (parts[0] if parts else "nothing")
    text = (f"One block keeps {w.number(ratio)} times its input's size in activations, {_bytes(total)} for a "
            f"{_bytes(input_bytes)} input: {listing}. A stack of {layers} blocks keeps {layers} times as much, "
            f"{_bytes(layers * total)}.")
    params = [r for r in rows if r["kind"] == "parameter"]
    if params:
        text += " " + _parameter_rows(params)
    return Prose(text, {"block_ratio": ratio, "block_bytes": total, "input_bytes": input_bytes,
                        "stack_bytes": layers * total})


def _parameter_rows(params) -> str:
    """What a block's ``parameter`` rows are: weight matrices and vectors."""
    mats = [r for r in params if len(r["shape"]) >= 2]
    vecs = [r for r in params if len(r["shape"]) < 2]
    parts = []
    if len(mats) == 1:
        parts.append("one weight matrix, which the backward pass reads to compute the gradient of its layer's input")
    elif mats:
        parts.append(f"{w.spelled(len(mats))} weight matrices, which the backward pass reads to compute the "
                     "gradients of their layers' inputs")
    if vecs:
        sizes = w.listing(dict.fromkeys(_shape(r["shape"]) for r in vecs))
        one = len(vecs) == 1
        parts.append(f"{w.spelled(len(vecs))} vector{'' if one else 's'} of {sizes} elements, which "
                     f"{'the operator that uses it keeps for its' if one else 'the operators that use them keep for their'} "
                     f"backward pass whether or not a gradient needs {'it' if one else 'them'}")
    n = len(params)
    if n == 1:
        return f"The parameter row is {parts[0]}; it is in memory anyway and costs nothing extra."
    return f"The {w.spelled(n)} parameter rows are {', and '.join(parts)}; all are in memory anyway and cost nothing extra."
