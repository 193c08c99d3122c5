"""Ivanov et al. (2021) beside a profile: the published FLOP and time shares of BERT-large
training on a V100, as quoted by He (2022), and the same figures measured here."""
from __future__ import annotations

import numpy as np

from .reports import category_totals, short_device_name

# Ivanov et al. (2021), BERT-large training on a V100, as quoted by He (2022): the share of
# FLOPs and of runtime per operator class, and how far below the matmuls' FLOP/s the other
# classes run. The runtime shares are from the paper's table that He reproduces; the seed
# summaries of He's article carry the 99.8% and the 250x / 700x figures.
PUBLISHED = {
    "flop_share": {"matmul": 0.998, "normalisation": 0.0017, "elementwise": 0.0003},
    "time_share": {"matmul": 0.610, "normalisation": 0.255, "elementwise": 0.135},
    "flops_per_second_below_matmul": {"normalisation": 250, "elementwise": 700},
}


def ivanov_comparison(totals):
    """Published (Ivanov et al., 2021) beside measured: FLOP share, time share, FLOP/s gap.

    ``totals`` is :func:`category_totals` of a profile. The published shares leave out
    everything that is neither a contraction, a normalisation nor elementwise, so the
    measured shares here are renormalised over those three categories too.
    """
    import pandas as pd
    three = totals.reindex(["matmul", "normalisation", "elementwise"]).fillna(0)
    flop_share = three.flops / three.flops.sum()
    time_share = three.seconds / three.seconds.sum()
    rows = []
    for cat in three.index:
        rows.append({"category": cat, "quantity": "share of FLOPs",
                     "published": PUBLISHED["flop_share"][cat], "measured": flop_share[cat]})
        rows.append({"category": cat, "quantity": "share of time",
                     "published": PUBLISHED["time_share"][cat], "measured": time_share[cat]})
    rate = three.flops / three.seconds.where(three.seconds > 0)
    for cat, gap in PUBLISHED["flops_per_second_below_matmul"].items():
        rows.append({"category": cat, "quantity": "matmul FLOP/s ÷ this FLOP/s",
                     "published": float(gap), "measured": rate["matmul"] / rate[cat]})
    return pd.DataFrame(rows)


def ivanov_table(table, references=()):
    """:func:`ivanov_comparison` of a profile, for the page: the published figure (Ivanov et
    al., 2021) beside this run and each reference profile (Results from
    :func:`brrr.reference.beside`), shares in percent and FLOP/s gaps as 'N×'."""
    import pandas as pd
    from ..book import table as styled
    from ..reference import as_frame
    if table is None:
        return None     # a replayed set without that profile

    def compared(t):
        return ivanov_comparison(category_totals(t))

    def fmt(quantity, v):
        if v is None or not np.isfinite(v):
            return "–"
        return f"{100 * v:.3g}%" if quantity.startswith("share") else f"{v:,.3g}×"

    live = compared(table)
    out = pd.DataFrame({"operator class": live.category, "quantity": live.quantity.replace(
        {"matmul FLOP/s ÷ this FLOP/s": "matmul FLOP/s ÷ its FLOP/s"})})
    out["published (V100)"] = [fmt(q, v) for q, v in zip(live.quantity, live.published)]
    out["this run"] = [fmt(q, v) for q, v in zip(live.quantity, live.measured)]
    for run in references or ():
        ref = compared(as_frame(run))
        out[f"{short_device_name(run)} (reference)"] = [fmt(q, v) for q, v in zip(ref.quantity, ref.measured)]
    return styled(out)
