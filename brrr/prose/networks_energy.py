"""Chapter 6: the DI paper's Table IV ridges, Table IX and Eq. 6, recomputed by :mod:`brrr.intensity_energy`."""
from __future__ import annotations

from . import Prose
from . import words as w

LIMIT_SLACK = 0.011   # a recomputed limit within 0.01 of the printed one (two printed decimals) agrees


def gpus(table, calls=None) -> Prose:
    """Table IV's CMR against peak FLOP/s / peak bandwidth (:func:`brrr.intensity_energy.table_iv_view`),
    and (``calls``: :func:`~brrr.intensity_energy.fig3_calls`) whether the paper's memory- or
    compute-bound calls of Fig. 3 survive reading its roofline in consistent units."""
    rows = list(table.itertuples(index=False))
    ok = [r for r in rows if abs(r[6] - r[5]) <= 0.005 + 1e-9]
    text = ("The compute-to-memory ratio (CMR) of Table IV is the roofline's ridge point: peak FLOP/s over peak "
            "bandwidth. ")
    if len(ok) == len(rows):
        text += (f"Recomputed, it is {w.listing(f'{w.number(r[6], 4)} FLOP/byte for the {r[0]}' for r in rows)}, "
                 "the printed values to their last digit. ")
        outcome = "agrees"
    else:
        bad = [r[0] for r in rows if r not in ok]
        text += f"Recomputed, it differs from the printed value for the {w.listing(bad)}. "
        outcome = "differs"
    facts = {"outcome": outcome}
    if calls is not None:
        direct = (calls["paper's call"] == calls["read against CMR"]).all()
        moved = calls[calls["paper's call"] != calls["in consistent units"]]
        facts.update(direct=bool(direct), moved=sorted(set(moved["network"] + " " + moved["metric"])))
        if direct and len(moved):
            nets = sorted(set(moved["network"]))
            metrics = sorted(set(moved["metric"]))
            text += ("Every call the paper's text makes from its rooflines (which network is bandwidth-bound, "
                     "which compute-bound) follows when $AI_c$ and DI, counted in MACs per *element*, are read "
                     "straight against that ridge in FLOPs per *byte*. In consistent units, 2 FLOPs "
                     "per MAC and 4 bytes per float32 element, the ridge sits at twice the CMR in MACs per element "
                     f"({w.listing(w.number(2 * r[6], 3) for r in rows)}), and the call changes for "
                     f"{w.listing(nets)} at {w.listing('$AI_c$' if m == 'ai_c' else 'DI' for m in metrics)}, on at "
                     "least one of the two GPUs. ")
            kept = sorted(set(calls["network"]) - set(nets))
            if kept:
                text += f"The calls for {w.listing(kept)} stand either way."
        elif direct:
            text += ("The paper's rooflines place its MACs-per-element intensities straight against this ridge; its "
                     "calls come out the same in consistent units.")
        else:
            text += "Not every call the paper's text makes follows from its own Table VIII and Table IV."
    return Prose(text.strip(), facts)


def statistics(table_ix, eq6: dict) -> Prose:
    """Table IX recomputed from Table VI's r by Fisher's z (:func:`brrr.intensity_energy.table_ix_recomputed`)
    and Eq. 6 (:func:`~brrr.intensity_energy.eq6_recomputed`) against the printed numbers."""
    off = [f"{r['GPU']} {r['metric']} at {r['confidence (%)']}%" for _, r in table_ix.iterrows()
           if abs(r["L"] - r["L (paper)"]) > LIMIT_SLACK or abs(r["U"] - r["U (paper)"]) > LIMIT_SLACK]
    n = 2 * len(table_ix)
    if not off:
        text = (f"Recomputed from Table VI's correlations over 25 networks, all {n} limits of Table IX come out "
                "within 0.01 of the printed ones (the r it starts from is printed to two decimals). ")
    else:
        text = f"Recomputed from Table VI's correlations, Table IX's limits differ for {w.listing(off)}. "
    same_eq6 = (eq6["minimum"] == eq6["minimum (paper)"]
                and abs(eq6["window_at_25"] - eq6["window_at_25 (paper)"]) < 0.001)
    text += (f"Eq. 6 holds as printed: a window of 1 in Fisher's z at 95% needs $n \\ge$ {w.number(eq6['phi_bound'], 4)}, "
             f"so {eq6['minimum']} networks, and 25 give a window of {w.number(eq6['window_at_25'], 3)}. "
             if same_eq6 else "Eq. 6 does not come out as printed. ")
    di = table_ix[(table_ix["metric"] == "DI") & (table_ix["confidence (%)"] == 99)]
    weakest = di.loc[di["L"].idxmin()]
    text += (f"What the intervals say is modest: at 99% the correlation between DI and energy efficiency may be "
             f"as low as {w.number(weakest['L'], 2)} on the {weakest['GPU']}, and the intervals assume the 25 "
             "networks are a random sample of networks, which a chosen set is not.")
    return Prose(text, {"off": off, "eq6": same_eq6, "weakest_gpu": weakest["GPU"]})
