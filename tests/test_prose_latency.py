"""The latency-bound section's sentences: every wording, on hand-made records (not measurements),
and on a live run, where the text must agree with the records it came from."""
import pytest

from brrr.prose import latency as prose, words
from brrr.results import Result

CPU = {"name": "Test CPU (2 threads)", "backend": "cpu", "peak_bandwidth": 20e9, "l2_bytes": 32 * 2 ** 20}
GPU = {"name": "Test GPU", "backend": "cuda", "peak_bandwidth": 3000e9, "l2_bytes": 50 * 2 ** 20}
SIZE = 2 ** 25


def run(points, device=CPU, latency=100e-9, reference=False, sm_count=None, load=None, cpus=2):
    """A bandwidth_vs_parallelism result from (parallelism, GB/s) pairs."""
    unit = "blocks" if device["backend"] == "cuda" else "threads"
    records = [{"parallelism": p, "unit": unit, "gbps": g, "size": SIZE, "nbytes": 8.0 * SIZE,
                "seconds": 8.0 * SIZE / (g * 1e9), "backend": device["backend"]} for p, g in points]
    meta = {"device": device, "roof_bandwidth": device["peak_bandwidth"], "date": "2026-11-22T00:00:00+00:00",
            "latency": {"seconds_per_load": latency} if latency else None,
            "sm_count": sm_count, "block": 256 if unit == "blocks" else None, "load_average": load, "cpus": cpus}
    if reference:
        meta["reference"] = True
    return Result("bandwidth_vs_parallelism", records, meta)


def text_of(result, refs=()):
    p = prose.latency_bound(result, refs)
    return str(p), p.facts


# --- the shape of the curve ------------------------------------------------------------------

def test_one_point():
    text, facts = text_of(run([(1, 10.0)]))
    assert facts["outcome"] == "one point"
    assert "a single point" in text and "one thread copying arrays of 128 MiB reached 10 GB/s" in text
    assert "50% of the measured DRAM bandwidth" in text


def test_slower_with_more_threads():
    text, facts = text_of(run([(1, 12.0), (2, 8.0)]))            # no load average recorded
    assert facts["outcome"] == "slower"
    assert "More parallelism made the copy slower: 2 threads moved 8 GB/s, against 12 GB/s for one thread" in text
    assert "This run does not show why; rerunning the sweep shows whether it repeats." in text
    assert "load average" not in text


def test_slower_on_a_busy_cpu_gives_the_load():
    text, _ = text_of(run([(1, 12.0), (2, 8.0)], load=14.2, cpus=2))
    assert "While it ran, the load average (processes running or waiting for a CPU" in text
    assert "was 14.2 on two CPUs: other programs wanted the cores too" in text
    assert "cannot show the latency-bound part" in text


def test_slower_on_a_quiet_cpu_is_not_blamed_on_others():
    text, _ = text_of(run([(1, 12.0), (2, 8.0)], load=1.5, cpus=2))
    assert "Other programs do not explain it: the load average" in text and "was 1.5 on two CPUs." in text
    assert "cannot show the latency-bound part" not in text


def test_slower_on_a_gpu():
    text, facts = text_of(run([(1, 12.0), (2, 8.0)], device=GPU, load=30.0))
    assert facts["outcome"] == "slower"
    assert "This run does not show why" in text and "load average" not in text


def test_no_gain_near_the_roof():
    text, facts = text_of(run([(1, 17.0), (2, 17.5)]))
    assert facts["outcome"] == "no gain"
    assert "did not raise the bandwidth" in text and "17.5 GB/s with 2 threads" in text
    assert "already kept enough requests in flight" in text


def test_no_gain_far_below_the_roof():
    text, facts = text_of(run([(1, 5.0), (2, 5.2)], load=9.0))
    assert facts["outcome"] == "no gain"
    assert "still far below the roof, and while it ran the load average" in text
    text, _ = text_of(run([(1, 5.0), (2, 5.2)], load=0.5))
    assert "this run does not show why more did not help" in text and "load average" not in text


def test_still_rising_on_a_two_core_cpu():
    text, facts = text_of(run([(1, 8.0), (2, 14.0)]))
    assert facts["outcome"] == "still rising" and facts["flat_at"] is None
    assert ("The bandwidth grew from one thread to 2 threads (14 GB/s, 70% of the measured DRAM bandwidth), "
            "the largest count" in text)
    assert "at every step" not in text       # one step is not "every step"


def test_still_rising_on_a_gpu_says_nothing_about_cores():
    text, facts = text_of(run([(1, 10.0), (2, 20.0), (4, 40.0)], device=GPU, sm_count=2))
    assert facts["outcome"] == "still rising"
    assert "at every step, up to 4 blocks (2 per SM)" in text


def test_saturates_on_a_gpu():
    points = [(1, 10.0), (2, 20.0), (4, 40.0), (8, 2000.0), (16, 2600.0), (32, 2700.0), (64, 2650.0)]
    text, facts = text_of(run(points, device=GPU, latency=600e-9, sm_count=8))
    assert facts["outcome"] == "saturates" and facts["flat_at"] == 16
    assert "one block of 256 threads copying" in text and "0.33% of the spec-sheet DRAM bandwidth" in text
    assert "flattened at about 16 blocks (2 per SM)" in text and "2.7 TB/s (90% of the spec-sheet" in text
    assert "latency-bound: memory-bound by its intensity" in text
    assert "cache lines" not in text                      # lines of 64 bytes are a CPU's
    assert "600 ns per load" in text


def test_saturates_on_a_cpu():
    text, facts = text_of(run([(1, 6.0), (2, 11.0), (4, 16.0), (8, 16.5)]))
    assert facts["outcome"] == "saturates" and facts["flat_at"] == 4
    assert "flattened at about 4 threads" in text


def test_falls_back():
    text, facts = text_of(run([(1, 6.0), (2, 12.0), (4, 8.0)]))
    assert facts["outcome"] == "falls back"
    assert "rose from 6 GB/s with one thread to 12 GB/s with 2 threads, then fell back to 8 GB/s" in text
    assert "the extra workers gained nothing." in text                # no load average: no blame
    text, _ = text_of(run([(1, 6.0), (2, 12.0), (4, 8.0)], load=5.0))
    assert "gained nothing, while the load average" in text


# --- the roof and Little's law ----------------------------------------------------------------

def test_above_the_roof_on_a_cpu_and_on_a_gpu():
    text, facts = text_of(run([(1, 15.0), (2, 26.0)]))
    assert facts["above_roof"] and "NumPy's `copyto`, which runs on one thread" in text
    text, facts = text_of(run([(1, 100.0), (2, 3500.0)], device=GPU))
    assert facts["above_roof"] and "which DRAM cannot do" in text and "the L2 50 MiB" in text
    _, facts = text_of(run([(1, 15.0), (2, 19.0)]))
    assert not facts["above_roof"]


def test_littles_law_with_the_measured_latency():
    text, facts = text_of(run([(1, 10.0), (2, 18.0)], latency=100e-9))
    assert facts["latency_seconds"] == 100e-9
    one = 10e9 * 100e-9                                   # 1,000 bytes in flight
    assert "100 ns per load" in text
    assert f"about {words.size(one)} in flight, some {words.number(one / 64, 2)} cache lines" in text
    assert f"the roof needs about {words.size(20e9 * 100e-9)}, {words.times(2.0)} as much" in text
    assert "estimates are low ones" in text


STORES = {"arch": "x86_64", "streaming_store_threshold": 192 * 2 ** 20, "roof_copy_bytes": 256 * 2 ** 20}


def with_stores(result, stores=STORES):
    result.meta["stores"] = stores
    return result


def test_a_roof_with_streaming_stores_against_a_copy_with_ordinary_ones():
    text, _ = text_of(with_stores(run([(1, 10.0), (2, 12.0)], latency=100e-9)))
    assert "The roof and this copy do not store alike" in text
    assert "The roof is a NumPy copy by one thread of 256 MiB per array, at least the 192 MiB" in text
    assert "This copy moves at most 128 MiB per thread, below that size, so it uses ordinary stores" in text
    assert "One thread's 10 GB/s counted is about 15 GB/s of traffic, 75% of the roof." in text
    # Little's law on the loads, which alone wait for a reply: the thread loads its source and its
    # destination's lines (10 GB/s, all it counts), the streaming roof only its source (half of 20 GB/s)
    assert "what waits for memory's reply is the loads" in text
    assert f"10 GB/s of loads in all, so it kept about {words.size(10e9 * 100e-9)} of loads in flight" in text
    assert f"some {words.number(10e9 * 100e-9 / 64, 2)} cache lines" in text
    assert f"half of its 20 GB/s, which takes about {words.size(10e9 * 100e-9)} in flight: about as much" in text
    assert "the gap in counted bandwidth is those extra reads, not latency" in text
    assert "short of" not in text


def test_loads_in_flight_short_of_and_beyond_the_roofs():
    text, _ = text_of(with_stores(run([(1, 8.0), (2, 16.0)], latency=100e-9)))       # 8 against 10 GB/s of loads
    assert f"about {words.size(10e9 * 100e-9)} in flight, {words.times(10 / 8)} as much: one thread is short of " \
           "loads in flight even with the destination's lines counted" in text
    text, _ = text_of(with_stores(run([(1, 12.0), (2, 12.5)], latency=100e-9)))      # 12 against 10
    assert f", and one thread kept {words.times(1.2)} as much: latency does not hold this copy back" in text
    assert "short of" not in text and "about as much" not in text


def test_a_thread_near_the_roof_once_its_extra_reads_count():
    text, _ = text_of(with_stores(run([(1, 13.0), (2, 14.2)])))
    assert "about 19.5 GB/s of traffic, 98% of the roof" in text
    text, _ = text_of(with_stores(run([(1, 16.0), (2, 16.5)])))            # 24 GB/s of traffic: above the roof
    assert "about 24 GB/s of traffic, 120% of the roof, above it: the roof is one copy measured once" in text
    # 2 threads' 16.5 x 1.5 = 24.8 GB/s is above the 20 GB/s roof, but a gain under 10% is no gain
    assert "the roof is one thread's copy" not in text
    text, _ = text_of(with_stores(run([(1, 8.0), (2, 16.0)])))
    assert "and 2 threads' 16 GB/s is about 24 GB/s, above it: the roof is one thread's copy" in text


def test_a_roof_with_ordinary_stores_changes_nothing():
    stores = dict(STORES, roof_copy_bytes=128 * 2 ** 20)
    text, _ = text_of(with_stores(run([(1, 10.0), (2, 12.0)], latency=100e-9), stores))
    assert "store alike" not in text and "streaming" not in text
    assert f"the bandwidth times that latency: one thread's 10 GB/s means about {words.size(1e9 * 1e-6)}" in text


def test_stores_not_recorded_on_a_cpu():
    text, _ = text_of(run([(1, 10.0), (2, 12.0)]))
    assert "store" not in text          # nothing recorded of the stores: nothing said of them
    text, _ = text_of(with_stores(run([(1, 100.0), (2, 200.0)], device=GPU)))
    assert "NumPy" not in text and "streaming" not in text


def test_without_a_latency_littles_law_is_words_only():
    text, facts = text_of(run([(1, 10.0), (2, 18.0)], latency=None))
    assert facts["latency_seconds"] is None
    assert "did not measure the latency" in text and "in flight, some" not in text


# --- reference runs ---------------------------------------------------------------------------

def test_no_reference_says_so():
    live = run([(1, 10.0), (2, 18.0)])
    for refs in ((), None, []):
        text, facts = text_of(live, refs)
        assert words.no_reference("this sweep") in text and facts["references"] == 0


def test_a_reference_gpu_beside_the_live_run():
    live = run([(1, 10.0), (2, 18.0)])
    points = [(1, 10.0), (2, 20.0), (4, 2000.0), (8, 2700.0), (16, 2650.0)]
    ref = run(points, device=GPU, latency=500e-9, reference=True, sm_count=4)
    text, facts = text_of(live, [ref])
    assert "No reference GPU run" not in text
    assert "On the reference Test GPU (measured 2026-11-22), one block of 256 threads copying" in text
    assert "Its bandwidth flattened at about 8 blocks (2 per SM), at 2.7 TB/s" in text
    assert f"so one block had about {words.size(10e9 * 500e-9)} in flight" in text
    assert facts["reference Test GPU"] == "saturates"
    flat = run([(1, 10.0), (2, 10.5)], device=GPU, latency=None, reference=True)
    text, facts = text_of(live, [flat])
    assert "did not raise the bandwidth" in text.split("\n\n")[-1] and facts["reference Test GPU"] == "no gain"


def test_a_result_without_records_is_refused():
    with pytest.raises(ValueError):
        prose.curve(Result("bandwidth_vs_parallelism", [], {}))


# --- a live run -------------------------------------------------------------------------------

def test_the_text_agrees_with_a_live_run(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    from brrr.experiments.latency import bandwidth_vs_parallelism
    live = bandwidth_vs_parallelism(elements=2 ** 18, chase_bytes=64 * 2 ** 14, progress=False)
    text, facts = text_of(live)
    c = prose.curve(live)
    first = min(live.records, key=lambda r: r["parallelism"])
    assert facts["outcome"] == c["outcome"] and facts["first_gbps"] == first["gbps"]
    assert words.rate(first["gbps"] * 1e9, "B/s") in text
    assert words.seconds(live.meta["latency"]["seconds_per_load"]) in text
    assert text.startswith(f"On {live.meta['device']['name']},")
    assert live.meta["cpus"] >= 1 and (live.meta["load_average"] is None or live.meta["load_average"] >= 0)
    load, cpus = live.meta["load_average"], live.meta["cpus"]
    if load is not None and (facts["outcome"] == "slower" or (facts["outcome"] == "falls back" and load > cpus)):
        assert f"was {words.number(load)} on {words.spelled(cpus)} CPUs" in text
