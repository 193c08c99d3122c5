"""Every record set's headline numbers (:func:`brrr.headlines.headline_table`), one panel a number, one bar a device."""
from __future__ import annotations

from ._base import _styled
from .barchart import bars


@_styled
def headlines(table):
    """One panel per headline column of ``table`` (``table.attrs['headlines']``: {column: (unit, what it is)}) that
    some device has (its devices without it left out), each a horizontal bar per device, on a log axis where the
    devices span more than 20x (:func:`brrr.plot.bars`)."""
    import matplotlib.pyplot as plt
    headlines_of = table.attrs.get("headlines", {})
    columns = [c for c in headlines_of if c in table and table[c].notna().any()]
    if not columns:
        raise ValueError("no record set has a headline number to draw")
    rows = (len(columns) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(11, 0.9 + 0.35 * len(table) * rows + 0.9 * rows), squeeze=False)
    colour = {device: f"C{i % 10}" for i, device in enumerate(table["device"])}     # one colour a device
    for ax, column in zip(axes.flat, columns):
        have = table[table[column].notna()]
        unit, what = headlines_of[column]
        if unit == "s":                         # drawn and labelled as times (µs, ms)
            have = have.assign(seconds=have[column])
        bars(have, "device", "seconds" if unit == "s" else column, ax=ax, xlabel="seconds" if unit == "s" else unit,
             title=column, color=[colour[d] for d in have["device"]])
        ax.set_title(f"{column}\n{what}", fontsize=8)
    for ax in list(axes.flat)[len(columns):]:
        ax.axis("off")
    fig.tight_layout()
    return fig
