"""brrr.profiler.trace: reading torch.profiler's Chrome trace, what a timeline shows, and a live trace.

The GPU side is checked on a small hand-written Chrome trace in the shape PyTorch writes (a host
thread, a GPU stream, launches tied to kernels by correlation ids and flow events), so it is tested
without a GPU; the live trace runs a tiny model on whatever device is here.
"""
import copy
import json

import pytest

from brrr.profiler.trace import Trace, events_from_chrome, from_chrome, steps_of, summary

US = 1e-6


def _x(cat, name, ts, dur, pid=100, tid=100, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": 5000.0 + ts, "dur": dur,
            "args": args}


def _chrome(with_ids=True, with_flows=True):
    """One step: linear (holding addmm, holding a launch), a gap, relu (holding a launch), a gap, a
    synchronise; on the GPU, the matmul kernel and then the relu kernel queued behind it."""
    ids = (lambda n: {"correlation": n, "External id": n}) if with_ids else (lambda n: {})
    events = [
        {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "ts": 5000.0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "ts": 5000.0, "args": {"name": "stream 7"}},
        _x("Trace", "PyTorch Profiler (0)", -5, 200, pid="Spans", tid="PyTorch Profiler"),
        _x("user_annotation", "ProfilerStep#1", 0, 100),
        _x("gpu_user_annotation", "ProfilerStep#1", 30, 45, pid=0, tid=7, device=0, stream=7),
        _x("cpu_op", "aten::linear", 10, 20),
        _x("cpu_op", "aten::addmm", 12, 16),
        _x("cuda_runtime", "cudaLaunchKernel", 20, 5, **ids(1)),
        _x("cpu_op", "aten::relu", 40, 10),
        _x("cuda_runtime", "cudaLaunchKernel", 44, 4, **ids(2)),
        _x("cuda_runtime", "cudaDeviceSynchronize", 60, 20, **ids(3)),
        _x("kernel", "void ampere_sgemm_32x128_tn", 30, 40, pid=0, tid=7, device=0, stream=7, **ids(1)),
        _x("kernel", "void at::native::vectorized_elementwise_kernel<4>", 70, 5, pid=0, tid=7, device=0,
           stream=7, **ids(2)),
        {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 5300.0},
    ]
    if with_flows:
        for n, host_ts, gpu_ts in ((1, 20, 30), (2, 44, 70)):
            events.append({"ph": "s", "id": n, "pid": 100, "tid": 100, "ts": 5000.0 + host_ts, "cat": "ac2g",
                           "name": "ac2g"})
            events.append({"ph": "f", "id": n, "pid": 0, "tid": 7, "ts": 5000.0 + gpu_ts, "cat": "ac2g",
                           "name": "ac2g", "bp": "e"})
    return {"schemaVersion": 1, "traceEvents": events}


def _by_name(records):
    return {r["name"]: r for r in records}


def test_events_get_lanes_categories_depths_and_times_from_the_first_event():
    records = events_from_chrome(_chrome())
    named = _by_name(records)
    assert "PyTorch Profiler (0)" not in named                     # the profiler's own window is left out
    steps = [r for r in records if r["name"] == "ProfilerStep#1"]
    assert [(r["side"], r["category"]) for r in steps] == [("host", "annotation"), ("gpu", "annotation")]
    assert steps[0]["start_seconds"] == 0                            # the first event starts the clock
    assert named["aten::relu"]["start_seconds"] == pytest.approx(40 * US)
    assert named["aten::relu"]["seconds"] == pytest.approx(10 * US)
    assert named["aten::linear"]["category"] == "operator" and named["aten::linear"]["depth"] == 0
    assert named["aten::addmm"]["depth"] == 1
    assert named["cudaDeviceSynchronize"]["category"] == "runtime"   # no GPU event has its id
    launches = [r for r in records if r["category"] == "launch"]
    assert [r["depth"] for r in launches] == [2, 1]
    kernels = [r for r in records if r["category"] == "kernel"]
    assert {r["lane"] for r in kernels} == {"GPU 0, stream 7"}
    assert {r["side"] for r in kernels} == {"gpu"}
    assert {r["lane"] for r in launches} == {"host thread 100"}
    assert [(r["correlation"]) for r in launches] == [k["correlation"] for k in kernels] == [1, 2]
    assert [r["start_seconds"] for r in records] == sorted(r["start_seconds"] for r in records)


@pytest.mark.parametrize("with_ids", [True, False])
def test_summary_measures_busy_time_gaps_and_how_far_the_host_ran_ahead(with_ids):
    """Without correlation ids in the events' args, the flow events pair launches and kernels."""
    trace = from_chrome(_chrome(with_ids=with_ids))
    s = summary(trace)
    assert s["steps"] == 1
    host = s["host"]
    assert host["lane"] == "host thread 100"
    assert host["span"] == pytest.approx(70 * US)              # linear starts at 10, the sync ends at 80
    assert host["busy"] == pytest.approx(50 * US)              # linear, relu and the synchronise
    assert host["idle_fraction"] == pytest.approx(20 / 70)
    assert host["gaps"] == 2 and host["median_gap"] == pytest.approx(10 * US)
    assert host["operators"] == 2 and host["synchronize"] == pytest.approx(20 * US)
    assert host["launching"] == 2 and host["quiet"] == 0                  # linear and relu each launch a kernel
    assert host["launching_median"] == pytest.approx(15 * US)
    assert s["gpu"]["busy"] == pytest.approx(45 * US) and s["gpu"]["idle_fraction"] == pytest.approx(0, abs=1e-9)
    assert s["gpu"]["kernels"] == 2
    ahead = s["ahead"]
    assert ahead["count"] == 2
    assert ahead["min"] == pytest.approx(10 * US) and ahead["max"] == pytest.approx(26 * US)
    assert ahead["median"] == pytest.approx(18 * US)


def test_older_trace_formats_read_the_same():
    """PyTorch 1.x wrote a bare list, capitalised categories and 'stream N' thread ids."""
    old = []
    for e in _chrome(with_ids=True, with_flows=False)["traceEvents"]:
        e = copy.deepcopy(e)
        old_names = {"cpu_op": "Operator", "cuda_runtime": "Runtime", "kernel": "Kernel"}
        e["cat"] = old_names.get(e.get("cat"), e.get("cat"))
        if e.get("name") == "ProfilerStep#1" and e.get("cat") == "user_annotation":
            e["cat"] = "Operator"                      # PyTorch 1.x marked steps as operators
        if e.get("cat") == "Kernel":
            e["tid"] = "stream 7"
            del e["args"]["stream"], e["args"]["device"]
        old.append(e)
    s_old, s_new = summary(from_chrome(json.dumps(old))), summary(from_chrome(_chrome()))
    assert s_old["ahead"] == s_new["ahead"]
    assert s_old["host"]["busy"] == pytest.approx(s_new["host"]["busy"])
    assert list(s_old["lanes"]) == ["host thread 100", "GPU 0, stream 7"]


def test_a_cpu_trace_has_one_lane_and_no_gpu_numbers():
    cpu = {"traceEvents": [e for e in _chrome()["traceEvents"]
                           if e.get("cat") in ("cpu_op", "user_annotation")]}
    s = summary(from_chrome(cpu))
    assert list(s["lanes"]) == ["host thread 100"]
    assert s["gpu"] is None and s["ahead"] is None
    assert s["host"]["span"] == pytest.approx(40 * US) and s["host"]["busy"] == pytest.approx(30 * US)
    assert s["host"]["launching"] == 0 and s["host"]["quiet"] == 2 and s["host"]["quiet_median"] == pytest.approx(15 * US)


def test_gaps_between_steps_are_not_counted():
    """Two steps, each one operator: the time between the steps (the profiler's own step
    bookkeeping) is not a gap of the model's."""
    events = [_x("user_annotation", "ProfilerStep#1", 0, 50), _x("cpu_op", "aten::add", 10, 20),
              _x("user_annotation", "ProfilerStep#2", 500, 50), _x("cpu_op", "aten::add", 510, 20)]
    trace = from_chrome({"traceEvents": events})
    windows = steps_of(trace.records)
    assert windows == [(0.0, pytest.approx(50 * US)), (pytest.approx(500 * US), pytest.approx(550 * US))]
    s = summary(trace)
    assert s["steps"] == 2 and s["host"]["idle_fraction"] == pytest.approx(0) and s["host"]["gaps"] == 0


def test_not_a_trace_is_refused():
    with pytest.raises(ValueError, match="Chrome trace"):
        events_from_chrome('{"records": []}')


def test_save_writes_the_chrome_json_and_a_result_round_trips(tmp_path):
    trace = from_chrome(_chrome())
    path = trace.save(str(tmp_path / "trace.json"))
    assert json.load(open(path))["traceEvents"][0]["ph"] == "M"
    saved = trace.to_json(str(tmp_path / "result.json"))
    from brrr import Result
    again = Trace.of(Result.load(saved))
    assert summary(again) == summary(trace)
    with pytest.raises(ValueError, match="no Chrome trace"):
        again.save(str(tmp_path / "x.json"))


def test_the_timeline_draws_lanes_and_connectors():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from brrr.plot.trace import trace_timeline
    fig = trace_timeline(from_chrome(_chrome()))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["GPU 0\nstream 7", "host\n(thread 100)"]
    assert len(ax.lines) >= 2 + 1                       # two launch-to-kernel lines and the step mark
    plt.close(fig)


# --- live ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def live():
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                torch.nn.Linear(16, 4))
    model.train()
    x = torch.randn(8, 16)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng = torch.get_rng_state()
    from brrr.profiler import trace
    result = trace(model, x, steps=2, backward=True)
    return model, before, rng, result


def test_a_live_trace_of_a_tiny_model(live, tmp_path):
    import torch
    model, before, rng, result = live
    assert isinstance(result, Trace) and result.records
    s = result.summary
    assert s["steps"] == 2
    assert s["host"] is not None and s["host"]["operators"] >= 2 * 4    # two linears, relu, dropout per step
    assert 0 <= s["host"]["idle_fraction"] <= 1
    names = {r["name"] for r in result.records}
    assert "aten::linear" in names or "aten::addmm" in names
    for lane in s["lanes"].values():
        assert 0 <= lane["idle_fraction"] <= 1 and lane["busy"] <= lane["span"] * (1 + 1e-9)
    path = result.save(str(tmp_path / "live.json"))
    assert json.load(open(path))["traceEvents"]
    assert "steps of Sequential" in repr(result) and "ui.perfetto.dev" in repr(result)
    # left as found: weights, mode, gradients, random state
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert model.training and all(p.grad is None for p in model.parameters())
    assert torch.equal(torch.get_rng_state(), rng)
