"""Chapter 5's figures (brrr.plot.recompute): what each title claims was measured, and legible legends."""
import matplotlib

matplotlib.use("Agg")

from brrr import plot  # noqa: E402
from brrr.results import Result  # noqa: E402

CPU = {"name": "Test CPU (2 threads)", "backend": "cpu", "threads": 2}


def chain_run():
    """A compiled_recompute run, made up: bytes counted by hooks, times as if measured."""
    recs = [{"variant": v, "op": "gelu", "k": 4, "n": 1000, "saved_bytes": b, "seconds": t, "min_seconds": t,
             "iqr_seconds": 0.0} for v, b, t in (("eager", 16000, 2e-3), ("compiled (save all)", 16000, 2e-3),
                                                  ("compiled (recompute)", 4000, 1.5e-3))]
    return Result("compiled_recompute", recs, {"device": CPU, "op": "gelu", "k": 4, "n": 1000})


def test_compiled_recompute_title_says_only_the_time_was_measured():
    """B2:C5: the left panel holds hook counts, so its title may not call the figure 'measured'."""
    fig = plot.compiled_recompute(chain_run())
    title = fig.axes[0].get_title()
    assert title.endswith("(time measured on CPU)") and "gelu chain, k = 4" in title


def test_checkpoint_sweep_legend_is_large_enough_to_read_at_page_width():
    """B2:C11: the 10-inch figure is shown at about two-thirds size, so its legends use 11 points or more."""
    recs = [{"every": e, "saved_bytes": 2 ** 20 * (8 if e == 0 else 8 / e), "recompute_bytes": 2 ** 18 * max(e, 1),
             "peak_activation_bytes": 2 ** 21, "min_seconds": 1.0 if e == 0 else 1.3} for e in (0, 1, 2, 4)]
    fig = plot.checkpoint_sweep(Result("checkpoint_sweep", recs, {"device": CPU}))
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends and all(t.get_fontsize() >= 11 for lg in legends for t in lg.get_texts())


def test_checkpoint_sweep_draws_the_early_stop_flop_ratio():
    """H200 review item 1: the time panel's guide is the FLOP ratio of each length, below 4/3."""
    from brrr.experiments.recompute_checkpoint import checkpoint_flop_ratio
    recs = [{"every": e, "saved_bytes": 2 ** 20, "recompute_bytes": 2 ** 18, "peak_activation_bytes": 2 ** 21,
             "min_seconds": 1.0 if e == 0 else 1.3} for e in (0, 1, 2, 4)]
    fig = plot.checkpoint_sweep(Result("checkpoint_sweep", recs, {"device": CPU, "layers": 4}))
    right = fig.axes[1]
    line = next(ln for ln in right.get_lines() if ln.get_label() == "FLOP ratio (early stop)")
    assert list(line.get_ydata()) == [checkpoint_flop_ratio(4, e) for e in (1, 2, 4)]
